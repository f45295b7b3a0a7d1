//! Command-line input targets: `--wait`, `--endpoint-url` (and the host's `--listen`),
//! `--header` (and `--method`), and profile names. The whole input is the argument text.

use std::path::{Component, Path};

use super::cookies::assert_no_raw_controls;
use super::text;
use crate::error::{AfError, ErrorCode};
use crate::profile::{parse_age, Backend, ProfileName, MAX_NAME_LEN};
use crate::sdk::endpoint::Endpoint;
use crate::sdk::fetch::options::{parse_method, HeaderPair};
use crate::sdk::request::{Wait, MAX_WAIT_MS};

/// A refusal carries `code` and a message safe to print.
fn check_refusal(e: &AfError, code: ErrorCode) {
    assert_eq!(e.code, code, "{e:?}");
    assert_no_raw_controls(&e.message);
}

/// Target `wait_spec`: accepted specs are bounded and print back to themselves.
pub fn wait_spec(data: &[u8]) {
    let raw = text(data);
    match raw.parse::<Wait>() {
        Ok(w) => {
            match &w {
                Wait::Ms(n) => assert!(*n <= MAX_WAIT_MS, "{w:?}"),
                Wait::Selector(css) | Wait::SelectorVisible(css) => {
                    assert!(!css.is_empty() && css.len() <= 4096, "{w:?}");
                    assert_eq!(css.as_str(), css.trim(), "selector not trimmed");
                    assert!(!css.chars().any(char::is_control), "{w:?}");
                }
                Wait::Auto | Wait::Load | Wait::Idle => {}
            }
            let again = w.to_string().parse::<Wait>();
            assert!(
                again.as_ref().is_ok_and(|a| *a == w),
                "{w:?} printed as {:?} parses as {again:?}",
                w.to_string()
            );
        }
        Err(e) => check_refusal(&e, ErrorCode::InvalidArgument),
    }
}

/// Target `endpoint`: `Endpoint::parse` (driver side) and, with the host feature,
/// `ListenAddr::parse` (host side).
pub fn endpoint(data: &[u8]) {
    let raw = text(data);
    match Endpoint::parse(&raw) {
        Ok(ep) => check_endpoint(&ep),
        Err(e) => check_refusal(&e, ErrorCode::InvalidEndpoint),
    }
    #[cfg(feature = "host")]
    listen_addr(&raw);
}

fn check_endpoint(ep: &Endpoint) {
    match ep {
        Endpoint::Tcp { host, .. } => {
            assert!(!host.is_empty(), "{ep:?}");
            assert!(
                !host.contains(|c: char| c.is_control() || "/?#@ ".contains(c)),
                "host carries URL syntax: {ep:?}"
            );
            // The derived base URL is what control routes are built on; it must be
            // re-parsable and name the same endpoint.
            let base = ep.http_base();
            let again = Endpoint::parse(&base);
            assert!(
                again.as_ref().is_ok_and(|a| a == ep),
                "{ep:?} → {base:?} → {again:?}"
            );
        }
        Endpoint::Unix(path) => {
            assert!(path.is_absolute(), "{ep:?}");
            assert!(
                !path.components().any(|c| c == Component::ParentDir),
                "'..' in socket path: {ep:?}"
            );
            let shown = path.to_string_lossy();
            assert!(!shown.chars().any(char::is_control), "{ep:?}");
        }
    }
}

#[cfg(feature = "host")]
fn listen_addr(raw: &str) {
    use crate::host::listener::ListenAddr;
    match ListenAddr::parse(raw) {
        Ok(addr) => {
            let shown = addr.to_string();
            let again = ListenAddr::parse(&shown);
            assert!(
                again.as_ref().is_ok_and(|a| *a == addr),
                "{addr:?} → {shown:?} → {again:?}"
            );
        }
        Err(e) => check_refusal(&e, ErrorCode::InvalidArgument),
    }
}

/// Target `header`: accepted `--header` pairs are valid on the wire and re-parse to
/// themselves; accepted `--method` values are valid methods.
pub fn header(data: &[u8]) {
    let raw = text(data);
    match HeaderPair::parse(&raw) {
        Ok(h) => {
            assert!(
                reqwest::header::HeaderName::from_bytes(h.name.as_bytes()).is_ok(),
                "accepted name is not a header name: {h:?}"
            );
            assert!(
                reqwest::header::HeaderValue::from_str(&h.value).is_ok(),
                "accepted value is not a header value: {h:?}"
            );
            assert!(h.name.len() <= 256 && h.value.len() <= 16 * 1024, "{h:?}");
            let framing = [
                "content-length",
                "transfer-encoding",
                "connection",
                "upgrade",
                "te",
            ];
            assert!(
                !framing.contains(&h.name.to_ascii_lowercase().as_str()),
                "framing header accepted: {h:?}"
            );
            let again = HeaderPair::parse(&format!("{}:{}", h.name, h.value));
            assert!(again.as_ref().is_ok_and(|a| *a == h), "{h:?} → {again:?}");
        }
        Err(e) => check_refusal(&e, ErrorCode::InvalidArgument),
    }
    match parse_method(&raw) {
        Ok(m) => {
            assert!(reqwest::Method::from_bytes(m.as_bytes()).is_ok(), "{m:?}");
            assert!(
                !m.eq_ignore_ascii_case("CONNECT") && !m.eq_ignore_ascii_case("TRACE"),
                "{m:?}"
            );
        }
        Err(e) => check_refusal(&e, ErrorCode::InvalidArgument),
    }
}

/// Target `profile_name`: an accepted name is exactly one plain path component that stays
/// under the profile root, taken verbatim. The same text also goes through the other
/// profile arguments: `--backend` and `profile prune --older-than`.
pub fn profile_name(data: &[u8]) {
    let raw = text(data);
    match ProfileName::parse(&raw) {
        Ok(name) => {
            let s = name.as_str();
            assert_eq!(s, raw, "name changed while validating");
            assert!(!s.is_empty() && s.len() <= MAX_NAME_LEN, "{s:?}");
            assert!(
                s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')),
                "{s:?}"
            );
            assert!(!s.starts_with(['.', '-']), "{s:?}");
            let comps: Vec<Component<'_>> = Path::new(s).components().collect();
            assert_eq!(
                comps,
                vec![Component::Normal(s.as_ref())],
                "{s:?} is not one plain path component"
            );
            let root = Path::new("/profiles/chromium");
            assert_eq!(root.join(s).parent(), Some(root), "{s:?} escapes the root");
            let again = name.to_string().parse::<ProfileName>();
            assert!(again.is_ok_and(|a| a == name), "{s:?} does not round-trip");
        }
        Err(e) => check_refusal(&e, ErrorCode::ProfileInvalidName),
    }
    match Backend::parse(&raw) {
        Ok(b) => assert_eq!(b.as_str(), raw, "backend accepted a different spelling"),
        Err(e) => check_refusal(&e, ErrorCode::InvalidArgument),
    }
    match parse_age(&raw) {
        Ok(age) => assert!(i64::try_from(age.as_secs()).is_ok(), "{age:?}"),
        Err(e) => check_refusal(&e, ErrorCode::InvalidArgument),
    }
}
