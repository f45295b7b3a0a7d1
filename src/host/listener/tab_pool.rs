//! Ready tabs: the host keeps a few `about:blank` tabs open so a fetch does not wait for
//! the browser to create one (issue 26: about 70 ms of every warm fetch, on the critical
//! path, was `Target.createTarget` and its new renderer).
//!
//! A driver's temporary `Target.createTarget` (the [`super::tab_lease`] marker, a blank
//! page, nothing else asked) is answered from the pool, and the tab is leased to that
//! client as if it had created it. A tab leaves the pool once and never comes back: it
//! serves one fetch and is closed, so nothing a fetch sets on it (headers, user agent,
//! emulation, blocked URLs, scripts, history) can reach the next one. The pool refills
//! off the critical path, once the client that took a tab has gone; full, the refill task sleeps
//! (an idle host runs no loop and its blank tabs run no script).
//!
//! Ready tabs are the host's, not the clients': `Target.getTargets` answers, `/json/list`
//! and the `--max-tabs` count leave them out.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::Notify;

use super::state::HostView;
use crate::sdk::cdp::CdpConnection;

/// How long one browser call of the refill may take.
const CALL_BOUND: Duration = Duration::from_secs(10);

/// How often the refill looks again while the browser is not up (starting, restarting).
const RETRY: Duration = Duration::from_millis(500);

/// Answers longer than this are not a `Target.getTargets` answer worth rewriting.
const MAX_LIST_LEN: usize = 4 * 1024 * 1024;

#[derive(Debug, Default)]
struct Inner {
    /// The browser (its DevTools socket URL) the ready tabs are in.
    browser: Option<String>,
    /// Ready tab ids, oldest first.
    ready: VecDeque<String>,
}

/// The host's ready tabs.
#[derive(Debug)]
pub struct TabPool {
    /// How many ready tabs are kept (`--tab-pool`; 0 turns the pool off).
    size: usize,
    inner: Mutex<Inner>,
    /// Woken after a take: the refill task tops the pool up.
    wake: Notify,
}

impl TabPool {
    /// A pool of `size` ready tabs (0: none).
    pub fn new(size: usize) -> TabPool {
        TabPool {
            size,
            inner: Mutex::default(),
            wake: Notify::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A ready tab of `browser`, now the caller's. `None` when the pool is empty or its
    /// tabs are of a browser that has since been replaced (they went with it).
    pub fn take(&self, browser: &str) -> Option<String> {
        if self.size == 0 {
            return None;
        }
        let mut inner = self.lock();
        if inner.browser.as_deref() != Some(browser) {
            inner.ready.clear();
        }
        inner.ready.pop_front()
    }

    /// Top the pool up now: a client went away. Not at the take itself: creating a tab
    /// starts a renderer, CPU the fetch that took one needs on a small machine.
    pub fn refill(&self) {
        if self.size > 0 {
            self.wake.notify_one();
        }
    }

    /// The ready tabs' ids (hidden from the clients' lists).
    pub fn ready(&self) -> HashSet<String> {
        self.lock().ready.iter().cloned().collect()
    }

    /// How many tabs are ready now.
    pub fn len(&self) -> usize {
        self.lock().ready.len()
    }

    /// Whether no tab is ready.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keep the pool full for as long as the listener serves.
    pub async fn run(self: Arc<Self>, view: Arc<dyn HostView>) {
        if self.size == 0 {
            return;
        }
        let mut conn: Option<(String, Arc<CdpConnection>)> = None;
        loop {
            let full = match view.upstream() {
                Some(up) => self.fill(&mut conn, &up.browser_ws_url).await,
                None => false,
            };
            if full {
                self.wake.notified().await;
            } else {
                tokio::time::sleep(RETRY).await;
            }
        }
    }

    /// Create tabs until the pool is full; false when the browser could not be reached.
    async fn fill(&self, conn: &mut Option<(String, Arc<CdpConnection>)>, browser: &str) -> bool {
        let stale = conn
            .as_ref()
            .is_none_or(|(url, c)| url != browser || c.is_closed());
        if stale {
            *conn = None;
            match CdpConnection::connect_devtools(browser, CALL_BOUND).await {
                Ok(c) => *conn = Some((browser.to_string(), c)),
                Err(_) => return false,
            }
        }
        let Some((_, c)) = conn.as_ref() else {
            return false;
        };
        {
            let mut inner = self.lock();
            if inner.browser.as_deref() != Some(browser) {
                inner.browser = Some(browser.to_string());
                inner.ready.clear();
            }
        }
        while self.len() < self.size {
            let Some(id) = create_blank(c).await else {
                return false;
            };
            let mut inner = self.lock();
            if inner.browser.as_deref() == Some(browser) {
                inner.ready.push_back(id);
            }
        }
        true
    }
}

/// A new blank tab in the background of the browser's one window. Not a window of its own:
/// a window costs 3-5 times a tab to create (117-184 ms against 24-37 on Chromium 156
/// headless, bare, load 4) and brings its own UI targets. Not in front either: it would hide
/// the tab of a fetch still running. The fetch that takes it brings it to the front before
/// it navigates (`Page.bringToFront`, in its pipelined setup).
///
/// The pool attaches to it too (and keeps the session until the tab closes): the tab's
/// DevTools agents are then up, and the fetch's own attach takes 2 ms instead of 3–16.
async fn create_blank(conn: &CdpConnection) -> Option<String> {
    let r = conn
        .call(
            None,
            "Target.createTarget",
            json!({"url": "about:blank", "background": true}),
            CALL_BOUND,
        )
        .await
        .ok()?;
    let id = r["targetId"].as_str().map(String::from)?;
    let attached = conn
        .call(
            None,
            "Target.attachToTarget",
            json!({"targetId": id, "flatten": true}),
            CALL_BOUND,
        )
        .await;
    if attached.is_err() {
        let _ = conn
            .call(
                None,
                "Target.closeTarget",
                json!({"targetId": id}),
                CALL_BOUND,
            )
            .await;
        return None;
    }
    Some(id)
}

/// Whether a client's frame is a temporary blank `Target.createTarget` the pool may answer:
/// its id when it is.
pub fn poolable_create(msg: &Value) -> Option<u64> {
    if msg.get("method").and_then(Value::as_str) != Some("Target.createTarget")
        || msg.get("sessionId").is_some()
    {
        return None;
    }
    let params = msg.get("params")?.as_object()?;
    let blank = params
        .get("url")
        .is_none_or(|u| u.as_str() == Some("about:blank"));
    let temporary = params.get(super::tab_lease::TEMPORARY_PARAM) == Some(&Value::Bool(true));
    let nothing_else = params
        .keys()
        .all(|k| k == "url" || k == super::tab_lease::TEMPORARY_PARAM);
    (blank && temporary && nothing_else)
        .then(|| msg.get("id").and_then(Value::as_u64))
        .flatten()
}

/// The answer to command `id` that the browser would have given for a created `target`.
pub fn created_answer(id: u64, target: &str) -> String {
    json!({"id": id, "result": {"targetId": target}}).to_string()
}

/// Leave the ready tabs out of a target list (`key`: `targetId` in `Target.getTargets`,
/// `id` in `/json/list`); true when one was left out.
pub fn without_ready(list: &mut Vec<Value>, ready: &HashSet<String>, key: &str) -> bool {
    let before = list.len();
    list.retain(|t| {
        t.get(key)
            .and_then(Value::as_str)
            .is_none_or(|id| !ready.contains(id))
    });
    list.len() != before
}

/// The `Target.getTargets` calls of one client still waiting for their answer, so the
/// ready tabs can be left out of it.
#[derive(Debug, Default)]
pub struct ListCalls(Mutex<HashSet<u64>>);

impl ListCalls {
    fn lock(&self) -> MutexGuard<'_, HashSet<u64>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A client → browser frame: remember a `Target.getTargets` call.
    pub fn outgoing(&self, text: &str) {
        if !text.contains("Target.getTargets") {
            return;
        }
        let Ok(msg) = serde_json::from_str::<Value>(text) else {
            return;
        };
        if msg.get("method").and_then(Value::as_str) == Some("Target.getTargets") {
            if let Some(id) = msg.get("id").and_then(Value::as_u64) {
                self.lock().insert(id);
            }
        }
    }

    /// A browser → client frame: the answer to a remembered call, without the ready tabs
    /// (`None`: pass the frame unchanged).
    pub fn incoming(&self, text: &str, pool: &TabPool) -> Option<String> {
        if text.len() > MAX_LIST_LEN || !text.contains("targetInfos") || self.lock().is_empty() {
            return None;
        }
        let mut msg: Value = serde_json::from_str(text).ok()?;
        let id = msg.get("id").and_then(Value::as_u64)?;
        if !self.lock().remove(&id) {
            return None;
        }
        let ready = pool.ready();
        if ready.is_empty() {
            return None;
        }
        let list = msg.pointer_mut("/result/targetInfos")?.as_array_mut()?;
        without_ready(list, &ready, "targetId").then(|| msg.to_string())
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
        assert_eq!(
            poolable_create(&create(
                json!({"url": "about:blank", "afhttpTemporary": true})
            )),
            Some(4)
        );
        assert_eq!(
            poolable_create(&create(json!({"afhttpTemporary": true}))),
            Some(4)
        );
        for params in [
            json!({"url": "about:blank"}),
            json!({"url": "https://example.com/", "afhttpTemporary": true}),
            json!({"url": "about:blank", "afhttpTemporary": true, "browserContextId": "C"}),
            json!({"url": "about:blank", "afhttpTemporary": true, "width": 800}),
        ] {
            assert_eq!(poolable_create(&create(params.clone())), None, "{params}");
        }
        let mut in_session = create(json!({"afhttpTemporary": true}));
        in_session["sessionId"] = json!("S");
        assert_eq!(poolable_create(&in_session), None);
    }

    #[test]
    fn a_tab_is_taken_once_and_a_replaced_browser_empties_the_pool() {
        let pool = TabPool::new(2);
        {
            let mut inner = pool.lock();
            inner.browser = Some("ws://a".into());
            inner.ready.extend(["T1".to_string(), "T2".to_string()]);
        }
        assert_eq!(pool.take("ws://a").as_deref(), Some("T1"));
        assert_eq!(pool.ready(), HashSet::from(["T2".to_string()]));
        assert_eq!(pool.take("ws://b"), None);
        assert!(pool.is_empty());
    }

    #[test]
    fn a_list_answer_leaves_the_ready_tabs_out() {
        let pool = TabPool::new(1);
        {
            let mut inner = pool.lock();
            inner.browser = Some("ws://a".into());
            inner.ready.push_back("READY".into());
        }
        let calls = ListCalls::default();
        calls.outgoing(r#"{"id":9,"method":"Target.getTargets","params":{}}"#);
        let answer = json!({"id": 9, "result": {"targetInfos": [
            {"targetId": "READY", "type": "page"},
            {"targetId": "MINE", "type": "page"},
        ]}})
        .to_string();
        let rewritten: Value =
            serde_json::from_str(&calls.incoming(&answer, &pool).unwrap()).unwrap();
        assert_eq!(
            rewritten["result"]["targetInfos"].as_array().unwrap().len(),
            1
        );
        assert_eq!(rewritten["result"]["targetInfos"][0]["targetId"], "MINE");
        // An answer to a call it did not see passes unchanged.
        assert_eq!(calls.incoming(&answer, &pool), None);
    }
}
