//! Cookies: the `--cookie` syntax, `Set-Cookie` parsing, RFC 6265 matching, and the
//! JSON cookie jar file shared safely between concurrent processes.

pub mod date;
pub mod jar;
pub mod matching;
pub mod parse;

use serde::{Deserialize, Serialize};

/// The `SameSite` attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SameSite {
    /// `SameSite=Strict`
    Strict,
    /// `SameSite=Lax`
    Lax,
    /// `SameSite=None`
    None,
}

/// One cookie as stored in a jar or given with `--cookie` (RFC 6265 §5.3 storage model).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cookie {
    /// Cookie name.
    pub name: String,
    /// Cookie value, as sent.
    pub value: String,
    /// Lower-case domain without a leading dot.
    pub domain: String,
    /// True when the cookie matches only `domain` exactly (no `Domain` attribute).
    pub host_only: bool,
    /// Path scope, always starting with `/`.
    pub path: String,
    /// Sent only over https.
    pub secure: bool,
    /// Hidden from page scripts.
    pub http_only: bool,
    /// SameSite attribute when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_site: Option<SameSite>,
    /// Expiry as Unix seconds; `None` is a session cookie.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at_unix: Option<i64>,
    /// When the cookie was first stored, Unix seconds (keeps RFC 6265 ordering).
    #[serde(default)]
    pub created_at_unix: i64,
}

impl SameSite {
    /// Parse a `SameSite` attribute value, case-insensitively; `None` for anything else.
    pub fn parse(value: &str) -> Option<SameSite> {
        if value.eq_ignore_ascii_case("strict") {
            Some(SameSite::Strict)
        } else if value.eq_ignore_ascii_case("lax") {
            Some(SameSite::Lax)
        } else if value.eq_ignore_ascii_case("none") {
            Some(SameSite::None)
        } else {
            None
        }
    }

    /// The canonical attribute spelling (`Strict`, `Lax`, `None`).
    pub fn as_str(self) -> &'static str {
        match self {
            SameSite::Strict => "Strict",
            SameSite::Lax => "Lax",
            SameSite::None => "None",
        }
    }
}

impl Cookie {
    /// Whether the cookie has an expiry at or before `now_unix` (session cookies never expire).
    pub fn is_expired(&self, now_unix: i64) -> bool {
        self.expires_at_unix.is_some_and(|at| at <= now_unix)
    }

    /// Whether `other` names the same stored cookie: same name, domain, path and host-only-ness.
    pub fn same_identity(&self, other: &Cookie) -> bool {
        self.name == other.name
            && self.domain == other.domain
            && self.path == other.path
            && self.host_only == other.host_only
    }
}

/// The current time as Unix seconds (0 if the clock is before 1970).
pub fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}
