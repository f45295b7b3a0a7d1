//! The `/cdp` frames of the host's ready tabs ([`super::tab_pool`]): which
//! `Target.createTarget` the pool may answer and how, the host's attach on a driver's behalf,
//! and target lists without the host's tabs.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};

use serde_json::{json, Value};

use super::tab_pool::TabPool;

/// Answers longer than this are not a `Target.getTargets` answer worth rewriting.
const MAX_LIST_LEN: usize = 4 * 1024 * 1024;

/// Answers longer than this are not an attach's answer.
const MAX_ATTACH_ANSWER_LEN: usize = 4096;

/// A temporary blank `Target.createTarget` the pool may answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolableCreate {
    /// The command's id.
    pub id: u64,
    /// Whether the driver asked to be attached in the same call
    /// ([`super::tab_lease::ATTACH_PARAM`]).
    pub attach: bool,
    /// Whether it asked for a ready isolated tab ([`super::tab_lease::READY_ISOLATED`]).
    pub isolated: bool,
}

/// Whether a client's frame is a temporary blank `Target.createTarget` the pool may answer.
pub fn poolable_create(msg: &Value) -> Option<PoolableCreate> {
    use super::tab_lease::{ATTACH_PARAM, READY_ISOLATED, TEMPORARY_PARAM};
    if msg.get("method").and_then(Value::as_str) != Some("Target.createTarget")
        || msg.get("sessionId").is_some()
    {
        return None;
    }
    let params = msg.get("params")?.as_object()?;
    let blank = params
        .get("url")
        .is_none_or(|u| u.as_str() == Some("about:blank"));
    let temporary = params.get(TEMPORARY_PARAM) == Some(&Value::Bool(true));
    // A context is asked only as the ready isolated one; any other is the driver's own.
    let isolated = match params.get("browserContextId") {
        None => false,
        Some(c) if c.as_str() == Some(READY_ISOLATED) => true,
        Some(_) => return None,
    };
    let nothing_else = params.keys().all(|k| {
        k == "url" || k == TEMPORARY_PARAM || k == ATTACH_PARAM || k == "browserContextId"
    });
    if !(blank && temporary && nothing_else) {
        return None;
    }
    Some(PoolableCreate {
        id: msg.get("id").and_then(Value::as_u64)?,
        attach: params.get(ATTACH_PARAM) == Some(&Value::Bool(true)),
        isolated,
    })
}

/// The target of a client's browser-level `Target.closeTarget` frame.
pub fn closed_target(text: &str) -> Option<String> {
    if !text.contains("Target.closeTarget") {
        return None;
    }
    let msg: Value = serde_json::from_str(text).ok()?;
    if msg.get("method").and_then(Value::as_str) != Some("Target.closeTarget")
        || msg.get("sessionId").is_some()
    {
        return None;
    }
    msg.pointer("/params/targetId")
        .and_then(Value::as_str)
        .map(String::from)
}

/// The answer to command `id` that the browser would have given for a created `target`
/// (with the fresh `context` it is in, for a ready isolated tab).
pub fn created_answer(id: u64, target: &str, context: Option<&str>) -> String {
    json!({"id": id, "result": created_result(target, context)}).to_string()
}

fn created_result(target: &str, context: Option<&str>) -> Value {
    let mut result = json!({"targetId": target});
    if let Some(c) = context {
        result["browserContextId"] = json!(c);
    }
    result
}

/// The frame the host sends the browser, on the driver's connection and under the driver's
/// own command id, to attach the driver to a ready tab it took (the driver's
/// `Target.createTarget` never reaches the browser, so the id is free there).
pub fn attach_frame(id: u64, target: &str) -> String {
    json!({"id": id, "method": "Target.attachToTarget",
           "params": {"targetId": target, "flatten": true}})
    .to_string()
}

/// The ready tabs a client took with [`super::tab_lease::ATTACH_PARAM`] (and the context of
/// an isolated one), by the command id whose answer (the browser's to the host's
/// `Target.attachToTarget`) is still to come.
#[derive(Debug, Default)]
pub struct AttachCalls(Mutex<HashMap<u64, (String, Option<String>)>>);

impl AttachCalls {
    fn lock(&self) -> MutexGuard<'_, HashMap<u64, (String, Option<String>)>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The host attaches the client to `target` (in `context`) under command `id`.
    pub fn sent(&self, id: u64, target: &str, context: Option<&str>) {
        self.lock()
            .insert(id, (target.to_string(), context.map(String::from)));
    }

    /// A browser → client frame: the attach's answer as the answer to the client's
    /// `Target.createTarget` (`{targetId, sessionId}`; a failed attach answers only
    /// `{targetId}`, and the driver attaches itself and sees why). `None`: pass unchanged.
    pub fn incoming(&self, text: &str) -> Option<String> {
        if text.len() > MAX_ATTACH_ANSWER_LEN || self.lock().is_empty() {
            return None;
        }
        let msg: Value = serde_json::from_str(text).ok()?;
        if msg.get("method").is_some() {
            return None;
        }
        let id = msg.get("id").and_then(Value::as_u64)?;
        let (target, context) = self.lock().remove(&id)?;
        let mut result = created_result(&target, context.as_deref());
        if let Some(session) = msg.pointer("/result/sessionId").and_then(Value::as_str) {
            result["sessionId"] = json!(session);
        }
        Some(json!({"id": id, "result": result}).to_string())
    }
}

/// Leave the host's tabs ([`TabPool::hidden`]) out of a target list (`key`: `targetId` in
/// `Target.getTargets`, `id` in `/json/list`); true when one was left out.
pub fn without_hidden(list: &mut Vec<Value>, hidden: &HashSet<String>, key: &str) -> bool {
    let before = list.len();
    list.retain(|t| {
        t.get(key)
            .and_then(Value::as_str)
            .is_none_or(|id| !hidden.contains(id))
    });
    list.len() != before
}

/// The `Target.getTargets` and `Target.getBrowserContexts` calls of one client still waiting
/// for their answer, so the ready tabs and their contexts can be left out of it.
#[derive(Debug, Default)]
pub struct ListCalls(Mutex<HashSet<u64>>);

impl ListCalls {
    fn lock(&self) -> MutexGuard<'_, HashSet<u64>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A client → browser frame: remember a `Target.getTargets` or
    /// `Target.getBrowserContexts` call.
    pub fn outgoing(&self, text: &str) {
        if !text.contains("Target.getTargets") && !text.contains("Target.getBrowserContexts") {
            return;
        }
        let Ok(msg) = serde_json::from_str::<Value>(text) else {
            return;
        };
        let method = msg.get("method").and_then(Value::as_str);
        if method == Some("Target.getTargets") || method == Some("Target.getBrowserContexts") {
            if let Some(id) = msg.get("id").and_then(Value::as_u64) {
                self.lock().insert(id);
            }
        }
    }

    /// A browser → client frame: the answer to a remembered call, without the host's tabs
    /// (`None`: pass the frame unchanged).
    pub async fn incoming(&self, text: &str, pool: &TabPool) -> Option<String> {
        let contexts = text.contains("browserContextIds");
        if text.len() > MAX_LIST_LEN
            || !(contexts || text.contains("targetInfos"))
            || self.lock().is_empty()
        {
            return None;
        }
        let mut msg: Value = serde_json::from_str(text).ok()?;
        let id = msg.get("id").and_then(Value::as_u64)?;
        if !self.lock().remove(&id) {
            return None;
        }
        if contexts {
            let hidden = pool.hidden_contexts().await;
            let list = msg
                .pointer_mut("/result/browserContextIds")?
                .as_array_mut()?;
            let before = list.len();
            list.retain(|c| c.as_str().is_none_or(|c| !hidden.contains(c)));
            return (list.len() != before).then(|| msg.to_string());
        }
        let hidden = pool.hidden().await;
        if hidden.is_empty() {
            return None;
        }
        let list = msg.pointer_mut("/result/targetInfos")?.as_array_mut()?;
        without_hidden(list, &hidden, "targetId").then(|| msg.to_string())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn create(params: Value) -> Value {
        json!({"id": 4, "method": "Target.createTarget", "params": params})
    }

    #[test]
    fn only_a_temporary_blank_tab_with_nothing_else_asked_comes_from_the_pool() {
        let plain = Some(PoolableCreate {
            id: 4,
            attach: false,
            isolated: false,
        });
        assert_eq!(
            poolable_create(&create(
                json!({"url": "about:blank", "afhttpTemporary": true})
            )),
            plain
        );
        assert_eq!(
            poolable_create(&create(json!({"afhttpTemporary": true}))),
            plain
        );
        assert_eq!(
            poolable_create(&create(
                json!({"afhttpTemporary": true, "afhttpAttach": true})
            )),
            Some(PoolableCreate {
                id: 4,
                attach: true,
                isolated: false,
            })
        );
        assert_eq!(
            poolable_create(&create(
                json!({"afhttpTemporary": true, "afhttpAttach": true,
                "browserContextId": "afhttp-ready-isolated"})
            )),
            Some(PoolableCreate {
                id: 4,
                attach: true,
                isolated: true,
            })
        );
        for params in [
            json!({"url": "about:blank"}),
            json!({"url": "https://example.com/", "afhttpTemporary": true}),
            json!({"url": "about:blank", "afhttpTemporary": true, "browserContextId": "C"}),
            json!({"url": "about:blank", "browserContextId": "afhttp-ready-isolated"}),
            json!({"url": "about:blank", "afhttpTemporary": true, "width": 800}),
        ] {
            assert_eq!(poolable_create(&create(params.clone())), None, "{params}");
        }
        let mut in_session = create(json!({"afhttpTemporary": true}));
        in_session["sessionId"] = json!("S");
        assert_eq!(poolable_create(&in_session), None);
    }

    #[test]
    fn an_attach_answer_reads_as_the_create_answer_with_its_session() {
        let calls = AttachCalls::default();
        calls.sent(5, "T", None);
        calls.sent(6, "U", None);
        calls.sent(7, "V", Some("C"));
        let event = r#"{"method":"Target.attachedToTarget","params":{"sessionId":"S"}}"#;
        assert_eq!(calls.incoming(event), None);
        assert_eq!(calls.incoming(r#"{"id":4,"result":{}}"#), None);
        let ok: Value = serde_json::from_str(
            &calls
                .incoming(r#"{"id":5,"result":{"sessionId":"S"}}"#)
                .unwrap(),
        )
        .unwrap();
        assert_eq!(
            ok,
            json!({"id": 5, "result": {"targetId": "T", "sessionId": "S"}})
        );
        let failed: Value = serde_json::from_str(
            &calls
                .incoming(r#"{"id":6,"error":{"code":-32000,"message":"No target"}}"#)
                .unwrap(),
        )
        .unwrap();
        assert_eq!(failed, json!({"id": 6, "result": {"targetId": "U"}}));
        let isolated: Value = serde_json::from_str(
            &calls
                .incoming(r#"{"id":7,"result":{"sessionId":"S7"}}"#)
                .unwrap(),
        )
        .unwrap();
        assert_eq!(
            isolated,
            json!({"id": 7, "result": {"targetId": "V", "sessionId": "S7", "browserContextId": "C"}})
        );
        assert_eq!(
            calls.incoming(r#"{"id":5,"result":{"sessionId":"S"}}"#),
            None
        );
    }
}
