//! A string that must never be printed: bearer tokens and token-bearing values.
//!
//! `Debug` and `Display` show `***`, so a secret inside a struct that derives `Debug` (clap
//! arguments, requests, clients) cannot leak into a trace, a log line or an error message.

use std::convert::Infallible;
use std::fmt;
use std::str::FromStr;

use crate::envelope::REDACTED;

/// A secret value; read it only through [`Secret::expose`], at the point of use.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Secret(String);

impl Secret {
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

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
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
}
