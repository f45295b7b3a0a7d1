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
mod drive;
pub mod eval;
pub mod identity;
pub mod navigate;
pub mod network;
mod outcome;
mod print;
mod served;
pub mod session;
pub mod settle;
pub mod stall;
pub mod stall_early;
pub mod stall_hold;
pub mod wait;
mod workers;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::error::{AfError, ErrorCode};
use crate::sdk::cdp::CdpConnection;
use crate::sdk::fetch::outcome::{FetchOutcome, Trace};
use crate::sdk::fetch::outdir::OutDir;
use crate::sdk::fetch::FetchRequest;
use network::NetworkLog;
use session::{PageState, Shared, Tab};

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
    let (result, end) = fetch_in_tab(conn, req, out, request_id, trace).await;
    if let Some(end) = end {
        let started = Instant::now();
        end.run(conn).await;
        trace.timing("tab_close", ms_since(started));
    }
    result
}

/// What is left to do with a fetch's tab once its facts are known: close it, or (a
/// takeover) hand it to the human. It changes nothing in the outcome, so the caller may
/// answer first ([`crate::sdk::afterwards`]).
#[derive(Debug)]
pub struct TabEnd {
    tab: Tab,
    /// Hand the tab over (bring it to the front and detach) instead of closing it.
    keep_for_human: bool,
}

impl TabEnd {
    /// Close the tab, or leave it to the human.
    pub async fn run(self, conn: &CdpConnection) {
        if self.keep_for_human {
            session::bring_to_front(conn, &self.tab).await;
            session::detach(conn, &self.tab).await;
        } else {
            session::close(conn, &self.tab).await;
        }
    }
}

/// [`browser_fetch`] without its last step: the outcome, and what is left to do with the
/// tab (`None` when the tab stays as it is: a browser thrown away after this fetch).
pub async fn fetch_in_tab(
    conn: &CdpConnection,
    req: &FetchRequest,
    out: &mut OutDir,
    request_id: &str,
    trace: &mut Trace,
) -> (Result<FetchOutcome, AfError>, Option<TabEnd>) {
    let t0 = Instant::now();
    let deadline = t0 + req.timeout;
    let temporary = !req.browser.takeover;
    // The browser's version (the identity is built from it) is asked beside the tab's
    // opening, not after it: one round trip less on the way to the navigation.
    let (opened, version) = tokio::join!(
        session::open(
            conn,
            req.browser.tab.as_deref(),
            temporary,
            req.browser.browser_discarded_after,
            req.browser.isolated_context && !req.browser.takeover,
            remaining(deadline),
        ),
        navigate::browser_version(conn, remaining(deadline)),
    );
    let tab = match opened {
        Ok(tab) => tab,
        Err(e) => return (Err(e), None),
    };
    trace.timing("tab_open", ms_since(t0));
    let mut tab_trace = json!({"target_id": tab.target_id, "created": tab.created});
    if tab.ready {
        tab_trace["ready"] = json!(true);
    }
    if let Some(id) = &tab.context_id {
        // Disposed by the caller once it has read the context's cookies.
        tab_trace["browser_context_id"] = json!(id);
    }
    trace.set("tab", tab_trace);
    let result = run_in_tab(conn, &tab, &version, req, out, request_id, trace, deadline).await;
    // A takeover tab stays open for the human (and the re-fetch) unless the fetch failed.
    let end = match (req.browser.browser_discarded_after, req.browser.takeover) {
        (true, _) => None,
        (false, takeover) => Some(TabEnd {
            tab,
            keep_for_human: takeover && result.is_ok(),
        }),
    };
    (result, end)
}

/// Collect the tab's events, answer its dialogs and workers, and drive it to the outcome
/// within `deadline` (`version`: the browser's `Browser.getVersion`).
#[allow(clippy::too_many_arguments)]
async fn run_in_tab(
    conn: &CdpConnection,
    tab: &Tab,
    version: &Value,
    req: &FetchRequest,
    out: &mut OutDir,
    request_id: &str,
    trace: &mut Trace,
    deadline: Instant,
) -> Result<FetchOutcome, AfError> {
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
    let (held_tx, mut held_rx) = mpsc::unbounded_channel();
    let (dialog_tx, mut dialog_rx) = mpsc::unbounded_channel();
    let (worker_tx, mut worker_rx) = mpsc::unbounded_channel();
    let forward = session::Forward {
        paused: paused_tx,
        held: held_tx,
        dialogs: dialog_tx,
        workers: worker_tx,
    };
    let collector = session::collect(events, state.clone(), forward);
    let nav_start = std::sync::OnceLock::new();
    let run = drive::Run {
        conn,
        tab,
        version,
        state: &state,
        req,
        request_id,
        deadline,
        nav_start: &nav_start,
    };
    let driven = drive::drive(&run, &mut paused_rx, out, trace);
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
    // Scripts and stylesheets wait, paused, for the in-place stall cut's decision.
    let holding = stall_hold::hold(conn, &tab.session_id, &state, req, &nav_start, &mut held_rx);
    let all = async {
        tokio::select! {
            r = driven => r,
            () = answering => unreachable_handler_end("dialog"),
            () = workers => unreachable_handler_end("worker"),
            () = holding => unreachable_handler_end("stall hold"),
        }
    };
    let result = match tokio::time::timeout_at(deadline.into(), all).await {
        Ok(r) => r,
        Err(_) => Err(AfError::new(
            ErrorCode::NavigationTimeout,
            format!(
                "the browser fetch did not finish within {} ms",
                req.timeout.as_millis()
            ),
        )
        .with_hint(crate::sdk::defaults::TIMEOUT_HINT)
        .with_field("timeout_ms")),
    };
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
