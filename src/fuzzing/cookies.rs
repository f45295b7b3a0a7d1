//! Cookie targets: the `Set-Cookie` and `--cookie` parsers, and merging into a jar.
//!
//! Input layout: the first byte picks the request URL from [`URLS`] (`b'0'`..`b'7'` pick
//! 0..7, so seeds stay readable), the rest is the header text. The jar target reads its
//! input twice: as a jar file, and as `Set-Cookie` lines each with its own URL byte.

use url::Url;

use super::text;
use crate::error::ErrorCode;
use crate::sdk::cookies::jar::CookieJar;
use crate::sdk::cookies::matching::{domain_matches, is_ip_host, path_matches, request_host};
use crate::sdk::cookies::parse::{parse_cli_cookie, parse_set_cookie, MAX_VALUE_BYTES};
use crate::sdk::cookies::Cookie;

/// A fixed clock, so runs are reproducible.
pub const NOW: i64 = 1_700_000_000;

/// Request URLs the inputs are received from: plain and TLS, IP literals, a public suffix
/// as host, IDNA, deep paths and a WebSocket origin.
pub const URLS: [&str; 8] = [
    "http://example.com/",
    "https://www.example.co.uk/a/b/c",
    "http://127.0.0.1:8080/x/y",
    "https://[::1]/p",
    "https://localhost/deep/path/",
    "http://com/",
    "https://xn--bcher-kva.example/%C3%A4/x",
    "wss://sub.domain.example.org:9/socket",
];

/// The request URL picked by `selector`.
// Harness code: the list is constant and the replay test parses every entry.
#[allow(clippy::expect_used)]
pub fn url_for(selector: u8) -> Url {
    let raw = URLS[usize::from(selector) % URLS.len()];
    Url::parse(raw).expect("URLS entries parse")
}

/// Split an input into its request URL and header text.
pub fn split(data: &[u8]) -> (Url, String) {
    match data.split_first() {
        Some((first, rest)) => (url_for(*first), text(rest).into_owned()),
        None => (url_for(0), String::new()),
    }
}

/// Target `set_cookie`: `parse_set_cookie` and `parse_cli_cookie` on the same text.
pub fn set_cookie(data: &[u8]) {
    let (url, header) = split(data);
    if let Some(c) = parse_set_cookie(&header, &url, NOW) {
        check_set_cookie(&c, &url);
        check_sent_back(&c, &url);
    }
    match parse_cli_cookie(&header, &url, NOW) {
        Ok(c) => check_cli_cookie(&c, &url),
        Err(e) => {
            assert_eq!(e.code, ErrorCode::InvalidArgument, "{e:?}");
            assert_no_raw_controls(&e.message);
            check_value_not_echoed(&header, &e.message);
        }
    }
}

/// Target `cookie_jar`: the input as a (hostile) jar file merged into a fresh jar, and as
/// `Set-Cookie` lines stored one by one; merging twice must change nothing.
pub fn cookie_jar(data: &[u8]) {
    match CookieJar::from_json_bytes(data) {
        Ok(loaded) => {
            check_json_round_trip(&loaded);
            // The raw file may hold duplicates and unsafe values: selection must cope.
            check_selections(&loaded);
            merge_twice(&loaded.cookies);
        }
        Err(e) => assert_eq!(e.code, ErrorCode::IoError, "{e:?}"),
    }
    let mut jar = CookieJar::default();
    let lines: Vec<(Url, String)> = data.split(|b| *b == b'\n').map(split).collect();
    let store_all = |jar: &mut CookieJar| {
        for (url, header) in &lines {
            jar.store_set_cookie_headers([header.as_str()], url, NOW);
        }
    };
    store_all(&mut jar);
    check_jar(&jar);
    check_json_round_trip(&jar);
    check_selections(&jar);
    let once = canonical(&jar);
    store_all(&mut jar);
    assert_eq!(
        canonical(&jar),
        once,
        "storing the same Set-Cookie lines twice changed the jar"
    );
}

/// The jar as a set: sorted by identity, which is unique in a stored jar. Order is not part
/// of the merge contract: deleting and re-adding a cookie moves it to the end, so a second
/// merge of the same input can reorder (RFC 6265 orders by path length and creation time).
fn canonical(jar: &CookieJar) -> Vec<Cookie> {
    let mut cookies = jar.cookies.clone();
    cookies.sort_by(|a, b| {
        (&a.name, &a.domain, &a.path, a.host_only).cmp(&(&b.name, &b.domain, &b.path, b.host_only))
    });
    cookies
}

/// Store `cookies` into an empty jar, check it, store them again: the jar must not change.
pub fn merge_twice(cookies: &[Cookie]) {
    let mut jar = CookieJar::default();
    for c in cookies {
        jar.store(c.clone(), NOW);
    }
    check_jar(&jar);
    check_selections(&jar);
    let once = canonical(&jar);
    for c in cookies {
        jar.store(c.clone(), NOW);
    }
    assert_eq!(
        canonical(&jar),
        once,
        "merging the same cookies twice changed the jar"
    );
}

/// What every stored cookie from either parser satisfies for a request to `url`.
fn check_common(c: &Cookie, url: &Url) {
    let host = request_host(url).unwrap_or_default();
    assert!(!c.name.is_empty(), "empty name: {c:?}");
    // The pair is split at the first ';' and then the first '=': neither can survive.
    assert!(!c.name.contains(['=', ';']), "separator in name: {c:?}");
    assert!(!c.value.contains(';'), "';' in value: {c:?}");
    for s in [&c.name, &c.value, &c.domain, &c.path] {
        assert!(
            !s.chars().any(|ch| ch.is_control() && ch != '\t'),
            "control character stored: {c:?}"
        );
    }
    assert!(c.path.starts_with('/'), "path must start with '/': {c:?}");
    assert!(
        !c.domain.is_empty() && !c.domain.starts_with('.'),
        "bad domain: {c:?}"
    );
    assert_eq!(
        c.domain,
        c.domain.to_ascii_lowercase(),
        "domain not lower-case"
    );
    if c.host_only {
        assert_eq!(c.domain, host, "host-only cookie for another host: {c:?}");
    } else {
        assert!(domain_matches(&host, &c.domain), "domain mismatch: {c:?}");
        assert!(!is_ip_host(&c.domain), "domain cookie on an IP: {c:?}");
        assert_ne!(
            psl::suffix_str(&c.domain),
            Some(c.domain.as_str()),
            "domain cookie on a public suffix: {c:?}"
        );
    }
    assert_eq!(c.created_at_unix, NOW);
    let json = serde_json::to_string(c).unwrap_or_default();
    let back: Option<Cookie> = serde_json::from_str(&json).ok();
    assert_eq!(back.as_ref(), Some(c), "cookie JSON does not round-trip");
}

/// `Set-Cookie` specifics: size limit, Secure only from secure origins, prefix rules.
fn check_set_cookie(c: &Cookie, url: &Url) {
    check_common(c, url);
    assert!(
        c.name.len() + c.value.len() <= MAX_VALUE_BYTES,
        "oversized cookie stored"
    );
    let secure_origin = matches!(url.scheme(), "https" | "wss");
    assert!(
        !c.secure || secure_origin,
        "Secure cookie from an insecure origin"
    );
    let prefixed = |p: &str| {
        c.name
            .get(..p.len())
            .is_some_and(|h| h.eq_ignore_ascii_case(p))
    };
    if prefixed("__Secure-") {
        assert!(c.secure, "__Secure- cookie without Secure");
    }
    if prefixed("__Host-") {
        assert!(
            c.secure && c.host_only && c.path == "/",
            "__Host- cookie breaks its prefix rules: {c:?}"
        );
    }
}

/// `--cookie` specifics: token name, no control characters at all, bounded value, path
/// matching the URL, never already expired.
fn check_cli_cookie(c: &Cookie, url: &Url) {
    check_common(c, url);
    assert!(
        c.name
            .chars()
            .all(|ch| ch.is_ascii_graphic() && !"()<>@,;:\\\"/[]?={}".contains(ch)),
        "--cookie name is not a token: {c:?}"
    );
    assert!(
        !c.value.chars().any(char::is_control),
        "control char in value"
    );
    assert!(c.value.len() <= MAX_VALUE_BYTES, "oversized --cookie value");
    assert!(
        path_matches(url.path(), &c.path),
        "path does not match URL: {c:?}"
    );
    assert!(
        c.expires_at_unix.is_none_or(|at| at > NOW),
        "--cookie accepted an expired cookie: {c:?}"
    );
}

/// A live cookie stored from `url` is sent back to `url` when its path matches, or reported
/// as skipped; never silently lost.
fn check_sent_back(c: &Cookie, url: &Url) {
    let mut jar = CookieJar::default();
    jar.store(c.clone(), NOW);
    if c.is_expired(NOW) {
        assert!(jar.cookies.is_empty(), "expired cookie was stored");
        return;
    }
    let sel = jar.select_for_url(url, NOW);
    if path_matches(url.path(), &c.path) {
        let sent = sel.header.as_deref() == Some(format!("{}={}", c.name, c.value).as_str());
        assert!(
            sent || sel.skipped.len() == 1,
            "cookie neither sent nor skipped: {c:?} {sel:?}"
        );
    } else {
        assert_eq!(sel.header, None, "cookie sent to a non-matching path");
    }
}

/// Jar invariants after any sequence of stores: unique identities, nothing expired.
pub fn check_jar(jar: &CookieJar) {
    for (i, c) in jar.cookies.iter().enumerate() {
        assert!(!c.is_expired(NOW), "expired cookie kept: {c:?}");
        assert!(
            !jar.cookies[i + 1..].iter().any(|o| o.same_identity(c)),
            "duplicate identity kept: {c:?}"
        );
    }
}

/// The jar file written for `jar` reads back as the same jar.
pub fn check_json_round_trip(jar: &CookieJar) {
    let bytes = jar.to_json_bytes();
    assert!(bytes.is_ok(), "jar does not serialize: {bytes:?}");
    let back = CookieJar::from_json_bytes(&bytes.unwrap_or_default());
    assert!(
        back.as_ref().is_ok_and(|b| b == jar),
        "jar JSON does not round-trip: {back:?}"
    );
}

/// For every request URL: the `Cookie` header is a valid header value without control
/// characters, and each `name=value` in it is one whole live matching cookie of the jar (no
/// `;` injection can forge another).
pub fn check_selections(jar: &CookieJar) {
    for selector in 0..URLS.len() {
        let url = url_for(selector as u8);
        let Some(header) = jar.select_for_url(&url, NOW).header else {
            continue;
        };
        assert!(!header.chars().any(|c| c.is_ascii_control()), "{header:?}");
        assert!(
            reqwest::header::HeaderValue::from_str(&header).is_ok(),
            "not a valid header value: {header:?}"
        );
        let host = request_host(&url).unwrap_or_default();
        for pair in header.split("; ") {
            let found = jar.cookies.iter().any(|c| {
                format!("{}={}", c.name, c.value) == pair
                    && !c.is_expired(NOW)
                    && path_matches(url.path(), &c.path)
                    && if c.host_only {
                        host.eq_ignore_ascii_case(&c.domain)
                    } else {
                        domain_matches(&host, &c.domain)
                    }
            });
            assert!(found, "{pair:?} in {header:?} is not a cookie for {url}");
        }
    }
}

/// Error and warning text reaches terminals: control characters must come escaped.
pub fn assert_no_raw_controls(message: &str) {
    assert!(
        !message.chars().any(char::is_control),
        "raw control character in message: {message:?}"
    );
}

/// `--cookie` errors never echo the value. Checked for long alphanumeric values that cannot
/// coincide with the fixed message text, the name or the attributes.
fn check_value_not_echoed(spec: &str, message: &str) {
    let (pair, attrs) = spec.split_once(';').unwrap_or((spec, ""));
    let Some((name, value)) = pair.split_once('=') else {
        return;
    };
    let value = value.trim_matches([' ', '\t']);
    if value.len() >= 16
        && value.chars().all(|c| c.is_ascii_alphanumeric())
        && !name.contains(value)
        && !attrs.contains(value)
    {
        assert!(
            !message.contains(value),
            "--cookie error echoes the value: {message}"
        );
    }
}
