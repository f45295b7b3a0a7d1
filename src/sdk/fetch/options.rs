//! Validated pieces of a fetch request: method, headers, bodies, transport options.

use std::path::PathBuf;

use url::Url;

use crate::error::AfError;
use crate::sdk::secret::Secret;

/// A request header given with `--header NAME:VALUE`, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderPair {
    /// Header name as given.
    pub name: String,
    /// Header value, trimmed of surrounding whitespace.
    pub value: String,
}

/// Headers that would break message framing or that afhttp owns.
const REFUSED_HEADERS: &[&str] = &[
    "content-length",
    "transfer-encoding",
    "connection",
    "upgrade",
    "te",
];

fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

impl HeaderPair {
    /// Parse `NAME:VALUE`.
    pub fn parse(raw: &str) -> Result<HeaderPair, AfError> {
        let (name, value) = raw
            .split_once(':')
            .ok_or_else(|| AfError::invalid(format!("header {raw:?} needs NAME:VALUE")))?;
        let name = name.trim();
        if !is_token(name) || name.len() > 256 {
            return Err(AfError::invalid(format!(
                "header name {name:?} is not a valid header name"
            )));
        }
        if REFUSED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
            return Err(AfError::invalid(format!(
                "header {name} is managed by afhttp and cannot be set"
            )));
        }
        let value = value.trim();
        if value.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f) {
            return Err(AfError::invalid(format!(
                "header {name}: the value contains control characters"
            )));
        }
        if value.len() > 16 * 1024 {
            return Err(AfError::invalid(format!(
                "header {name}: the value is longer than 16 KiB"
            )));
        }
        Ok(HeaderPair {
            name: name.to_string(),
            value: value.to_string(),
        })
    }
}

/// Validate an HTTP method token; well-known methods are upper-cased.
pub fn parse_method(raw: &str) -> Result<String, AfError> {
    if !is_token(raw) || raw.len() > 32 {
        return Err(AfError::invalid(format!(
            "method {raw:?} is not a valid HTTP method"
        )));
    }
    let upper = raw.to_ascii_uppercase();
    let known = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
    if upper == "CONNECT" || upper == "TRACE" {
        return Err(AfError::invalid(format!("method {upper} is not supported")));
    }
    Ok(if known.contains(&upper.as_str()) {
        upper
    } else {
        raw.to_string()
    })
}

/// One `--form` field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormValue {
    /// A literal value.
    Text(String),
    /// `@file`: the file's bytes, uploaded as multipart.
    File(PathBuf),
}

/// The request body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestBody {
    /// `--data`: raw bytes (content type from `--header` or `application/x-www-form-urlencoded` like curl).
    Bytes(Vec<u8>),
    /// `--form` fields; multipart when any value is a file.
    Form(Vec<(String, FormValue)>),
}

impl RequestBody {
    /// Whether the body is multipart.
    pub fn is_multipart(&self) -> bool {
        matches!(self, RequestBody::Form(fields) if fields.iter().any(|(_, v)| matches!(v, FormValue::File(_))))
    }

    /// Size in bytes when known up front (text bodies).
    pub fn len_hint(&self) -> Option<usize> {
        match self {
            RequestBody::Bytes(b) => Some(b.len()),
            RequestBody::Form(_) => None,
        }
    }
}

/// Resolve `--data STRING|@FILE|@-` into bytes.
pub fn read_data(raw: &str) -> Result<Vec<u8>, AfError> {
    match raw.strip_prefix('@') {
        Some("-") => {
            use std::io::Read;
            let mut buf = Vec::new();
            std::io::stdin()
                .read_to_end(&mut buf)
                .map_err(|e| AfError::io("read data from stdin", &e))?;
            Ok(buf)
        }
        Some(path) => std::fs::read(path)
            .map_err(|e| AfError::invalid(format!("data @{path}: cannot read the file ({e})"))),
        None => Ok(raw.as_bytes().to_vec()),
    }
}

/// Parse `--form name=value` / `name=@file`.
pub fn parse_form_field(raw: &str) -> Result<(String, FormValue), AfError> {
    let (name, value) = raw
        .split_once('=')
        .ok_or_else(|| AfError::invalid(format!("form {raw:?} needs NAME=VALUE")))?;
    if name.is_empty() || name.chars().any(char::is_control) {
        return Err(AfError::invalid(format!(
            "form {raw:?}: the field name is empty or has control characters"
        )));
    }
    match value.strip_prefix('@') {
        Some(path) => {
            let p = PathBuf::from(path);
            if !p.is_file() {
                return Err(AfError::invalid(format!(
                    "form {name}=@{path}: no such file"
                )));
            }
            Ok((name.to_string(), FormValue::File(p)))
        }
        None => Ok((name.to_string(), FormValue::Text(value.to_string()))),
    }
}

/// Network options for the HTTP client.
#[derive(Debug, Clone, Default)]
pub struct TransportOptions {
    /// Explicit proxy (`http://`, `https://`, `socks5://`, `socks5h://`); ambient proxies are never used.
    /// Its credentials, if any, never show in `Debug`.
    pub proxy_url: Option<Secret<Url>>,
    /// Extra PEM CA bundle to trust.
    pub ca_cert: Option<PathBuf>,
    /// Accept any certificate.
    pub tls_insecure: bool,
    /// The egress policy this fetch's own connections obey (`None`: none, as for the CLI):
    /// the plain-HTTP step checks every hop, and an inline browser runs behind the host's
    /// egress proxy with it. Set by [`super::FetchRequest::with_egress_policy`].
    pub egress: Option<crate::sdk::egress::Policy>,
}

/// Validate a `proxy_url` (its password is never shown, in errors or in `Debug`).
pub fn parse_proxy_url(raw: &str) -> Result<Secret<Url>, AfError> {
    let url = Url::parse(raw).map_err(|e| {
        let shown = crate::sdk::redact::url(raw);
        AfError::invalid(format!("proxy_url {shown:?} is not a URL ({e})"))
    })?;
    if !matches!(url.scheme(), "http" | "https" | "socks5" | "socks5h") {
        return Err(AfError::invalid(format!(
            "proxy_url scheme {:?} is not supported (http, https, socks5, socks5h)",
            url.scheme()
        )));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(AfError::invalid("proxy_url has no host"));
    }
    Ok(Secret::from_url(url))
}

/// Validate the target URL: http or https only, with a host, bounded length.
pub fn parse_target_url(raw: &str) -> Result<Url, AfError> {
    if raw.is_empty() {
        return Err(AfError::invalid("the URL is empty"));
    }
    if raw.len() > 8192 {
        return Err(AfError::invalid("the URL is longer than 8192 bytes"));
    }
    if raw.chars().any(char::is_control) {
        return Err(AfError::invalid("the URL contains control characters"));
    }
    let url =
        Url::parse(raw).map_err(|e| AfError::invalid(format!("{raw:?} is not a URL ({e})")))?;
    match url.scheme() {
        "http" | "https" => {}
        other => {
            return Err(AfError::invalid(format!(
                "only http and https URLs are fetched, not {other}:"
            )))
        }
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(AfError::invalid("the URL has no host"));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    /// A malformed proxy URL's password is not echoed in the refusal (it used to be).
    #[test]
    fn a_malformed_proxy_url_does_not_echo_its_password() {
        for raw in [
            "http://user:hunter2@proxy:99999",
            "socks5://user:hunter2@[::1",
        ] {
            let e = super::parse_proxy_url(raw).unwrap_err();
            assert!(!e.message.contains("hunter2"), "{}", e.message);
            assert!(e.message.contains("user:***@"), "{}", e.message);
        }
    }

    use super::*;

    #[test]
    fn headers() {
        let h = HeaderPair::parse("X-Test:  a b ").unwrap();
        assert_eq!((h.name.as_str(), h.value.as_str()), ("X-Test", "a b"));
        for bad in [
            "NoColon",
            ":v",
            "Bad Name:v",
            "X:a\r\nInjected: 1",
            "Content-Length: 5",
            "X:\u{0}",
        ] {
            assert!(HeaderPair::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn methods() {
        assert_eq!(parse_method("post").unwrap(), "POST");
        assert_eq!(parse_method("PROPFIND").unwrap(), "PROPFIND");
        assert!(parse_method("GE T").is_err());
        assert!(parse_method("").is_err());
        assert!(parse_method("CONNECT").is_err());
    }

    #[test]
    fn urls() {
        assert!(parse_target_url("http://127.0.0.1:1/").is_ok());
        for bad in [
            "",
            "javascript:alert(1)",
            "file:///etc/passwd",
            "ftp://x/",
            "http://",
            "not a url",
            "data:text/html,hi",
        ] {
            assert!(parse_target_url(bad).is_err(), "{bad:?}");
        }
        assert!(parse_target_url(&format!("http://h/{}", "a".repeat(10_000))).is_err());
    }

    #[test]
    fn proxies() {
        assert!(parse_proxy_url("socks5://127.0.0.1:1080").is_ok());
        assert!(parse_proxy_url("ftp://x").is_err());
        assert!(parse_proxy_url("nonsense").is_err());
    }

    #[test]
    fn forms() {
        assert_eq!(
            parse_form_field("a=b=c").unwrap(),
            ("a".into(), FormValue::Text("b=c".into()))
        );
        assert!(parse_form_field("novalue").is_err());
        assert!(parse_form_field("f=@/definitely/missing").is_err());
    }
}
