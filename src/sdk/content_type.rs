//! Mechanical facts from a `Content-Type`: file extension, HTML-ness, text decoding.

/// The media type without parameters, lower-cased.
pub fn essence(content_type: Option<&str>) -> String {
    content_type
        .and_then(|ct| ct.split(';').next())
        .map(|s| s.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

/// File extension for `body.<ext>`.
pub fn extension(content_type: Option<&str>) -> &'static str {
    let e = essence(content_type);
    match e.as_str() {
        "text/html" | "application/xhtml+xml" => "html",
        "application/json" | "application/ld+json" | "application/problem+json" => "json",
        "text/plain" => "txt",
        "text/css" => "css",
        "text/csv" => "csv",
        "text/markdown" => "md",
        "text/javascript" | "application/javascript" | "application/x-javascript" => "js",
        "application/xml" | "text/xml" | "application/rss+xml" | "application/atom+xml" => "xml",
        "image/svg+xml" => "svg",
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/avif" => "avif",
        "application/pdf" => "pdf",
        "application/zip" => "zip",
        "application/gzip" => "gz",
        _ if e.ends_with("+json") => "json",
        _ if e.ends_with("+xml") => "xml",
        _ if e.starts_with("text/") => "txt",
        _ => "bin",
    }
}

/// Whether the body is HTML.
pub fn is_html(content_type: Option<&str>) -> bool {
    matches!(
        essence(content_type).as_str(),
        "text/html" | "application/xhtml+xml"
    )
}

/// Whether the body is text that the projections can read.
pub fn is_textual(content_type: Option<&str>) -> bool {
    let e = essence(content_type);
    e.starts_with("text/") || e.ends_with("json") || e.ends_with("xml") || e.is_empty()
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
