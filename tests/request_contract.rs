//! One request contract: the same bad inputs through the CLI and through the SDK builder give
//! the same error code, because both fill one `FetchSpec` and run its one `validate()`.

use std::time::Duration;

use afhttp::sdk::endpoint::Endpoint;
use afhttp::sdk::FetchSpec;
use afhttp::Client;

use crate::support::Fixture;

/// A bad input: CLI flags after the URL, and the same thing set on the SDK builder.
struct Case {
    name: &'static str,
    flags: Vec<&'static str>,
    sdk: fn(afhttp::sdk::FetchBuilder<'_>) -> afhttp::sdk::FetchBuilder<'_>,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "Content-Length as a header",
            flags: vec!["--header", "Content-Length: 3"],
            sdk: |b| b.header("Content-Length", "3"),
        },
        Case {
            name: "an empty method",
            flags: vec!["--method", ""],
            sdk: |b| b.method(""),
        },
        Case {
            name: "a tab id with spaces",
            flags: vec!["--tab", "a b"],
            sdk: |b| b.tab("a b"),
        },
        Case {
            name: "a user agent with a newline",
            flags: vec!["--user-agent", "a\nb"],
            sdk: |b| b.user_agent("a\nb"),
        },
        Case {
            name: "a cookie for another site",
            flags: vec!["--cookie", "a=b; Domain=other.example"],
            sdk: |b| {
                b.cookie_full(
                    afhttp::sdk::FetchCookie::build(("a", "b"))
                        .domain("other.example")
                        .build(),
                )
            },
        },
        Case {
            name: "a proxy with an unknown scheme",
            flags: vec!["--proxy-url", "ftp://proxy.invalid"],
            sdk: |b| b.proxy_url("ftp://proxy.invalid"),
        },
        Case {
            name: "a profile name that climbs out",
            flags: vec!["--profile", "../x"],
            sdk: |b| b.profile("../x"),
        },
        Case {
            name: "a network body cap over the limit",
            flags: vec!["--network-body-max-bytes", "99999999999"],
            sdk: |b| b.network_body_max_bytes(99_999_999_999),
        },
        Case {
            name: "too many retries",
            flags: vec!["--retry", "1000"],
            sdk: |b| b.retry(1000, Duration::from_millis(1)),
        },
    ]
}

#[test]
fn cli_and_sdk_refuse_the_same_inputs_with_the_same_code() {
    let fx = Fixture::new();
    let url = "http://127.0.0.1:9/page";
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // Validation happens before any connection: the endpoint is never dialled.
    let client = Client::new(Endpoint::parse("unix:/nonexistent/afhttp.sock").unwrap());
    for case in cases() {
        let run = fx.cmd().arg("fetch").arg(url).args(&case.flags).run();
        let cli = run.event["error"]["code"]
            .as_str()
            .unwrap_or("")
            .to_string();
        assert!(
            !cli.is_empty(),
            "{}: the CLI did not fail: {}",
            case.name,
            run.event
        );
        assert_eq!(run.status, 1, "{}: {}", case.name, run.event);
        let sdk = rt
            .block_on((case.sdk)(client.fetch(url)).send())
            .err()
            .unwrap_or_else(|| panic!("{}: the SDK accepted it", case.name));
        assert_eq!(cli, sdk.error.code.as_str(), "{}", case.name);
        assert!(
            !sdk.error.message.contains("--"),
            "{}: SDK messages name fields, not flags: {}",
            case.name,
            sdk.error.message
        );
        let hint = run.event["error"]["hint"].as_str().unwrap_or("");
        assert!(
            hint.contains("--"),
            "{}: the CLI hint names the flag: {}",
            case.name,
            run.event
        );
    }
}

#[test]
fn the_spec_deserializes_strictly() {
    let ok: FetchSpec =
        serde_json::from_value(serde_json::json!({"url": "http://h/", "render": "none"})).unwrap();
    assert_eq!(ok.render.as_deref(), Some("none"));
    let unknown =
        serde_json::from_value::<FetchSpec>(serde_json::json!({"url": "http://h/", "rendr": "x"}));
    assert!(unknown.is_err(), "unknown fields are refused, not ignored");
}
