//! Tab ids: the one rule for a tab id the driver sends to a host.
//!
//! A tab id is a CDP target id: 1 to [`MAX_TAB_ID_BYTES`] letters, digits, `-` or `_`.
//! `fetch`'s `tab`, `tabs close`, `cdp --tab` and `upload --tab` (and their SDK and MCP
//! forms) all check it here, before anything reaches a host, so a hostile id gets the same
//! `invalid_argument` wherever it is given.

use std::fmt;

use crate::error::AfError;

/// Longest accepted tab id (Chromium's are 32 hex digits).
pub const MAX_TAB_ID_BYTES: usize = 128;

/// How much of a refused id the message quotes.
const QUOTED_CHARS: usize = 64;

/// A checked tab id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TabId(String);

impl TabId {
    /// Check `raw` against the one rule; the error names the field `tab`.
    pub fn parse(raw: &str) -> Result<TabId, AfError> {
        if is_tab_id(raw) {
            Ok(TabId(raw.to_string()))
        } else {
            Err(refused(raw, "a tab id"))
        }
    }

    /// `new` (a fresh tab) or a tab id: what a fetch's `tab` takes.
    pub fn parse_fetch_tab(raw: &str) -> Result<String, AfError> {
        if raw == "new" || is_tab_id(raw) {
            Ok(raw.to_string())
        } else {
            Err(refused(raw, "`new` or a tab id"))
        }
    }

    /// The id as the host knows it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TabId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn is_tab_id(raw: &str) -> bool {
    !raw.is_empty()
        && raw.len() <= MAX_TAB_ID_BYTES
        && raw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The one refusal: the id quoted (cut short when long), what a tab id is.
fn refused(raw: &str, what: &str) -> AfError {
    let quoted: String = raw.chars().take(QUOTED_CHARS).collect();
    let cut = if quoted.len() < raw.len() { "..." } else { "" };
    AfError::invalid(format!(
        "tab {quoted:?}{cut} must be {what}: 1 to {MAX_TAB_ID_BYTES} letters, digits, '-' or '_'"
    ))
    .with_field("tab")
    .with_hint("list tabs with `afhttp tabs list`; a fetch result's tab_id is one")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn one_rule_for_every_tab_id() {
        let ok = TabId::parse("A1B2-c3_d4").unwrap();
        assert_eq!(ok.as_str(), "A1B2-c3_d4");
        assert_eq!(ok.to_string(), "A1B2-c3_d4");
        assert!(TabId::parse(&"F".repeat(MAX_TAB_ID_BYTES)).is_ok());
        let long = "x".repeat(MAX_TAB_ID_BYTES + 1);
        for bad in [
            "",
            "../../etc/passwd",
            "a b",
            "a\nb",
            "id?x=1",
            "id#f",
            "ïd",
            "%2e%2e",
            long.as_str(),
        ] {
            let e = TabId::parse(bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArgument, "{bad:?}");
            assert_eq!(e.field.as_deref(), Some("tab"));
            assert!(e.message.len() < 200, "{}", e.message);
        }
        assert_eq!(TabId::parse_fetch_tab("new").unwrap(), "new");
        assert!(TabId::parse_fetch_tab("a/b").is_err());
    }
}
