//! Mechanical facts from a `Content-Type`: file extension, HTML-ness, text decoding.

/// The media type without parameters, lower-cased.
pub fn essence(content_type: Option<&str>) -> String {
    content_type
        .and_then(|ct| ct.split(';').next())
        .map(|s| s.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

/// What a response body is, for the projections and the render decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocKind {
    /// HTML or XHTML: the HTML projection.
    Html,
    /// A PDF document.
    Pdf,
    /// `text/plain` (and other `text/*` without a projection of their own).
    PlainText,
    /// `text/markdown`.
    Markdown,
    /// `text/csv`.
    Csv,
    /// JSON, including `+json` types.
    Json,
    /// XML that is not a feed.
    Xml,
    /// RSS or Atom.
    Feed,
    /// An image (no text projection: no OCR).
    Image,
    /// Anything else.
    Binary,
}

impl DocKind {
    /// Stable name, as written in `content.json` `type` and the trace.
    pub fn as_str(self) -> &'static str {
        match self {
            DocKind::Html => "html",
            DocKind::Pdf => "pdf",
            DocKind::PlainText => "text",
            DocKind::Markdown => "markdown",
            DocKind::Csv => "csv",
            DocKind::Json => "json",
            DocKind::Xml => "xml",
            DocKind::Feed => "feed",
            DocKind::Image => "image",
            DocKind::Binary => "binary",
        }
    }

    /// Whether the body is text kept in memory for classification and projections.
    pub fn is_textual(self) -> bool {
        !matches!(self, DocKind::Pdf | DocKind::Image | DocKind::Binary)
    }

    /// The extension of a body of this kind whose media type is not in [`MEDIA_TYPES`]
    /// (a sniffed body; an image's comes from its magic number).
    pub fn extension(self) -> &'static str {
        match self {
            DocKind::Html => "html",
            DocKind::Pdf => "pdf",
            DocKind::Json => "json",
            DocKind::Xml | DocKind::Feed => "xml",
            DocKind::PlainText | DocKind::Markdown | DocKind::Csv => "txt",
            DocKind::Image | DocKind::Binary => "bin",
        }
    }
}

/// The one table of media types afhttp knows: essence, kind, extension of `body.<ext>`.
/// The first row with an extension is that extension's media type (MCP resources).
/// Types not listed follow [`kind_and_extension`]'s suffix rules.
pub const MEDIA_TYPES: &[(&str, DocKind, &str)] = &[
    ("text/html", DocKind::Html, "html"),
    ("application/xhtml+xml", DocKind::Html, "html"),
    ("application/pdf", DocKind::Pdf, "pdf"),
    // Aliases in real use (old Acrobat, misconfigured servers).
    ("application/x-pdf", DocKind::Pdf, "pdf"),
    ("application/acrobat", DocKind::Pdf, "pdf"),
    ("application/vnd.pdf", DocKind::Pdf, "pdf"),
    ("text/pdf", DocKind::Pdf, "pdf"),
    ("text/x-pdf", DocKind::Pdf, "pdf"),
    ("text/markdown", DocKind::Markdown, "md"),
    ("text/x-markdown", DocKind::Markdown, "md"),
    ("text/csv", DocKind::Csv, "csv"),
    ("application/csv", DocKind::Csv, "csv"),
    ("application/json", DocKind::Json, "json"),
    ("text/json", DocKind::Json, "json"),
    ("text/x-json", DocKind::Json, "json"),
    ("application/rss+xml", DocKind::Feed, "xml"),
    ("application/atom+xml", DocKind::Feed, "xml"),
    ("application/xml", DocKind::Xml, "xml"),
    ("text/xml", DocKind::Xml, "xml"),
    ("text/plain", DocKind::PlainText, "txt"),
    ("text/css", DocKind::PlainText, "css"),
    ("text/javascript", DocKind::PlainText, "js"),
    ("application/javascript", DocKind::Binary, "js"),
    ("application/x-javascript", DocKind::Binary, "js"),
    ("image/svg+xml", DocKind::Image, "svg"),
    ("image/png", DocKind::Image, "png"),
    ("image/jpeg", DocKind::Image, "jpg"),
    ("image/jpg", DocKind::Image, "jpg"),
    ("image/gif", DocKind::Image, "gif"),
    ("image/webp", DocKind::Image, "webp"),
    ("image/avif", DocKind::Image, "avif"),
    ("application/zip", DocKind::Binary, "zip"),
    ("application/gzip", DocKind::Binary, "gz"),
];

/// Media types that say nothing about the body: the bytes decide.
pub fn is_generic(essence: &str) -> bool {
    matches!(
        essence,
        "" | "application/octet-stream" | "binary/octet-stream" | "application/unknown"
    )
}

/// The kind and `body.<ext>` extension a media type (its essence) declares: the table, then
/// `+json`, `+xml`, `image/*`, `text/*`; anything else is binary.
pub fn kind_and_extension(essence: &str) -> (DocKind, &'static str) {
    if let Some((_, kind, ext)) = MEDIA_TYPES.iter().find(|(m, _, _)| *m == essence) {
        return (*kind, ext);
    }
    if essence.ends_with("+json") {
        (DocKind::Json, "json")
    } else if essence.ends_with("+xml") {
        (DocKind::Xml, "xml")
    } else if essence.starts_with("image/") {
        (DocKind::Image, "bin")
    } else if essence.starts_with("text/") {
        (DocKind::PlainText, "txt")
    } else {
        (DocKind::Binary, "bin")
    }
}

/// File extension for `body.<ext>`.
pub fn extension(content_type: Option<&str>) -> &'static str {
    kind_and_extension(&essence(content_type)).1
}

/// The media type of a file extension (the table's first row with it).
pub fn media_type_of_extension(ext: &str) -> Option<&'static str> {
    MEDIA_TYPES
        .iter()
        .find(|(_, _, e)| *e == ext)
        .map(|(m, _, _)| *m)
}

/// Decode bytes to text using the header charset, then a `<meta charset>` sniff, then UTF-8.
pub fn decode_text(bytes: &[u8], content_type: Option<&str>) -> String {
    let from_header = content_type.and_then(|ct| {
        ct.split(';').skip(1).find_map(|p| {
            let (k, v) = p.split_once('=')?;
            (k.trim().eq_ignore_ascii_case("charset"))
                .then(|| v.trim().trim_matches('"').to_string())
        })
    });
    let label = from_header.or_else(|| sniff_meta_charset(bytes));
    let encoding = label
        .and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = encoding.decode(bytes);
    text.into_owned()
}

fn sniff_meta_charset(bytes: &[u8]) -> Option<String> {
    let head = &bytes[..bytes.len().min(2048)];
    let lower = String::from_utf8_lossy(head).to_ascii_lowercase();
    let at = lower.find("charset=")? + "charset=".len();
    let rest = lower[at..].trim_start_matches(['"', '\'']);
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .unwrap_or(rest.len());
    (end > 0).then(|| rest[..end].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions() {
        assert_eq!(extension(Some("text/html; charset=utf-8")), "html");
        assert_eq!(extension(Some("application/vnd.api+json")), "json");
        assert_eq!(extension(Some("application/octet-stream")), "bin");
        assert_eq!(extension(None), "bin");
        assert_eq!(extension(Some("text/x-weird")), "txt");
        // Aliases are written with their kind's extension.
        assert_eq!(extension(Some("application/x-pdf")), "pdf");
        assert_eq!(extension(Some("text/x-markdown")), "md");
        assert_eq!(extension(Some("text/json")), "json");
        assert_eq!(media_type_of_extension("pdf"), Some("application/pdf"));
        assert_eq!(media_type_of_extension("md"), Some("text/markdown"));
    }

    #[test]
    fn every_row_agrees_with_its_kind() {
        for (m, kind, ext) in MEDIA_TYPES {
            assert_eq!(kind_and_extension(m), (*kind, *ext), "{m}");
            assert_eq!(m.to_ascii_lowercase(), *m, "{m}");
            if *kind == DocKind::Pdf {
                assert_eq!(*ext, "pdf", "{m}");
            }
        }
    }

    #[test]
    fn decodes_latin1_from_header_and_meta() {
        let bytes = b"caf\xe9";
        assert_eq!(
            decode_text(bytes, Some("text/html; charset=iso-8859-1")),
            "café"
        );
        let doc = b"<meta charset=\"windows-1252\"><p>caf\xe9";
        assert!(decode_text(doc, Some("text/html")).ends_with("café"));
        assert_eq!(decode_text("naïve".as_bytes(), None), "naïve");
    }
}
