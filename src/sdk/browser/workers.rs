//! The tab's identity in its workers. A dedicated worker inherits the tab's
//! `Emulation.setUserAgentOverride`; a service worker or shared worker does not (it belongs to
//! the browser, not the tab) and would send the headless User-Agent. So the tab's session
//! auto-attaches to its workers, paused before their first script runs, and each one gets the
//! tab's User-Agent and client hints (`Network.setUserAgentOverride`) before it is resumed.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::session::{lock, Shared};
use crate::error::AfError;
use crate::sdk::cdp::CdpConnection;

/// How long one worker's override and resume may take.
const CALL: Duration = Duration::from_secs(5);

/// `Target.setAutoAttach` for the tab's workers only (frames and pages stay unattached).
pub fn auto_attach_params() -> Value {
    json!({
        "autoAttach": true,
        "waitForDebuggerOnStart": true,
        "flatten": true,
        "filter": [
            {"type": "service_worker", "exclude": false},
            {"type": "shared_worker", "exclude": false},
            {"type": "worker", "exclude": false},
        ],
    })
}

/// Ask the tab's session to attach to its workers as they start.
pub async fn attach(conn: &CdpConnection, session: &str, t: Duration) -> Result<(), AfError> {
    conn.send(
        Some(session),
        "Target.setAutoAttach",
        auto_attach_params(),
        t,
    )
    .await
    .map(|_| ())
}

/// Give each attached worker (`Target.attachedToTarget` params from `attached`) the tab's
/// override (`PageState::worker_identity`) and resume it; never resolves. The two calls are
/// sent together: a paused worker answers nothing on its own thread until it runs, and the
/// browser applies them in order.
pub async fn answer(
    conn: &CdpConnection,
    attached: &mut mpsc::UnboundedReceiver<Value>,
    state: &Shared,
) {
    while let Some(a) = attached.recv().await {
        let override_params = lock(state).worker_identity.clone();
        let Some(session) = a["sessionId"].as_str() else {
            continue;
        };
        let s = Some(session);
        let resume = conn.send(s, "Runtime.runIfWaitingForDebugger", json!({}), CALL);
        match &override_params {
            Some(p) => {
                let set = conn.send(s, "Network.setUserAgentOverride", p.clone(), CALL);
                let _ = tokio::join!(set, resume);
            }
            None => {
                let _ = resume.await;
            }
        }
    }
    std::future::pending::<()>().await;
}
