//! The browser-backed fetch: one tab driven over CDP, from navigation through readiness to
//! artifact capture.
//!
//! [`browser_fetch`] opens (or attaches to) a tab with a flattened session, installs the
//! request's headers, user agent and cookies, navigates (body-carrying methods go through
//! `Fetch.continueRequest`), waits for `--wait`, runs `--evaluate-after-wait`, captures the
//! wanted artifacts and closes the tab it created, whatever happened.

pub mod assets;
pub mod capture;
mod content;
pub mod document;
pub mod download;
pub mod eval;
pub mod identity;
pub mod navigate;
pub mod network;
mod print;
mod served;
pub mod session;
pub mod settle;
pub mod stall;
pub mod wait;
mod workers;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::error::{AfError, ErrorCode, Warning};
use crate::sdk::cdp::CdpConnection;
use crate::sdk::challenge;
use crate::sdk::fetch::outcome::{DownloadOutcome, FetchOutcome, Trace};
use crate::sdk::fetch::outdir::OutDir;
use crate::sdk::fetch::projections;
use crate::sdk::fetch::takeover_hint;
use crate::sdk::fetch::FetchRequest;
use crate::sdk::request::Artifact;
use network::NetworkLog;
use session::{lock, PageState, Shared, Tab};

/// Time kept back from the readiness wait for captures: a quarter of the timeout, 0.5–10 s.
pub fn capture_budget(timeout: Duration) -> Duration {
    (timeout / 4).clamp(Duration::from_millis(500), Duration::from_secs(10))
}

/// Fetch `req.url` in a browser tab over `conn` and write the wanted artifacts to `out`.
///
/// The outcome has `render_used: "browser"`. Artifact problems and readiness timeouts are
/// warnings; navigation failures, a crashed tab (`tab_crashed`) and I/O errors fail the fetch.
/// A tab this call created is closed before it returns, on success or failure.
pub async fn browser_fetch(
    conn: &CdpConnection,
    req: &FetchRequest,
    out: &mut OutDir,
    request_id: &str,
    trace: &mut Trace,
) -> Result<FetchOutcome, AfError> {
    let t0 = Instant::now();
    let deadline = t0 + req.timeout;
    let temporary = !req.browser.takeover;
    let tab = session::open(
        conn,
        req.browser.tab.as_deref(),
        temporary,
        req.browser.browser_discarded_after,
        req.browser.isolated_context && !req.browser.takeover,
        remaining(deadline),
    )
    .await?;
    trace.timing("tab_open", ms_since(t0));
    let mut tab_trace = json!({"target_id": tab.target_id, "created": tab.created});
    if let Some(id) = &tab.context_id {
        // Disposed by the caller once it has read the context's cookies.
        tab_trace["browser_context_id"] = json!(id);
    }
    trace.set("tab", tab_trace);
    let events = conn.subscribe(Some(&tab.session_id));
    let state: Shared = Arc::new(Mutex::new(PageState {
        load_at: None,
        committed_at: None,
        dom_content_at: None,
        crashed: None,
        network: NetworkLog::new(&tab.target_id)
            .with_streams(req.browser.capture_ws, req.browser.capture_sse),
        console: Vec::new(),
        dialogs: Vec::new(),
        downloads: Vec::new(),
        worker_identity: None,
        changed: Arc::default(),
    }));
    let (paused_tx, mut paused_rx) = mpsc::unbounded_channel();
    let (dialog_tx, mut dialog_rx) = mpsc::unbounded_channel();
    let (worker_tx, mut worker_rx) = mpsc::unbounded_channel();
    let forward = session::Forward {
        paused: paused_tx,
        dialogs: dialog_tx,
        workers: worker_tx,
    };
    let collector = session::collect(events, state.clone(), forward);
    let run = drive(
        conn,
        &tab,
        &state,
        &mut paused_rx,
        req,
        out,
        request_id,
        trace,
        deadline,
    );
    // Dialogs are answered as they open, whatever the fetch is waiting on: an open dialog
    // blocks the page's script, its load event and every capture call.
    let answering = session::answer_dialogs(
        conn,
        &tab.session_id,
        &mut dialog_rx,
        req.browser.dialog_accept,
    );
    // Workers wait, paused, for the tab's identity; they are answered whenever they start.
    let workers = workers::answer(conn, &mut worker_rx, &state);
    let run = async {
        tokio::select! {
            r = run => r,
            () = answering => unreachable_handler_end("dialog"),
            () = workers => unreachable_handler_end("worker"),
        }
    };
    let result = match tokio::time::timeout_at(deadline.into(), run).await {
        Ok(r) => r,
        Err(_) => Err(AfError::new(
            ErrorCode::NavigationTimeout,
            format!(
                "the browser fetch did not finish within {} ms",
                req.timeout.as_millis()
            ),
        )
        .with_hint("raise --timeout-ms, or add --retry")),
    };
    // A takeover tab stays open for the human (and the re-fetch) unless the fetch failed.
    let keep = req.browser.browser_discarded_after || (req.browser.takeover && result.is_ok());
    if !keep {
        let close_started = Instant::now();
        session::close(conn, &tab).await;
        trace.timing("tab_close", ms_since(close_started));
    } else if req.browser.takeover {
        session::bring_to_front(conn, &tab).await;
        session::detach(conn, &tab).await;
    }
    collector.abort();
    result
}

/// `answer_dialogs` and `workers::answer` never resolve; this arm only satisfies the select.
fn unreachable_handler_end(what: &str) -> Result<FetchOutcome, AfError> {
    Err(AfError::new(
        ErrorCode::CdpUnavailable,
        format!("the {what} handler stopped"),
    ))
}

/// Time left before `deadline`, at least 100 ms so a last call can still be answered.
fn remaining(deadline: Instant) -> Duration {
    deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(100))
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

fn ms_between(from: Instant, to: Instant) -> f64 {
    crate::sdk::fetch::outcome::round1(to.saturating_duration_since(from).as_secs_f64() * 1000.0)
}

/// The latest a capture call may end: the readiness budget's end (counted from the commit,
/// as the wait counts it) plus the capture reserve, so no artifact takes the result past
/// both. An `ms:N` wait is not bounded by the budget: its reserve counts from now.
fn capture_limit(req: &FetchRequest, state: &Shared, wait_started: Instant) -> Instant {
    let reserve = capture_budget(req.timeout);
    if matches!(req.browser.wait, crate::sdk::request::Wait::Ms(_)) {
        return Instant::now() + reserve;
    }
    let anchor = lock(state).committed_at.unwrap_or(wait_started);
    anchor + Duration::from_millis(req.browser.readiness_budget_ms) + reserve
}

#[allow(clippy::too_many_arguments)]
async fn drive(
    conn: &CdpConnection,
    tab: &Tab,
    state: &Shared,
    paused: &mut mpsc::UnboundedReceiver<Value>,
    req: &FetchRequest,
    out: &mut OutDir,
    request_id: &str,
    trace: &mut Trace,
    deadline: Instant,
) -> Result<FetchOutcome, AfError> {
    let setup_started = Instant::now();
    let s = tab.session_id.as_str();
    let t = remaining(deadline).min(Duration::from_secs(15));
    let (body_mode, _) = network::bodies::mode(&req.browser);
    let network_params =
        network::bodies::enable_params(body_mode, req.browser.network_body_max_bytes);
    // Pipelined, not one round trip each: the browser runs a session's commands in order
    // anyway, and on a cold tab every round trip waits on a busy browser. Runtime and Log
    // only feed console.json, so a fetch that does not want it leaves them off (fewer events
    // for the renderer to send and for us to fold).
    let wants_console = req.browser_artifacts().contains(&Artifact::Console);
    let mut enables = vec![
        ("Page.enable", json!({})),
        ("Network.enable", network_params),
    ];
    if wants_console {
        enables.extend([("Runtime.enable", json!({})), ("Log.enable", json!({}))]);
    }
    let enables = enables
        .into_iter()
        .map(|(method, params)| conn.send(Some(s), method, params, t));
    // Crash notifications; not every backend has the domain.
    let inspector = conn.send(Some(s), "Inspector.enable", json!({}), t);
    let readiness = conn.send(
        Some(s),
        "Page.addScriptToEvaluateOnNewDocument",
        json!({"source": assets::READINESS_JS}),
        t,
    );
    let (enabled, _, readiness) = tokio::join!(
        futures_util::future::try_join_all(enables),
        inspector,
        readiness
    );
    enabled?;
    readiness?;
    let identity = navigate::prepare(conn, s, req, t).await?;
    if let Some(params) = identity.worker_override {
        // Only when the tab's identity is not the browser's own: otherwise its workers
        // already send what the tab does.
        lock(state).worker_identity = Some(params);
        // A backend without worker targets keeps the tab's override alone.
        let _ = workers::attach(conn, s, t).await;
    }
    trace.set("user_agent", identity.trace);
    let remembered = stall::block_remembered(conn, s, state, req, t).await?;
    trace.timing("tab_setup", ms_since(setup_started));

    let nav_start = Instant::now();
    trace.browser_request_sent();
    let navigated = tokio::select! {
        r = navigate::navigate(conn, s, &tab.target_id, req, paused, remaining(deadline)) => r?,
        why = session::crashed(state) => return Err(session::crashed_error(&why)),
    };
    trace.timing("navigate", ms_since(nav_start));
    let document = navigated.document;
    let not_read = navigated.warning;
    if navigated.download && document.is_none() {
        let mut o = download_outcome(req, state, request_id, out, trace, deadline).await;
        o.warnings.extend(not_read);
        return Ok(o);
    }
    if let Some(d) = &document {
        trace.set(
            "main_response",
            json!({
                "document": d.kind.as_str(),
                "bytes": d.bytes.len(),
                "source": "fetch_response_stage",
                "browser_handling": if navigated.download { "download" } else { "displayed" },
                "readiness": "skipped",
            }),
        );
    }

    let wait_started = Instant::now();
    let wait_deadline = deadline
        .checked_sub(capture_budget(req.timeout))
        .unwrap_or(deadline)
        .max(Instant::now());
    trace.set("wait", json!(req.browser.wait.to_string()));
    let mut cutter = stall::Cutter::new(req, nav_start, remembered);
    // A document's tab holds the browser's viewer, not a page: page readiness would wait
    // on a stream that never finishes.
    // A download leaves the tab on its previous document: no load event to wait for.
    let readiness = match &document {
        Some(_) => wait::Readiness {
            signals: match navigated.download {
                true => json!({"skipped": "main_response_document", "load_reached": false}),
                false => document::wait_for_load(state, nav_start, wait_deadline).await,
            },
            warning: None,
        },
        None => {
            wait::wait(
                conn,
                s,
                state,
                &req.browser,
                nav_start,
                wait_deadline,
                &mut cutter,
            )
            .await?
        }
    };
    let refused = {
        let st = lock(state);
        st.network.document().and_then(|d| {
            navigate::egress_refusal(
                d.status().unwrap_or(0),
                &d.response_headers(),
                req.url.as_str(),
            )
        })
    };
    if let Some(e) = refused {
        return Err(e);
    }
    let incomplete = document.is_none() && readiness.signals["ready_state"] == "loading";
    trace.set("readiness", readiness.signals);
    trace.timing("wait", ms_since(wait_started));
    let mut warnings: Vec<Warning> = readiness.warning.into_iter().collect();
    warnings.extend(not_read);

    if let Some(expr) = &req.browser.evaluate_after_wait {
        let started = Instant::now();
        let r = eval::evaluate(conn, s, expr, true, remaining(deadline)).await;
        let (entry, warning) = match r {
            Ok(Ok(v)) => (json!({"value": v}), None),
            Ok(Err(text)) => (json!({"exception": text}), Some(text)),
            Err(e) => (json!({"exception": e.message}), Some(e.message.clone())),
        };
        trace.set("evaluate_after_wait", entry);
        trace.timing("evaluate_after_wait", ms_since(started));
        if let Some(text) = warning {
            warnings.push(Warning::general(
                ErrorCode::ArtifactCaptureFailed,
                format!("--evaluate-after-wait threw: {text}"),
            ));
        }
    }

    let capture_started = Instant::now();
    let want: Vec<Artifact> = req.browser_artifacts();
    // Capture calls end a little before the deadline, so one that hangs becomes its
    // artifact's `artifact_capture_timeout` and the tab can still be closed in time.
    let until = deadline
        .checked_sub(capture_budget(req.timeout) / 4)
        .unwrap_or(deadline)
        .min(capture_limit(req, state, wait_started))
        .max(Instant::now());
    let network_warnings = lock(state).network.mark_capture();
    // A viewer's stream stays open for as long as the viewer shows it.
    if document.is_none() {
        warnings.extend(network_warnings);
    }
    let (want, from_document) = match &document {
        Some(d) => {
            let budget = until.saturating_duration_since(Instant::now());
            let w = document::write(d, req, &want, out, budget).await?;
            if let Some(t) = &w.trace {
                trace.set("document", t.clone());
            }
            let rest = want
                .into_iter()
                .filter(|a| *a != Artifact::Body && !projections::PROJECTIONS.contains(a))
                .collect();
            (rest, Some(w))
        }
        None => (want, None),
    };
    let captured = tokio::select! {
        r = capture::capture_all(conn, s, state, req, out, request_id, &want, from_document.is_some(), until, incomplete) => r?,
        why = session::crashed(state) => return Err(session::crashed_error(&why)),
    };
    let mut captured = captured;
    let taken: serde_json::Map<String, Value> = captured
        .taken
        .iter()
        .map(|(a, at)| (a.as_str().to_string(), json!(ms_between(nav_start, *at))))
        .collect();
    trace.set("captured_at_ms", Value::Object(taken));
    if document.is_none() {
        let (url, ct) = {
            let st = lock(state);
            let d = st.network.document();
            let url = d.map_or_else(|| req.url.to_string(), |d| d.url.clone());
            let ct = d.and_then(|d| {
                d.response_headers()
                    .into_iter()
                    .find(|(n, _)| n == "content-type")
                    .map(|(_, v)| v)
                    .or_else(|| d.mime_type())
            });
            (url, ct)
        };
        let page = served::Page {
            incomplete,
            url: &url,
            content_type: ct.as_deref(),
        };
        let (source, warning) = served::choose(&page, &want, &mut captured, out).await?;
        trace.set("text_source", source);
        warnings.extend(warning);
    }
    if let Some(w) = from_document {
        captured.files.splice(0..0, w.files);
        warnings.extend(w.warnings);
        captured.body_bytes = w.body_bytes;
        captured.body_truncated = w.body_truncated;
        // The viewer's wrapper says nothing about the document (challenge markers included).
        captured.rendered_html = None;
    }
    trace.timing("capture", ms_since(capture_started));
    if let Some(why) = lock(state).crashed.clone() {
        return Err(session::crashed_error(&why));
    }
    warnings.extend(captured.warnings);
    warnings.extend(cutter.warning(state));
    warnings.extend(session::dialog_warnings(
        &lock(state),
        req.browser.dialog_accept,
    ));
    // A document the browser also downloads (an attachment): its words above, and the
    // download's facts and bytes as for any other download.
    let download = match navigated.download {
        true => {
            let (d, warning) = settled_download(req, state, trace, deadline).await;
            warnings.extend(warning);
            d
        }
        false => None,
    };
    let mut o = outcome(
        req,
        state,
        request_id,
        out,
        captured.files,
        captured.body_bytes,
        captured.body_truncated,
        captured.rendered_html.as_deref(),
        warnings,
    );
    o.screenshot = captured.screenshot;
    o.download = download;
    Ok(o)
}

/// The outcome of a navigation that became a download: no page to capture (the tab stays
/// on its previous document), so no page artifacts; the download's facts once it settled.
/// The bytes are still on the host; the caller moves them (`sdk::transfer`).
async fn download_outcome(
    req: &FetchRequest,
    state: &Shared,
    request_id: &str,
    out: &OutDir,
    trace: &mut Trace,
    deadline: Instant,
) -> FetchOutcome {
    let (download, warning) = settled_download(req, state, trace, deadline).await;
    let mut o = outcome(
        req,
        state,
        request_id,
        out,
        Vec::new(),
        0,
        false,
        None,
        warning.into_iter().collect(),
    );
    o.download = download;
    o
}

/// Wait for the tab's download to settle (leaving a share of the time for moving its
/// bytes): its facts, and a warning when it did not complete.
async fn settled_download(
    req: &FetchRequest,
    state: &Shared,
    trace: &mut Trace,
    deadline: Instant,
) -> (Option<DownloadOutcome>, Option<Warning>) {
    let started = Instant::now();
    let settle_by = deadline
        .checked_sub(capture_budget(req.timeout))
        .unwrap_or(deadline)
        .max(Instant::now());
    let seen = download::settle(state, settle_by).await;
    trace.timing("download", ms_since(started));
    trace.set("navigation", json!("download"));
    let warning = match &seen {
        None => Some(Warning::artifact(
            "download",
            ErrorCode::ArtifactCaptureFailed,
            "the navigation became a download, but the browser reported none",
        )),
        Some(d) if d.state == "inProgress" => Some(Warning::artifact(
            "download",
            ErrorCode::ArtifactCaptureTimeout,
            format!(
                "the download was still in progress at the deadline ({} of {} bytes)",
                d.received_bytes, d.total_bytes
            ),
        )),
        Some(d) if d.state != "completed" => Some(Warning::artifact(
            "download",
            ErrorCode::ArtifactCaptureFailed,
            format!("the browser ended the download as {}", d.state),
        )),
        Some(_) => None,
    };
    let download = seen.map(|facts| DownloadOutcome {
        facts,
        file: None,
        size_bytes: 0,
    });
    (download, warning)
}

#[allow(clippy::too_many_arguments)]
fn outcome(
    req: &FetchRequest,
    state: &Shared,
    request_id: &str,
    out: &OutDir,
    files: Vec<(Artifact, std::path::PathBuf)>,
    body_bytes: u64,
    body_truncated: bool,
    rendered_html: Option<&str>,
    mut warnings: Vec<Warning>,
) -> FetchOutcome {
    let (final_url, status, headers, mime, redirects) = {
        let st = lock(state);
        match st.network.document() {
            Some(d) => (
                d.url.clone(),
                d.status().unwrap_or(0),
                d.response_headers(),
                d.mime_type(),
                st.network.document_redirects(),
            ),
            None => (req.url.to_string(), 0, Vec::new(), None, 0),
        }
    };
    let content_type = headers
        .iter()
        .find(|(n, _)| n == "content-type")
        .map(|(_, v)| v.clone())
        .or(mime);
    let mut page_kind = None;
    let mut next_action = None;
    if let Some(c) = challenge::classify(status, &headers, rendered_html.unwrap_or("")) {
        let (kind, warning, next) = takeover_hint::challenge_facts(&c, req.url.as_str());
        page_kind = Some(kind);
        warnings.push(warning);
        next_action = Some(next);
    }
    FetchOutcome {
        request_id: request_id.to_string(),
        url: req.url.to_string(),
        final_url,
        status,
        content_type,
        render_used: "browser",
        tab_id: None,
        out_dir: out.path().to_path_buf(),
        files,
        body_bytes,
        body_truncated,
        redirects,
        page_kind,
        next_action,
        warnings,
        download: None,
        trace: Trace::new(request_id),
        screenshot: None,
    }
}
