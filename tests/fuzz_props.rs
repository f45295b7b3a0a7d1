//! Property tests of the fuzzed functions (stable toolchain, bounded case counts): round
//! trips where they hold, refusals that must always happen, and the fuzz bodies themselves
//! on structured inputs built from hostile fragments.

use afhttp::fuzzing::cookies::{merge_twice, NOW};
use afhttp::fuzzing::{self, TARGETS};
use afhttp::profile::ProfileName;
use afhttp::sdk::cookies::parse::{parse_cli_cookie, parse_set_cookie};
use afhttp::sdk::cookies::{Cookie, SameSite};
use afhttp::sdk::endpoint::Endpoint;
use afhttp::sdk::fetch::options::HeaderPair;
use afhttp::sdk::request::{Wait, MAX_WAIT_MS};
use proptest::prelude::*;
use url::Url;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Fragments that mean something to one of the parsers, hostile ones included.
const FRAGMENTS: &[&str] = &[
    ";",
    "=",
    " ",
    "\t",
    "\r\n",
    "\0",
    "\u{7f}",
    "\u{85}",
    "é",
    "\u{feff}",
    "/",
    "..",
    "\\",
    ":",
    "@",
    "?",
    "#",
    "%00",
    "%2e%2e",
    "Domain=",
    "Path=",
    "Secure",
    "HttpOnly",
    "SameSite=",
    "Max-Age=",
    "Expires=",
    "Thu, 01 Jan 1970 00:00:00 GMT",
    "-1",
    "99999999999999999999",
    "__Host-",
    "__Secure-",
    "example.com",
    ".co.uk",
    "com",
    "127.0.0.1",
    "[::1]",
    "selector:",
    "selector-visible:",
    "ms:",
    "auto",
    "load",
    "idle",
    "ws://",
    "wss://",
    "http://",
    "unix:",
    "tcp:",
    "localhost",
    ":9222",
    "/cdp",
    "Content-Length",
    "X-A",
    "<table>",
    "<tr>",
    "<td colspan=100>",
    "<a href=\"",
    "\">",
    "</a>",
    "<h1>",
    "<p>",
    "<pre>",
    "<svg>",
    "<title>",
    "<base href=",
    "<meta charset=windows-1252>",
    "<script>",
    "<!--",
    "&amp;",
    "&#0;",
    "a",
    "0",
];

fn soup() -> impl Strategy<Value = Vec<u8>> {
    (
        any::<u8>(),
        prop::collection::vec(prop::sample::select(FRAGMENTS), 0..24),
    )
        .prop_map(|(selector, parts)| {
            let mut v = vec![b'0' + selector % 8];
            v.extend(parts.concat().into_bytes());
            v
        })
}

proptest! {
    #![proptest_config(config())]

    /// Every fuzz body on fragment soup and on raw bytes: no panic, invariants hold.
    #[test]
    fn fuzz_bodies_hold_on_soup_and_bytes(s in soup(), raw in prop::collection::vec(any::<u8>(), 0..64)) {
        for (_, body) in TARGETS {
            body(&s);
            body(&s[1..]);
            body(&raw);
        }
    }
}

fn token_name() -> impl Strategy<Value = String> {
    // A leading letter keeps clear of the __Host-/__Secure- prefixes.
    "[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]{0,15}"
}

#[derive(Debug, Clone)]
struct Spec {
    name: String,
    value: String,
    domain: bool,
    path: &'static str,
    secure: bool,
    http_only: bool,
    same_site: Option<SameSite>,
    max_age: Option<i64>,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        token_name(),
        "[A-Za-z0-9%._~!-]{0,24}",
        any::<bool>(),
        prop::sample::select(vec!["/", "/a", "/a/", "/a/b"]),
        any::<bool>(),
        any::<bool>(),
        prop::option::of(prop::sample::select(vec![
            SameSite::Strict,
            SameSite::Lax,
            SameSite::None,
        ])),
        prop::option::of(1i64..1_000_000_000),
    )
        .prop_map(
            |(name, value, domain, path, secure, http_only, same_site, max_age)| Spec {
                name,
                value,
                domain,
                path,
                secure,
                http_only,
                same_site,
                max_age,
            },
        )
}

impl Spec {
    /// The header/flag text, attributes in a fixed order.
    fn format(&self) -> String {
        let mut s = format!("{}={}; Path={}", self.name, self.value, self.path);
        if self.domain {
            s.push_str("; Domain=example.com");
        }
        if self.secure {
            s.push_str("; Secure");
        }
        if self.http_only {
            s.push_str("; HttpOnly");
        }
        if let Some(ss) = self.same_site {
            s.push_str(&format!("; SameSite={}", ss.as_str()));
        }
        if let Some(n) = self.max_age {
            s.push_str(&format!("; Max-Age={n}"));
        }
        s
    }

    fn cookie(&self) -> Cookie {
        Cookie {
            name: self.name.clone(),
            value: self.value.clone(),
            domain: if self.domain {
                "example.com"
            } else {
                "www.example.com"
            }
            .to_string(),
            host_only: !self.domain,
            path: self.path.to_string(),
            secure: self.secure,
            http_only: self.http_only,
            same_site: self.same_site,
            expires_at_unix: self.max_age.map(|n| NOW + n),
            created_at_unix: NOW,
        }
    }
}

proptest! {
    #![proptest_config(config())]

    /// parse(format(cookie)) == cookie, for Set-Cookie and for --cookie alike.
    #[test]
    fn cookie_format_parse_round_trip(s in spec()) {
        let url = Url::parse("https://www.example.com/a/b").unwrap();
        let text = s.format();
        prop_assert_eq!(parse_set_cookie(&text, &url, NOW), Some(s.cookie()));
        prop_assert_eq!(parse_cli_cookie(&text, &url, NOW).unwrap(), s.cookie());
    }

    /// Merging any cookies into a jar twice gives the jar of merging them once, without
    /// duplicate identities or expired entries; the jar file round-trips.
    #[test]
    fn jar_merge_is_idempotent(specs in prop::collection::vec((spec(), any::<bool>()), 0..12)) {
        let cookies: Vec<Cookie> = specs
            .iter()
            .map(|(s, expired)| {
                let mut c = s.cookie();
                if *expired {
                    c.expires_at_unix = Some(NOW - 1);
                }
                c
            })
            .collect();
        merge_twice(&cookies);
    }

    /// Accepted `--wait` values print back to themselves; `ms:` above the cap is refused.
    #[test]
    fn wait_display_parse_round_trip(
        ms in 0..=MAX_WAIT_MS,
        over in (MAX_WAIT_MS + 1)..u64::MAX,
        css in "[a-z#.>\\[\\]=\" :-]{0,40}[a-z]",
    ) {
        for w in [Wait::Ms(ms), Wait::Selector(css.trim().to_string()), Wait::SelectorVisible(css.trim().to_string())] {
            prop_assert_eq!(w.to_string().parse::<Wait>().unwrap(), w);
        }
        let too_long = format!("ms:{over}");
        prop_assert!(too_long.parse::<Wait>().is_err(), "{}", too_long);
    }

    /// A TCP endpoint's derived base URL names the same endpoint; a unix path with a `..`
    /// component is always refused.
    #[test]
    fn endpoint_base_round_trip(
        tls in any::<bool>(),
        host in prop_oneof![
            "[a-z][a-z0-9-]{0,10}(\\.[a-z][a-z0-9]{0,5}){0,3}",
            any::<[u8; 4]>().prop_map(|o| std::net::Ipv4Addr::from(o).to_string()),
            any::<[u16; 8]>().prop_map(|s| std::net::Ipv6Addr::from(s).to_string()),
        ],
        port in 1u16..,
        dirs in prop::collection::vec("[a-z.]{1,4}", 0..4),
    ) {
        let ep = Endpoint::Tcp { tls, host, port };
        prop_assert_eq!(Endpoint::parse(&ep.http_base()).unwrap(), ep);
        let path = format!("unix:/{}/../x.sock", dirs.join("/"));
        prop_assert!(Endpoint::parse(&path).is_err(), "{}", path);
    }

    /// `NAME:VALUE` re-parses to itself; framing headers in any case and values carrying
    /// CR, LF or NUL are always refused.
    #[test]
    fn header_round_trip_and_refusals(
        name in "[A-Za-z0-9!#$%&'*+.^_`|~-]{1,32}",
        value in "[ -~]{0,64}",
        framing in prop::sample::select(vec!["content-length", "transfer-encoding", "connection", "upgrade", "te"]),
        upper in prop::collection::vec(any::<bool>(), 17),
        bad in prop::sample::select(vec!["\r", "\n", "\0", "\u{7f}", "\r\nX-Evil: 1"]),
    ) {
        if !["content-length", "transfer-encoding", "connection", "upgrade", "te"].contains(&name.to_ascii_lowercase().as_str()) {
            let h = HeaderPair::parse(&format!("{name}:{value}")).unwrap();
            prop_assert_eq!(&h.value, value.trim());
            prop_assert_eq!(HeaderPair::parse(&format!("{}: {}", h.name, h.value)).unwrap(), h);
        }
        let mixed: String = framing
            .chars()
            .zip(upper.iter().cycle())
            .map(|(c, u)| if *u { c.to_ascii_uppercase() } else { c })
            .collect();
        let framed = format!("{mixed}: 1");
        prop_assert!(HeaderPair::parse(&framed).is_err(), "{:?}", framed);
        let injected = format!("{name}: a{bad}b");
        prop_assert!(HeaderPair::parse(&injected).is_err(), "{:?}", injected);
    }

    /// Profile names: the documented charset is accepted verbatim; a separator, a leading
    /// `.`/`-`, or a `..` component is never accepted.
    #[test]
    fn profile_names_accept_flat_tokens_only(
        good in "[A-Za-z0-9_][A-Za-z0-9._-]{0,63}",
        prefix in "[A-Za-z0-9._-]{0,8}",
        suffix in "[A-Za-z0-9._-]{0,8}",
        sep in prop::sample::select(vec!["/", "\\", "\0", "\n"]),
        lead in prop::sample::select(vec![".", "-", "../", "..\\"]),
    ) {
        let accepted = ProfileName::parse(&good).unwrap();
        prop_assert_eq!(accepted.as_str(), good.as_str());
        let separated = format!("{prefix}{sep}{suffix}");
        prop_assert!(ProfileName::parse(&separated).is_err(), "{:?}", separated);
        let leading = format!("{lead}{suffix}");
        prop_assert!(ProfileName::parse(&leading).is_err(), "{:?}", leading);
        prop_assert!(ProfileName::parse("..").is_err());
    }
}

#[test]
fn fuzz_body_lookup_by_name() {
    assert!(fuzzing::target("set_cookie").is_some());
    assert!(fuzzing::target("nope").is_none());
}
