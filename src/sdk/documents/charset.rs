//! Text decoding for non-HTML documents: a byte-order mark, then the declared charset, then
//! a sniff (valid UTF-8, else windows-1252). A label that names no encoding, or that
//! contradicts the bytes in a way the bytes prove (a UTF-8 label on bytes that are not
//! UTF-8; any label on JSON, which RFC 8259 fixes to UTF-8), gives way to the sniff.

use serde_json::{json, Value};

use super::DocKind;
use crate::sdk::http::body::TEXT_PREFIX_LIMIT;

/// Decoded text and how its encoding was chosen.
#[derive(Debug, Clone)]
pub struct Decoded {
    /// The text.
    pub text: String,
    /// The `charset` parameter of the `Content-Type`, if any.
    pub declared: Option<String>,
    /// The encoding used (WHATWG name).
    pub used: &'static str,
    /// Why: `bom`, `declared`, `sniffed`, or `declared_overridden` (the label was unknown
    /// or wrong for the bytes).
    pub source: &'static str,
}

impl Decoded {
    /// The `charset` fact for `content.json`.
    pub fn to_json(&self) -> Value {
        json!({"declared": self.declared, "used": self.used, "source": self.source})
    }
}

/// The `charset` parameter of a `Content-Type`.
pub fn declared_label(content_type: Option<&str>) -> Option<String> {
    content_type?.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| v.trim().trim_matches('"').to_string())
    })
}

/// Decode `bytes` of a document of `kind` served as `content_type`.
pub fn decode(bytes: &[u8], content_type: Option<&str>, kind: DocKind) -> Decoded {
    let declared = declared_label(content_type);
    if let Some((enc, bom_len)) = encoding_rs::Encoding::for_bom(bytes) {
        let (text, _) = enc.decode_without_bom_handling(&bytes[bom_len..]);
        return Decoded {
            text: text.into_owned(),
            declared,
            used: enc.name(),
            source: "bom",
        };
    }
    // A sequence cut at the end counts as valid only where the text is a kept prefix of a
    // longer body (the cut is ours, not the server's).
    let valid_utf8 = match std::str::from_utf8(bytes) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none() && bytes.len() >= TEXT_PREFIX_LIMIT,
    };
    let label = declared
        .as_deref()
        .and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes()));
    let label = match label {
        Some(enc) if kind == DocKind::Json && enc != encoding_rs::UTF_8 && valid_utf8 => None,
        Some(enc) if enc == encoding_rs::UTF_8 && !valid_utf8 => None,
        other => other,
    };
    let (enc, source) = match (label, declared.is_some()) {
        (Some(enc), _) => (enc, "declared"),
        (None, overridden) => {
            let enc = if valid_utf8 {
                encoding_rs::UTF_8
            } else {
                encoding_rs::WINDOWS_1252
            };
            (
                enc,
                if overridden {
                    "declared_overridden"
                } else {
                    "sniffed"
                },
            )
        }
    };
    let (text, _) = enc.decode_without_bom_handling(bytes);
    Decoded {
        text: text.into_owned(),
        declared,
        used: enc.name(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_bom_and_sniffed() {
        let d = decode(
            b"caf\xe9",
            Some("text/plain; charset=iso-8859-1"),
            DocKind::PlainText,
        );
        assert_eq!((d.text.as_str(), d.source), ("café", "declared"));
        let d = decode("café".as_bytes(), Some("text/plain"), DocKind::PlainText);
        assert_eq!(
            (d.text.as_str(), d.source, d.used),
            ("café", "sniffed", "UTF-8")
        );
        let d = decode(b"caf\xe9", None, DocKind::PlainText);
        assert_eq!((d.text.as_str(), d.used), ("café", "windows-1252"));
        let d = decode(
            b"\xef\xbb\xbfhi",
            Some("text/plain; charset=latin1"),
            DocKind::PlainText,
        );
        assert_eq!((d.text.as_str(), d.source), ("hi", "bom"));
    }

    #[test]
    fn wrong_labels_give_way_to_the_bytes() {
        let d = decode(
            "café".as_bytes(),
            Some("text/csv; charset=no-such-charset"),
            DocKind::Csv,
        );
        assert_eq!((d.text.as_str(), d.source), ("café", "declared_overridden"));
        let d = decode(
            b"caf\xe9",
            Some("text/plain; charset=utf-8"),
            DocKind::PlainText,
        );
        assert_eq!((d.text.as_str(), d.source), ("café", "declared_overridden"));
        let d = decode(
            "{\"a\":\"café\"}".as_bytes(),
            Some("application/json; charset=iso-8859-1"),
            DocKind::Json,
        );
        assert_eq!(d.text, "{\"a\":\"café\"}");
        // A latin-1 label on text is taken at its word: nothing in the bytes contradicts it.
        let d = decode(
            "café".as_bytes(),
            Some("text/plain; charset=iso-8859-1"),
            DocKind::PlainText,
        );
        assert_eq!(d.text, "cafÃ©");
    }
}
