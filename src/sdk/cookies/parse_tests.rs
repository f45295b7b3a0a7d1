use super::*;
use crate::error::ErrorCode;
use proptest::prelude::*;

const NOW: i64 = 1_700_000_000;

fn url(s: &str) -> Url {
    Url::parse(s).unwrap()
}

fn cli(spec: &str, u: &str) -> Result<Cookie, AfError> {
    parse_cli_cookie(spec, &url(u), NOW)
}

fn cli_err(spec: &str, u: &str) -> String {
    let e = cli(spec, u).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument, "{e}");
    e.message
}

fn sc(header: &str, u: &str) -> Option<Cookie> {
    parse_set_cookie(header, &url(u), NOW)
}

// ---- --cookie ----

#[test]
fn cli_minimal_is_host_only_with_default_path() {
    let c = cli("sid=abc", "https://www.example.com/app/page").unwrap();
    assert_eq!((c.name.as_str(), c.value.as_str()), ("sid", "abc"));
    assert_eq!(c.domain, "www.example.com");
    assert!(c.host_only);
    assert_eq!(c.path, "/app");
    assert!(!c.secure && !c.http_only);
    assert_eq!(c.same_site, None);
    assert_eq!(c.expires_at_unix, None);
    assert_eq!(c.created_at_unix, NOW);
}

#[test]
fn cli_all_attributes() {
    let c = cli(
        " sid = a b=c ; Path=/; Domain=.Example.com; Secure; HttpOnly; SameSite=lax; \
         Max-Age=60;",
        "http://www.example.com/x",
    )
    .unwrap();
    assert_eq!(c.name, "sid");
    assert_eq!(c.value, "a b=c");
    assert_eq!(c.domain, "example.com");
    assert!(!c.host_only);
    assert_eq!(c.path, "/");
    assert!(c.secure && c.http_only);
    assert_eq!(c.same_site, Some(SameSite::Lax));
    assert_eq!(c.expires_at_unix, Some(NOW + 60));
    let c = cli(
        "a=b; Expires=Wed, 21 Oct 2099 07:28:00 GMT",
        "https://e.com/",
    )
    .unwrap();
    assert_eq!(c.expires_at_unix, Some(4_096_250_880));
}

#[test]
fn cli_refuses_bad_names_and_values() {
    let u = "https://e.com/";
    assert!(cli_err("=v", u).contains("empty name"));
    assert!(cli_err("novalue", u).contains("name=value"));
    assert!(cli_err("", u).contains("name=value"));
    assert!(cli_err("a b=v", u).contains("name"));
    assert!(cli_err("a,b=v", u).contains("name"));
    assert!(cli_err("ä=v", u).contains("name"));
    let big = format!("a={}", "x".repeat(MAX_VALUE_BYTES + 1));
    assert!(cli_err(&big, u).contains("limit"));
    assert!(cli(&format!("a={}", "x".repeat(MAX_VALUE_BYTES)), u).is_ok());
}

#[test]
fn cli_refuses_control_characters_anywhere() {
    let u = "https://e.com/";
    for spec in [
        "a=b\r\nX-Injected: 1",
        "a=b\n",
        "a\0=b",
        "a=b\0",
        "a=b\x7f",
        "a=b; Path=/\r",
        "a=b;\tSecure\x01",
    ] {
        assert!(cli_err(spec, u).contains("control"), "{spec:?}");
    }
}

#[test]
fn cli_error_messages_do_not_echo_the_value() {
    let msg = cli_err("tok=SECRETVALUE; Bogus", "https://e.com/");
    assert!(!msg.contains("SECRETVALUE"), "{msg}");
    let msg = cli_err("tok=SECRETVALUE\n", "https://e.com/");
    assert!(!msg.contains("SECRETVALUE"), "{msg}");
}

#[test]
fn cli_refuses_bad_attributes() {
    let u = "https://e.com/";
    assert!(cli_err("a=b; Bogus=1", u).contains("unknown attribute"));
    assert!(cli_err("a=b; Partitioned", u).contains("unknown attribute"));
    assert!(cli_err("a=b; SameSite=Sometimes", u).contains("SameSite"));
    assert!(cli_err("a=b; Expires=soon", u).contains("Expires"));
    assert!(cli_err("a=b; Max-Age=1.5", u).contains("Max-Age"));
    assert!(cli_err("a=b; Max-Age=", u).contains("Max-Age"));
    assert!(cli_err("a=b; Secure=yes", u).contains("no value"));
    assert!(cli_err("a=b; Domain=", u).contains("empty"));
    assert!(cli_err("a=b; Path=docs", u).contains("start with"));
    assert!(cli("a=b; secure; httponly; samesite=STRICT", u).is_ok());
}

#[test]
fn cli_domain_must_match_url() {
    assert!(cli_err("a=b; Domain=other.com", "https://e.com/").contains("domain-match"));
    assert!(cli_err("a=b; Domain=sub.e.com", "https://e.com/").contains("domain-match"));
    assert!(cli_err("a=b; Domain=xe.com", "https://e.com/").contains("domain-match"));
    assert!(cli_err("a=b; Domain=com", "https://e.com/").contains("public suffix"));
    assert!(cli_err("a=b; Domain=co.uk", "https://x.co.uk/").contains("public suffix"));
    assert!(cli_err("a=b; Domain=bad host", "https://e.com/").contains("valid host"));
    let e = cli("a=b; Domain=other.com", "https://e.com/").unwrap_err();
    assert!(e.hint.is_some());
    let c = cli("a=b; Domain=e.com", "https://a.b.e.com/").unwrap();
    assert_eq!((c.domain.as_str(), c.host_only), ("e.com", false));
}

#[test]
fn cli_ip_hosts() {
    let c = cli("a=b; Domain=127.0.0.1", "http://127.0.0.1:8080/").unwrap();
    assert_eq!((c.domain.as_str(), c.host_only), ("127.0.0.1", true));
    assert!(cli_err("a=b; Domain=0.0.1", "http://127.0.0.1/").contains("domain-match"));
    assert!(cli_err("a=b; Domain=127.0.0.2", "http://127.0.0.1/").contains("domain-match"));
    let c = cli("a=b", "http://[::1]:9/").unwrap();
    assert_eq!(c.domain, "[::1]");
    let c = cli("a=b; Domain=[::1]", "http://[::1]:9/").unwrap();
    assert_eq!((c.domain.as_str(), c.host_only), ("[::1]", true));
}

#[test]
fn cli_localhost_domain_equal_to_host_is_host_only() {
    let c = cli("a=b; Domain=localhost", "http://localhost:3000/").unwrap();
    assert_eq!((c.domain.as_str(), c.host_only), ("localhost", true));
}

#[test]
fn cli_path_must_match_url() {
    assert!(cli("a=b; Path=/docs", "https://e.com/docs").is_ok());
    assert!(cli("a=b; Path=/docs", "https://e.com/docs/x").is_ok());
    assert!(cli("a=b; Path=/docs/", "https://e.com/docs/x").is_ok());
    assert!(cli_err("a=b; Path=/docs", "https://e.com/docsx").contains("path-match"));
    assert!(cli_err("a=b; Path=/admin", "https://e.com/").contains("path-match"));
}

#[test]
fn cli_secure_on_http_is_accepted() {
    let c = cli("a=b; Secure", "http://e.com/").unwrap();
    assert!(c.secure);
}

#[test]
fn cli_refuses_expired_and_non_http_urls() {
    assert!(cli_err("a=b; Max-Age=0", "https://e.com/").contains("expired"));
    assert!(cli_err(
        "a=b; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
        "https://e.com/"
    )
    .contains("expired"));
    assert!(cli_err("a=b", "file:///tmp/x").contains("URL"));
}

// ---- Set-Cookie ----

#[test]
fn set_cookie_basic_and_default_path() {
    let c = sc("id=a3fWa; HttpOnly", "https://e.com/a/b/c").unwrap();
    assert_eq!((c.name.as_str(), c.value.as_str()), ("id", "a3fWa"));
    assert_eq!((c.domain.as_str(), c.host_only), ("e.com", true));
    assert_eq!(c.path, "/a/b");
    assert!(c.http_only && !c.secure);
    assert_eq!(c.expires_at_unix, None);
    assert_eq!(c.created_at_unix, NOW);
    assert_eq!(
        sc("x=1; Path=relative", "https://e.com/a/b").unwrap().path,
        "/a"
    );
    assert_eq!(sc("x=1; Path=", "https://e.com/a/b").unwrap().path, "/a");
    assert_eq!(
        sc("x=1; Path=/p; Path=q", "https://e.com/a/b")
            .unwrap()
            .path,
        "/a"
    );
    assert_eq!(sc("x=1; path=/p", "https://e.com/").unwrap().path, "/p");
}

#[test]
fn set_cookie_ignored_cases() {
    let u = "https://e.com/";
    assert!(sc("novalue", u).is_none());
    assert!(sc("=v", u).is_none());
    assert!(sc("  =v", u).is_none());
    assert!(sc("a=b\r\nX: y", u).is_none());
    assert!(sc("a=b\0", u).is_none());
    assert!(sc("a=b\x7f", u).is_none());
    assert!(sc(&format!("a={}", "x".repeat(MAX_VALUE_BYTES)), u).is_none());
    assert!(sc("a=b", "ftp://e.com/").is_none());
    assert!(sc("a=b;\tSecure", u).is_some());
}

#[test]
fn set_cookie_domain_rules() {
    let c = sc("a=b; Domain=.Example.COM", "https://www.example.com/").unwrap();
    assert_eq!((c.domain.as_str(), c.host_only), ("example.com", false));
    let c = sc("a=b; Domain=example.com", "https://example.com/").unwrap();
    assert_eq!((c.domain.as_str(), c.host_only), ("example.com", false));
    assert!(sc("a=b; Domain=other.com", "https://example.com/").is_none());
    assert!(sc("a=b; Domain=www.example.com", "https://example.com/").is_none());
    assert!(sc("a=b; Domain=com", "https://example.com/").is_none());
    assert!(sc("a=b; Domain=github.io", "https://me.github.io/").is_none());
    // An empty Domain attribute is ignored, leaving a host-only cookie.
    let c = sc("a=b; Domain=", "https://www.example.com/").unwrap();
    assert_eq!((c.domain.as_str(), c.host_only), ("www.example.com", true));
    // Last Domain wins.
    let c = sc(
        "a=b; Domain=other.com; Domain=example.com",
        "https://x.example.com/",
    )
    .unwrap();
    assert_eq!(c.domain, "example.com");
}

#[test]
fn set_cookie_ip_hosts() {
    let c = sc("a=b", "http://10.0.0.1/").unwrap();
    assert_eq!((c.domain.as_str(), c.host_only), ("10.0.0.1", true));
    let c = sc("a=b; Domain=10.0.0.1", "http://10.0.0.1/").unwrap();
    assert!(c.host_only);
    assert!(sc("a=b; Domain=0.0.1", "http://10.0.0.1/").is_none());
    assert!(sc("a=b; Domain=1", "http://10.0.0.1/").is_none());
}

#[test]
fn set_cookie_expires_and_max_age() {
    let u = "https://e.com/";
    let c = sc("a=b; Expires=Wed, 21 Oct 2099 07:28:00 GMT", u).unwrap();
    assert_eq!(c.expires_at_unix, Some(4_096_250_880));
    let c = sc("a=b; expires=Wednesday, 21-Oct-37 07:28:00 GMT", u).unwrap();
    assert_eq!(c.expires_at_unix, Some(2_139_722_880));
    let c = sc("a=b; Expires=Wed Oct 21 07:28:00 2099", u).unwrap();
    assert_eq!(c.expires_at_unix, Some(4_096_250_880));
    // Unparseable Expires is ignored: a session cookie.
    assert_eq!(sc("a=b; Expires=never", u).unwrap().expires_at_unix, None);
    // Max-Age wins regardless of order.
    let c = sc("a=b; Max-Age=100; Expires=Wed, 21 Oct 2099 07:28:00 GMT", u).unwrap();
    assert_eq!(c.expires_at_unix, Some(NOW + 100));
    let c = sc("a=b; Expires=Wed, 21 Oct 2099 07:28:00 GMT; Max-Age=100", u).unwrap();
    assert_eq!(c.expires_at_unix, Some(NOW + 100));
    // Invalid Max-Age is ignored, so Expires applies.
    let c = sc("a=b; Max-Age=1e3; Expires=Wed, 21 Oct 2099 07:28:00 GMT", u).unwrap();
    assert_eq!(c.expires_at_unix, Some(4_096_250_880));
    let c = sc("a=b; Max-Age=99999999999999999999999", u).unwrap();
    assert_eq!(c.expires_at_unix, Some(i64::MAX));
}

#[test]
fn set_cookie_deletions_come_back_expired() {
    let u = "https://e.com/";
    for h in [
        "a=; Max-Age=0",
        "a=; Max-Age=-5",
        "a=; Max-Age=0; Expires=Wed, 21 Oct 2099 07:28:00 GMT",
        "a=; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
    ] {
        let c = sc(h, u).unwrap();
        assert!(c.is_expired(NOW), "{h}");
    }
}

#[test]
fn set_cookie_secure_and_prefixes() {
    assert!(sc("a=b; Secure", "https://e.com/").unwrap().secure);
    // A Secure cookie from an insecure origin is ignored (RFC 6265bis, every browser).
    assert!(sc("a=b; Secure", "http://e.com/").is_none());
    assert!(sc("__Secure-a=b", "https://e.com/").is_none());
    assert!(sc("__Secure-a=b; Secure", "https://e.com/").is_some());
    assert!(sc("__Host-a=b; Secure; Path=/", "https://e.com/x").is_some());
    assert!(sc("__Host-a=b; Secure", "https://e.com/x/y").is_none());
    assert!(sc("__host-a=b; Secure; Path=/; Domain=e.com", "https://e.com/").is_none());
}

#[test]
fn set_cookie_same_site() {
    let u = "https://e.com/";
    assert_eq!(
        sc("a=b; SameSite=Strict", u).unwrap().same_site,
        Some(SameSite::Strict)
    );
    assert_eq!(
        sc("a=b; samesite=none", u).unwrap().same_site,
        Some(SameSite::None)
    );
    assert_eq!(sc("a=b; SameSite=bogus", u).unwrap().same_site, None);
    assert_eq!(
        sc("a=b; SameSite=Lax; SameSite=x", u).unwrap().same_site,
        None
    );
}

#[test]
fn set_cookie_value_kept_verbatim_and_trimmed() {
    let c = sc("  a  =  \"quoted value\"  ; Path=/", "https://e.com/").unwrap();
    assert_eq!(
        (c.name.as_str(), c.value.as_str()),
        ("a", "\"quoted value\"")
    );
    let c = sc("a==b=c", "https://e.com/").unwrap();
    assert_eq!(c.value, "=b=c");
}

proptest! {
    #[test]
    fn parse_set_cookie_never_panics(s in "\\PC{0,60}|[a-zA-Z=; .,/\r\n\0-]{0,60}") {
        let _ = parse_set_cookie(&s, &url("https://a.example.co.uk/x/y"), NOW);
        let _ = parse_set_cookie(&s, &url("http://[::1]:1/"), NOW);
    }

    #[test]
    fn parse_cli_cookie_never_panics(s in "\\PC{0,60}|[a-zA-Z=; .,/\r\n\0-]{0,60}") {
        let _ = parse_cli_cookie(&s, &url("https://a.example.co.uk/x/y"), NOW);
        let _ = parse_cli_cookie(&s, &url("http://127.0.0.1/"), NOW);
    }

    #[test]
    fn parsed_cookies_never_hold_crlf(s in "[a-z]{1,4}=[a-z\r\n ]{0,8}(; [A-Za-z=/]{0,8}){0,3}") {
        let u = url("https://e.com/");
        for c in [parse_set_cookie(&s, &u, NOW), parse_cli_cookie(&s, &u, NOW).ok()]
            .into_iter()
            .flatten()
        {
            prop_assert!(!c.value.contains(['\r', '\n']) && !c.name.contains(['\r', '\n']));
        }
    }
}
