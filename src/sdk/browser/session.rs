//! The tab a browser fetch drives: open or attach, the event collector, and closing.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::network::NetworkLog;
use crate::error::{AfError, ErrorCode};
use crate::sdk::cdp::{CdpConnection, CdpEvent};

/// One tab, attached with a flattened session.
#[derive(Debug, Clone)]
pub struct Tab {
    /// CDP target id (also the main frame id).
    pub target_id: String,
    /// Flattened session id.
    pub session_id: String,
    /// Whether this fetch created the tab (and so closes it).
    pub created: bool,
    /// The isolated browser context of the tab (disposed with it).
    pub context_id: Option<String>,
    /// Whether it is a host's ready tab (the host answered its creation, attached).
    pub ready: bool,
}

/// What the event collector has seen on the tab's session.
#[derive(Debug)]
pub struct PageState {
    /// When `Page.loadEventFired` arrived.
    pub load_at: Option<Instant>,
    /// When the main frame committed the navigation (`Page.frameNavigated`): `--wait ms:N`
    /// and the readiness budget count from here.
    pub committed_at: Option<Instant>,
    /// When `Page.domContentEventFired` arrived (the document is parsed).
    pub dom_content_at: Option<Instant>,
    /// Why the renderer died, when it did.
    pub crashed: Option<String>,
    /// The network log.
    pub network: NetworkLog,
    /// Console, exception and log entries in arrival order.
    pub console: Vec<Value>,
    /// JavaScript dialogs the page opened, as `(kind, message)`, in order.
    pub dialogs: Vec<(String, String)>,
    /// Downloads the tab started (`Page.download*`).
    pub downloads: Vec<super::download::TabDownload>,
    /// `Network.setUserAgentOverride` parameters for the tab's service and shared workers
    /// (the tab's own override, which they do not inherit); `None` keeps theirs.
    pub worker_identity: Option<Value>,
    /// Signalled after every folded event, so a waiter reacts at once instead of on its
    /// next poll (one permit is kept when nobody waits).
    pub changed: Arc<tokio::sync::Notify>,
}

/// Shared handle to the page state.
pub type Shared = Arc<Mutex<PageState>>;

/// Lock the state, surviving a poisoned mutex (the collector never panics).
pub fn lock(state: &Shared) -> MutexGuard<'_, PageState> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

/// The `browserContextId` by which a temporary `Target.createTarget` asks a host for a ready
/// isolated tab (a blank tab in a fresh context the host made ahead): a host that has one
/// answers `{targetId, sessionId, browserContextId}`. Anything else (an empty pool, an
/// older host, a bare browser) lets the browser refuse a context it does not know, and the
/// fetch makes its own context: it never gets a tab of the shared context this way.
pub const READY_ISOLATED: &str = "afhttp-ready-isolated";

/// Open a new tab (`tab` None or `new`) or attach to the existing target `tab`. A new tab
/// is `temporary` unless it must outlive this driver (a takeover tab).
///
/// With `reuse_blank` (a browser thrown away after this fetch), a new tab is the browser's
/// own untouched `about:blank` page when it has one: its renderer was started with the
/// browser, while a created tab waits for a fresh renderer on a still-busy browser.
///
/// With `isolated`, a new tab opens in a fresh browser context (`Target.createBrowserContext`,
/// disposed when the fetch ends or its connection drops): it shares no cookie, storage or
/// cache with the profile the browser runs on, and writes none into it. A `temporary` one is
/// first asked of the host's ready isolated tabs ([`READY_ISOLATED`]).
pub async fn open(
    conn: &CdpConnection,
    tab: Option<&str>,
    temporary: bool,
    reuse_blank: bool,
    isolated: bool,
    timeout: Duration,
) -> Result<Tab, AfError> {
    match open_once(conn, tab, temporary, reuse_blank, isolated, timeout).await {
        // A new tab gone before it could be attached (a host's ready tab whose renderer
        // died while it waited): one more, freshly made.
        Err(Opening::NotAttached(_)) => open_once(conn, tab, temporary, false, isolated, timeout)
            .await
            .map_err(Opening::into_error),
        r => r.map_err(Opening::into_error),
    }
}

/// Why opening a tab failed.
enum Opening {
    /// A tab this fetch created could not be attached.
    NotAttached(AfError),
    /// Anything else.
    Failed(AfError),
}

impl Opening {
    fn into_error(self) -> AfError {
        match self {
            Opening::NotAttached(e) | Opening::Failed(e) => e,
        }
    }
}

async fn open_once(
    conn: &CdpConnection,
    tab: Option<&str>,
    temporary: bool,
    reuse_blank: bool,
    isolated: bool,
    timeout: Duration,
) -> Result<Tab, Opening> {
    let blank = match tab {
        None if reuse_blank && !isolated => startup_blank_page(conn, timeout).await,
        _ => None,
    };
    let mut context_id = None;
    let mut ready = false;
    let (target_id, created) = match (tab, blank) {
        (_, Some(id)) => (id, true),
        (None | Some("new"), None) => {
            let pooled = match isolated && temporary {
                true => ready_isolated(conn, timeout).await,
                false => None,
            };
            let r = match pooled {
                Some((r, context)) => {
                    context_id = Some(context);
                    ready = true;
                    r
                }
                None => create(conn, temporary, isolated, &mut context_id, timeout).await?,
            };
            let id = r["targetId"].as_str().unwrap_or_default().to_string();
            if let Some(session_id) = r["sessionId"].as_str() {
                return Ok(Tab {
                    target_id: id,
                    session_id: session_id.to_string(),
                    created: true,
                    context_id,
                    ready: true,
                });
            }
            (id, true)
        }
        (Some(id), None) => (id.to_string(), false),
    };
    let attached = conn
        .send(
            None,
            "Target.attachToTarget",
            json!({"targetId": target_id, "flatten": true}),
            timeout,
        )
        .await;
    let session_id = match attached {
        Ok(r) => r["sessionId"].as_str().unwrap_or_default().to_string(),
        Err(e) => {
            if created {
                close_target(conn, &target_id, timeout).await;
            }
            dispose_context(conn, context_id.as_deref()).await;
            return Err(match created {
                true => Opening::NotAttached(e),
                false => Opening::Failed(
                    AfError::invalid(format!("tab {target_id}: cannot attach ({})", e.message))
                        .with_field("tab"),
                ),
            });
        }
    };
    Ok(Tab {
        target_id,
        session_id,
        created,
        context_id,
        ready,
    })
}

/// Create a blank tab (in a fresh context of its own when `isolated`, named in
/// `context_id`): the browser's `Target.createTarget` answer, or a host's for one of its
/// ready tabs (then with its `sessionId`).
async fn create(
    conn: &CdpConnection,
    temporary: bool,
    isolated: bool,
    context_id: &mut Option<String>,
    timeout: Duration,
) -> Result<Value, Opening> {
    let mut params = json!({"url": "about:blank"});
    if isolated {
        let r = conn
            .send(
                None,
                "Target.createBrowserContext",
                json!({"disposeOnDetach": true}),
                timeout,
            )
            .await
            .map_err(Opening::Failed)?;
        let id = r["browserContextId"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        params["browserContextId"] = json!(id);
        *context_id = Some(id);
    }
    if temporary {
        // The host closes it if this driver dies before closing it (and strips the
        // marker before the browser sees it).
        params["afhttpTemporary"] = json!(true);
        // A host that answers from its ready tabs attaches this connection to the tab
        // in the same call: one round trip less before the navigation.
        params["afhttpAttach"] = json!(true);
    }
    match conn
        .send(None, "Target.createTarget", params, timeout)
        .await
    {
        Ok(r) => Ok(r),
        Err(e) => {
            dispose_context(conn, context_id.as_deref()).await;
            Err(Opening::Failed(e))
        }
    }
}

/// A host's ready isolated tab: its `Target.createTarget` answer (`targetId`, and `sessionId`
/// when the host attached it) and its context. `None` when there is none (the caller makes
/// its own). An answer without a context of its own is not one: its tab, if any, is closed.
async fn ready_isolated(conn: &CdpConnection, timeout: Duration) -> Option<(Value, String)> {
    let params = json!({"url": "about:blank", "browserContextId": READY_ISOLATED,
                        "afhttpTemporary": true, "afhttpAttach": true});
    let r = conn
        .send(None, "Target.createTarget", params, timeout)
        .await
        .ok()?;
    let target_id = r["targetId"].as_str()?.to_string();
    let context = r["browserContextId"]
        .as_str()
        .filter(|c| !c.is_empty() && *c != READY_ISOLATED)
        .map(String::from);
    if context.is_none() {
        close_target(conn, &target_id, timeout).await;
    }
    Some((r, context?))
}

/// Dispose of an isolated browser context (its tabs, cookies and storage go with it). The
/// fetch that opened it does so once it has read the context's cookies.
pub async fn dispose_context(conn: &CdpConnection, context_id: Option<&str>) {
    if let Some(id) = context_id {
        let _ = conn
            .send(
                None,
                "Target.disposeBrowserContext",
                json!({"browserContextId": id}),
                Duration::from_secs(5),
            )
            .await;
    }
}

/// The browser's start-up page: the only page target, still on `about:blank` and attached to
/// nobody. `None` when there is no such page (or the browser cannot list its targets).
async fn startup_blank_page(conn: &CdpConnection, timeout: Duration) -> Option<String> {
    let r = conn
        .send(None, "Target.getTargets", json!({}), timeout)
        .await
        .ok()?;
    let pages: Vec<&Value> = r["targetInfos"]
        .as_array()?
        .iter()
        .filter(|t| t["type"] == "page")
        .collect();
    match pages.as_slice() {
        [only] if only["url"] == "about:blank" && only["attached"] == false => {
            only["targetId"].as_str().map(String::from)
        }
        _ => None,
    }
}

/// Close `target_id` and wait (up to `timeout`) until the browser no longer lists it:
/// `Target.closeTarget` answers before the target is gone.
async fn close_target(conn: &CdpConnection, target_id: &str, timeout: Duration) {
    let started = Instant::now();
    let closed = conn
        .send(
            None,
            "Target.closeTarget",
            json!({"targetId": target_id}),
            timeout,
        )
        .await;
    if closed.is_err() {
        return;
    }
    while started.elapsed() < timeout {
        let listed = conn
            .send(None, "Target.getTargets", json!({}), timeout)
            .await
            .map(|r| {
                r["targetInfos"]
                    .as_array()
                    .is_some_and(|l| l.iter().any(|t| t["targetId"] == target_id))
            })
            .unwrap_or(false);
        if !listed {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Close a tab this fetch created, or detach from one it attached to.
///
/// After the answer ([`crate::sdk::afterwards`]) the close is not waited out, not even the
/// browser's answer to it (4-70 ms through a host on a busy machine; waiting for the target
/// to leave the browser's list was 60-150 ms more): the caller already has its answer, and a
/// host counts a tab whose close went through it as closed. A program that gets its
/// clean-up before the fetch returns still finds the tab gone.
pub async fn close(conn: &CdpConnection, tab: &Tab) {
    if tab.created && crate::sdk::afterwards::answering_first() {
        // Not even its answer: the command goes out before the connection's close, and a
        // host's lease closes the tab anyway if it never arrives.
        conn.post(
            None,
            "Target.closeTarget",
            json!({"targetId": tab.target_id}),
        );
    } else if tab.created {
        close_target(conn, &tab.target_id, Duration::from_secs(5)).await;
    } else {
        detach(conn, tab).await;
    }
}

/// Make the tab the one a human sees on the display (best effort).
pub async fn bring_to_front(conn: &CdpConnection, tab: &Tab) {
    let _ = conn
        .send(
            None,
            "Target.activateTarget",
            json!({"targetId": tab.target_id}),
            Duration::from_secs(5),
        )
        .await;
}

/// Leave the tab open but drop this fetch's session (and with it its interception).
pub async fn detach(conn: &CdpConnection, tab: &Tab) {
    let _ = conn
        .send(
            None,
            "Target.detachFromTarget",
            json!({"sessionId": tab.session_id}),
            Duration::from_secs(5),
        )
        .await;
}

/// Where the collector forwards the events the fetch answers.
pub struct Forward {
    /// `Fetch.requestPaused`.
    pub paused: mpsc::UnboundedSender<Value>,
    /// `Fetch.requestPaused` of a script or stylesheet ([`super::stall_hold`]).
    pub held: mpsc::UnboundedSender<Value>,
    /// `Page.javascriptDialogOpening` (also recorded).
    pub dialogs: mpsc::UnboundedSender<Value>,
    /// `Target.attachedToTarget`: a worker waiting for its identity ([`super::workers`]).
    pub workers: mpsc::UnboundedSender<Value>,
}

/// Start the collector: it folds every session event into the state and forwards the
/// events the fetch must answer to `to`.
pub fn collect(
    mut events: mpsc::UnboundedReceiver<CdpEvent>,
    state: Shared,
    to: Forward,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        while let Some(ev) = events.recv().await {
            if ev.method == "Fetch.requestPaused" {
                let to = match super::stall_hold::is_held_kind(&ev.params) {
                    true => &to.held,
                    false => &to.paused,
                };
                let _ = to.send(ev.params);
                continue;
            }
            if ev.method == "Target.attachedToTarget" {
                let _ = to.workers.send(ev.params);
                continue;
            }
            if ev.method == "Page.javascriptDialogOpening" {
                let _ = to.dialogs.send(ev.params.clone());
            }
            let changed = {
                let mut st = lock(&state);
                on_event(&mut st, &ev.method, &ev.params);
                Arc::clone(&st.changed)
            };
            changed.notify_one();
        }
    })
}

fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// Fold one event into the state.
pub fn on_event(st: &mut PageState, method: &str, p: &Value) {
    match method {
        "Page.loadEventFired" if st.load_at.is_none() => st.load_at = Some(Instant::now()),
        "Page.domContentEventFired" if st.dom_content_at.is_none() => {
            st.dom_content_at = Some(Instant::now());
        }
        "Page.frameNavigated" if p["frame"]["parentId"].is_null() => {
            let url = p["frame"]["url"].as_str().unwrap_or("");
            if st.committed_at.is_none() && !url.starts_with("about:") {
                st.committed_at = Some(Instant::now());
            }
            st.network
                .main_committed(p["frame"]["loaderId"].as_str().unwrap_or(""));
        }
        "Inspector.targetCrashed" => st.crashed = Some("the renderer crashed".into()),
        "Inspector.detached" => {
            let reason = p["reason"].as_str().unwrap_or("detached");
            if reason.contains("crash") {
                st.crashed = Some(reason.to_string());
            }
        }
        "Runtime.consoleAPICalled" => {
            let text: Vec<String> = p["args"]
                .as_array()
                .map(|args| args.iter().map(remote_object_text).collect())
                .unwrap_or_default();
            let frame = &p["stackTrace"]["callFrames"][0];
            st.console.push(json!({
                "source": "console",
                "level": p["type"],
                "text": text.join(" "),
                "url": frame["url"],
                "line": frame["lineNumber"],
                "column": frame["columnNumber"],
                "timestamp_ms": p["timestamp"],
                "received_unix_ms": now_ms(),
            }));
        }
        "Runtime.exceptionThrown" => {
            let d = &p["exceptionDetails"];
            let message = d["exception"]["description"]
                .as_str()
                .or_else(|| d["text"].as_str())
                .unwrap_or("exception");
            st.console.push(json!({
                "source": "exception",
                "level": "error",
                "text": message,
                "url": d["url"],
                "line": d["lineNumber"],
                "column": d["columnNumber"],
                "stack": d["stackTrace"]["callFrames"],
                "timestamp_ms": p["timestamp"],
                "received_unix_ms": now_ms(),
            }));
        }
        "Log.entryAdded" => {
            let e = &p["entry"];
            st.console.push(json!({
                "source": format!("log:{}", e["source"].as_str().unwrap_or("other")),
                "level": e["level"],
                "text": e["text"],
                "url": e["url"],
                "line": e["lineNumber"],
                "timestamp_ms": e["timestamp"],
                "received_unix_ms": now_ms(),
            }));
        }
        "Page.javascriptDialogOpening" => {
            let kind = p["type"].as_str().unwrap_or("alert").to_string();
            let message = p["message"].as_str().unwrap_or_default().to_string();
            st.console.push(json!({
                "source": "dialog",
                "level": "info",
                "kind": kind,
                "text": message,
                "url": p["url"],
                "default_prompt": p["defaultPrompt"],
                "received_unix_ms": now_ms(),
            }));
            st.dialogs.push((kind, message));
        }
        m if m.starts_with("Network.") => st.network.on_event(m, p),
        m if m.starts_with("Page.download") => super::download::on_event(&mut st.downloads, m, p),
        _ => {}
    }
}

/// The text of a console argument.
fn remote_object_text(o: &Value) -> String {
    match &o["value"] {
        Value::String(s) => s.clone(),
        Value::Null => o["description"]
            .as_str()
            .or_else(|| o["type"].as_str())
            .unwrap_or("")
            .to_string(),
        v => v.to_string(),
    }
}

/// Answer every JavaScript dialog the collector forwards as it opens (`accept` or dismiss;
/// a prompt gets its default text). Never resolves: it runs beside the fetch.
pub async fn answer_dialogs(
    conn: &CdpConnection,
    session: &str,
    dialogs: &mut mpsc::UnboundedReceiver<Value>,
    accept: bool,
) {
    while let Some(d) = dialogs.recv().await {
        let mut params = json!({"accept": accept});
        if accept && d["type"] == "prompt" {
            params["promptText"] = d["defaultPrompt"].clone();
        }
        let _ = conn
            .send(
                Some(session),
                "Page.handleJavaScriptDialog",
                params,
                Duration::from_secs(5),
            )
            .await;
    }
    std::future::pending::<()>().await;
}

/// The `dialog_handled` warnings for the dialogs the page opened.
pub fn dialog_warnings(st: &PageState, accepted: bool) -> Vec<crate::error::Warning> {
    let how = if accepted { "accepted" } else { "dismissed" };
    st.dialogs
        .iter()
        .map(|(kind, message)| {
            crate::error::Warning::general(
                ErrorCode::DialogHandled,
                format!("the page opened a {kind} dialog ({message:?}); it was {how}"),
            )
        })
        .collect()
}

/// Resolves with the crash reason once the renderer has crashed (polled every 50 ms).
pub async fn crashed(state: &Shared) -> String {
    loop {
        if let Some(why) = lock(state).crashed.clone() {
            return why;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The stable error for a crashed renderer.
pub fn crashed_error(why: &str) -> AfError {
    AfError::new(ErrorCode::TabCrashed, format!("the tab crashed: {why}"))
        .with_hint("retry the fetch; a crash is often transient")
}
