//! Documents that are not HTML: what a response is (by `Content-Type`, or by its first bytes
//! when the header is missing or generic) and the mechanical `text`/`content`/`content_json`
//! projections of each type. The table is documented in `docs/reference.md`
//! ("Content types").

pub mod charset;
pub mod csv;
pub mod feed;
pub mod json;
pub mod outcome;
pub mod pdf;
pub mod project;
pub mod text;

pub use outcome::{DocumentOptions, Projected, ACCEPT_MARKDOWN};
pub use project::project;

use crate::sdk::content_type;

pub use crate::sdk::content_type::DocKind;

/// Bytes of a body's start that sniffing looks at.
pub const SNIFF_BYTES: usize = 1024;

/// The kind a `Content-Type` declares; `None` when it is missing or generic.
pub fn declared(content_type: Option<&str>) -> Option<DocKind> {
    let e = content_type::essence(content_type);
    (!content_type::is_generic(&e)).then(|| content_type::kind_and_extension(&e).0)
}

/// The kind of a body: the declared type, refined by the bytes where the header is generic
/// or where XML turns out to be a feed.
pub fn classify(content_type: Option<&str>, head: &[u8]) -> DocKind {
    match declared(content_type) {
        Some(DocKind::Xml) if xml_root(head).is_some_and(is_feed_root) => DocKind::Feed,
        Some(kind) => kind,
        None => sniff(head),
    }
}

/// The kind the first bytes show (the header said nothing).
pub fn sniff(head: &[u8]) -> DocKind {
    let head = &head[..head.len().min(SNIFF_BYTES)];
    if find(head, b"%PDF-").is_some() {
        return DocKind::Pdf;
    }
    if image_extension(head).is_some() {
        return DocKind::Image;
    }
    let text = strip_bom(head);
    let start = text
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map_or(&text[..0], |i| &text[i..]);
    let lower: Vec<u8> = start.iter().take(64).map(u8::to_ascii_lowercase).collect();
    if lower.starts_with(b"<!doctype html") || lower.starts_with(b"<html") {
        return DocKind::Html;
    }
    if lower.starts_with(b"<?xml") || lower.starts_with(b"<rss") || lower.starts_with(b"<feed") {
        return match xml_root(head) {
            Some(r) if is_feed_root(r) => DocKind::Feed,
            Some("html") => DocKind::Html,
            _ => DocKind::Xml,
        };
    }
    if start.contains(&0) || std::str::from_utf8(valid_prefix(start)).is_err() {
        return DocKind::Binary;
    }
    if matches!(start.first(), Some(b'{' | b'[')) && json::looks_like_json(start) {
        return DocKind::Json;
    }
    if start.is_empty() {
        return DocKind::Binary;
    }
    DocKind::PlainText
}

/// File extension for `body.<ext>`: from the header, or from the sniffed kind when the
/// header is missing or generic.
pub fn body_extension(content_type: Option<&str>, head: &[u8]) -> &'static str {
    if declared(content_type).is_some() {
        return content_type::extension(content_type);
    }
    match sniff(head) {
        DocKind::Image => image_extension(head).unwrap_or("bin"),
        kind => kind.extension(),
    }
}

/// The image format the magic bytes name, as a file extension.
pub fn image_extension(head: &[u8]) -> Option<&'static str> {
    Some(if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        "png"
    } else if head.starts_with(&[0xff, 0xd8, 0xff]) {
        "jpg"
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        "gif"
    } else if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        "webp"
    } else if head.len() >= 12 && &head[4..8] == b"ftyp" && &head[8..12] == b"avif" {
        "avif"
    } else {
        return None;
    })
}

fn strip_bom(b: &[u8]) -> &[u8] {
    b.strip_prefix(&[0xef, 0xbb, 0xbf]).unwrap_or(b)
}

/// The bytes up to the last complete UTF-8 sequence (a sniffed prefix may cut one).
fn valid_prefix(b: &[u8]) -> &[u8] {
    match std::str::from_utf8(b) {
        Ok(_) => b,
        Err(e) if e.error_len().is_none() => &b[..e.valid_up_to()],
        Err(_) => b,
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn is_feed_root(name: &str) -> bool {
    matches!(name, "rss" | "feed" | "rdf:RDF" | "RDF")
}

/// The name of the first element, past the XML declaration, comments and a doctype.
fn xml_root(head: &[u8]) -> Option<&str> {
    let s = std::str::from_utf8(valid_prefix(strip_bom(head))).ok()?;
    let mut rest = s;
    loop {
        let at = rest.find('<')?;
        rest = &rest[at + 1..];
        if rest.starts_with('?') || rest.starts_with('!') {
            continue;
        }
        let end = rest
            .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
            .unwrap_or(rest.len());
        return Some(&rest[..end]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_types() {
        for (ct, kind) in [
            ("text/html; charset=utf-8", DocKind::Html),
            ("application/xhtml+xml", DocKind::Html),
            ("application/pdf", DocKind::Pdf),
            ("application/x-pdf", DocKind::Pdf),
            ("text/x-markdown", DocKind::Markdown),
            ("text/json", DocKind::Json),
            ("text/plain", DocKind::PlainText),
            ("text/markdown; charset=utf-8", DocKind::Markdown),
            ("text/csv", DocKind::Csv),
            ("application/vnd.api+json", DocKind::Json),
            ("application/rss+xml", DocKind::Feed),
            ("application/atom+xml", DocKind::Feed),
            ("image/png", DocKind::Image),
            ("application/zip", DocKind::Binary),
            ("text/x-weird", DocKind::PlainText),
        ] {
            assert_eq!(classify(Some(ct), b""), kind, "{ct}");
        }
        assert_eq!(declared(Some("application/octet-stream")), None);
        assert_eq!(declared(Some("binary/octet-stream")), None);
        assert_eq!(declared(None), None);
    }

    #[test]
    fn sniffs_generic_bodies() {
        let generic = Some("application/octet-stream");
        for (body, kind) in [
            (&b"%PDF-1.7\n%\xe2\xe3"[..], DocKind::Pdf),
            (b"\x89PNG\r\n\x1a\n\0\0", DocKind::Image),
            (b"\xef\xbb\xbf<!DOCTYPE html><p>x", DocKind::Html),
            (b"  <html><body>", DocKind::Html),
            (
                b"<?xml version=\"1.0\"?><rss version=\"2.0\">",
                DocKind::Feed,
            ),
            (
                b"<?xml version=\"1.0\"?>\n<!-- c --><feed xmlns=\"http://www.w3.org/2005/Atom\">",
                DocKind::Feed,
            ),
            (b"<?xml version=\"1.0\"?><note>", DocKind::Xml),
            (b"{\"a\": [1, 2]}", DocKind::Json),
            (b"[1, 2, 3]", DocKind::Json),
            (b"[section]\nkey=value", DocKind::PlainText),
            (b"hello, world", DocKind::PlainText),
            (b"PK\x03\x04\0\0", DocKind::Binary),
            (b"", DocKind::Binary),
        ] {
            assert_eq!(classify(generic, body), kind, "{body:?}");
            assert_eq!(classify(None, body), kind, "{body:?}");
        }
        assert_eq!(classify(Some("text/xml"), b"<rss>"), DocKind::Feed);
        assert_eq!(classify(Some("text/xml"), b"<note>"), DocKind::Xml);
    }

    #[test]
    fn extensions_follow_the_sniffed_kind() {
        let generic = Some("application/octet-stream");
        assert_eq!(body_extension(generic, b"%PDF-1.4"), "pdf");
        assert_eq!(body_extension(None, b"\xff\xd8\xff\xe0"), "jpg");
        assert_eq!(body_extension(generic, b"{\"a\":1}"), "json");
        assert_eq!(body_extension(Some("application/pdf"), b""), "pdf");
        assert_eq!(body_extension(Some("application/x-pdf"), b""), "pdf");
        assert_eq!(body_extension(Some("text/x-markdown"), b""), "md");
        assert_eq!(body_extension(Some("text/json"), b"{}"), "json");
        assert_eq!(body_extension(Some("text/plain"), b"%PDF-"), "txt");
    }
}
