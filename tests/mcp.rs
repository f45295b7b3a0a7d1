//! `afhttp mcp` over stdio, driven by clients nobody here wrote: the official MCP Python SDK
//! (PyPI `mcp`) and the official TypeScript SDK (npm `@modelcontextprotocol/sdk`), both
//! installed by scripts/test.sh. Each client script reports what it saw as JSON with the
//! same keys; the assertions are here, shared.

use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::support::deadline::CommandDeadline;
use crate::support::{Fixture, FixtureServer};

const CLIENTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp");

/// Run a client script (`program script AFHTTP BASE TMPDIR`) and parse its JSON report.
fn client_report(fx: &Fixture, program: &str, script: &str, base: &str) -> Value {
    let out = Command::new(program)
        .arg(format!("{CLIENTS}/{script}"))
        .arg(env!("CARGO_BIN_EXE_afhttp"))
        .arg(base)
        .arg(&fx.tmp)
        .current_dir(CLIENTS)
        .output_within(Duration::from_secs(240))
        .unwrap_or_else(|e| panic!("{program} must be installed: {e}"));
    assert!(
        out.status.success(),
        "the MCP client {script} failed (scripts/test.sh installs the SDKs: pip `mcp`, \
         `npm ci --prefix tests/mcp`): {}",
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
    let r = client_report(
        &fx,
        "python3",
        "stdio_client.py",
        srv.url("").trim_end_matches('/'),
    );
    assert_stdio_report(&r, &fx);
}

#[test]
fn typescript_sdk_lists_fetches_pages_and_gets_typed_errors_over_stdio() {
    assert!(
        std::path::Path::new(CLIENTS)
            .join("node_modules/@modelcontextprotocol/sdk")
            .is_dir(),
        "@modelcontextprotocol/sdk is not installed: run `npm ci --prefix tests/mcp` \
         (scripts/test.sh does)"
    );
    // It also fetches the SPA, which renders in an inline Chromium.
    let _one = crate::support::chromium::lock();
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let r = client_report(
        &fx,
        "node",
        "ts_client.mjs",
        srv.url("").trim_end_matches('/'),
    );
    // The TypeScript SDK offers its newest version and this server takes it.
    assert_eq!(r["protocol_version"], r["protocol_version_sent"], "{r}");
    assert_stdio_report(&r, &fx);
    assert_spa_image_and_resources(&r);
}

/// The TypeScript client over stdio: the SPA rendered by the browser, its screenshot
/// received inline, and both artifacts read back as resources whole.
fn assert_spa_image_and_resources(r: &Value) {
    let spa = &r["spa"];
    assert_eq!(spa["is_error"], false, "{spa}");
    assert_eq!(spa["render"], "browser", "{spa}");
    let shot = spa["screenshot_file"].as_str().expect("screenshot_file");
    let shot_bytes = std::fs::read(shot).unwrap();
    // What the model gets: the screenshot as taken when it is within 1568 px and 1.15 MP,
    // else scaled to fit (a 1265x996 viewport is 1.26 MP); the line says which.
    let image = &spa["image"];
    assert_eq!(image["mime_type"], "image/png", "{spa}");
    inline_image::assert_fitted(
        image["data"].as_str().unwrap(),
        spa["screenshot_line"].as_str().unwrap_or_default(),
        shot,
    );
    let content = spa["content_file"].as_str().expect("content_file");
    let md = &r["resources"]["content.md"];
    assert_eq!(md["mime_type"], "text/markdown", "{md}");
    assert_eq!(
        md["text"].as_str().unwrap(),
        std::fs::read_to_string(content).unwrap()
    );
    assert!(md["text"].as_str().unwrap().contains("Items ("), "{md}");
    let png = &r["resources"]["page.png"];
    assert_eq!(png["mime_type"], "image/png", "{png}");
    assert_eq!(png["blob_bytes"], shot_bytes.len(), "{png}");
    assert!(png["uri"].as_str().unwrap().starts_with("file://"), "{png}");
}

/// What both clients must have seen over stdio.
fn assert_stdio_report(r: &Value, fx: &Fixture) {
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
        [
            "capabilities",
            "fetch",
            "health",
            "read_artifact",
            "tabs_close",
            "tabs_list",
            "takeover"
        ],
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
    // and 1024 characters; the article is ASCII), and the default want gives lean.md to quote.
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
    // The tool error names the unknown argument.
    assert_eq!(r["unknown_field"]["field"], "bogus", "{r}");
    assert_eq!(r["health"], "ok", "{r}");
}

mod agents;
mod args;
mod egress;
mod host;
mod http;
mod inline_image;
mod install;
mod lean;
mod paging;
mod resources;

/// Run `steps` (see tests/mcp/calls.py) with the official Python SDK against
/// `afhttp ARGS` in `fx`, and return its report (`tools`, `schemas`, `steps`).
pub fn run_steps(fx: &Fixture, args: &[&str], steps: Value) -> Value {
    let config = serde_json::json!({
        "afhttp": env!("CARGO_BIN_EXE_afhttp"),
        "args": args,
        "env": {
            "TMPDIR": fx.tmp,
            "HOME": fx.home,
            "XDG_DATA_HOME": fx.data,
            "PATH": std::env::var("PATH").unwrap_or_default(),
            "AFHTTP_LOG": "warn",
            "AFHTTP_NO_SANDBOX": "1",
        },
        "steps": steps,
    });
    let out = Command::new("python3")
        .arg(format!("{CLIENTS}/calls.py"))
        .arg(config.to_string())
        .current_dir(CLIENTS)
        .output_within(Duration::from_secs(420))
        .expect("python3 must be installed");
    assert!(
        out.status.success(),
        "calls.py failed (scripts/test.sh installs the `mcp` SDK): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON report ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// o200k_base tokens of `text` (the tokenizer the budget is counted with; its ranks ship in
/// the crate).
pub fn o200k(text: &str) -> usize {
    tiktoken_rs::o200k_base()
        .expect("o200k_base ranks load")
        .encode_ordinary(text)
        .len()
}

/// Every file under `root`, relative to it.
pub fn files_under(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                todo.push(p);
            } else {
                found.push(p.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    found
}
