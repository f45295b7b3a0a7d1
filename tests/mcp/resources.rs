//! Artifacts as MCP resources: every `resource_link` of a fetch is listed by
//! `resources/list` and read back whole by `resources/read` (text as text, binary as a blob);
//! a URI outside this session's output directories is refused.

use serde_json::{json, Value};

use super::run_steps;
use crate::support::{Fixture, FixtureServer};

#[test]
fn resource_links_list_and_read_back_whole_and_nothing_else_reads() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let r = run_steps(
        &fx,
        &["mcp"],
        json!([
            {"call": "fetch", "args": {"url": srv.url("/article")}},
            {"call": "fetch", "args": {"url": srv.url("/image.png")}},
            {"list_resources": true},
            {"read_resource": "$0.result.content_file"},
            {"read_resource": "$1.result.body_file"},
            {"read_resource": "file:///etc/passwd"},
            {"read_resource": "/etc/passwd"},
        ]),
    );
    let s = r["steps"].as_array().unwrap();
    let links: Vec<String> = s[..2]
        .iter()
        .flat_map(|f| f["content"].as_array().unwrap().iter())
        .filter(|b| b["type"] == "resource_link")
        .map(|b| b["uri"].as_str().unwrap().to_string())
        .collect();
    assert!(links.len() >= 5, "{links:?}");
    let listed: Vec<&str> = s[2]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    for l in &links {
        assert!(listed.contains(&l.as_str()), "{l} not listed: {listed:?}");
    }
    // content.md as text, whole; the image as a blob of the file's bytes.
    let content_file = s[0]["structured"]["result"]["content_file"]
        .as_str()
        .unwrap();
    let md = &s[3]["contents"][0];
    assert_eq!(s[3]["is_error"], false, "{}", s[3]);
    assert_eq!(md["mime_type"], "text/markdown", "{md}");
    assert_eq!(
        md["text"].as_str().unwrap(),
        std::fs::read_to_string(content_file).unwrap()
    );
    let body_file = s[1]["structured"]["result"]["body_file"].as_str().unwrap();
    let png = &s[4]["contents"][0];
    assert_eq!(s[4]["is_error"], false, "{}", s[4]);
    assert_eq!(png["text"], Value::Null, "{png}");
    assert_eq!(
        png["blob_bytes"].as_u64().unwrap(),
        std::fs::metadata(body_file).unwrap().len()
    );
    for refused in &s[5..7] {
        assert_eq!(refused["is_error"], true, "{refused}");
        assert!(
            refused["error"]
                .as_str()
                .unwrap()
                .contains("invalid_argument"),
            "{refused}"
        );
    }
}

#[test]
fn the_screenshot_is_inline_under_its_cap_and_only_linked_over_it() {
    let _one = crate::support::chromium::lock();
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let fetch = json!([{"call": "fetch", "args": {"url": srv.url("/static"), "render": "always"}}]);
    let images = |r: &Value| -> Vec<Value> {
        r["steps"][0]["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["type"] == "image")
            .cloned()
            .collect()
    };
    let r = run_steps(&fx, &["mcp"], fetch.clone());
    let shot = r["steps"][0]["structured"]["result"]["screenshot_file"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"));
    let got = images(&r);
    assert_eq!(got.len(), 1, "{r}");
    assert_eq!(got[0]["mime_type"], "image/png", "{r}");
    assert_eq!(
        got[0]["data_bytes"].as_u64().unwrap(),
        std::fs::metadata(shot).unwrap().len()
    );
    assert!(r["steps"][0]["text"]
        .as_str()
        .unwrap()
        .contains("screenshot: inline"));

    let r = run_steps(&fx, &["mcp", "--image-max-bytes", "100"], fetch);
    assert!(images(&r).is_empty(), "{r}");
    assert!(
        r["steps"][0]["text"]
            .as_str()
            .unwrap()
            .contains("screenshot: not inline"),
        "{r}"
    );
}
