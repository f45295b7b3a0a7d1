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
//! Ready isolated tabs: a fetch in an isolated context (a fleet's ephemeral fetch) asks for
//! one with [`super::tab_lease::READY_ISOLATED`]. Each is a blank tab in a browser context
//! of its own, made ahead like a ready tab (a fresh context and its first tab cost 150-250
//! ms of the fetch, measured in `docs/design.md`), handed out once with its context, which
//! the client disposes of (or the host, when the client goes without). A host makes them
//! only once a client has asked for one (a host that never serves an isolated fetch keeps
//! no renderer for them), at most [`MAX_ISOLATED`]. A context the fetch sets up itself
//! (a proxy or TLS of its own) is not pooled: its parameters are the fetch's.
//!
//! Ready tabs are the host's, not the clients': `Target.getTargets` answers, `/json/list`,
//! `/health` `tabs_active` and the `--max-tabs` count leave them out, and a tab being made
//! ready too (the browser lists it as soon as it exists, before the pool knows its id: a
//! reader waits for that creation to end, see [`TabPool::hidden`]). A taken tab is the
//! client's from then on and counts like any tab the client created. A tab whose
//! `Target.closeTarget` went through the host counts as closed at once (the browser lists it
//! a little longer), pool or not: so the count means the tabs the clients hold.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::sync::Notify;

use super::state::HostView;
use crate::sdk::cdp::CdpConnection;

/// How long one browser call of the refill may take.
const CALL_BOUND: Duration = Duration::from_secs(10);

/// How often the refill looks again while the browser is not up (starting, restarting).
const RETRY: Duration = Duration::from_millis(500);

/// How long a reader of the host's tabs waits for a tab creation of the refill to end.
const CREATION_WAIT: Duration = Duration::from_secs(2);

/// How long a tab whose close went through the host is counted as closed while the browser
/// still lists it (`Target.closeTarget` answers before the tab is gone, 60-150 ms on a busy
/// machine; a page whose `beforeunload` keeps it open counts again after this).
const CLOSING_HIDDEN: Duration = Duration::from_secs(5);

/// Most closing tabs remembered (older ones count again).
const MAX_CLOSING: usize = 1024;

/// Most ready isolated tabs kept (each is a renderer in a context of its own).
const MAX_ISOLATED: usize = 2;

#[derive(Debug, Default)]
struct Inner {
    /// The browser (its DevTools socket URL) the ready tabs are in.
    browser: Option<String>,
    /// Ready tab ids, oldest first.
    ready: VecDeque<String>,
    /// Tabs the refill created and is still attaching to (not yet ready, not a client's).
    preparing: HashSet<String>,
    /// Ready isolated tabs, oldest first: (tab, its own browser context).
    isolated: VecDeque<(String, String)>,
    /// Contexts the refill created whose tab is not ready yet.
    preparing_contexts: HashSet<String>,
    /// Whether a client has asked for a ready isolated tab (the refill makes them from then on).
    isolated_wanted: bool,
    /// Tabs whose close went through the host, and when.
    closing: HashMap<String, Instant>,
}

/// The host's ready tabs.
#[derive(Debug)]
pub struct TabPool {
    /// How many ready tabs are kept (`--tab-pool`; 0 turns the pool off).
    size: usize,
    /// How many ready isolated tabs are kept, once one was asked for (0: none).
    isolated_size: usize,
    inner: Mutex<Inner>,
    /// Woken after a take: the refill task tops the pool up.
    wake: Notify,
    /// Held while a `Target.createTarget` of the refill is out: the browser may list the
    /// new tab before the pool has its id.
    creating: tokio::sync::Mutex<()>,
}

impl TabPool {
    /// A pool of `size` ready tabs (0: none).
    pub fn new(size: usize) -> TabPool {
        TabPool {
            size,
            isolated_size: size.min(MAX_ISOLATED),
            inner: Mutex::default(),
            wake: Notify::new(),
            creating: tokio::sync::Mutex::new(()),
        }
    }

    /// The pool without ready isolated tabs when `isolated` is false (a headful browser,
    /// where each new context opens a window of its own).
    pub fn with_isolated(mut self, isolated: bool) -> TabPool {
        if !isolated {
            self.isolated_size = 0;
        }
        self
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

    /// Whether a ready isolated tab is there; asking is what makes the refill keep them.
    pub fn isolated_ready(&self) -> bool {
        if self.isolated_size == 0 {
            return false;
        }
        let mut inner = self.lock();
        inner.isolated_wanted = true;
        !inner.isolated.is_empty()
    }

    /// A ready isolated tab of `browser` and its context, now the caller's. `None` when there
    /// is none.
    pub fn take_isolated(&self, browser: &str) -> Option<(String, String)> {
        if self.isolated_size == 0 {
            return None;
        }
        let mut inner = self.lock();
        if inner.browser.as_deref() != Some(browser) {
            inner.isolated.clear();
        }
        inner.isolated.pop_front()
    }

    /// The contexts of the ready isolated tabs (and those being made), left out of the
    /// clients' `Target.getBrowserContexts`; waits for a creation under way as
    /// [`TabPool::hidden`] does.
    pub async fn hidden_contexts(&self) -> HashSet<String> {
        if self.size > 0 {
            let _created = tokio::time::timeout(CREATION_WAIT, self.creating.lock()).await;
        }
        let inner = self.lock();
        inner
            .isolated
            .iter()
            .map(|(_, c)| c)
            .chain(&inner.preparing_contexts)
            .cloned()
            .collect()
    }

    /// How many ready isolated tabs there are now.
    pub fn isolated_len(&self) -> usize {
        self.lock().isolated.len()
    }

    /// Top the pool up now: a client went away. Not at the take itself: creating a tab
    /// starts a renderer, CPU the fetch that took one needs on a small machine.
    pub fn refill(&self) {
        if self.size > 0 {
            self.wake.notify_one();
        }
    }

    /// The host's own tabs (ready or being made ready), left out of the clients' lists and
    /// counts. Call it after reading the browser's list: it first waits (at most
    /// [`CREATION_WAIT`]) for a tab creation under way, whose tab that list may hold.
    pub async fn hidden(&self) -> HashSet<String> {
        if self.size > 0 {
            let _created = tokio::time::timeout(CREATION_WAIT, self.creating.lock()).await;
            return self.hidden_now();
        }
        self.hidden_now()
    }

    fn hidden_now(&self) -> HashSet<String> {
        let inner = self.lock();
        let closing = inner
            .closing
            .iter()
            .filter(|(_, at)| at.elapsed() < CLOSING_HIDDEN)
            .map(|(id, _)| id);
        inner
            .ready
            .iter()
            .chain(&inner.preparing)
            .chain(inner.isolated.iter().map(|(t, _)| t))
            .chain(closing)
            .cloned()
            .collect()
    }

    /// A client (or the host, for a client gone) asked the browser to close `target`: it
    /// counts as closed from now on, though the browser lists it a little longer.
    pub fn closing(&self, target: &str) {
        let mut inner = self.lock();
        inner.closing.retain(|_, at| at.elapsed() < CLOSING_HIDDEN);
        if inner.closing.len() >= MAX_CLOSING {
            let oldest = inner
                .closing
                .iter()
                .min_by_key(|(_, at)| **at)
                .map(|(id, _)| id.clone());
            if let Some(id) = oldest {
                inner.closing.remove(&id);
            }
        }
        inner.closing.insert(target.to_string(), Instant::now());
    }

    /// The browser's page list now holds only `listed`: a closing tab not in it is gone.
    pub fn listed(&self, listed: &HashSet<&str>) {
        self.lock()
            .closing
            .retain(|id, at| listed.contains(id.as_str()) && at.elapsed() < CLOSING_HIDDEN);
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
            // Their contexts went with the connection that made them (`disposeOnDetach`).
            self.lock().isolated.clear();
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
                inner.isolated.clear();
            }
        }
        while self.len() < self.size {
            let id = {
                let _creating = self.creating.lock().await;
                let Some(id) = create_blank(c).await else {
                    return false;
                };
                self.lock().preparing.insert(id.clone());
                id
            };
            let attached = attach(c, &id).await;
            let mut inner = self.lock();
            inner.preparing.remove(&id);
            if !attached {
                return false;
            }
            if inner.browser.as_deref() == Some(browser) {
                inner.ready.push_back(id);
            }
        }
        self.fill_isolated(c, browser).await
    }

    /// Make ready isolated tabs until there are enough (none until one was asked for).
    async fn fill_isolated(&self, c: &CdpConnection, browser: &str) -> bool {
        let want = self.isolated_size;
        loop {
            {
                let inner = self.lock();
                if !inner.isolated_wanted || inner.isolated.len() >= want {
                    return true;
                }
            }
            let (id, context) = {
                let _creating = self.creating.lock().await;
                let Some(context) = create_context(c).await else {
                    return false;
                };
                self.lock().preparing_contexts.insert(context.clone());
                let Some(id) = create_in(c, &context).await else {
                    self.lock().preparing_contexts.remove(&context);
                    dispose(c, &context).await;
                    return false;
                };
                self.lock().preparing.insert(id.clone());
                (id, context)
            };
            let attached = attach(c, &id).await;
            let kept = {
                let mut inner = self.lock();
                inner.preparing.remove(&id);
                inner.preparing_contexts.remove(&context);
                let kept = attached && inner.browser.as_deref() == Some(browser);
                if kept {
                    inner.isolated.push_back((id, context.clone()));
                }
                kept
            };
            if !kept {
                dispose(c, &context).await;
                return attached;
            }
        }
    }
}

/// A fresh browser context, disposed of by the browser if the pool's connection goes (and
/// by the client that takes its tab, or the host when that client goes without).
async fn create_context(conn: &CdpConnection) -> Option<String> {
    let r = conn
        .call(
            None,
            "Target.createBrowserContext",
            json!({"disposeOnDetach": true}),
            CALL_BOUND,
        )
        .await
        .ok()?;
    r["browserContextId"].as_str().map(String::from)
}

/// A blank tab in `context`, created as a fetch creates its isolated tab.
async fn create_in(conn: &CdpConnection, context: &str) -> Option<String> {
    create_target(
        conn,
        json!({"url": "about:blank", "browserContextId": context}),
    )
    .await
}

async fn dispose(conn: &CdpConnection, context: &str) {
    let _ = conn
        .call(
            None,
            "Target.disposeBrowserContext",
            json!({"browserContextId": context}),
            CALL_BOUND,
        )
        .await;
}

/// A new blank tab in the background of the browser's one window. Not a window of its own:
/// a window costs 3-5 times a tab to create (117-184 ms against 24-37 on Chromium 156
/// headless, bare, load 4) and brings its own UI targets. Not in front either: it would hide
/// the tab of a fetch still running. The fetch that takes it brings it to the front before
/// it navigates (`Page.bringToFront`, in its pipelined setup).
async fn create_blank(conn: &CdpConnection) -> Option<String> {
    create_target(conn, json!({"url": "about:blank", "background": true})).await
}

/// `Target.createTarget` with `params`: the new tab's id.
async fn create_target(conn: &CdpConnection, params: Value) -> Option<String> {
    let r = conn
        .call(None, "Target.createTarget", params, CALL_BOUND)
        .await
        .ok()?;
    r["targetId"].as_str().map(String::from)
}

/// Attach the pool to its new tab `id` (and keep the session until the tab closes): the
/// tab's DevTools agents are then up, and the fetch's own attach takes 2 ms instead of
/// 3–16. A tab that cannot be attached to is closed; false then.
async fn attach(conn: &CdpConnection, id: &str) -> bool {
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
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::super::pool_frames::{closed_target, ListCalls};
    use super::*;
    use serde_json::Value;

    #[test]
    fn a_tab_is_taken_once_and_a_replaced_browser_empties_the_pool() {
        let pool = TabPool::new(2);
        {
            let mut inner = pool.lock();
            inner.browser = Some("ws://a".into());
            inner.ready.extend(["T1".to_string(), "T2".to_string()]);
        }
        assert_eq!(pool.take("ws://a").as_deref(), Some("T1"));
        assert_eq!(pool.hidden_now(), HashSet::from(["T2".to_string()]));
        assert_eq!(pool.take("ws://b"), None);
        assert!(pool.is_empty());
    }

    #[tokio::test]
    async fn an_isolated_tab_is_taken_once_with_its_context_and_hidden_until_then() {
        let pool = TabPool::new(2);
        assert!(!pool.isolated_ready());
        {
            let mut inner = pool.lock();
            assert!(inner.isolated_wanted);
            inner.browser = Some("ws://a".into());
            inner.isolated.push_back(("T1".into(), "C1".into()));
            inner.isolated.push_back(("T2".into(), "C2".into()));
        }
        assert_eq!(pool.hidden_now(), HashSet::from(["T1".into(), "T2".into()]));
        assert_eq!(
            pool.take_isolated("ws://a"),
            Some(("T1".to_string(), "C1".to_string()))
        );
        assert_eq!(
            pool.hidden_contexts().await,
            HashSet::from(["C2".to_string()])
        );
        assert_eq!(pool.take_isolated("ws://b"), None);
        assert_eq!(pool.isolated_len(), 0);
        let off = TabPool::new(0);
        assert!(!off.isolated_ready());
        assert!(!off.lock().isolated_wanted);
        // A headful browser's pool keeps its ready tabs but no isolated ones.
        let headful = TabPool::new(2).with_isolated(false);
        assert!(!headful.isolated_ready());
        assert!(!headful.lock().isolated_wanted);
        assert_eq!(headful.size, 2);
    }

    #[tokio::test]
    async fn a_closing_tab_counts_as_closed_until_the_browser_drops_it() {
        let pool = TabPool::new(0);
        let close = r#"{"id":3,"method":"Target.closeTarget","params":{"targetId":"T"}}"#;
        pool.closing(&closed_target(close).unwrap());
        assert_eq!(pool.hidden().await, HashSet::from(["T".to_string()]));
        pool.listed(&HashSet::from(["T", "OTHER"]));
        assert_eq!(pool.hidden().await, HashSet::from(["T".to_string()]));
        pool.listed(&HashSet::from(["OTHER"]));
        assert!(pool.hidden().await.is_empty());
        let in_session =
            r#"{"id":4,"sessionId":"S","method":"Target.closeTarget","params":{"targetId":"T"}}"#;
        assert_eq!(closed_target(in_session), None);
        assert_eq!(
            closed_target(r#"{"id":5,"method":"Target.getTargets"}"#),
            None
        );
    }

    #[tokio::test]
    async fn a_reader_waits_for_a_tab_creation_under_way() {
        let pool = Arc::new(TabPool::new(1));
        let creating = pool.creating.lock().await;
        let reader = tokio::spawn({
            let pool = Arc::clone(&pool);
            async move { pool.hidden().await }
        });
        tokio::task::yield_now().await;
        // The browser answered the creation: the tab is the host's before the reader looks.
        pool.lock().preparing.insert("NEW".into());
        drop(creating);
        assert_eq!(reader.await.unwrap(), HashSet::from(["NEW".to_string()]));
    }

    #[tokio::test]
    async fn a_list_answer_leaves_the_host_tabs_out() {
        let pool = TabPool::new(2);
        {
            let mut inner = pool.lock();
            inner.browser = Some("ws://a".into());
            inner.ready.push_back("READY".into());
            inner.preparing.insert("PREPARING".into());
        }
        let calls = ListCalls::default();
        calls.outgoing(r#"{"id":9,"method":"Target.getTargets","params":{}}"#);
        let answer = json!({"id": 9, "result": {"targetInfos": [
            {"targetId": "READY", "type": "page"},
            {"targetId": "PREPARING", "type": "page"},
            {"targetId": "MINE", "type": "page"},
        ]}})
        .to_string();
        let rewritten: Value =
            serde_json::from_str(&calls.incoming(&answer, &pool).await.unwrap()).unwrap();
        assert_eq!(
            rewritten["result"]["targetInfos"].as_array().unwrap().len(),
            1
        );
        assert_eq!(rewritten["result"]["targetInfos"][0]["targetId"], "MINE");
        // Nor does a context list show a ready isolated tab's context.
        pool.lock().isolated.push_back(("ISO".into(), "CTX".into()));
        calls.outgoing(r#"{"id":10,"method":"Target.getBrowserContexts"}"#);
        let contexts = json!({"id": 10, "result": {"browserContextIds": ["CTX", "OWN"]}});
        let rewritten: Value =
            serde_json::from_str(&calls.incoming(&contexts.to_string(), &pool).await.unwrap())
                .unwrap();
        assert_eq!(rewritten["result"]["browserContextIds"], json!(["OWN"]));
        // An answer to a call it did not see passes unchanged.
        assert_eq!(calls.incoming(&answer, &pool).await, None);
    }
}
