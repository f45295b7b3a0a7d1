//! The browser path's `network.json` against real Chromium: redirect hops, XHR/fetch/GraphQL
//! entries, failures, cache and service-worker flags, WebSocket and SSE capture, body files,
//! redaction and readiness counts.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{Fixture, FixtureServer, Run};

const CHROMIUM: &str = "/usr/bin/chromium";

/// `afhttp fetch URL --render always --want network --out DIR EXTRA...` in an inline browser.
fn fetch(fx: &Fixture, url: &str, extra: &[&str]) -> (Run, Value, PathBuf) {
    let _one = crate::support::chromium::lock();
    let out = fx.path().join(format!("out-{}", uuid_like()));
    let run = fx
        .cmd()
        .env("AFHTTP_NO_SANDBOX", "1")
        .env("AFHTTP_BROWSER_BIN", CHROMIUM)
        .args([
            "fetch", url, "--render", "always", "--want", "network", "--out",
        ])
        .arg(&out)
        .args(extra)
        .run();
    let net = run.artifact_json("network_file");
    (run, net, out)
}

fn uuid_like() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    N.fetch_add(1, Ordering::Relaxed).to_string()
}

fn entries(net: &Value) -> &Vec<Value> {
    net["entries"].as_array().unwrap()
}

/// Entries whose URL path (and query) ends with `suffix`.
fn with_url<'a>(net: &'a Value, suffix: &str) -> Vec<&'a Value> {
    entries(net)
        .iter()
        .filter(|e| e["url"].as_str().unwrap().ends_with(suffix))
        .collect()
}

fn one<'a>(net: &'a Value, suffix: &str) -> &'a Value {
    let found = with_url(net, suffix);
    assert_eq!(found.len(), 1, "entries ending with {suffix}: {found:#?}");
    found[0]
}

fn warning_codes(run: &Run) -> Vec<String> {
    crate::support::warning_codes(run.result())
}

fn read(out: &Path, rel: &Value) -> Vec<u8> {
    std::fs::read(out.join(rel.as_str().unwrap())).unwrap()
}

#[test]
fn redirect_chain_is_three_linked_entries() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let (run, net, _) = fetch(&fx, &srv.url("/net/redirect/a"), &[]);
    assert_eq!(run.result()["redirects"], 2);
    assert_eq!(run.fetch().final_url, srv.url("/net/redirect/final"));
    let docs: Vec<&Value> = entries(&net)
        .iter()
        .filter(|e| e["resource_type"] == "Document")
        .collect();
    let statuses: Vec<u64> = docs
        .iter()
        .map(|e| e["response"]["status"].as_u64().unwrap())
        .collect();
    assert_eq!(statuses, [301, 302, 200], "{docs:#?}");
    let ids: Vec<&str> = docs
        .iter()
        .map(|e| e["request_id"].as_str().unwrap())
        .collect();
    assert!(
        ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2],
        "{ids:?}"
    );
    assert_eq!(docs[0]["redirected_to"], ids[1]);
    assert_eq!(docs[1]["redirected_from"], ids[0]);
    assert_eq!(docs[1]["redirected_to"], ids[2]);
    assert_eq!(docs[2]["redirected_from"], ids[1]);
    assert!(docs[2].get("redirected_to").is_none());
    assert_eq!(docs[0]["cdp_request_id"], docs[2]["cdp_request_id"]);
    assert!(docs[0]["url"]
        .as_str()
        .unwrap()
        .ends_with("/net/redirect/a"));
    assert!(docs[1]["url"]
        .as_str()
        .unwrap()
        .ends_with("/net/redirect/b"));
    assert_eq!(
        docs[0]["response"]["headers"]["location"],
        "/net/redirect/b"
    );
    assert!(docs.iter().all(|e| e["state"] == "finished"));
    assert_eq!(docs[2]["is_main_document"], true);
    assert!(docs[0]["frame_id"].as_str().is_some_and(|f| !f.is_empty()));
    assert!(docs[0]["loader_id"].as_str().is_some_and(|f| !f.is_empty()));
    assert_eq!(
        docs[2]["response"]["remote_address"],
        format!("127.0.0.1:{}", srv.port())
    );
    assert!(net["summary"]["responses_total"].as_u64().unwrap() >= 3);
    assert_eq!(net["source"], "cdp");
}

#[test]
fn xhr_page_entries_graphql_failure_bodies_and_redaction() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let (run, net, out) = fetch(&fx, &srv.url("/net/xhr"), &[]);
    let raw = std::fs::read_to_string(out.join("network.json")).unwrap();
    for secret in [
        "cookie-secret-1",
        "auth-secret-2",
        "token-secret-3",
        "set-cookie-secret-4",
    ] {
        assert!(!raw.contains(secret), "{secret} leaked into network.json");
    }
    assert_eq!(
        run.event["trace"]["sensitive_capture"]["no_network_redact"],
        false
    );
    // --wait auto with no --network-bodies captures XHR/fetch bodies.
    assert_eq!(net["capture"]["bodies"], "xhr");
    assert_eq!(net["capture"]["bodies_defaulted"], true);

    let items = with_url(&net, "");
    let items: Vec<&&Value> = items
        .iter()
        .filter(|e| e["url"].as_str().unwrap().contains("/net/api/item?n="))
        .collect();
    assert_eq!(items.len(), 17);
    for e in &items {
        assert_eq!(e["resource_type"], "Fetch");
        assert_eq!(e["state"], "finished");
        assert_eq!(e["response"]["status"], 200);
        assert_eq!(e["response"]["mime_type"], "application/json");
        assert_eq!(e["initiator"]["type"], "script");
        assert!(e["initiator"]["stack"][0]["url"]
            .as_str()
            .unwrap()
            .ends_with("/net/xhr"));
        assert!(e["priority"].is_string());
        assert!(e["timing"]["request_sent_ms"].is_number());
        assert_eq!(e["body_capture"]["status"], "captured");
        assert_eq!(e["hints"]["json_valid"], true);
        let body: Value = serde_json::from_slice(&read(&out, &e["body_file"])).unwrap();
        assert!(body["item"].is_string());
    }
    let ids: std::collections::HashSet<&str> = entries(&net)
        .iter()
        .map(|e| e["request_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), entries(&net).len(), "request ids are unique");

    let xhr = one(&net, "/net/api/xhr");
    assert_eq!(xhr["resource_type"], "XHR");
    let h = &xhr["request_headers"];
    assert_eq!(h["authorization"], "***", "{xhr:#}");
    assert_eq!(h["x-api-token"], "***");
    // The cookie header only exists in the extra-info (wire) headers.
    assert_eq!(h["cookie"], "***");
    assert_eq!(xhr["request_headers_source"], "extra_info");
    assert_eq!(xhr["response"]["headers"]["set-cookie"], "***");
    assert_eq!(
        xhr["response"]["headers"]["content-type"],
        "application/json"
    );

    let gql = one(&net, "/net/graphql");
    assert_eq!(gql["method"], "POST");
    assert_eq!(gql["hints"]["graphql_operation_name"], "AddItem");
    assert_eq!(gql["hints"]["graphql_operation_type"], "mutation");
    assert_eq!(gql["post_data"]["present"], true);
    assert!(gql["post_data"]["size_bytes"].as_u64().unwrap() > 50);
    assert_eq!(gql["post_data"]["json_valid"], true);
    let post = read(&out, &gql["post_data"]["post_data_file"]);
    assert!(String::from_utf8(post).unwrap().contains("AddItem"));
    assert_eq!(gql["hints"]["json_valid"], true);

    let dropped = one(&net, "/drop");
    assert_eq!(dropped["state"], "failed", "{dropped:#}");
    assert!(dropped["failure"]["error_text"]
        .as_str()
        .unwrap()
        .starts_with("net::"));
    assert_eq!(dropped["body_capture"]["status"], "skipped");

    let s = &net["summary"];
    assert!(s["requests_total"].as_u64().unwrap() >= 21);
    assert!(s["finished_total"].as_u64().unwrap() >= 20);
    assert!(s["failed_total"].as_u64().unwrap() >= 1);
    assert_eq!(s["redacted"], true);
    assert!(s["bodies"]["captured"].as_u64().unwrap() >= 19);
    assert!(!warning_codes(&run).contains(&"network_not_idle".to_string()));
}

#[test]
fn no_network_redact_shows_credentials_and_says_so() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let (run, net, _) = fetch(&fx, &srv.url("/net/xhr"), &["--no-network-redact"]);
    assert_eq!(
        run.event["trace"]["sensitive_capture"]["no_network_redact"],
        true
    );
    assert_eq!(net["summary"]["redacted"], false);
    let xhr = one(&net, "/net/api/xhr");
    let h = &xhr["request_headers"];
    assert_eq!(h["authorization"], "Bearer auth-secret-2");
    assert_eq!(h["x-api-token"], "token-secret-3");
    assert!(h["cookie"]
        .as_str()
        .unwrap()
        .contains("sid=cookie-secret-1"));
    assert!(xhr["response"]["headers"]["set-cookie"]
        .as_str()
        .unwrap()
        .contains("set-cookie-secret-4"));
}

#[test]
fn a_cached_resource_loaded_twice_is_flagged() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let (_, net, _) = fetch(&fx, &srv.url("/net/cached-page"), &[]);
    let both = with_url(&net, "/net/cached");
    assert_eq!(both.len(), 2, "{both:#?}");
    assert_eq!(both[0]["from_cache"], false);
    assert_eq!(both[1]["from_cache"], true, "{:#}", both[1]);
    let c = &both[1]["cache"];
    assert!(
        c["from_disk_cache"] == true || c["from_memory_cache"] == true,
        "{c}"
    );
    assert_eq!(srv.hits("/net/cached"), 1);
}

#[test]
fn service_worker_responses_are_flagged() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let (run, net, _) = fetch(&fx, &srv.url("/net/sw-page"), &[]);
    let from_worker = one(&net, "/net/sw-data");
    assert_eq!(
        from_worker["from_service_worker"], true,
        "{from_worker:#}\n{}",
        run.context
    );
    assert_eq!(from_worker["response"]["status"], 200);
    let passed = one(&net, "/net/api/item?n=sw");
    assert_eq!(passed["from_service_worker"], true, "{passed:#}");
    assert!(
        net["summary"]["from_service_worker_total"]
            .as_u64()
            .unwrap()
            >= 2
    );
}

#[test]
fn websocket_frames_only_with_capture_ws() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let (run, net, _) = fetch(&fx, &srv.url("/net/ws-page"), &["--capture-ws"]);
    assert_eq!(run.event["trace"]["sensitive_capture"]["capture_ws"], true);
    let ws = one(&net, "/net/ws");
    assert_eq!(ws["resource_type"], "WebSocket");
    assert_eq!(ws["response"]["status"], 101);
    let frames = ws["websocket"]["frames"].as_array().unwrap();
    let sent: Vec<&str> = frames
        .iter()
        .filter(|f| f["direction"] == "sent")
        .map(|f| f["payload"].as_str().unwrap())
        .collect();
    let received: Vec<&str> = frames
        .iter()
        .filter(|f| f["direction"] == "received")
        .map(|f| f["payload"].as_str().unwrap())
        .collect();
    assert_eq!(sent, ["hello-1", "hello-2"]);
    assert_eq!(received, ["echo:hello-1", "echo:hello-2"]);
    assert_eq!(net["summary"]["websocket_frames_total"], 4);

    let (run, net, _) = fetch(&fx, &srv.url("/net/ws-page"), &[]);
    assert_eq!(run.event["trace"]["sensitive_capture"]["capture_ws"], false);
    let ws = one(&net, "/net/ws");
    assert_eq!(ws["websocket"]["recorded"], false);
    assert_eq!(ws["websocket"]["frames"].as_array().unwrap().len(), 0);
    assert_eq!(ws["websocket"]["frames_total"], 4);
}

#[test]
fn event_source_messages_with_capture_sse() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let (run, net, _) = fetch(&fx, &srv.url("/net/sse-page"), &["--capture-sse"]);
    assert_eq!(run.event["trace"]["sensitive_capture"]["capture_sse"], true);
    let es = one(&net, "/net/sse");
    assert_eq!(es["resource_type"], "EventSource");
    let data: Vec<&str> = es["event_source"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["data"].as_str().unwrap())
        .collect();
    assert_eq!(data, ["tick-1", "tick-2", "tick-3"]);
    assert_eq!(es["event_source"]["messages"][0]["event_id"], "1");
    // The stream stays open: counted at capture, but it does not hold up --wait auto.
    assert_eq!(net["summary"]["pending_by_resource_type"]["EventSource"], 1);
    assert!(
        net["summary"]["inflight_total_at_capture"]
            .as_u64()
            .unwrap()
            >= 1
    );
    let codes = warning_codes(&run);
    assert!(
        !codes.contains(&"readiness_timeout".to_string()),
        "{codes:?}"
    );
    assert!(
        !codes.contains(&"network_not_idle".to_string()),
        "{codes:?}"
    );
}

#[test]
fn a_15_mb_binary_xhr_body_is_cut_at_the_cap() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let cap: usize = 10 * 1024 * 1024;
    let (run, net, out) = fetch(&fx, &srv.url("/net/big-page"), &["--network-bodies", "xhr"]);
    let big = one(&net, "/net/big-bin");
    assert_eq!(big["state"], "finished");
    let b = &big["body_capture"];
    assert_eq!(b["status"], "truncated", "{big:#}");
    assert_eq!(b["encoding"], "base64");
    assert_eq!(b["bytes_written"], cap);
    assert_eq!(
        b["original_bytes"],
        crate::support::routes_network::BIG_BIN_BYTES
    );
    let file = big["body_file"].as_str().unwrap();
    assert!(
        file.starts_with("network-bodies/") && file.ends_with(".b64"),
        "{file}"
    );
    let text = read(&out, &big["body_file"]);
    assert!(text.len() <= cap.div_ceil(3) * 4, "{} bytes", text.len());
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&text)
        .unwrap();
    assert_eq!(bytes.len(), cap);
    assert!(bytes.iter().all(|&b| b == 0xff));
    let w = run
        .fetch()
        .warnings
        .into_iter()
        .find(|w| w.code == "network_body_truncated")
        .unwrap_or_else(|| panic!("no truncation warning\n{}", run.context));
    assert_eq!(w.artifact.as_deref(), Some("network"));
}

#[test]
fn requests_in_flight_at_capture_are_counted_and_warned() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let (run, net, _) = fetch(&fx, &srv.url("/browser/pending"), &["--wait", "load"]);
    let codes = warning_codes(&run);
    assert!(codes.contains(&"network_not_idle".to_string()), "{codes:?}");
    assert!(
        codes.contains(&"pending_xhr_at_capture".to_string()),
        "{codes:?}"
    );
    let s = &net["summary"];
    assert!(s["inflight_total_at_capture"].as_u64().unwrap() >= 1, "{s}");
    assert_eq!(s["pending_by_resource_type"]["Fetch"], 1, "{s}");
    assert!(s["incomplete_total"].as_u64().unwrap() >= 1);
    let slow = one(&net, "/slow?ms=8000");
    assert_eq!(slow["state"], "pending");
    // --wait load captures no bodies unless asked.
    assert_eq!(net["capture"]["bodies"], "off");
    assert!(slow.get("body_capture").is_none());
}

#[test]
fn concurrent_fetches_on_one_host_see_only_their_own_requests() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let _one = crate::support::chromium::lock();
    let mut host = crate::support::HostProc::start(
        &fx,
        &["--listen", "tcp:127.0.0.1:0"],
        &[("AFHTTP_BROWSER_BIN", CHROMIUM)],
    );
    let runs: Vec<(String, Value)> = std::thread::scope(|scope| {
        let jobs: Vec<_> = ["/net/xhr", "/net/cached-page"]
            .into_iter()
            .enumerate()
            .map(|(i, path)| {
                let (fx, srv, ep) = (&fx, &srv, host.endpoint.clone());
                scope.spawn(move || {
                    let out = fx.path().join(format!("concurrent-{i}"));
                    let run = fx
                        .cmd()
                        .args(["fetch", &srv.url(path), "--endpoint-url", &ep])
                        .args(["--render", "always", "--want", "network", "--out"])
                        .arg(&out)
                        .run();
                    (path.to_string(), run.artifact_json("network_file"))
                })
            })
            .collect();
        jobs.into_iter().map(|j| j.join().unwrap()).collect()
    });
    host.terminate();
    let (xhr, cached) = (&runs[0].1, &runs[1].1);
    assert_eq!(runs[0].0, "/net/xhr");
    assert_eq!(with_url(xhr, "/net/cached").len(), 0, "{xhr:#}");
    assert_eq!(with_url(xhr, "/net/cached-page").len(), 0);
    assert_eq!(with_url(cached, "/net/cached").len(), 2);
    let foreign = entries(cached)
        .iter()
        .filter(|e| e["url"].as_str().unwrap().contains("/net/api/"))
        .count();
    assert_eq!(foreign, 0, "{cached:#}");
    assert!(with_url(xhr, "/net/graphql").len() == 1);
}

#[test]
fn eight_concurrent_fetches_keep_their_events_apart_and_close_their_tabs() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let _one = crate::support::chromium::lock();
    let mut host = crate::support::HostProc::start(
        &fx,
        &["--listen", "tcp:127.0.0.1:0"],
        &[("AFHTTP_BROWSER_BIN", CHROMIUM)],
    );
    let ep = host.endpoint.clone();
    let tabs = || {
        fx.cmd()
            .args(["health", "--endpoint-url", &ep])
            .run()
            .result()["tabs_active"]
            .as_u64()
            .unwrap()
    };
    let baseline = tabs();
    let runs: Vec<(u32, crate::support::Run)> = std::thread::scope(|scope| {
        let jobs: Vec<_> = (0..8u32)
            .map(|n| {
                let (fx, srv, ep) = (&fx, &srv, ep.clone());
                scope.spawn(move || {
                    let run = fx
                        .cmd()
                        .args([
                            "fetch",
                            &srv.url(&format!("/net/conc/{n}")),
                            "--endpoint-url",
                            &ep,
                        ])
                        .args(["--render", "always", "--want", "network,console,text"])
                        .run();
                    (n, run)
                })
            })
            .collect();
        jobs.into_iter().map(|j| j.join().unwrap()).collect()
    });
    for (n, run) in &runs {
        let own = format!("/net/conc/{n}");
        let net = run.artifact_json("network_file");
        for e in entries(&net) {
            let url = e["url"].as_str().unwrap();
            // The page's own favicon request is the only other one it makes.
            assert!(
                url.ends_with(&own)
                    || url.ends_with(&format!("{own}/data"))
                    || url.ends_with("/favicon.ico"),
                "fetch {n} saw {url}"
            );
        }
        assert_eq!(
            with_url(&net, &format!("{own}/data")).len(),
            1,
            "{:#}",
            run.event["trace"]
        );
        let console = run.artifact_json("console_file").to_string();
        assert!(console.contains(&format!("page {n}")), "{console}");
        for other in (0..8).filter(|o| o != n) {
            assert!(!console.contains(&format!("page {other}\"")), "{console}");
        }
        assert!(run
            .artifact_text("text_file")
            .contains(&format!("data {n}")));
    }
    // Every fetch closed the tab it opened.
    assert_eq!(tabs(), baseline);
    host.terminate();
}
