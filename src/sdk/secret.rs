//! Values that must never be printed: bearer tokens, and URLs that may carry credentials
//! (a proxy's `user:password@`).
//!
//! [`Secret`] is the one redacting type. `Secret<String>` (a token, or a raw value such as a
//! proxy URL as typed) shows `***`; `Secret<Url>` (a parsed credential-bearing URL) shows the
//! URL with its password replaced by `***`. Both hide in `Debug` and `Display`, so a secret
//! inside a struct that derives `Debug` (clap arguments, requests, clients, host options)
//! cannot leak into a trace, a log line or an error message; the value is read only through
//! `expose`/`expose_url`, at the point of use.

use std::convert::Infallible;
use std::fmt;
use std::str::FromStr;

use url::Url;

use crate::envelope::REDACTED;

/// A secret value; read it only through [`Secret::expose`] (or [`Secret::expose_url`]).
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Secret<T = String>(T);

impl Secret<String> {
    /// Wrap a value.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The value itself, for the one place that sends it (an `Authorization` header).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the value is empty or only whitespace.
    pub fn is_blank(&self) -> bool {
        self.0.trim().is_empty()
    }
}

impl Secret<Url> {
    /// Wrap a URL that may carry credentials.
    pub fn from_url(url: Url) -> Secret<Url> {
        Secret(url)
    }

    /// The URL itself, credentials included, for the one place that connects with it.
    pub fn expose_url(&self) -> &Url {
        &self.0
    }

    /// Whether the URL carries a user name or a password.
    pub fn has_credentials(&self) -> bool {
        !self.0.username().is_empty() || self.0.password().is_some()
    }
}

impl fmt::Debug for Secret<String> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl fmt::Display for Secret<String> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl fmt::Debug for Secret<Url> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for Secret<Url> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::sdk::redact::url(self.0.as_str()))
    }
}

impl FromStr for Secret {
    type Err = Infallible;
    fn from_str(s: &str) -> Result<Secret, Infallible> {
        Ok(Secret::new(s))
    }
}

impl From<String> for Secret {
    fn from(s: String) -> Secret {
        Secret(s)
    }
}

impl From<&str> for Secret {
    fn from(s: &str) -> Secret {
        Secret(s.to_string())
    }
}

/// A secret string is read from JSON as a plain string (an MCP tool's `proxy_url`).
impl<'de> serde::Deserialize<'de> for Secret {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Secret, D::Error> {
        String::deserialize(d).map(Secret)
    }
}

/// Its JSON schema is a string's.
#[cfg(feature = "mcp")]
impl schemars::JsonSchema for Secret {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        String::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }

    fn inline_schema() -> bool {
        true
    }
}

/// `Option<&Secret>` → `Option<&str>` at the point of use.
pub fn expose(secret: Option<&Secret>) -> Option<&str> {
    secret.map(Secret::expose)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_printed() {
        #[derive(Debug)]
        #[allow(dead_code)]
        struct Holder {
            token: Option<Secret>,
        }
        let h = Holder {
            token: Some(Secret::new("hunter2")),
        };
        let shown = format!("{h:?} {}", Secret::new("hunter2"));
        assert!(!shown.contains("hunter2"), "{shown}");
        assert_eq!(h.token.as_ref().map(Secret::expose), Some("hunter2"));
    }

    #[test]
    fn a_url_shows_everything_but_its_password() {
        let url = url::Url::parse("http://user:hunter2@proxy.example:3128/").unwrap();
        let s = Secret::from_url(url);
        for shown in [format!("{s:?}"), s.to_string()] {
            assert!(!shown.contains("hunter2"), "{shown}");
            assert!(shown.contains("user:***@proxy.example:3128"), "{shown}");
        }
        assert!(s.has_credentials());
        assert_eq!(s.expose_url().password(), Some("hunter2"));
    }

    /// A proxy URL's password shows nowhere: not in the spec's or the request's `Debug`,
    /// and not in the error about a malformed one.
    #[test]
    fn requests_never_show_a_proxy_password() {
        use crate::sdk::fetch::FetchSpec;
        let spec = FetchSpec {
            url: "http://127.0.0.1:9/".into(),
            proxy_url: Some(Secret::new("http://user:hunter2@127.0.0.1:3128")),
            ..FetchSpec::default()
        };
        let req = spec.clone().validate().unwrap();
        for shown in [format!("{spec:?}"), format!("{req:?}")] {
            assert!(!shown.contains("hunter2"), "{shown}");
        }
        let bad = FetchSpec {
            proxy_url: Some(Secret::new("http://user:hunter2@[::1")),
            ..spec
        };
        let e = bad.validate().unwrap_err();
        let shown = format!("{e:?} {} {:?}", e.message, e.hint);
        assert!(!shown.contains("hunter2"), "{shown}");
    }
}
