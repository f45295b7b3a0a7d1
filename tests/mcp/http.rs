//! `/mcp` on a real `afhttp host` over Streamable HTTP: the official Python SDK
//! (`streamable_http_client`) and TypeScript SDK (`StreamableHTTPClientTransport`) each run
//! the same steps (tests/mcp/calls.py, tests/mcp/http_calls.mjs); then the refusals (token,
//! Origin, Host, query token, body cap) and the pruning of the host's output area, with raw
//! HTTP.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};

use super::CLIENTS;
use crate::support::deadline::CommandDeadline;
use crate::support::events::{tool_error, tool_fetch};
use crate::support::host::port_of;
use crate::support::{error_code, Fixture, FixtureServer, HostProc};

const TOKEN: &str = "mcp-http-test-token";

pub(super) fn start_host(fx: &Fixture, extra: &[&str]) -> (HostProc, u16) {
    let mut args = vec!["--listen", "tcp:127.0.0.1:0", "--token-secret", TOKEN];
    args.extend_from_slice(extra);
    let host = HostProc::start(fx, &args, &[]);
    let port = port_of(&host.endpoint);
    (host, port)
}

/// Run `steps` with one SDK client (`python3 calls.py` or `node http_calls.mjs`) against
/// `http://127.0.0.1:PORT/mcp`.
fn run_http(program: &str, script: &str, port: u16, steps: &Value) -> Value {
    let config = json!({
        "url": format!("http://127.0.0.1:{port}/mcp"),
        "token": TOKEN,
        "steps": steps,
    });
    let out = Command::new(program)
        .arg(format!("{CLIENTS}/{script}"))
        .arg(config.to_string())
        .current_dir(CLIENTS)
        .output_within(Duration::from_secs(420))
        .unwrap_or_else(|e| panic!("{program} must be installed: {e}"));
    assert!(
        out.status.success(),
        "{script} failed (scripts/test.sh installs pip `mcp` and `npm ci --prefix tests/mcp`): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON report ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// The steps both clients run: a static page, an SPA (browser, screenshot inline), paging,
/// resources, a typed error, the resource list, a refused read, and a tall page whose
/// screenshot goes inline as its first screens.
fn steps(srv: &FixtureServer) -> Value {
    json!([
        {"call": "fetch", "args": {"url": srv.url("/article")}},
        {"call": "fetch", "args": {"url": srv.url("/spa")}},
        {"page": {"path": "$0.result.content_file", "limit": 700}},
        {"read_resource": "$0.result.content_file"},
        {"read_resource": "$1.result.screenshot_file"},
        {"call": "fetch", "args": {"url": "http://afhttp-mcp-test.invalid/", "render": "none"}},
        {"list_resources": true},
        {"call": "read_artifact", "args": {"path": "/etc/passwd"}},
        {"call": "fetch", "args": {"url": srv.url("/browser/tall"), "render": "always"}},
    ])
}

/// What both clients must have seen.
fn assert_http_report(r: &Value, area: &Path) {
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
    assert!(
        r["protocol_version"]
            .as_str()
            .is_some_and(|v| v.starts_with("20")),
        "{r}"
    );
    let s = r["steps"].as_array().unwrap();
    let area = area.canonicalize().unwrap();
    // The static page: HTTP, artifacts in the host's output area, one link each.
    let page = &s[0];
    assert_eq!(page["is_error"], false, "{page}");
    assert!(
        page["text"].as_str().unwrap().starts_with("fetch 200 "),
        "{page}"
    );
    let content_file = PathBuf::from(
        page["structured"]["result"]["content_file"]
            .as_str()
            .unwrap(),
    );
    assert!(
        content_file.starts_with(&area),
        "{content_file:?} not in {area:?}"
    );
    let links: Vec<&str> = page["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "resource_link")
        .map(|b| b["uri"].as_str().unwrap())
        .collect();
    assert!(
        links.iter().any(|l| l.ends_with("/content.md")),
        "{links:?}"
    );
    // The SPA: rendered by the host's browser, its screenshot inline as an image.
    let spa = &s[1];
    assert_eq!(spa["is_error"], false, "{spa}");
    assert_eq!(tool_fetch(&spa["structured"]).render, "browser", "{spa}");
    let shot = PathBuf::from(
        spa["structured"]["result"]["screenshot_file"]
            .as_str()
            .unwrap(),
    );
    assert!(shot.starts_with(&area), "{shot:?}");
    let shot_bytes = std::fs::metadata(&shot).unwrap().len();
    let image = spa["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "image")
        .unwrap_or_else(|| panic!("no inline image: {spa}"));
    assert_eq!(image["mime_type"], "image/png", "{image}");
    super::inline_image::assert_fitted(
        image["data"].as_str().unwrap(),
        spa["text"].as_str().unwrap(),
        shot.to_str().unwrap(),
    );
    // Paging content.md gives the file exactly.
    let whole = std::fs::read_to_string(&content_file).unwrap();
    assert!(whole.len() > 700, "the article must need two pages");
    assert!(s[2]["pages"].as_u64().unwrap() >= 2, "{}", s[2]);
    assert_eq!(s[2]["body"].as_str().unwrap(), whole);
    // resources/read by the link's URI, as a remote client reads them.
    assert_eq!(s[3]["is_error"], false, "{}", s[3]);
    assert_eq!(s[3]["contents"][0]["text"].as_str().unwrap(), whole);
    assert_eq!(s[4]["is_error"], false, "{}", s[4]);
    assert_eq!(
        s[4]["contents"][0]["blob_bytes"].as_u64().unwrap(),
        shot_bytes
    );
    // A typed error as a tool error with the stable code.
    let dns = &s[5];
    assert_eq!(dns["is_error"], true, "{dns}");
    let e = tool_error(&dns["structured"]);
    assert_eq!(e.code, "dns_resolution_failed", "{dns}");
    assert!(e.retryable, "{dns}");
    // Listed; nothing outside the area reads.
    let listed = s[6]["resources"].to_string();
    assert!(
        listed.contains(content_file.file_name().unwrap().to_str().unwrap()),
        "{listed}"
    );
    for l in &links {
        assert!(listed.contains(l), "{l} not listed");
    }
    assert_eq!(s[7]["is_error"], true, "{}", s[7]);
    assert_eq!(
        tool_error(&s[7]["structured"]).code,
        "invalid_argument",
        "{}",
        s[7]
    );
    // The tall page: its first screens inline, cropped at a readable width.
    let tall = &s[8];
    let (data, _, _) = super::inline_image::inline_image(tall);
    let shot = tall["structured"]["result"]["screenshot_file"]
        .as_str()
        .unwrap();
    let b64 = super::inline_image::image_b64(tall);
    super::inline_image::assert_fitted(b64, tall["text"].as_str().unwrap(), shot);
    assert_eq!(data.width(), 768, "{}", tall["text"]);
    assert!(tall["text"].as_str().unwrap().contains(": the top "));
}

fn area_of(host: &HostProc) -> PathBuf {
    PathBuf::from(host.ready["mcp"]["output_dir"].as_str().unwrap())
}

#[test]
fn python_sdk_over_streamable_http_on_a_host() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let (host, port) = start_host(&fx, &[]);
    assert_eq!(host.ready["mcp"]["served"], true, "{}", host.ready);
    let r = run_http("python3", "calls.py", port, &steps(&srv));
    assert_http_report(&r, &area_of(&host));
}

#[test]
fn typescript_sdk_over_streamable_http_on_a_host() {
    assert!(
        Path::new(CLIENTS)
            .join("node_modules/@modelcontextprotocol/sdk")
            .is_dir(),
        "@modelcontextprotocol/sdk is not installed: run `npm ci --prefix tests/mcp`"
    );
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let (host, port) = start_host(&fx, &[]);
    let r = run_http("node", "http_calls.mjs", port, &steps(&srv));
    // The TypeScript SDK offers its newest version and the host takes it.
    assert_eq!(r["protocol_version"], r["protocol_version_sent"], "{r}");
    assert_http_report(&r, &area_of(&host));
}

/// One raw HTTP/1.1 exchange with full control of the head: (status, body).
fn raw(port: u16, head: &str, body: &[u8]) -> (u16, String) {
    let mut request = format!(
        "{head}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body);
    let r = match std::net::TcpStream::connect(("127.0.0.1", port)) {
        Ok(s) => crate::support::raw_http::exchange_tcp(s, &request),
        Err(e) => panic!("nothing listens on {port}: {e}"),
    };
    (r.status, r.text())
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// POST `body` to `path` with `Host: host` and the extra header lines.
fn post(port: u16, path: &str, host: &str, extra: &[&str], body: &str) -> (u16, String) {
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n"
    );
    for line in extra {
        head.push_str(line);
        head.push_str("\r\n");
    }
    raw(port, &head, body.as_bytes())
}

#[test]
fn mcp_refuses_bad_tokens_foreign_origins_rebinding_hosts_query_tokens_and_big_bodies() {
    let fx = Fixture::new();
    let (_host, port) = start_host(&fx, &[]);
    let local = format!("127.0.0.1:{port}");
    let bearer = format!("Authorization: Bearer {TOKEN}");
    let ok = |extra: &[&str], host: &str| post(port, "/mcp", host, extra, INIT);

    let (status, body) = ok(&[&bearer], &local);
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("\"protocolVersion\":\"2025-11-25\""),
        "{body}"
    );

    // No token, a wrong one, a non-bearer scheme: 401.
    for extra in [
        vec![],
        vec!["Authorization: Bearer wrong"],
        vec!["Authorization: Basic bWNwOnRvaw=="],
    ] {
        let (status, body) = ok(&extra, &local);
        assert_eq!(status, 401, "{extra:?}: {body}");
        assert_eq!(error_code(&body), "unauthorized");
    }
    // A token in the query: refused, with or without a valid header.
    for path in [
        format!("/mcp?token_secret={TOKEN}"),
        format!("/mcp?x={TOKEN}"),
        "/mcp?access_token=anything".to_string(),
    ] {
        for extra in [vec![], vec![bearer.as_str()]] {
            let (status, body) = post(port, &path, &local, &extra, INIT);
            assert_eq!(status, 401, "{path} {extra:?}: {body}");
        }
    }
    // A foreign Origin: 403 even with the token; the listener's own origin passes.
    let (status, body) = ok(&[&bearer, "Origin: http://evil.example"], &local);
    assert_eq!(status, 403, "{body}");
    assert_eq!(error_code(&body), "forbidden_origin");
    let own = format!("Origin: http://{local}");
    assert_eq!(ok(&[&bearer, &own], &local).0, 200);
    let (status, _) = ok(&[&bearer, "Origin: null"], &local);
    assert_eq!(status, 403);
    // A rebinding Host (a name that is not this listener's): 403 even with the token.
    let (status, body) = ok(&[&bearer], &format!("rebind.example:{port}"));
    assert_eq!(status, 403, "{body}");
    assert_eq!(error_code(&body), "forbidden_host");
    assert_eq!(ok(&[&bearer], &format!("localhost:{port}")).0, 200);
    // Without the token nothing under /mcp is served; with it, nothing below /mcp exists.
    let (status, _) = post(port, "/mcp/tools", &local, &[], INIT);
    assert_eq!(status, 401);
    let (status, _) = post(port, "/mcp/tools", &local, &[&bearer], INIT);
    assert_eq!(status, 404);
    // The body cap (1 MiB).
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"fetch","arguments":{{"url":"http://127.0.0.1:9/","data":"{}"}}}}}}"#,
        "x".repeat(1024 * 1024 + 10)
    );
    let (status, _) = post(port, "/mcp", &local, &[&bearer], &big);
    assert_eq!(status, 413);
}

#[test]
fn a_host_without_a_token_serves_no_mcp() {
    let fx = Fixture::new();
    let host = HostProc::start(&fx, &["--listen", "tcp:127.0.0.1:0"], &[]);
    let port = port_of(&host.endpoint);
    assert_eq!(host.ready["mcp"]["served"], false, "{}", host.ready);
    let (status, body) = post(port, "/mcp", &format!("127.0.0.1:{port}"), &[], INIT);
    assert_eq!(status, 401, "{body}");
}

/// A `tools/call` of `fetch` over raw JSON-RPC (stateless: no session needed); the result
/// (`isError`, `structuredContent`, ...).
pub(super) fn call_fetch(port: u16, args: Value) -> Value {
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "fetch", "arguments": args}});
    let bearer = format!("Authorization: Bearer {TOKEN}");
    let (status, body) = post(
        port,
        "/mcp",
        &format!("127.0.0.1:{port}"),
        &[&bearer],
        &call.to_string(),
    );
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    v["result"].clone()
}

/// A plain-HTTP fetch of `url` through `/mcp` that must succeed; its result event.
fn fetch_raw(port: u16, url: &str) -> Value {
    let r = call_fetch(port, json!({"url": url, "render": "none"}));
    assert_eq!(r["isError"], false, "{r}");
    r["structuredContent"]["result"].clone()
}

fn seed(area: &Path, name: &str, secs_old: u64) -> PathBuf {
    let d = area.join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("body.html"), b"old").unwrap();
    let t = SystemTime::now() - Duration::from_secs(secs_old);
    std::fs::File::open(d.join("body.html"))
        .unwrap()
        .set_modified(t)
        .unwrap();
    std::fs::File::open(&d).unwrap().set_modified(t).unwrap();
    d
}

#[test]
fn the_hosts_output_area_is_pruned_by_age_and_by_size() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let area = fx.data.join("afhttp/mcp-out");
    // Two directories from an earlier run: one past the time to live, one within it.
    let expired = seed(&area, "expired", 2 * 3600);
    let recent = seed(&area, "recent", 600);
    // One 100 kB fetch fits under the cap, two do not.
    let (_host, port) = start_host(
        &fx,
        &["--mcp-output-ttl", "1h", "--mcp-output-max-bytes", "150000"],
    );
    crate::support::wait_for(
        "the expired directory is pruned at start",
        Duration::from_secs(30),
        || !expired.exists(),
    );
    assert!(recent.exists(), "within the time to live and the cap: kept");

    let url = srv.url("/bytes?n=100000");
    let first = PathBuf::from(fetch_raw(port, &url)["out_dir"].as_str().unwrap());
    assert!(first.starts_with(area.canonicalize().unwrap()), "{first:?}");
    let second = PathBuf::from(fetch_raw(port, &url)["out_dir"].as_str().unwrap());
    // Over the cap: the oldest go (the seeded one, then the first fetch), the newest stays.
    crate::support::wait_for(
        "the first fetch is pruned for size",
        Duration::from_secs(30),
        || !first.exists(),
    );
    assert!(!recent.exists());
    assert!(
        std::fs::read_dir(&second).unwrap().next().is_some(),
        "the newest fetch is kept whole: {second:?}"
    );
}

/// The host's egress policy covers `/mcp` fetches on both steps: the plain-HTTP step in the
/// host process (every redirect hop) and the host browser behind its egress proxy. All on
/// loopback: 127.0.0.1 is allowed by `--egress-allow`, the fixture on 127.0.0.2 is private.
#[test]
fn the_hosts_egress_policy_applies_to_mcp_fetches_on_the_http_and_the_browser_step() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let private = FixtureServer::start_on("127.0.0.2");
    let (host, port) = start_host(
        &fx,
        &["--deny-private-networks", "--egress-allow", "127.0.0.1"],
    );
    assert_eq!(host.ready["egress"]["enforced"], true, "{}", host.ready);
    let hop = srv.url(&format!("/redirect/abs?to={}", private.url("/static")));
    let denied = |args: Value| {
        let r = call_fetch(port, args.clone());
        assert_eq!(r["isError"], true, "{args}: {r}");
        let err = &r["structuredContent"]["error"];
        assert_eq!(err["code"], "egress_denied", "{args}: {r}");
        assert!(
            err["message"].as_str().unwrap().contains("127.0.0.2"),
            "{r}"
        );
    };
    assert_eq!(fetch_raw(port, &srv.url("/static"))["status"], 200);
    denied(json!({"url": hop, "render": "none"}));
    denied(json!({"url": private.url("/static"), "render": "none"}));
    denied(json!({"url": hop, "render": "always", "want": "body"}));
    let browser = call_fetch(
        port,
        json!({"url": srv.url("/static"), "render": "always", "want": "body"}),
    );
    assert_eq!(browser["isError"], false, "{browser}");
    assert_eq!(
        private.hits("/static"),
        0,
        "the private fixture was reached"
    );
}

/// An output area that cannot be used (here a file where its directory should be) does not
/// stop the host: it starts without `/mcp` and its ready document says why.
#[test]
fn a_host_whose_output_area_is_unusable_starts_without_mcp() {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.data.join("afhttp")).unwrap();
    std::fs::write(fx.data.join("afhttp/mcp-out"), b"not a directory").unwrap();
    let (host, port) = start_host(&fx, &[]);
    assert_eq!(host.ready["mcp"]["served"], false, "{}", host.ready);
    assert!(
        host.ready["mcp"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("mcp-out")),
        "{}",
        host.ready
    );
    let bearer = format!("Authorization: Bearer {TOKEN}");
    let (status, _) = post(port, "/mcp", &format!("127.0.0.1:{port}"), &[&bearer], INIT);
    assert_eq!(status, 404);
}
