//! One browser fetch in an open tab, step by step: [`setup`] (domains, readiness probe,
//! identity, headers, cookies), [`navigate_to`], [`settle`] (readiness, the egress
//! refusal check, `--evaluate-after-wait`), [`capture`] and [`conclude`].

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::capture::Captured;
use super::document::{self, MainDocument};
use super::network;
use super::session::{self, lock, Shared, Tab};
use super::{
    assets, capture, capture_budget, eval, ms_between, ms_since, navigate, remaining, served,
    stall, wait, workers,
};
use crate::error::{AfError, ErrorCode, Warning};
use crate::sdk::cdp::CdpConnection;
use crate::sdk::fetch::outcome::{FetchOutcome, Trace};
use crate::sdk::fetch::outdir::OutDir;
use crate::sdk::fetch::projections;
use crate::sdk::fetch::FetchRequest;
use crate::sdk::request::Artifact;

/// What every step of one fetch shares.
pub(super) struct Run<'a> {
    pub conn: &'a CdpConnection,
    pub tab: &'a Tab,
    /// The browser's `Browser.getVersion` answer (`Null` when it has none).
    pub version: &'a Value,
    pub state: &'a Shared,
    pub req: &'a FetchRequest,
    pub request_id: &'a str,
    pub deadline: Instant,
    /// When the navigation started (set by [`drive`]).
    pub nav_start: &'a std::sync::OnceLock<Instant>,
}

impl Run<'_> {
    fn session(&self) -> &str {
        &self.tab.session_id
    }
}

/// Drive the tab from setup to the outcome.
pub(super) async fn drive(
    run: &Run<'_>,
    paused: &mut mpsc::UnboundedReceiver<Value>,
    out: &mut OutDir,
    trace: &mut Trace,
) -> Result<FetchOutcome, AfError> {
    let remembered = setup(run, trace).await?;
    let nav_start = *run.nav_start.get_or_init(Instant::now);
    let navigated = navigate_to(run, paused, trace).await?;
    // A subframe's document can pause at the response stage after the main response was
    // taken and before the navigation's `Fetch` patterns were narrowed; nobody else would
    // continue it, and the page's load would wait on it until the budget.
    tokio::select! {
        r = after_navigation(run, navigated, nav_start, remembered, out, trace) => r,
        never = navigate::continue_strays(run.conn, run.session(), paused) => match never {},
    }
}

/// Everything after the navigation: readiness, capture, the outcome.
async fn after_navigation(
    run: &Run<'_>,
    navigated: navigate::Navigated,
    nav_start: Instant,
    remembered: Vec<(String, u64)>,
    out: &mut OutDir,
    trace: &mut Trace,
) -> Result<FetchOutcome, AfError> {
    let document = navigated.document;
    let mut warnings: Vec<Warning> = navigated.warning.into_iter().collect();
    if navigated.download && document.is_none() {
        let mut o = super::outcome::download_outcome(run, out, trace).await;
        o.warnings.extend(warnings);
        return Ok(o);
    }
    if let Some(d) = &document {
        record_main_response(d, navigated.download, trace);
    }
    let wait_started = Instant::now();
    let mut cutter = stall::Cutter::new(run.req, nav_start, remembered);
    let incomplete = settle(
        run,
        document.as_ref(),
        navigated.download,
        nav_start,
        &mut cutter,
        trace,
        &mut warnings,
    )
    .await?;
    evaluate_after_wait(run, trace, &mut warnings).await;
    let capture_started = Instant::now();
    let captured = capture(
        run,
        document.as_ref(),
        incomplete,
        wait_started,
        nav_start,
        out,
        trace,
        &mut warnings,
    )
    .await?;
    trace.timing("capture", ms_since(capture_started));
    let mut o = conclude(run, captured, &cutter, warnings, out)?;
    // A document the browser also downloads (an attachment): its words above, and the
    // download's facts and bytes as for any other download.
    if navigated.download {
        let (d, warning) = super::outcome::settled_download(run, trace).await;
        o.warnings.extend(warning);
        o.download = d;
    }
    Ok(o)
}

/// Enable the domains, install the readiness probe, the identity, the headers, the
/// cookies and the blocked third parties the host remembers (returned for the stall cut).
/// Everything that does not depend on an answer goes out at once: the browser runs a
/// session's commands in order anyway, and on a busy browser every round trip waits.
async fn setup(run: &Run<'_>, trace: &mut Trace) -> Result<Vec<(String, u64)>, AfError> {
    let started = Instant::now();
    let (conn, req, s) = (run.conn, run.req, run.session());
    let t = remaining(run.deadline).min(Duration::from_secs(15));
    let (body_mode, _) = network::bodies::mode(&req.browser);
    let network_params =
        network::bodies::enable_params(body_mode, req.browser.network_body_max_bytes);
    // Runtime and Log only feed console.json, so a fetch that does not want it leaves them
    // off (fewer events for the renderer to send and for us to fold).
    let wants_console = req.browser_artifacts().contains(&Artifact::Console);
    let mut enables = vec![
        ("Page.enable", json!({})),
        ("Network.enable", network_params),
        (
            "Page.addScriptToEvaluateOnNewDocument",
            json!({"source": assets::READINESS_JS}),
        ),
    ];
    if wants_console {
        enables.extend([("Runtime.enable", json!({})), ("Log.enable", json!({}))]);
    }
    let enables = enables
        .into_iter()
        .map(|(method, params)| conn.send(Some(s), method, params, t));
    // Crash notifications; not every backend has the domain.
    let inspector = conn.send(Some(s), "Inspector.enable", json!({}), t);
    // A tab this fetch opened is the one in front before it loads: a host's ready tab waits
    // in the background of the one window, and a tab behind another is hidden (no frames,
    // `visibilityState` hidden, a screenshot that waits seconds for a frame).
    let front = async {
        if run.tab.created {
            let _ = conn.send(Some(s), "Page.bringToFront", json!({}), t).await;
        }
    };
    let (enabled, _, _, identity, request_state, remembered) = tokio::join!(
        futures_util::future::try_join_all(enables),
        inspector,
        front,
        navigate::identity(conn, s, req, run.version, t),
        navigate::install_request_state(conn, s, req, t),
        stall::block_remembered(conn, s, run.state, req, t),
    );
    enabled?;
    request_state?;
    let remembered = remembered?;
    let identity = identity?;
    if let Some(params) = identity.worker_override {
        // Only when the tab's identity is not the browser's own: otherwise its workers
        // already send what the tab does.
        lock(run.state).worker_identity = Some(params);
        // A backend without worker targets keeps the tab's override alone.
        let _ = workers::attach(conn, s, t).await;
    }
    trace.set("user_agent", identity.trace);
    trace.timing("tab_setup", ms_since(started));
    Ok(remembered)
}

/// Navigate (a crash on the way fails the fetch). A plain GET the browser aborted because
/// the machine's network changed under it (an interface came or went: a VPN, a container
/// network) is navigated once more, as the browser's own error page reloads it: the failure
/// says nothing about the target (`trace.navigation_retry`).
async fn navigate_to(
    run: &Run<'_>,
    paused: &mut mpsc::UnboundedReceiver<Value>,
    trace: &mut Trace,
) -> Result<navigate::Navigated, AfError> {
    let started = Instant::now();
    trace.browser_request_sent();
    let mut may_retry = run.req.method == "GET" && run.req.body.is_none();
    let navigated = loop {
        let r = tokio::select! {
            r = navigate::navigate(run.conn, run.session(), &run.tab.target_id, run.req, paused, remaining(run.deadline)) => r,
            why = session::crashed(run.state) => return Err(session::crashed_error(&why)),
        };
        match r {
            Err(e) if may_retry && navigate::network_changed(&e) => {
                may_retry = false;
                let at = ms_since(started);
                trace.set(
                    "navigation_retry",
                    json!({"reason": navigate::NETWORK_CHANGED, "after_ms": at}),
                );
            }
            r => break r?,
        }
    };
    trace.timing("navigate", ms_since(started));
    Ok(navigated)
}

/// `trace.main_response` for a main response read as a document.
fn record_main_response(d: &MainDocument, download: bool, trace: &mut Trace) {
    trace.set(
        "main_response",
        json!({
            "document": d.kind.as_str(),
            "bytes": d.bytes.len(),
            "source": "fetch_response_stage",
            "browser_handling": if download { "download" } else { "displayed" },
            "readiness": "skipped",
        }),
    );
}

/// Wait for `--wait` (or, for a document, its load), then refuse a page the egress proxy
/// answered for. Returns whether the page was still loading when readiness ended.
#[allow(clippy::too_many_arguments)]
async fn settle(
    run: &Run<'_>,
    document: Option<&MainDocument>,
    download: bool,
    nav_start: Instant,
    cutter: &mut stall::Cutter,
    trace: &mut Trace,
    warnings: &mut Vec<Warning>,
) -> Result<bool, AfError> {
    let (req, state) = (run.req, run.state);
    let wait_started = Instant::now();
    let wait_deadline = run
        .deadline
        .checked_sub(capture_budget(req.timeout))
        .unwrap_or(run.deadline)
        .max(Instant::now());
    trace.set("wait", json!(req.browser.wait.to_string()));
    // A document's tab holds the browser's viewer, not a page: page readiness would wait
    // on a stream that never finishes.
    // A download leaves the tab on its previous document: no load event to wait for.
    let readiness = match document {
        Some(_) => wait::Readiness {
            signals: match download {
                true => json!({"skipped": "main_response_document", "load_reached": false}),
                false => document::wait_for_load(state, nav_start, wait_deadline).await,
            },
            warning: None,
        },
        None => {
            let s = run.session();
            wait::wait(
                run.conn,
                s,
                state,
                &req.browser,
                nav_start,
                wait_deadline,
                cutter,
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
    let mut first: Vec<Warning> = readiness.warning.into_iter().collect();
    first.append(warnings);
    *warnings = first;
    Ok(incomplete)
}

/// `--evaluate-after-wait`: its value or exception goes to the trace; an exception is a
/// warning, never a failed fetch.
async fn evaluate_after_wait(run: &Run<'_>, trace: &mut Trace, warnings: &mut Vec<Warning>) {
    let Some(expr) = &run.req.browser.evaluate_after_wait else {
        return;
    };
    let started = Instant::now();
    let r = eval::evaluate(run.conn, run.session(), expr, true, remaining(run.deadline)).await;
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
            format!("evaluate_after_wait threw: {text}"),
        ));
    }
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

/// Write the wanted artifacts: a document's own files, or the page's captures (with the
/// served HTML's text when the rendered one is not the page's).
#[allow(clippy::too_many_arguments)]
async fn capture(
    run: &Run<'_>,
    document: Option<&MainDocument>,
    incomplete: bool,
    wait_started: Instant,
    nav_start: Instant,
    out: &mut OutDir,
    trace: &mut Trace,
    warnings: &mut Vec<Warning>,
) -> Result<Captured, AfError> {
    let (req, state) = (run.req, run.state);
    let want: Vec<Artifact> = req.browser_artifacts();
    // Capture calls end a little before the deadline, so one that hangs becomes its
    // artifact's `artifact_capture_timeout` and the tab can still be closed in time.
    let until = run
        .deadline
        .checked_sub(capture_budget(req.timeout) / 4)
        .unwrap_or(run.deadline)
        .min(capture_limit(req, state, wait_started))
        .max(Instant::now());
    let network_warnings = lock(state).network.mark_capture();
    // A viewer's stream stays open for as long as the viewer shows it.
    if document.is_none() {
        warnings.extend(network_warnings);
    }
    let (want, from_document) = match document {
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
    let s = run.session();
    let mut captured = tokio::select! {
        r = capture::capture_all(run.conn, s, state, req, out, run.request_id, &want, from_document.is_some(), until, incomplete) => r?,
        why = session::crashed(state) => return Err(session::crashed_error(&why)),
    };
    let taken: serde_json::Map<String, Value> = captured
        .taken
        .iter()
        .map(|(a, at)| (a.as_str().to_string(), json!(ms_between(nav_start, *at))))
        .collect();
    trace.set("captured_at_ms", Value::Object(taken));
    match from_document {
        None => {
            let (source, warning) = served_text(run, &want, incomplete, &mut captured, out).await?;
            trace.set("text_source", source);
            warnings.extend(warning);
        }
        Some(w) => {
            captured.files.splice(0..0, w.files);
            warnings.extend(w.warnings);
            captured.body_bytes = w.body_bytes;
            captured.body_truncated = w.body_truncated;
            // The viewer's wrapper says nothing about the document (challenge markers included).
            captured.rendered_html = None;
        }
    }
    Ok(captured)
}

/// Whether the text comes from the rendered page or the served HTML ([`served::choose`]).
async fn served_text(
    run: &Run<'_>,
    want: &[Artifact],
    incomplete: bool,
    captured: &mut Captured,
    out: &mut OutDir,
) -> Result<(Value, Option<Warning>), AfError> {
    let (url, ct) = {
        let st = lock(run.state);
        let d = st.network.document();
        let url = d.map_or_else(|| run.req.url.to_string(), |d| d.url.clone());
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
    served::choose(&page, want, captured, out).await
}

/// The outcome: a crash during capture still fails the fetch; otherwise every warning
/// (captures, third parties cut, dialogs) joins the page's facts.
fn conclude(
    run: &Run<'_>,
    captured: Captured,
    cutter: &stall::Cutter,
    mut warnings: Vec<Warning>,
    out: &OutDir,
) -> Result<FetchOutcome, AfError> {
    let state = run.state;
    if let Some(why) = lock(state).crashed.clone() {
        return Err(session::crashed_error(&why));
    }
    warnings.extend(captured.warnings);
    warnings.extend(cutter.warning(state));
    warnings.extend(session::dialog_warnings(
        &lock(state),
        run.req.browser.dialog_accept,
    ));
    let mut o = super::outcome::outcome(
        run.req,
        state,
        run.request_id,
        out,
        super::outcome::Files {
            files: captured.files,
            body_bytes: captured.body_bytes,
            body_truncated: captured.body_truncated,
        },
        captured.rendered_html.as_deref(),
        warnings,
    );
    o.screenshot = captured.screenshot;
    Ok(o)
}
