//! Bad and hostile `fetch`/`read_artifact` arguments over MCP: each is one tool error with
//! the stable afhttp code, nothing reaches the network, and nothing is written anywhere (the
//! output area stays empty, and nothing appears outside it).

use serde_json::{json, Value};

use super::{files_under, run_steps};
use crate::support::{Fixture, FixtureServer};

#[test]
fn bad_and_hostile_arguments_are_one_tool_error_each_and_write_nothing() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let page = srv.url("/static");
    let escape = fx.path().join("escaped");
    // (arguments, expected code, expected field when the error names one)
    let cases: Vec<(&str, Value, &str, Option<&str>)> = vec![
        (
            "fetch",
            json!({"url": "file:///etc/passwd"}),
            "invalid_argument",
            Some("url"),
        ),
        (
            "fetch",
            json!({"url": "javascript:alert(1)"}),
            "invalid_argument",
            Some("url"),
        ),
        ("fetch", json!({"url": 5}), "invalid_argument", None),
        ("fetch", json!({}), "invalid_argument", Some("url")),
        (
            "fetch",
            json!({"url": page, "timeout_ms": "soon"}),
            "invalid_argument",
            None,
        ),
        (
            "fetch",
            json!({"url": page, "timeout_ms": -1}),
            "invalid_argument",
            None,
        ),
        (
            "fetch",
            json!({"url": page, "want": ["body"]}),
            "invalid_argument",
            None,
        ),
        (
            "fetch",
            json!({"url": page, "want": "body,nonsense"}),
            "invalid_argument",
            Some("want"),
        ),
        (
            "fetch",
            json!({"url": page, "bogus": 1}),
            "invalid_argument",
            Some("bogus"),
        ),
        (
            "fetch",
            json!({"url": page, "render": "sometimes"}),
            "invalid_argument",
            Some("render"),
        ),
        (
            "fetch",
            json!({"url": page, "profile": "../../etc"}),
            "profile_invalid_name",
            None,
        ),
        (
            "fetch",
            json!({"url": page, "profile": "a/b"}),
            "profile_invalid_name",
            None,
        ),
        (
            "fetch",
            json!({"url": page, "out": "../escaped"}),
            "invalid_argument",
            Some("out"),
        ),
        (
            "fetch",
            json!({"url": page, "out": escape}),
            "invalid_argument",
            Some("out"),
        ),
        (
            "fetch",
            json!({"url": page, "data": "@/etc/passwd"}),
            "invalid_argument",
            Some("data"),
        ),
        (
            "fetch",
            json!({"url": page, "data": "@-"}),
            "invalid_argument",
            Some("data"),
        ),
        (
            "fetch",
            json!({"url": page, "form": ["f=@/etc/passwd"]}),
            "invalid_argument",
            Some("form"),
        ),
        (
            "fetch",
            json!({"url": page, "browser_bin": "/bin/sh"}),
            "invalid_argument",
            Some("browser_bin"),
        ),
        (
            "fetch",
            json!({"url": page, "cookie_jar": escape.join("jar")}),
            "invalid_argument",
            Some("cookie_jar"),
        ),
        (
            "fetch",
            json!({"url": page, "ca_cert": "/etc/passwd"}),
            "invalid_argument",
            Some("ca_cert"),
        ),
        (
            "fetch",
            json!({"url": page, "header": ["no colon"]}),
            "invalid_argument",
            Some("header"),
        ),
        (
            "read_artifact",
            json!({"path": "/etc/passwd"}),
            "invalid_argument",
            Some("path"),
        ),
        (
            "read_artifact",
            json!({"path": fx.tmp.join("afhttp-out/../../../etc/passwd")}),
            "invalid_argument",
            Some("path"),
        ),
        (
            "read_artifact",
            json!({"path": 7}),
            "invalid_argument",
            None,
        ),
        (
            "read_artifact",
            json!({"path": "/etc/passwd", "unit": "pages"}),
            "invalid_argument",
            None,
        ),
        (
            "read_artifact",
            json!({"path": "/etc/passwd", "colour": "red"}),
            "invalid_argument",
            Some("colour"),
        ),
        ("read_artifact", json!({}), "invalid_argument", Some("path")),
        (
            "tabs_close",
            json!({"tab": "x", "force": true}),
            "invalid_argument",
            Some("force"),
        ),
        (
            "health",
            json!({"verbose": true}),
            "invalid_argument",
            Some("verbose"),
        ),
    ];
    let steps: Vec<Value> = cases
        .iter()
        .map(|(tool, args, _, _)| json!({"call": tool, "args": args}))
        .collect();
    let r = run_steps(&fx, &["mcp"], Value::Array(steps));
    let results = r["steps"].as_array().unwrap();
    for ((tool, args, code, field), got) in cases.iter().zip(results) {
        let what = format!("{tool} {args}: {got}");
        assert_eq!(got["is_error"], true, "{what}");
        assert!(
            got.get("protocol_error").is_none(),
            "a tool error, not a protocol error: {what}"
        );
        let err = &got["structured"]["error"];
        assert_eq!(err["code"], *code, "{what}");
        assert_eq!(err["retryable"], false, "{what}");
        if let Some(field) = field {
            assert_eq!(err["field"], *field, "{what}");
        }
        // One text block, starting with the code, carrying the hint when there is one.
        let blocks = got["content"].as_array().unwrap();
        assert_eq!(blocks.len(), 1, "{what}");
        let text = got["text"].as_str().unwrap();
        assert!(text.starts_with(&format!("error {code}: ")), "{what}");
        assert!(text.contains("\nretryable: false"), "{what}");
        if let Some(hint) = err["hint"].as_str() {
            assert!(text.contains(hint), "{what}");
        }
    }
    // Nothing was fetched, and nothing was written: no output directory, no escaped file.
    assert!(srv.requests().is_empty(), "{:?}", srv.requests());
    let written = files_under(fx.path());
    assert!(written.is_empty(), "files written: {written:?}");
    assert!(!escape.exists());
}

#[test]
fn out_is_a_directory_inside_the_output_area_and_its_artifacts_read_back() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let r = run_steps(
        &fx,
        &["mcp"],
        json!([
            {"call": "fetch", "args": {"url": srv.url("/static"), "out": "run1/static"}},
            {"call": "read_artifact", "args": {"path": "$0.result.content_file"}},
        ]),
    );
    let fetched = &r["steps"][0];
    assert_eq!(fetched["is_error"], false, "{r}");
    let out = fx.tmp.join("afhttp-out/run1/static");
    let content = fetched["structured"]["result"]["content_file"]
        .as_str()
        .unwrap();
    assert!(
        std::path::Path::new(content).starts_with(&out),
        "{content} not in {}",
        out.display()
    );
    assert_eq!(r["steps"][1]["is_error"], false, "{r}");
    for f in files_under(fx.path()) {
        assert!(
            fx.path().join(&f).starts_with(&out),
            "{} written outside {}",
            f.display(),
            out.display()
        );
    }
    // The schema does not offer what MCP refuses.
    let props = &r["schemas"]["fetch"]["properties"];
    for refused in ["browser_bin", "cookie_jar", "ca_cert"] {
        assert!(props.get(refused).is_none(), "{refused} offered: {props}");
    }
    assert!(props.get("out").is_some(), "{props}");
}
