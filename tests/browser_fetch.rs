//! The browser-backed fetch (`afhttp::sdk::browser::browser_fetch`) against a real headless
//! Chromium and the fixture server.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use afhttp::error::ErrorCode;
use afhttp::sdk::browser::browser_fetch;
use afhttp::sdk::cdp::CdpConnection;
use afhttp::sdk::endpoint::Endpoint;
use afhttp::sdk::fetch::outcome::{FetchOutcome, Trace};
use afhttp::sdk::fetch::outdir::OutDir;
use afhttp::sdk::fetch::FetchSpec;
use afhttp::sdk::request::Artifact;
use serde_json::{json, Value};

use crate::support::FixtureServer;

/// A headless Chromium on an ephemeral port (no name resolution but loopback), killed on
/// drop.
struct Browser(crate::support::chromium::Headless);

impl Browser {
    fn launch() -> Browser {
        Browser(crate::support::chromium::Headless::launch(&[
            "--disable-gpu",
            "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
        ]))
    }

    async fn connect(&self) -> Arc<CdpConnection> {
        let ep = Endpoint::Tcp {
            tls: false,
            host: "127.0.0.1".into(),
            port: self.0.port,
        };
        CdpConnection::connect(&ep, &self.0.ws_path, None, Duration::from_secs(10))
            .await
            .unwrap()
    }
}

async fn page_count(conn: &CdpConnection) -> usize {
    let r = conn
        .send(None, "Target.getTargets", json!({}), Duration::from_secs(5))
        .await
        .unwrap();
    r["targetInfos"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["type"] == "page")
        .count()
}

struct Run {
    result: Result<FetchOutcome, afhttp::error::AfError>,
    trace: Value,
    _dir: tempfile::TempDir,
}

impl Run {
    fn ok(&self) -> &FetchOutcome {
        match &self.result {
            Ok(o) => o,
            Err(e) => panic!("fetch failed: {e:?}"),
        }
    }
    fn file(&self, a: Artifact) -> PathBuf {
        self.ok()
            .file(a)
            .unwrap_or_else(|| panic!("no {a:?}: {:?}", self.ok().warnings))
            .to_path_buf()
    }
    fn read(&self, a: Artifact) -> String {
        std::fs::read_to_string(self.file(a)).unwrap()
    }
    fn json(&self, a: Artifact) -> Value {
        serde_json::from_str(&self.read(a)).unwrap()
    }
}

/// Launch a browser, run `browser_fetch` for `req`, and check no tab leaked.
fn fetch_with(spec: FetchSpec, during: Option<CrashPlan>) -> Run {
    let _one = crate::support::chromium::lock();
    let browser = Browser::launch();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let conn = browser.connect().await;
        let before = page_count(&conn).await;
        let mut spec = spec;
        let crash = match during {
            Some(plan) => Some(plan.start(&conn, &mut spec).await),
            None => None,
        };
        let req = spec.validate().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut out = OutDir::prepare(Some(dir.path()), None, "rid").unwrap();
        let mut trace = Trace::new("rid");
        let result = browser_fetch(&conn, &req, &mut out, "rid", &mut trace).await;
        if let Some(target) = crash {
            let _ = conn
                .send(
                    None,
                    "Target.closeTarget",
                    json!({"targetId": target}),
                    Duration::from_secs(5),
                )
                .await;
        }
        assert_eq!(
            page_count(&conn).await,
            before,
            "the tab count must return to baseline"
        );
        Run {
            result,
            trace: trace.to_json(),
            _dir: dir,
        }
    })
}

/// Crash the renderer from a second session while the fetch waits on an attached tab.
struct CrashPlan;

impl CrashPlan {
    async fn start(self, conn: &Arc<CdpConnection>, spec: &mut FetchSpec) -> String {
        let t = Duration::from_secs(5);
        let r = conn
            .send(
                None,
                "Target.createTarget",
                json!({"url": "about:blank"}),
                t,
            )
            .await
            .unwrap();
        let target = r["targetId"].as_str().unwrap().to_string();
        let r = conn
            .send(
                None,
                "Target.attachToTarget",
                json!({"targetId": target, "flatten": true}),
                t,
            )
            .await
            .unwrap();
        let session = r["sessionId"].as_str().unwrap().to_string();
        spec.tab = Some(target.clone());
        let c = conn.clone();
        tokio::spawn(async move {
            // The fault's timing (a crash some time into the fetch) is the test's input.
            tokio::time::sleep(Duration::from_millis(1500)).await;
            let _ = c.send(Some(&session), "Page.crash", json!({}), t).await;
        });
        target
    }
}

fn req(url: &str) -> FetchSpec {
    FetchSpec {
        timeout_ms: Some(20_000),
        ..FetchSpec::new(url)
    }
}

fn png_height(path: &Path) -> u32 {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&bytes[12..16], b"IHDR");
    u32::from_be_bytes(bytes[20..24].try_into().unwrap())
}

#[test]
fn spa_with_wait_auto_renders_the_items() {
    let srv = FixtureServer::start();
    let run = fetch_with(req(&srv.url("/spa")), None);
    let o = run.ok();
    assert_eq!(o.render_used, "browser");
    assert_eq!(o.status, 200);
    let text = run.read(Artifact::Text);
    assert!(text.contains("Items (50)"), "{text}");
    let html = run.read(Artifact::RenderedHtml);
    assert!(html.starts_with("<!DOCTYPE html>"), "{}", &html[..40]);
    assert_eq!(html.matches("class=\"item\"").count(), 50);
    let body = std::fs::read_to_string(run.file(Artifact::Body)).unwrap();
    assert!(run.file(Artifact::Body).ends_with("body.html"));
    assert!(
        body.contains("<div id=\"root\"></div>"),
        "raw body, not the DOM"
    );
    let md = run.read(Artifact::Content);
    assert!(md.contains("# Items (50)"), "{md}");
    assert!(
        md.lines().filter(|l| l.starts_with("- ")).count() >= 50,
        "{md}"
    );
    let cj = run.json(Artifact::ContentJson);
    assert_eq!(cj["schema_version"], 1);
    assert_eq!(cj["headings"][0]["text"], "Items (50)");
    let net = run.json(Artifact::Network);
    let entries = net["entries"].as_array().unwrap();
    assert!(entries
        .iter()
        .any(|e| e["url"].as_str().unwrap().ends_with("/api/items")
            && e["response"]["status"] == 200
            && e["state"] == "finished"));
    let obs = run.json(Artifact::Observation);
    assert_eq!(obs["schema_version"], 1);
    assert_eq!(obs["frames"][0]["frame_id"], "main");
    assert!(run.file(Artifact::Console).exists());
    assert!(run.file(Artifact::Screenshot).exists());
    assert!(o.file(Artifact::Storage).is_none(), "storage is opt-in");
    assert_eq!(run.trace["wait"], "auto");
    assert_eq!(run.trace["readiness"]["timed_out"], false);
    assert!(run.trace["readiness"]["load_ms"].is_number());
    assert!(
        o.warnings
            .iter()
            .all(|w| w.code != ErrorCode::ReadinessTimeout),
        "{:?}",
        o.warnings
    );
}

#[test]
fn form_post_reaches_the_page() {
    let srv = FixtureServer::start();
    let mut r = req(&srv.url("/echo"));
    r.method = Some("POST".into());
    r.data_bytes = Some(b"field=posted-value-123".to_vec());
    r.want = Some("text,body".into());
    r.wait = Some("load".into());
    let run = fetch_with(r, None);
    let text = run.read(Artifact::Text);
    assert!(text.contains("posted-value-123"), "{text}");
    // `/echo` answers JSON: a document, so text.txt is the main response pretty-printed.
    assert!(text.contains("\"method\": \"POST\""), "{text}");
    let seen = srv.last_request("/echo").unwrap();
    assert_eq!(seen.method, "POST");
    assert_eq!(seen.body, b"field=posted-value-123");
    assert_eq!(
        seen.header("content-type"),
        Some("application/x-www-form-urlencoded")
    );
    assert!(run.file(Artifact::Body).ends_with("body.json"));
}

#[test]
fn console_errors_and_uncaught_exceptions_are_captured() {
    let srv = FixtureServer::start();
    let mut r = req(&srv.url("/browser/console"));
    r.want = Some("console".into());
    let run = fetch_with(r, None);
    let doc = run.json(Artifact::Console);
    let entries = doc["entries"].as_array().unwrap();
    let has = |level: &str, needle: &str| {
        entries
            .iter()
            .any(|e| e["level"] == level && e["text"].as_str().unwrap_or("").contains(needle))
    };
    assert!(has("log", "hello-log 42"), "{doc}");
    assert!(has("error", "boom-console"), "{doc}");
    let exc = entries
        .iter()
        .find(|e| e["source"] == "exception")
        .unwrap_or_else(|| panic!("{doc}"));
    assert!(exc["text"].as_str().unwrap().contains("boom-uncaught"));
    assert!(entries.iter().all(|e| e["received_unix_ms"].is_number()));
}

#[test]
fn storage_is_captured_when_asked() {
    let srv = FixtureServer::start();
    let mut r = req(&srv.url("/browser/storage"));
    r.want = Some("storage".into());
    let run = fetch_with(r, None);
    let doc = run.json(Artifact::Storage);
    assert_eq!(doc["local_storage"]["local-key"], "local-value");
    assert_eq!(doc["session_storage"]["session-key"], "session-value");
    let names: Vec<&str> = doc["indexed_db"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["name"].as_str())
        .collect();
    assert!(names.contains(&"afhttp-fixture-db"), "{doc}");
}

#[test]
fn full_page_screenshot_is_taller_than_the_viewport() {
    let srv = FixtureServer::start();
    let mut r = req(&srv.url("/browser/tall"));
    r.want = Some("screenshot,observation".into());
    r.wait = Some("load".into());
    let run = fetch_with(r, None);
    let obs = run.json(Artifact::Observation);
    let viewport = obs["viewport"]["height"].as_u64().unwrap() as u32;
    let h = png_height(&run.file(Artifact::Screenshot));
    assert!(
        h > viewport && h >= 5000,
        "png {h} px, viewport {viewport} px"
    );
}

#[test]
fn selector_visible_waits_for_the_late_element() {
    let srv = FixtureServer::start();
    let mut r = req(&srv.url("/browser/late"));
    r.want = Some("text".into());
    r.wait = Some("selector-visible:#late".into());
    r.evaluate_after_wait =
        Some("Promise.resolve(document.getElementById('late').textContent)".into());
    let run = fetch_with(r, None);
    assert!(run.read(Artifact::Text).contains("late content arrived"));
    assert_eq!(run.trace["readiness"]["selector_matched"], true);
    assert_eq!(
        run.trace["evaluate_after_wait"]["value"],
        "late content arrived"
    );
}

#[test]
fn a_selector_that_never_matches_is_a_readiness_warning() {
    let srv = FixtureServer::start();
    let mut r = req(&srv.url("/static"));
    r.timeout_ms = Some(4000);
    r.want = Some("text".into());
    r.wait = Some("selector:#never-there".into());
    r.evaluate_after_wait = Some("(() => { throw new Error('eval-boom') })()".into());
    let run = fetch_with(r, None);
    let o = run.ok();
    let w = o
        .warnings
        .iter()
        .find(|w| w.code == ErrorCode::ReadinessTimeout)
        .unwrap();
    assert!(w.message.contains("#never-there"), "{}", w.message);
    assert!(run.trace["evaluate_after_wait"]["exception"]
        .as_str()
        .unwrap()
        .contains("eval-boom"));
    assert!(run.file(Artifact::Text).exists());
}

#[test]
fn unresolvable_host_is_dns_resolution_failed() {
    let run = fetch_with(req("http://no-such-host.invalid/"), None);
    let e = run.result.as_ref().err().unwrap();
    assert_eq!(e.code, ErrorCode::DnsResolutionFailed, "{e:?}");
    assert!(e.retryable());
}

#[test]
fn renderer_crash_is_tab_crashed() {
    let srv = FixtureServer::start();
    let mut r = req(&srv.url("/static"));
    r.wait = Some("selector:#never-there".into());
    let run = fetch_with(r, Some(CrashPlan));
    let e = run.result.as_ref().err().unwrap();
    assert_eq!(e.code, ErrorCode::TabCrashed, "{e:?}");
    assert!(e.retryable());
}

#[test]
fn content_and_observation_walk_shadow_roots_frames_tables_and_forms() {
    let srv = FixtureServer::start();
    let mut r = req(&srv.url("/browser/composed"));
    r.want = Some("content,content_json,observation".into());
    r.wait = Some("load".into());
    let run = fetch_with(r, None);
    let md = run.read(Artifact::Content);
    assert!(md.contains("# Composed page"), "{md}");
    assert!(
        md.contains(&format!("[relative link]({})", srv.url("/static"))),
        "{md}"
    );
    assert!(
        md.contains("| Name | Qty |") && md.contains("| apple | 3 |"),
        "{md}"
    );
    // Browser-only: a script-attached shadow root and a srcdoc frame are flattened in.
    assert!(md.contains("shadow paragraph text"), "{md}");
    assert!(md.contains("inside the frame"), "{md}");
    let form = format!(
        "[form POST {}: input q (text), button \"Search\"]",
        srv.url("/echo")
    );
    assert!(md.contains(&form), "{md}");
    let cj = run.json(Artifact::ContentJson);
    assert_eq!(cj["tables"][0]["headers"], json!(["Name", "Qty"]));
    assert_eq!(cj["tables"][0]["rows"], json!([["apple", "3"]]));
    assert_eq!(cj["links"][0]["href"], srv.url("/static"));
    let obs = run.json(Artifact::Observation);
    let nodes = obs["nodes"].as_array().unwrap();
    let find = |role: &str, name: &str| {
        nodes
            .iter()
            .find(|n| n["role"] == role && n["name"] == name)
            .unwrap_or_else(|| panic!("no {role} {name:?} in {obs}"))
    };
    let query = find("textbox", "Query");
    assert_eq!(query["actions"], json!(["click", "type"]));
    assert_eq!(query["visible"], true);
    let search = find("button", "Search");
    assert!(search["bbox"]["width"].as_f64().unwrap() > 0.0);
    let frame_button = find("button", "Frame button");
    assert_ne!(frame_button["frame_id"], "main");
    assert_eq!(obs["forms"][0]["method"], "POST");
    assert_eq!(obs["forms"][0]["field_refs"].as_array().unwrap().len(), 2);
    assert!(obs["truncated"].is_null());
}

#[test]
fn headers_user_agent_and_cookies_are_sent_by_the_browser() {
    let srv = FixtureServer::start();
    let mut r = req(&srv.url("/echo"));
    r.header = vec!["X-Afhttp-Test: yes".into()];
    r.user_agent = Some("afhttp-test-agent/1".into());
    r.cookie = vec!["sid=abc123; Path=/; HttpOnly".into()];
    r.want = Some("network".into());
    r.wait = Some("idle".into());
    let run = fetch_with(r, None);
    let seen = srv.last_request("/echo").unwrap();
    assert_eq!(seen.header("x-afhttp-test"), Some("yes"));
    assert_eq!(seen.header("user-agent"), Some("afhttp-test-agent/1"));
    assert_eq!(seen.header("cookie"), Some("sid=abc123"));
    // A JSON main response is a document: no page readiness is waited for.
    assert_eq!(
        run.trace["readiness"]["skipped"], "main_response_document",
        "{}",
        run.trace
    );
    let net = run.json(Artifact::Network);
    let doc = net["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["is_main_document"] == true)
        .unwrap();
    // Header names are lower-case in network.json, as on the HTTP path.
    assert_eq!(doc["request_headers"]["x-afhttp-test"], "yes");
}

#[test]
fn post_to_an_unresolvable_host_fails_fast() {
    let mut r = req("http://no-such-host.invalid/form");
    r.method = Some("POST".into());
    r.data_bytes = Some(b"a=1".to_vec());
    let started = std::time::Instant::now();
    let run = fetch_with(r, None);
    let e = run.result.as_ref().err().unwrap();
    assert!(
        matches!(
            e.code,
            ErrorCode::DnsResolutionFailed | ErrorCode::TargetUnreachable
        ),
        "{e:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn xhr_in_flight_at_capture_is_a_warning() {
    let srv = FixtureServer::start();
    let mut r = req(&srv.url("/browser/pending"));
    r.want = Some("text,network".into());
    r.wait = Some("load".into());
    let run = fetch_with(r, None);
    let o = run.ok();
    let w = o
        .warnings
        .iter()
        .find(|w| w.code == ErrorCode::PendingXhrAtCapture)
        .unwrap_or_else(|| panic!("{:?} {}", o.warnings, run.read(Artifact::Network)));
    assert!(w.message.contains("/slow?ms=8000"), "{}", w.message);
    let net = run.json(Artifact::Network);
    // The slow XHR at least; a favicon or similar may still be pending too on a loaded machine.
    assert!(
        net["summary"]["inflight_total_at_capture"]
            .as_u64()
            .unwrap_or(0)
            >= 1,
        "{net}"
    );
}
