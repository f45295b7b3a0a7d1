//! RFC 6265 §5.1.3/§5.1.4/§5.4 matching: which cookies a request to a URL carries, and in
//! which order.

use std::net::IpAddr;

use url::{Host, Url};

use super::Cookie;
use crate::error::{ErrorCode, Warning};

/// The canonical request host of `url`: lower-case ASCII (punycode) domain, dotted IPv4, or
/// bracketed IPv6 — the same spelling stored in [`Cookie::domain`]. `None` without a host.
pub fn request_host(url: &Url) -> Option<String> {
    match url.host()? {
        Host::Domain(d) => Some(d.to_ascii_lowercase()),
        Host::Ipv4(a) => Some(a.to_string()),
        Host::Ipv6(a) => Some(format!("[{a}]")),
    }
}

/// Whether `host` is an IP address literal (IPv6 with or without brackets).
pub fn is_ip_host(host: &str) -> bool {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    bare.parse::<IpAddr>().is_ok()
}

/// RFC 6265 §5.1.3 domain-match: identical (case-insensitively), or `host` ends with
/// `.domain` and is not an IP address.
pub fn domain_matches(host: &str, domain: &str) -> bool {
    if host.eq_ignore_ascii_case(domain) {
        return true;
    }
    if domain.is_empty() || is_ip_host(host) || host.len() <= domain.len() {
        return false;
    }
    let split = host.len() - domain.len();
    // Byte-level checks: a multi-byte char boundary can never sit right after a '.'.
    host.as_bytes()[split - 1] == b'.'
        && host.as_bytes()[split..].eq_ignore_ascii_case(domain.as_bytes())
}

/// RFC 6265 §5.1.4 path-match: identical, or `cookie_path` is a prefix of `request_path` that
/// ends with `/` or is followed by `/` (so `/docs` matches `/docs/a` but not `/docsx`).
pub fn path_matches(request_path: &str, cookie_path: &str) -> bool {
    if request_path == cookie_path {
        return true;
    }
    match request_path.strip_prefix(cookie_path) {
        Some(rest) => cookie_path.ends_with('/') || rest.starts_with('/'),
        None => false,
    }
}

/// RFC 6265 §5.1.4 default-path: the URL path up to (not including) its last `/`, or `/`
/// when that would be empty or the path does not start with `/`.
pub fn default_path(url: &Url) -> String {
    let path = url.path();
    if !path.starts_with('/') {
        return "/".to_string();
    }
    match path.rfind('/') {
        Some(0) | None => "/".to_string(),
        Some(i) => path[..i].to_string(),
    }
}

/// The `Cookie` header for one request and the cookies deliberately left out of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// `name=value; name2=value2` in RFC 6265 §5.4 order; `None` when no cookie applies.
    pub header: Option<String>,
    /// Cookies that matched the URL but were not sent, with why.
    pub skipped: Vec<SkippedCookie>,
}

/// A cookie that matched a URL but was not sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedCookie {
    /// The cookie name.
    pub name: String,
    /// Why it was not sent, for humans.
    pub reason: String,
}

impl Selection {
    /// One `cookie_skipped` warning per skipped cookie, for the result's `warnings`.
    pub fn warnings(&self) -> Vec<Warning> {
        self.skipped
            .iter()
            .map(|s| {
                Warning::general(
                    ErrorCode::CookieSkipped,
                    format!("cookie {:?} not sent: {}", s.name, s.reason),
                )
            })
            .collect()
    }
}

/// Whether a cookie's name and value can go into a `Cookie` header as-is. Hand-edited jars
/// could hold anything; CR/LF would split the header and `;`/`=` would forge other cookies.
fn header_safe(cookie: &Cookie) -> bool {
    let ctl = |c: char| c.is_ascii_control();
    !cookie.name.is_empty()
        && !cookie
            .name
            .contains(|c: char| ctl(c) || c == ';' || c == '=')
        && !cookie.value.contains(|c: char| ctl(c) || c == ';')
}

/// Select the cookies that apply to `url` at `now_unix` (RFC 6265 §5.4) and build the header.
///
/// Host-only cookies need the exact host, others a domain-match; the path must path-match and
/// the cookie must not be expired. A Secure cookie that otherwise matches a non-https URL is
/// reported in `skipped`. When two cookies share name, domain, path and host-only-ness the later
/// one in `cookies` wins, so callers pass jar cookies first and `--cookie` values last.
pub fn select_for_url(cookies: &[Cookie], url: &Url, now_unix: i64) -> Selection {
    let mut selection = Selection::default();
    let secure_scheme = matches!(url.scheme(), "https" | "wss");
    if !(secure_scheme || matches!(url.scheme(), "http" | "ws")) {
        return selection;
    }
    let Some(host) = request_host(url) else {
        return selection;
    };
    let path = url.path();
    let mut chosen: Vec<(usize, &Cookie)> = Vec::new();
    for (i, cookie) in cookies.iter().enumerate() {
        // A later cookie with the same identity replaces this one entirely.
        if cookies[i + 1..].iter().any(|c| c.same_identity(cookie)) {
            continue;
        }
        let host_ok = if cookie.host_only {
            host.eq_ignore_ascii_case(&cookie.domain)
        } else {
            domain_matches(&host, &cookie.domain)
        };
        if !host_ok || !path_matches(path, &cookie.path) || cookie.is_expired(now_unix) {
            continue;
        }
        if cookie.secure && !secure_scheme {
            selection.skipped.push(SkippedCookie {
                name: cookie.name.clone(),
                reason: format!("Secure cookie is not sent over {}://", url.scheme()),
            });
            continue;
        }
        if !header_safe(cookie) {
            selection.skipped.push(SkippedCookie {
                name: cookie.name.clone(),
                reason: "name or value holds characters not allowed in a Cookie header".to_string(),
            });
            continue;
        }
        chosen.push((i, cookie));
    }
    // Longer paths first, then earlier creation, then input order (RFC 6265 §5.4 step 2).
    chosen.sort_by(|(ia, a), (ib, b)| {
        b.path
            .len()
            .cmp(&a.path.len())
            .then(a.created_at_unix.cmp(&b.created_at_unix))
            .then(ia.cmp(ib))
    });
    if !chosen.is_empty() {
        let pairs: Vec<String> = chosen
            .iter()
            .map(|(_, c)| format!("{}={}", c.name, c.value))
            .collect();
        selection.header = Some(pairs.join("; "));
    }
    selection
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn cookie(name: &str, domain: &str, host_only: bool, path: &str) -> Cookie {
        Cookie {
            name: name.into(),
            value: format!("v-{name}"),
            domain: domain.into(),
            host_only,
            path: path.into(),
            secure: false,
            http_only: false,
            same_site: None,
            expires_at_unix: None,
            created_at_unix: 100,
        }
    }

    fn header(cookies: &[Cookie], u: &str) -> Option<String> {
        select_for_url(cookies, &url(u), 1000).header
    }

    #[test]
    fn domain_match_rules() {
        assert!(domain_matches("example.com", "example.com"));
        assert!(domain_matches("EXAMPLE.com", "example.COM"));
        assert!(domain_matches("a.b.example.com", "example.com"));
        assert!(!domain_matches("badexample.com", "example.com"));
        assert!(!domain_matches("example.com", "a.example.com"));
        assert!(!domain_matches("example.com", ""));
        assert!(domain_matches("127.0.0.1", "127.0.0.1"));
        assert!(!domain_matches("10.0.0.1", "0.1"));
        assert!(domain_matches("[::1]", "[::1]"));
        assert!(is_ip_host("[::1]") && is_ip_host("::1") && is_ip_host("10.1.2.3"));
        assert!(!is_ip_host("example.com"));
    }

    #[test]
    fn path_match_rules() {
        assert!(path_matches("/docs", "/docs"));
        assert!(path_matches("/docs/", "/docs"));
        assert!(path_matches("/docs/a/b", "/docs"));
        assert!(!path_matches("/docsx", "/docs"));
        assert!(path_matches("/docs/a", "/docs/"));
        assert!(!path_matches("/docs", "/docs/"));
        assert!(path_matches("/anything", "/"));
        assert!(!path_matches("/", "/docs"));
        assert!(!path_matches("/Docs", "/docs"));
    }

    #[test]
    fn default_path_rules() {
        assert_eq!(default_path(&url("https://e.com")), "/");
        assert_eq!(default_path(&url("https://e.com/")), "/");
        assert_eq!(default_path(&url("https://e.com/a")), "/");
        assert_eq!(default_path(&url("https://e.com/a/")), "/a");
        assert_eq!(default_path(&url("https://e.com/a/b?x=/y/z")), "/a");
        assert_eq!(default_path(&url("https://e.com/a/b/c")), "/a/b");
    }

    #[test]
    fn request_host_is_canonical() {
        assert_eq!(
            request_host(&url("https://WWW.Example.COM/")).unwrap(),
            "www.example.com"
        );
        assert_eq!(request_host(&url("http://[::1]:8080/")).unwrap(), "[::1]");
        assert_eq!(
            request_host(&url("http://127.0.0.1/")).unwrap(),
            "127.0.0.1"
        );
        assert_eq!(request_host(&url("data:text/plain,x")), None);
    }

    #[test]
    fn host_only_vs_domain_cookies() {
        let cookies = vec![
            cookie("host", "example.com", true, "/"),
            cookie("dom", "example.com", false, "/"),
        ];
        assert_eq!(
            header(&cookies, "https://example.com/").as_deref(),
            Some("host=v-host; dom=v-dom")
        );
        assert_eq!(
            header(&cookies, "https://sub.example.com/").as_deref(),
            Some("dom=v-dom")
        );
        assert_eq!(header(&cookies, "https://other.com/"), None);
        assert_eq!(header(&cookies, "https://notexample.com/"), None);
    }

    #[test]
    fn path_scoping_in_selection() {
        let cookies = vec![cookie("d", "e.com", true, "/docs")];
        assert!(header(&cookies, "https://e.com/docs").is_some());
        assert!(header(&cookies, "https://e.com/docs/x").is_some());
        assert!(header(&cookies, "https://e.com/docsx").is_none());
        assert!(header(&cookies, "https://e.com/").is_none());
    }

    #[test]
    fn expired_cookies_are_dropped_silently() {
        let mut c = cookie("old", "e.com", true, "/");
        c.expires_at_unix = Some(1000);
        let mut fresh = cookie("new", "e.com", true, "/");
        fresh.expires_at_unix = Some(1001);
        let sel = select_for_url(&[c, fresh], &url("https://e.com/"), 1000);
        assert_eq!(sel.header.as_deref(), Some("new=v-new"));
        assert!(sel.skipped.is_empty());
    }

    #[test]
    fn secure_cookie_skipped_on_http() {
        let mut s = cookie("sec", "e.com", true, "/");
        s.secure = true;
        let cookies = vec![s, cookie("plain", "e.com", true, "/")];
        let sel = select_for_url(&cookies, &url("http://e.com/"), 1000);
        assert_eq!(sel.header.as_deref(), Some("plain=v-plain"));
        assert_eq!(sel.skipped.len(), 1);
        assert_eq!(sel.skipped[0].name, "sec");
        let w = sel.warnings();
        assert_eq!(w[0].code, ErrorCode::CookieSkipped);
        let sel = select_for_url(&cookies, &url("https://e.com/"), 1000);
        assert_eq!(sel.header.as_deref(), Some("sec=v-sec; plain=v-plain"));
        assert!(sel.skipped.is_empty());
        // A Secure cookie for another host is not "skipped": it never applied.
        let sel = select_for_url(&cookies, &url("http://other.com/"), 1000);
        assert!(sel.skipped.is_empty() && sel.header.is_none());
    }

    #[test]
    fn ordering_longer_path_then_creation() {
        let mut a = cookie("a", "e.com", true, "/");
        a.created_at_unix = 1;
        let mut b = cookie("b", "e.com", true, "/x/y");
        b.created_at_unix = 50;
        let mut c = cookie("c", "e.com", true, "/x");
        c.created_at_unix = 5;
        let mut d = cookie("d", "e.com", true, "/x");
        d.created_at_unix = 3;
        let h = header(&[a, b, c, d], "https://e.com/x/y/z").unwrap();
        assert_eq!(h, "b=v-b; d=v-d; c=v-c; a=v-a");
    }

    #[test]
    fn later_duplicate_wins() {
        let first = cookie("s", "e.com", true, "/");
        let mut second = first.clone();
        second.value = "override".into();
        let other_path = cookie("s", "e.com", true, "/p");
        let h = header(&[first, other_path, second], "https://e.com/p").unwrap();
        assert_eq!(h, "s=v-s; s=override");
    }

    #[test]
    fn unsafe_jar_values_are_skipped() {
        let mut bad = cookie("x", "e.com", true, "/");
        bad.value = "a\r\nInjected: 1".into();
        let sel = select_for_url(&[bad], &url("https://e.com/"), 0);
        assert!(sel.header.is_none());
        assert_eq!(sel.skipped.len(), 1);
    }

    #[test]
    fn non_http_schemes_get_nothing() {
        let cookies = vec![cookie("a", "e.com", true, "/")];
        assert!(header(&cookies, "ftp://e.com/").is_none());
        assert!(header(&cookies, "wss://e.com/").is_some());
    }

    proptest! {
        #[test]
        fn header_never_contains_crlf(
            name in "\\PC{0,8}|[a-z\r\n;=]{1,6}",
            value in "\\PC{0,12}|[a-z\r\n\0;]{0,6}",
            path in "/[a-z/]{0,6}",
        ) {
            let mut c = cookie("n", "e.com", true, &path);
            c.name = name;
            c.value = value;
            let sel = select_for_url(&[c], &url("https://e.com/a/b"), 0);
            if let Some(h) = sel.header {
                prop_assert!(!h.contains('\r') && !h.contains('\n') && !h.contains('\0'));
            }
        }

        #[test]
        fn path_match_is_reflexive_and_root_matches_all(p in "/[a-z/]{0,10}") {
            prop_assert!(path_matches(&p, &p));
            prop_assert!(path_matches(&p, "/"));
        }
    }
}
