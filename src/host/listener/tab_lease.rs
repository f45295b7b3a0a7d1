//! Temporary tabs leased to one `/cdp` client: closed by the host when that client goes away.
//!
//! A fetch opens its own tab and closes it when done; a driver killed in between (SIGKILL,
//! OOM, a dropped network) would leave that tab open forever. So a driver marks such a tab
//! when it creates it: `Target.createTarget` with [`TEMPORARY_PARAM`]` = true`. The proxy
//! strips the marker (the browser never sees it), remembers the target id from the
//! browser's answer, and when the client's socket closes — cleanly or not — closes every
//! marked target that is still open. Tabs created without the marker (`afhttp cdp
//! Target.createTarget`, tabs meant for `--tab` and human takeover) are never touched: their
//! lifetime is the agent's decision, not its connection's (spec §12).

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{json, Value};

use crate::host::log::{log, Level};

/// The `Target.createTarget` parameter that marks a tab as temporary for this connection.
pub const TEMPORARY_PARAM: &str = "afhttpTemporary";

/// The `Target.createTarget` parameter by which a driver asks to be attached to the tab in
/// the same call (flattened): a host that answers from its ready tabs attaches it on the
/// driver's connection and answers `{targetId, sessionId}`. Without a `sessionId` in the
/// answer, the driver attaches itself. Stripped before the browser sees it.
pub const ATTACH_PARAM: &str = "afhttpAttach";

/// The `browserContextId` by which a driver asks for a ready isolated tab (see
/// [`super::tab_pool`]); with none ready the call goes on and the browser refuses it.
pub use crate::sdk::browser::session::READY_ISOLATED;

/// Answers longer than this are not a `Target.createTarget` answer (skip parsing them).
const MAX_ANSWER_LEN: usize = 512;

/// How long closing the leftover tabs may take.
const CLOSE_BOUND: Duration = Duration::from_secs(5);

/// What one client connection leased.
#[derive(Debug, Default)]
struct Inner {
    /// Ids of marked `Target.createTarget` commands still waiting for the browser's answer.
    pending: HashSet<u64>,
    /// Marked targets the browser created.
    targets: Vec<String>,
    /// Browser contexts of ready isolated tabs this client took (the host made them, so the
    /// browser does not dispose of them when this client goes: the host does).
    contexts: Vec<String>,
}

/// The temporary tabs of one `/cdp` connection.
#[derive(Debug, Clone, Default)]
pub(crate) struct TabLeases(Arc<Mutex<Inner>>);

impl TabLeases {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A client → browser text message: a marked `Target.createTarget` is remembered and
    /// returned without the marker; anything else is `None` (forward it unchanged).
    pub fn outgoing(&self, text: &str) -> Option<String> {
        if text.contains("Target.closeTarget") {
            self.forget_closed(text);
            return None;
        }
        if text.contains("Target.disposeBrowserContext") {
            self.forget_disposed(text);
            return None;
        }
        if !text.contains(TEMPORARY_PARAM) {
            return None;
        }
        let mut msg: Value = serde_json::from_str(text).ok()?;
        if msg.get("method").and_then(Value::as_str) != Some("Target.createTarget") {
            return None;
        }
        let id = msg.get("id").and_then(Value::as_u64)?;
        let params = msg.get_mut("params").and_then(Value::as_object_mut);
        let marked = params
            .and_then(|p| {
                p.remove(ATTACH_PARAM);
                p.remove(TEMPORARY_PARAM)
            })
            .is_some_and(|v| v == Value::Bool(true));
        if marked {
            self.lock().pending.insert(id);
        }
        Some(msg.to_string())
    }

    /// The client closes a target itself: nothing is left to close for it later (and the
    /// usual fetch then ends without the host opening a connection of its own).
    fn forget_closed(&self, text: &str) {
        let mut inner = self.lock();
        if inner.targets.is_empty() {
            return;
        }
        if let Some(target) = super::pool_frames::closed_target(text) {
            inner.targets.retain(|t| *t != target);
        }
    }

    /// The client disposes of a context itself: nothing is left to dispose of for it later.
    fn forget_disposed(&self, text: &str) {
        let mut inner = self.lock();
        if inner.contexts.is_empty() {
            return;
        }
        let Ok(msg) = serde_json::from_str::<Value>(text) else {
            return;
        };
        if msg.get("method").and_then(Value::as_str) != Some("Target.disposeBrowserContext") {
            return;
        }
        if let Some(id) = msg
            .pointer("/params/browserContextId")
            .and_then(Value::as_str)
        {
            inner.contexts.retain(|c| c != id);
        }
    }

    /// A browser → client text message: the answer to a marked `Target.createTarget` names
    /// the target to close later.
    pub fn incoming(&self, text: &str) {
        if text.len() > MAX_ANSWER_LEN || !text.contains("targetId") {
            return;
        }
        let mut inner = self.lock();
        if inner.pending.is_empty() {
            return;
        }
        let Ok(msg) = serde_json::from_str::<Value>(text) else {
            return;
        };
        let Some(id) = msg.get("id").and_then(Value::as_u64) else {
            return;
        };
        if inner.pending.remove(&id) {
            if let Some(target) = msg["result"]["targetId"].as_str() {
                inner.targets.push(target.to_string());
            }
        }
    }

    /// `target` (a ready tab of the pool) is now this client's, as if it had created it.
    pub fn adopt(&self, target: &str) {
        self.lock().targets.push(target.to_string());
    }

    /// `context` (of a ready isolated tab) is now this client's: disposed of when it goes.
    pub fn adopt_context(&self, context: &str) {
        self.lock().contexts.push(context.to_string());
    }

    /// The marked targets created so far.
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut self.lock().targets)
    }

    /// The client is gone: close its marked targets that are still open (a target the
    /// client closed itself is simply not found), and dispose of the contexts of the ready
    /// isolated tabs it took and did not dispose of. Returns the targets it closed.
    pub async fn release(&self, browser_ws_url: &str) -> Vec<String> {
        let targets = self.take();
        let contexts = std::mem::take(&mut self.lock().contexts);
        if targets.is_empty() && contexts.is_empty() {
            return targets;
        }
        let conn =
            match crate::sdk::cdp::CdpConnection::connect_devtools(browser_ws_url, CLOSE_BOUND)
                .await
            {
                Ok(c) => c,
                // The browser is gone (crash, restart, switch): so are its tabs.
                Err(_) => return Vec::new(),
            };
        let mut closed = Vec::new();
        for target in targets {
            let r = conn
                .call(
                    None,
                    "Target.closeTarget",
                    json!({"targetId": target}),
                    CLOSE_BOUND,
                )
                .await;
            if r.is_ok_and(|v| v["success"] != false) {
                closed.push(target);
            }
        }
        for context in &contexts {
            let _ = conn
                .call(
                    None,
                    "Target.disposeBrowserContext",
                    json!({"browserContextId": context}),
                    CLOSE_BOUND,
                )
                .await;
        }
        conn.close();
        if !closed.is_empty() || !contexts.is_empty() {
            log(
                Level::Info,
                "closed tabs a disconnected client left open",
                json!({"closed": closed.len(), "contexts_disposed": contexts.len()}),
            );
        }
        closed
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn marked_create_is_stripped_and_its_target_remembered() {
        let l = TabLeases::default();
        let out = l
            .outgoing(r#"{"id":7,"method":"Target.createTarget","params":{"url":"about:blank","afhttpTemporary":true}}"#)
            .unwrap();
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["params"], json!({"url": "about:blank"}));
        assert_eq!(v["id"], 7);
        let out = l
            .outgoing(r#"{"id":8,"method":"Target.createTarget","params":{"afhttpTemporary":true,"afhttpAttach":true}}"#)
            .unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&out).unwrap()["params"],
            json!({})
        );
        l.incoming(r#"{"id":6,"result":{"targetId":"OTHER"}}"#);
        l.incoming(r#"{"id":7,"result":{"targetId":"ABC"}}"#);
        l.incoming(r#"{"id":8,"result":{"targetId":"DEF"}}"#);
        assert_eq!(l.take(), vec!["ABC".to_string(), "DEF".to_string()]);
    }

    #[test]
    fn a_target_the_client_closed_is_forgotten() {
        let l = TabLeases::default();
        for (id, target) in [(1, "A"), (2, "B")] {
            l.outgoing(&format!(
                r#"{{"id":{id},"method":"Target.createTarget","params":{{"afhttpTemporary":true}}}}"#
            ));
            l.incoming(&format!(
                r#"{{"id":{id},"result":{{"targetId":"{target}"}}}}"#
            ));
        }
        assert!(l
            .outgoing(r#"{"id":3,"method":"Target.closeTarget","params":{"targetId":"A"}}"#)
            .is_none());
        assert_eq!(l.take(), vec!["B".to_string()]);
    }

    #[test]
    fn a_context_the_client_disposed_is_forgotten() {
        let l = TabLeases::default();
        l.adopt_context("C1");
        l.adopt_context("C2");
        assert!(l
            .outgoing(r#"{"id":3,"method":"Target.disposeBrowserContext","params":{"browserContextId":"C1"}}"#)
            .is_none());
        assert_eq!(l.lock().contexts, vec!["C2".to_string()]);
    }

    #[test]
    fn unmarked_or_other_messages_pass_unchanged() {
        let l = TabLeases::default();
        assert!(l
            .outgoing(r#"{"id":1,"method":"Target.createTarget","params":{"url":"about:blank"}}"#)
            .is_none());
        assert!(l
            .outgoing(r#"{"id":2,"method":"Runtime.evaluate","params":{"expression":"'afhttpTemporary'"}}"#)
            .is_none());
        // A false marker is stripped but leases nothing.
        let out = l
            .outgoing(
                r#"{"id":3,"method":"Target.createTarget","params":{"afhttpTemporary":false}}"#,
            )
            .unwrap();
        assert!(!out.contains(TEMPORARY_PARAM));
        l.incoming(r#"{"id":1,"result":{"targetId":"A"}}"#);
        l.incoming(r#"{"id":3,"result":{"targetId":"B"}}"#);
        assert!(l.take().is_empty());
    }
}
