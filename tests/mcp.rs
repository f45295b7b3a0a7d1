//! `afhttp mcp` over stdio, driven by a client nobody here wrote: the official MCP Python SDK
//! (PyPI `mcp`, installed by scripts/test.sh). The client script reports what it saw as
//! JSON; the assertions are here.

use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::support::deadline::CommandDeadline;
use crate::support::{Fixture, FixtureServer};

const CLIENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/stdio_client.py");

fn python_client_report(fx: &Fixture, base: &str) -> Value {
    let out = Command::new("python3")
        .arg(CLIENT)
        .arg(env!("CARGO_BIN_EXE_afhttp"))
        .arg(base)
        .arg(&fx.tmp)
        .output_within(Duration::from_secs(240))
        .expect("python3 must be installed");
    assert!(
        out.status.success(),
        "the MCP Python client failed (is `mcp` installed? scripts/test.sh installs it): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON report ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

#[test]
fn python_sdk_lists_fetches_pages_and_gets_typed_errors_over_stdio() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let r = python_client_report(&fx, &srv.url(""));

    assert_eq!(r["server_name"], "afhttp", "{r}");
    assert!(
        r["protocol_version"]
            .as_str()
            .is_some_and(|v| v.starts_with("20")),
        "{r}"
    );
    let tools: Vec<&str> = r["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        tools,
        ["capabilities", "fetch", "health", "read_artifact"],
        "{r}"
    );
    // The fetch schema is FetchSpec's: its options are there, by their field names.
    let props = r["fetch_schema_props"].to_string();
    for p in [
        "url",
        "render",
        "wait",
        "want",
        "header",
        "timeout_ms",
        "profile",
        "tab",
    ] {
        assert!(props.contains(&format!("\"{p}\"")), "{p} missing: {props}");
    }

    // The fetch: the CLI's event as structuredContent, text within the budget (256 tokens
    // = 1024 bytes), and the default want gives content.md to quote.
    let f = &r["fetch"];
    assert_eq!(f["is_error"], false, "{r}");
    assert_eq!(f["kind"], "result", "{r}");
    assert_eq!(f["status"], 200, "{r}");
    assert_eq!(f["text_has_status"], true, "{r}");
    assert!(f["text_bytes"].as_u64().unwrap() <= 1024, "{r}");
    let content_md = r["content_md_bytes"].as_u64().unwrap();
    assert!(
        content_md > 1024,
        "the article must be larger than the budget: {r}"
    );
    assert_eq!(f["text_says_read_on"], true, "{r}");
    let content_file = f["content_file"].as_str().expect("content_file");
    assert!(content_file.starts_with(fx.tmp.to_str().unwrap()), "{r}");
    let links = f["link_uris"].to_string();
    for name in ["body.html", "content.md", "content.json", "text.txt"] {
        assert!(links.contains(name), "no resource_link for {name}: {links}");
    }
    // structuredContent carries paths and facts, never the contents.
    assert!(f["structured_bytes"].as_u64().unwrap() < 8_000, "{r}");

    // read_artifact pages through content.md and gets exactly the file.
    assert_eq!(r["paged"]["equal"], true, "{r}");
    assert!(r["paged"]["pages"].as_u64().unwrap() >= 2, "{r}");
    assert_eq!(r["lines"]["unit"], "lines", "{r}");
    assert_eq!(r["lines"]["offset"], 1, "{r}");
    assert_eq!(r["lines"]["returned"], 2, "{r}");

    // Typed errors come back as tool errors with the stable code.
    assert_eq!(r["outside"]["is_error"], true, "{r}");
    assert_eq!(r["outside"]["code"], "invalid_argument", "{r}");
    assert_eq!(r["dns"]["is_error"], true, "{r}");
    assert_eq!(r["dns"]["code"], "dns_resolution_failed", "{r}");
    assert!(r["dns"]["retryable"].is_boolean(), "{r}");
    assert!(
        r["dns"]["text"]
            .as_str()
            .unwrap()
            .starts_with("error dns_resolution_failed:"),
        "{r}"
    );
    assert_eq!(r["bad_header"]["code"], "invalid_argument", "{r}");
    assert_eq!(r["unknown_field"]["code"], "invalid_argument", "{r}");
    assert_eq!(r["health"], "ok", "{r}");
}
