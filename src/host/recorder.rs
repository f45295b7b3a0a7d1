//! The browser-wide request recorder behind `--recent-requests-cap`: one CDP connection of
//! the host's own that auto-attaches to every page and worker and folds their `Network.*`
//! events into [`RecentRequests`].

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::error::AfError;
use crate::host::log::{log, Level};
use crate::host::recent_requests::RecentRequests;
use crate::sdk::cdp::CdpConnection;

/// Bound on each recorder CDP call.
const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// Target types whose network the recorder follows.
const RECORDED_TYPES: &[&str] = &["page", "worker", "service_worker", "shared_worker"];

/// Record the browser at `browser_ws_url` into `store` until its socket closes.
pub fn spawn(browser_ws_url: &str, store: Arc<RecentRequests>) -> tokio::task::JoinHandle<()> {
    let url = browser_ws_url.to_string();
    tokio::spawn(async move {
        if let Err(e) = record(&url, store).await {
            log(
                Level::Warn,
                "recent-requests recorder stopped",
                json!({"error": e.message}),
            );
        }
    })
}

async fn record(browser_ws_url: &str, store: Arc<RecentRequests>) -> Result<(), AfError> {
    let conn = CdpConnection::connect_devtools(browser_ws_url, CALL_TIMEOUT).await?;
    let mut events = conn.subscribe_all();
    // Not waiting for the debugger: a fetch's tab must never stall on the recorder. The first
    // requests of a target that starts loading at once may be missed; fetch tabs open blank.
    conn.send(
        None,
        "Target.setAutoAttach",
        json!({"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}),
        CALL_TIMEOUT,
    )
    .await?;
    while let Some(event) = events.recv().await {
        match event.method.as_str() {
            "Target.attachedToTarget" => {
                let p = &event.params;
                let (Some(session), Some(target), kind) = (
                    p["sessionId"].as_str(),
                    p["targetInfo"]["targetId"].as_str(),
                    p["targetInfo"]["type"].as_str().unwrap_or(""),
                ) else {
                    continue;
                };
                if !RECORDED_TYPES.contains(&kind) {
                    continue;
                }
                store.attach(session, target);
                let conn = Arc::clone(&conn);
                let session = session.to_string();
                tokio::spawn(async move {
                    let _ = conn
                        .send(Some(&session), "Network.enable", json!({}), CALL_TIMEOUT)
                        .await;
                });
            }
            "Target.detachedFromTarget" => {
                if let Some(session) = event.params.get("sessionId").and_then(Value::as_str) {
                    store.detach(session);
                }
            }
            m if m.starts_with("Network.") => store.fold(&event),
            _ => {}
        }
    }
    Ok(())
}
