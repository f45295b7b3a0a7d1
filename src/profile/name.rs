//! Profile names and browser backends: pure validation, no I/O.
//!
//! A profile name becomes one path component under `<root>/<backend>/`, so it must be a flat
//! token that cannot escape the profile root (spec §7 "Isolation invariant").

use std::fmt;
use std::str::FromStr;

use crate::error::{AfError, ErrorCode};

/// Longest accepted profile name, in bytes.
pub const MAX_NAME_LEN: usize = 64;

/// The name that asks for an ephemeral (tempdir) profile; never a directory in the store.
pub const EPHEMERAL: &str = "-";

/// A validated persistent profile name: `[A-Za-z0-9._-]{1,64}`, not starting with `.` or `-`.
///
/// Registrable domains such as `contabo.com` or `example.co.uk` are valid names.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProfileName(String);

impl ProfileName {
    /// Validate `raw` as a persistent profile name (`profile_invalid_name` otherwise).
    pub fn parse(raw: &str) -> Result<Self, AfError> {
        let reject = |why: &str| {
            Err(AfError::new(
                ErrorCode::ProfileInvalidName,
                format!("invalid profile name {}: {why}", quoted(raw)),
            )
            .with_hint(
                "use letters, digits, '.', '_' and '-' (at most 64, not starting with '.' or '-')",
            ))
        };
        if raw.is_empty() {
            return reject("it is empty");
        }
        if raw == EPHEMERAL {
            return reject("'-' means an ephemeral profile, which has no directory in the store");
        }
        if raw == "." || raw == ".." {
            return reject("'.' and '..' are path components");
        }
        if raw.contains('/') || raw.contains('\\') {
            return reject("path separators are not allowed");
        }
        if raw.chars().any(char::is_control) {
            return reject("control characters are not allowed");
        }
        if raw.starts_with('.') || raw.starts_with('-') {
            return reject("it must not start with '.' or '-'");
        }
        if raw.len() > MAX_NAME_LEN {
            return reject("it is longer than 64 bytes");
        }
        if !raw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        {
            return reject("only ASCII letters, digits, '.', '_' and '-' are allowed");
        }
        Ok(ProfileName(raw.to_string()))
    }

    /// The name as a string (also its directory name).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ProfileName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for ProfileName {
    type Err = AfError;
    fn from_str(s: &str) -> Result<Self, AfError> {
        ProfileName::parse(s)
    }
}

/// Quote a user-supplied string for a message without echoing control characters raw.
fn quoted(raw: &str) -> String {
    format!("{raw:?}")
}

/// A browser backend: the directory level that scopes profiles (`<root>/<backend>/<name>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Backend {
    /// Chromium (the default family).
    Chromium,
    /// Google Chrome.
    Chrome,
    /// Google's slim headless distribution of Chromium.
    ChromeHeadlessShell,
    /// adryfish/fingerprint-chromium.
    FingerprintChromium,
    /// Microsoft Edge.
    Edge,
    /// Brave.
    Brave,
    /// Lightpanda.
    Lightpanda,
    /// Camoufox through foxbridge.
    Camoufox,
}

impl Backend {
    /// Every backend, in documentation order.
    pub const ALL: &'static [Backend] = &[
        Backend::Chromium,
        Backend::Chrome,
        Backend::ChromeHeadlessShell,
        Backend::FingerprintChromium,
        Backend::Edge,
        Backend::Brave,
        Backend::Lightpanda,
        Backend::Camoufox,
    ];

    /// The stable name, which is also the backend's directory under the profile root.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Chromium => "chromium",
            Backend::Chrome => "chrome",
            Backend::ChromeHeadlessShell => "chrome-headless-shell",
            Backend::FingerprintChromium => "fingerprint-chromium",
            Backend::Edge => "edge",
            Backend::Brave => "brave",
            Backend::Lightpanda => "lightpanda",
            Backend::Camoufox => "camoufox",
        }
    }

    /// Parse a backend name exactly as [`Backend::as_str`] prints it (`invalid_argument` otherwise).
    pub fn parse(raw: &str) -> Result<Self, AfError> {
        Backend::ALL
            .iter()
            .copied()
            .find(|b| b.as_str() == raw)
            .ok_or_else(|| {
                AfError::invalid(format!("unknown backend {}", quoted(raw)))
                    .with_hint(format!("use one of: {}", Backend::names().join(", ")))
            })
    }

    /// Every backend name.
    pub fn names() -> Vec<&'static str> {
        Backend::ALL.iter().map(|b| b.as_str()).collect()
    }

    /// The engine family, a hint for what a profile directory holds.
    pub fn family(self) -> &'static str {
        match self {
            Backend::Lightpanda => "lightpanda",
            Backend::Camoufox => "firefox",
            _ => "chromium",
        }
    }

    /// Whether the host can keep a persistent profile for this backend today.
    ///
    /// Camoufox refuses persistent profiles (`backend_unsupported`) until the Firefox profile
    /// lifecycle is wired explicitly (spec §10).
    pub fn supports_persistent_profiles(self) -> bool {
        !matches!(self, Backend::Camoufox)
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Backend {
    type Err = AfError;
    fn from_str(s: &str) -> Result<Self, AfError> {
        Backend::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(raw: &str) {
        let err = ProfileName::parse(raw).unwrap_err();
        assert_eq!(err.code, ErrorCode::ProfileInvalidName, "{raw:?}");
    }

    #[test]
    fn hostile_names_are_rejected() {
        for raw in [
            "",
            "-",
            ".",
            "..",
            "../x",
            "../etc",
            "a/b",
            "a\\b",
            "/abs",
            ".hidden",
            "-flag",
            "nul\0byte",
            "tab\tname",
            "new\nline",
            "caf\u{e9}",
            "\u{441}ontabo.com",
            "sp ace",
            "a:b",
            "*",
        ] {
            bad(raw);
        }
        bad(&"a".repeat(65));
    }

    #[test]
    fn flat_tokens_and_domains_are_accepted() {
        for raw in [
            "work",
            "contabo.com",
            "example.co.uk",
            "a",
            "A_b-c.9",
            "x..y",
            "trailing-",
        ] {
            assert_eq!(ProfileName::parse(raw).unwrap().as_str(), raw);
        }
        assert!(ProfileName::parse(&"a".repeat(64)).is_ok());
    }

    #[test]
    fn backends_round_trip() {
        for b in Backend::ALL {
            assert_eq!(Backend::parse(b.as_str()).unwrap(), *b);
        }
        let err = Backend::parse("firefox").unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument);
        assert!(err.hint.unwrap().contains("brave"));
        assert_eq!(Backend::Camoufox.family(), "firefox");
        assert!(!Backend::Camoufox.supports_persistent_profiles());
    }
}
