//! A running host's runtime behaviour through the built binary and real Chromium:
//! `--recent-requests-cap` with `GET /recent-requests`, and how a runtime profile switch
//! treats the clients already attached.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio_tungstenite::tungstenite::{self, Message};

use crate::support::HostProc;
use crate::support::{Fixture, FixtureServer};

/// `GET path` on a `ws://HOST:PORT` endpoint with an optional bearer token: (status, JSON).
fn get(endpoint: &str, path: &str, token: Option<&str>) -> (u16, Value) {
    let r = crate::support::raw_http::get(crate::support::port_of(endpoint), path, token);
    (r.status, r.json())
}

fn fetch(fx: &Fixture, endpoint: &str, url: &str, extra: &[&str]) -> crate::support::Run {
    fx.cmd()
        .args(["fetch", url, "--endpoint-url", endpoint, "--want", "text"])
        .args(extra)
        .run()
}

#[test]
fn recent_requests_are_recorded_across_fetches_and_capped() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let mut host = HostProc::start(
        &fx,
        &[
            "--listen",
            "tcp:127.0.0.1:0",
            "--token-secret",
            "rr-token",
            "--recent-requests-cap",
            "4",
        ],
        &[],
    );
    let ep = host.endpoint.clone();
    let token = ["--token-secret", "rr-token", "--render", "always"];
    fetch(&fx, &ep, &srv.url("/static"), &token).result();
    fetch(&fx, &ep, &srv.url("/spa"), &token).result();
    // The recorder folds events as they arrive: wait until the cap is reached.
    crate::support::wait_until(Duration::from_secs(10), || {
        get(&ep, "/recent-requests", Some("rr-token")).1["records"]
            .as_array()
            .is_some_and(|r| r.len() == 4)
    });
    assert_eq!(get(&ep, "/recent-requests", None).0, 401);
    let (status, doc) = get(&ep, "/recent-requests", Some("rr-token"));
    assert_eq!(status, 200, "{doc}");
    assert_eq!(doc["code"], "recent_requests");
    assert_eq!(doc["enabled"], true);
    assert_eq!(doc["cap"], 4);
    let records = doc["records"].as_array().unwrap();
    assert_eq!(records.len(), 4, "{doc:#}");
    assert!(doc["dropped"].as_u64().unwrap() >= 1, "{doc:#}");
    let urls: Vec<&str> = records.iter().map(|r| r["url"].as_str().unwrap()).collect();
    // The SPA's data call is among the newest records, finished, with its status and type.
    let api = records
        .iter()
        .find(|r| r["url"].as_str().unwrap().contains("/api/items"))
        .unwrap_or_else(|| panic!("no /api/items record in {urls:?}"));
    assert_eq!(api["status"], 200);
    assert_eq!(api["state"], "finished");
    assert!(
        matches!(api["resource_type"].as_str(), Some("XHR" | "Fetch")),
        "{api}"
    );
    assert!(!api["target_id"].as_str().unwrap().is_empty());
    assert!(api["started_at"].as_str().unwrap().ends_with('Z'));
    // The static page's document was the oldest and has been dropped by the cap.
    assert!(!urls.iter().any(|u| u.ends_with("/static")), "{urls:?}");
    // Records hold no headers: nothing there can carry a credential.
    assert!(api.get("request_headers").is_none());
    let (_, caps) = get(&ep, "/capabilities", Some("rr-token"));
    assert_eq!(caps["recent_requests"]["cap"], 4);
    assert_eq!(host.terminate().0, 0);

    // Off by default: the route answers, and says so.
    let mut plain = HostProc::start(&fx, &["--listen", "tcp:127.0.0.1:0"], &[]);
    let (status, doc) = get(&plain.endpoint, "/recent-requests", None);
    assert_eq!((status, &doc["enabled"]), (200, &Value::Bool(false)));
    assert_eq!(plain.terminate().0, 0);

    // Out-of-range values are refused before anything starts.
    let run = fx
        .cmd()
        .args([
            "host",
            "--listen",
            "tcp:127.0.0.1:0",
            "--recent-requests-cap",
            "100001",
        ])
        .run();
    run.error("invalid_argument", 1);
}

/// A raw `/cdp` client, as another driver (e.g. a Playwright session) would hold one.
fn attach(
    endpoint: &str,
) -> tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>> {
    let (ws, _) = tungstenite::connect(format!("{endpoint}/cdp")).unwrap();
    ws
}

#[test]
fn profile_switch_waits_for_attached_clients_then_closes_them_with_a_reason() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let mut host = HostProc::start(
        &fx,
        &[
            "--listen",
            "tcp:127.0.0.1:0",
            "--profile",
            "alpha",
            "--profile-switch-wait-ms",
            "3000",
        ],
        &[],
    );
    let ep = host.endpoint.clone();
    let url = srv.url("/static");

    // A client that finishes its work 1.2 s later: the switch waits for it.
    let mut busy = attach(&ep);
    let finisher = std::thread::spawn(move || {
        // The client's own work takes 1.2 s: the input of the test, not a synchronisation.
        std::thread::sleep(Duration::from_millis(1200));
        busy.close(None).unwrap();
        // Drain until the close handshake completes; a 1012 here would mean it was cut.
        loop {
            match busy.read() {
                Ok(Message::Close(frame)) => return frame.map(|f| u16::from(f.code)),
                Ok(_) => continue,
                Err(_) => return None,
            }
        }
    });
    let t = Instant::now();
    fetch(&fx, &ep, &url, &["--profile", "beta"]).result();
    let waited = t.elapsed();
    assert!(
        waited >= Duration::from_millis(1200),
        "the switch did not wait for the attached client ({waited:?})"
    );
    assert_ne!(finisher.join().unwrap(), Some(1012));

    // A client that never finishes is closed after the bound, told why with 1012.
    let mut idle = attach(&ep);
    if let tungstenite::stream::MaybeTlsStream::Plain(s) = idle.get_ref() {
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    }
    let watcher = std::thread::spawn(move || loop {
        match idle.read() {
            Ok(Message::Close(Some(frame))) => {
                return (u16::from(frame.code), frame.reason.to_string())
            }
            Ok(Message::Close(None)) => return (0, String::new()),
            Ok(_) => continue,
            Err(e) => return (0, e.to_string()),
        }
    });
    let t = Instant::now();
    fetch(&fx, &ep, &url, &["--profile", "alpha"]).result();
    assert!(t.elapsed() >= Duration::from_secs(3), "{:?}", t.elapsed());
    let (code, reason) = watcher.join().unwrap();
    assert_eq!(code, 1012, "{reason}");
    assert!(reason.contains("switched to another profile"), "{reason}");
    let (_, health) = get(&ep, "/health", None);
    assert_eq!(health["profile"]["name"], "alpha");
    assert_eq!(host.terminate().0, 0);
}

#[test]
fn sdk_builders_fetch_and_call_cdp_on_one_connection() {
    use afhttp::sdk::{FetchCookie, FetchCookieSameSite};
    use afhttp::{Artifact, Client, RenderMode, Wait};
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let mut host = HostProc::start(
        &fx,
        &["--listen", "tcp:127.0.0.1:0", "--token-secret", "sdk-token"],
        &[],
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let client = Client::connect(&host.endpoint)
            .unwrap()
            .with_token(Some("sdk-token".into()));
        let out = fx.path().join("sdk-out");
        let result = client
            .fetch(&srv.url("/cookies/echo"))
            .render(RenderMode::Always)
            .wait(Wait::Auto)
            .user_agent("agent-script/1")
            .cookie_full(
                FetchCookie::build(("session", "abc"))
                    .path("/")
                    .http_only(true)
                    .same_site(FetchCookieSameSite::Lax)
                    .build(),
            )
            .evaluate_after_wait("document.body.dataset.agentReady = '1'")
            .timeout(Duration::from_secs(30))
            .want([
                Artifact::RenderedHtml,
                Artifact::Text,
                Artifact::Observation,
            ])
            .out_dir(&out)
            .send()
            .await
            .map_err(|f| f.error)
            .unwrap();
        assert_eq!(result.render_used, "browser");
        let text = std::fs::read_to_string(result.file(Artifact::Text).unwrap()).unwrap();
        assert!(text.contains("session=abc"), "{text}");
        let html = std::fs::read_to_string(result.file(Artifact::RenderedHtml).unwrap()).unwrap();
        assert!(html.contains("data-agent-ready=\"1\""), "{html:.300}");
        assert!(result
            .file(Artifact::Observation)
            .unwrap()
            .starts_with(&out));

        // The CDP builder, on the browser target and on a tab.
        let made = client
            .cdp("Target.createTarget")
            .params(serde_json::json!({"url": srv.url("/headers/ua")}))
            .send()
            .await
            .unwrap();
        let tab = made["targetId"].as_str().unwrap().to_string();
        // The new tab commits its URL asynchronously: wait for it (bounded), then check.
        crate::support::deadline::wait_until_async(Duration::from_secs(10), || async {
            let now = client
                .cdp("Runtime.evaluate")
                .tab(&tab)
                .params(
                    serde_json::json!({"expression": "location.pathname", "returnByValue": true}),
                )
                .send()
                .await;
            now.is_ok_and(|v| v["result"]["value"] == "/headers/ua")
        })
        .await;
        let title = client
            .cdp("Runtime.evaluate")
            .tab(&tab)
            .params(serde_json::json!({"expression": "location.pathname", "returnByValue": true}))
            .send()
            .await
            .unwrap();
        assert_eq!(title["result"]["value"], "/headers/ua");
        // A fetch on that existing tab leaves it open; the user agent is the one asked for.
        let on_tab = client
            .fetch(&srv.url("/headers/ua"))
            .render(RenderMode::Always)
            .tab(&tab)
            .user_agent("agent-script/2")
            .want([Artifact::Text])
            .send()
            .await
            .map_err(|f| f.error)
            .unwrap();
        assert_eq!(on_tab.tab_id.as_deref(), Some(tab.as_str()));
        let ua = std::fs::read_to_string(on_tab.file(Artifact::Text).unwrap()).unwrap();
        assert!(ua.contains("agent-script/2"), "{ua}");
        assert!(client.tabs().await.unwrap().iter().any(|t| t.tab_id == tab));
        // Bad input from code is the same invalid_argument the CLI gives.
        let bad = client
            .fetch(&srv.url("/"))
            .cookie_full(FetchCookie::build(("a", "b; Path=/x")).build())
            .send()
            .await
            .unwrap_err();
        assert_eq!(bad.error.code.as_str(), "invalid_argument");
        let bad = client.fetch("file:///etc/passwd").send().await.unwrap_err();
        assert_eq!(bad.error.code.as_str(), "invalid_argument");
        client.close().await;
    });
    assert_eq!(host.terminate().0, 0);
}
