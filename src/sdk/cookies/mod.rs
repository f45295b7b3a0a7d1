//! Cookies: the `--cookie` syntax, `Set-Cookie` parsing, RFC 6265 matching, and the
//! JSON cookie jar file shared safely between concurrent processes.

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
