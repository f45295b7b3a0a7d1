//! Unit tests of [`FetchSpec::validate`].

#![allow(clippy::unwrap_used)]
use super::*;
use crate::error::ErrorCode;

fn spec(url: &str) -> FetchSpec {
    FetchSpec::new(url)
}

fn err(s: FetchSpec) -> AfError {
    s.validate().err().unwrap()
}

#[test]
fn defaults_are_the_documented_ones() {
    let r = spec("http://127.0.0.1:1/").validate().unwrap();
    assert_eq!(r.method, "GET");
    assert_eq!(r.render, RenderMode::Auto);
    assert_eq!(r.browser.wait, Wait::Auto);
    assert_eq!(r.timeout, Duration::from_secs(30));
    assert_eq!(r.backoff, Duration::from_millis(250));
    assert_eq!(r.browser.readiness_idle_ms, 500);
    assert_eq!(r.max_response_bytes, 1 << 30);
}

#[test]
fn errors_name_fields_not_flags() {
    let cases: Vec<(FetchSpec, &str)> = vec![
        (
            FetchSpec {
                header: vec!["Content-Length: 3".into()],
                ..spec("http://h/")
            },
            "header",
        ),
        (
            FetchSpec {
                method: Some(String::new()),
                ..spec("http://h/")
            },
            "method",
        ),
        (
            FetchSpec {
                tab: Some("a b".into()),
                ..spec("http://h/")
            },
            "tab",
        ),
        (spec("ftp://h/"), "url"),
        (
            FetchSpec {
                render: Some("none".into()),
                capture_ws: true,
                ..spec("http://h/")
            },
            "capture_ws",
        ),
        (
            FetchSpec {
                timeout_ms: Some(0),
                ..spec("http://h/")
            },
            "timeout_ms",
        ),
    ];
    for (s, field) in cases {
        let e = err(s);
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e:?}");
        assert_eq!(e.field.as_deref(), Some(field), "{e:?}");
        assert!(!e.message.contains("--"), "{}", e.message);
    }
}

#[test]
fn render_none_refuses_every_browser_only_option() {
    for s in [
        FetchSpec {
            wait: Some("load".into()),
            ..spec("http://h/")
        },
        FetchSpec {
            network_bodies: Some("all".into()),
            ..spec("http://h/")
        },
        FetchSpec {
            capture_sse: true,
            ..spec("http://h/")
        },
        FetchSpec {
            want: Some("screenshot".into()),
            ..spec("http://h/")
        },
        FetchSpec {
            browser_bin: Some("/usr/bin/chromium".into()),
            ..spec("http://h/")
        },
    ] {
        let s = FetchSpec {
            render: Some("none".into()),
            ..s
        };
        assert_eq!(err(s).code, ErrorCode::InvalidArgument);
    }
}

#[test]
fn profile_names_are_checked_here() {
    let e = err(FetchSpec {
        profile: Some("../x".into()),
        ..spec("http://h/")
    });
    assert_eq!(e.code, ErrorCode::ProfileInvalidName);
}

/// `takeover` without `profile` gets the URL's site profile here, once, for the
/// pipeline and the fleet's routing alike (each derived its own before).
#[test]
fn takeover_derives_the_site_profile_once() {
    let r = FetchSpec {
        takeover: true,
        ..spec("https://my.shop.example.co.uk/cart")
    }
    .validate()
    .unwrap();
    assert_eq!(r.browser.profile.as_deref(), Some("example.co.uk"));
    assert!(r.browser.profile_derived);
    let r = FetchSpec {
        takeover: true,
        profile: Some("work".into()),
        ..spec("https://example.com/")
    }
    .validate()
    .unwrap();
    assert_eq!(r.browser.profile.as_deref(), Some("work"));
    assert!(!r.browser.profile_derived);
    let r = spec("https://example.com/").validate().unwrap();
    assert_eq!(r.browser.profile, None);
}

#[test]
fn one_body_at_most() {
    let e = err(FetchSpec {
        data: Some("a".into()),
        form: vec!["b=c".into()],
        ..spec("http://h/")
    });
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    let r = FetchSpec {
        data_bytes: Some(vec![0xff, 0]),
        ..spec("http://h/")
    }
    .validate()
    .unwrap();
    assert_eq!(r.method, "POST");
}
