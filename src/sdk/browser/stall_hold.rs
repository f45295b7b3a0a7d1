//! Cutting a stalled third-party script or stylesheet in place, without a reload.
//!
//! CDP can fail a request only while it is paused (`Fetch.failRequest`), and a request that
//! has gone out is the only kind that can stall. So the navigation pauses every script and
//! stylesheet at the request stage ([`patterns`]), and [`hold`] decides on each:
//!
//! - the page's own site, or a host that already answered this page: continued at once;
//! - a host cut earlier in this fetch: failed at once (`BlockedByClient`);
//! - another site's host not heard from yet: held paused while the browser probes the host
//!   with the same URL through its own network stack (`Network.loadNetworkResource`: the
//!   same proxy, DNS, TLS and connection pool). Any answer, even an error status or a
//!   refused connection, releases every held request of the host; no answer within the
//!   stall window fails them, still paused, so the parser moves on at once, and blocks the
//!   host (`Network.setBlockedURLs`) for the page's later requests.
//!
//! Once a first host is held, the hosts the main document's markup names for scripts and
//! stylesheets are probed as soon as the document has arrived ([`super::stall_early`]), each held as above before its
//! first request pauses, so a chain of stalled hosts the parser would meet one after
//! another is decided within one window. Hosts the host's recent fetches heard from
//! (`req.browser.remembered_answers`) are continued at once, with no probe.
//!
//! Cuts are recorded like the reload's ([`super::stall`]): `third_party_cut` entries in
//! `network.json`, a round with `in_place: true` in `trace.readiness.cuts`, the host in
//! the warning and in the host's memory of stalled hosts. A request that stalls after it
//! was let go (a host that answered the probe) is still cut by the reload. Off with
//! `--stall-cutoff-ms 0`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use futures_util::stream::{FuturesUnordered, StreamExt};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::network::pending::{host_of, is_first_party};
use super::session::{lock, Shared};
use super::stall_early;
use crate::sdk::cdp::CdpConnection;
use crate::sdk::fetch::FetchRequest;

/// Resource types held at the request stage: the ones the parser or the first paint waits on.
const HELD_TYPES: [&str; 2] = ["Script", "Stylesheet"];

/// How long a probe may go on after its window (its answer then only matters for a host no
/// longer held).
const PROBE_SLACK: Duration = Duration::from_secs(5);

/// The `Fetch.enable` patterns that pause scripts and stylesheets for [`hold`] (none when
/// cutting is off).
pub fn patterns(req: &FetchRequest) -> Vec<Value> {
    if req.browser.stall_cutoff_ms == 0 {
        return Vec::new();
    }
    HELD_TYPES
        .iter()
        .map(|t| json!({"urlPattern": "*", "resourceType": t, "requestStage": "Request"}))
        .collect()
}

/// Whether a `Fetch.requestPaused` event is one [`hold`] decides on (a script or
/// stylesheet at the request stage).
pub fn is_held_kind(ev: &Value) -> bool {
    let response_stage =
        ev.get("responseStatusCode").is_some() || ev.get("responseErrorReason").is_some();
    !response_stage
        && ev["resourceType"]
            .as_str()
            .is_some_and(|t| HELD_TYPES.contains(&t))
}

/// One paused request.
struct Paused {
    /// `Fetch` request id.
    fetch_id: String,
    /// `Network` request id (the log's).
    network_id: String,
    resource_type: String,
}

/// The requests of one host held while its probe runs.
struct Held {
    requests: Vec<Paused>,
    since: Instant,
    window: Duration,
    /// Probed because the document names the host, before any request of it paused.
    named: bool,
}

type Probe<'a> = Pin<Box<dyn Future<Output = String> + Send + 'a>>;
type Naming<'a> = Pin<Box<dyn Future<Output = Option<stall_early::Named>> + Send + 'a>>;
type Sent<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// How long one command to the browser may take.
const SEND_TIMEOUT: Duration = Duration::from_secs(5);

/// What [`hold`] knows of the page's hosts.
struct Holder<'a> {
    conn: &'a CdpConnection,
    session: &'a str,
    state: &'a Shared,
    page_site: Option<String>,
    window: Duration,
    nav_start: &'a std::sync::OnceLock<Instant>,
    held: HashMap<String, Held>,
    answered: BTreeSet<String>,
    cut: BTreeSet<String>,
    /// Probes under way, each giving its host.
    probes: FuturesUnordered<Probe<'a>>,
    /// Commands sent and not answered yet: the loop never waits on one, so a page with a
    /// hundred scripts is not decided one round trip at a time.
    sends: FuturesUnordered<Sent<'a>>,
    /// Reading the document for the hosts it names (once, from the first host held).
    naming: FuturesUnordered<Naming<'a>>,
    named_once: bool,
    /// The host's recent fetches show third parties stalling ([`super::stall::stalling_network`]).
    stalling_network: bool,
}

/// Decide on every paused script and stylesheet of the tab, for the whole fetch (never
/// returns; the fetch ends it). `nav_start` is set when the navigation starts (for the
/// trace).
pub async fn hold<'a>(
    conn: &'a CdpConnection,
    session: &'a str,
    state: &'a Shared,
    req: &FetchRequest,
    nav_start: &'a std::sync::OnceLock<Instant>,
    paused: &mut mpsc::UnboundedReceiver<Value>,
) {
    if req.browser.stall_cutoff_ms == 0 {
        return std::future::pending().await;
    }
    let mut h = Holder {
        conn,
        session,
        state,
        page_site: crate::sdk::fetch::takeover::site_of(&req.url),
        window: Duration::from_millis(req.browser.stall_cutoff_ms.max(1)),
        nav_start,
        held: HashMap::new(),
        answered: req.browser.remembered_answers.iter().cloned().collect(),
        cut: BTreeSet::new(),
        probes: FuturesUnordered::new(),
        sends: FuturesUnordered::new(),
        naming: FuturesUnordered::new(),
        named_once: false,
        stalling_network: super::stall::stalling_network(&req.browser),
    };
    loop {
        let due = h.held.values().map(|x| x.since + x.window).min();
        tokio::select! {
            ev = paused.recv() => match ev {
                Some(ev) => h.on_paused(&ev),
                None => std::future::pending::<()>().await,
            },
            Some(host) = h.probes.next(), if !h.probes.is_empty() => h.release(&host),
            Some(()) = h.sends.next(), if !h.sends.is_empty() => {}
            Some(named) = h.naming.next(), if !h.naming.is_empty() => {
                h.probe_named(named.unwrap_or_default());
            }
            () = sleep_until(due), if due.is_some() => h.cut_due(),
        }
    }
}

async fn sleep_until(at: Option<Instant>) {
    if let Some(at) = at {
        tokio::time::sleep_until(at.into()).await;
    }
}

impl<'a> Holder<'a> {
    /// Decide on one paused request (a new host's probe joins the ones under way).
    fn on_paused(&mut self, ev: &Value) {
        let url = ev["request"]["url"].as_str().unwrap_or("");
        let host = host_of(url);
        let paused = Paused {
            fetch_id: ev["requestId"].as_str().unwrap_or("").to_string(),
            network_id: ev["networkId"].as_str().unwrap_or("").to_string(),
            resource_type: ev["resourceType"].as_str().unwrap_or("").to_string(),
        };
        let (site, answered, blocked) = {
            let st = lock(self.state);
            let site = st.network.document_site().or(self.page_site.clone());
            let blocked = st.network.blocked().contains(&host);
            (site, st.network.host_answered(&host), blocked)
        };
        if is_first_party(url, site.as_deref()) || answered || self.answered.contains(&host) {
            return self.go_on(&paused);
        }
        if self.cut.contains(&host) || blocked {
            return self.fail(&host, vec![paused], None);
        }
        lock(self.state).network.hold(&paused.network_id, &host);
        if let Some(held) = self.held.get_mut(&host) {
            held.requests.push(paused);
            return;
        }
        self.held.insert(
            host.clone(),
            Held {
                requests: vec![paused],
                since: Instant::now(),
                window: self.window_now(),
                named: false,
            },
        );
        let probe = self.probe(host, url.to_string(), ev["frameId"].clone());
        self.probes.push(probe);
        self.name_hosts();
    }

    /// Start reading the document for the hosts it names, once, when a first host is held:
    /// a page whose third parties are all known (answered or cut) never pays for it.
    fn name_hosts(&mut self) {
        if !std::mem::replace(&mut self.named_once, true) {
            let (conn, session, state) = (self.conn, self.session, self.state);
            let naming = stall_early::named_hosts(conn, session, state);
            self.naming.push(Box::pin(naming));
        }
    }

    /// Probe at once every host the document names that is not decided or probed yet: its
    /// window counts from now, not from when the parser reaches it.
    fn probe_named(&mut self, named: stall_early::Named) {
        let frame = Value::String(named.frame_id);
        for (host, url) in named.hosts {
            let known = {
                let st = lock(self.state);
                st.network.host_answered(&host) || st.network.blocked().contains(&host)
            };
            if known
                || self.answered.contains(&host)
                || self.cut.contains(&host)
                || self.held.contains_key(&host)
            {
                continue;
            }
            lock(self.state).network.hold_host(&host);
            let held = Held {
                requests: Vec::new(),
                since: Instant::now(),
                window: self.window_now(),
                named: true,
            };
            self.held.insert(host.clone(), held);
            let probe = self.probe(host, url, frame.clone());
            self.probes.push(probe);
        }
    }

    /// The window for a host held now: halved once a host was cut in this fetch, or from
    /// the start when the host's recent fetches saw third parties stall (third parties stall
    /// on this network, and a chain of them costs a window each).
    fn window_now(&self) -> Duration {
        match self.cut.is_empty() && !self.stalling_network {
            true => self.window,
            false => self.window / 2,
        }
    }

    /// Ask the browser for `url` itself: any answer means the host answers.
    fn probe(&self, host: String, url: String, frame: Value) -> Probe<'a> {
        let (conn, session) = (self.conn, self.session);
        let t = self.window + PROBE_SLACK;
        Box::pin(async move {
            let params = json!({
                "frameId": frame,
                "url": url,
                "options": {"disableCache": false, "includeCredentials": true},
            });
            let r = conn
                .send(Some(session), "Network.loadNetworkResource", params, t)
                .await;
            if let Some(stream) = r
                .as_ref()
                .ok()
                .and_then(|r| r["resource"]["stream"].as_str())
            {
                let close = json!({"handle": stream});
                let _ = conn.send(Some(session), "IO.close", close, t).await;
            }
            host
        })
    }

    /// The probe of `host` answered (or could not be made): let its held requests go.
    fn release(&mut self, host: &str) {
        let Some(held) = self.held.remove(host) else {
            return;
        };
        self.answered.insert(host.to_string());
        lock(self.state).network.release_host(host);
        for p in &held.requests {
            self.go_on(p);
        }
    }

    fn go_on(&mut self, p: &Paused) {
        lock(self.state).network.release(&p.network_id);
        let params = json!({"requestId": p.fetch_id});
        self.send("Fetch.continueRequest", params);
    }

    /// Cut every host whose window has passed.
    fn cut_due(&mut self) {
        let now = Instant::now();
        let due: Vec<String> = self
            .held
            .iter()
            .filter(|(_, h)| h.since + h.window <= now)
            .map(|(host, _)| host.clone())
            .collect();
        for host in due {
            if let Some(held) = self.held.remove(&host) {
                self.fail(&host, held.requests, Some((held.window, held.named)));
            }
        }
    }

    /// Fail `requests` of `host` as cut; `new_cut` (its window, and whether the document
    /// named it) when the host is cut now (a round in the trace, the host blocked for the
    /// page's later requests).
    fn fail(&mut self, host: &str, requests: Vec<Paused>, new_cut: Option<(Duration, bool)>) {
        // Recorded first: the browser reports the failure before it answers the command.
        let ids: BTreeSet<String> = requests.iter().map(|p| p.network_id.clone()).collect();
        let round = new_cut.map(|(w, named)| self.round(host, &requests, w, named));
        let blocked = {
            let mut st = lock(self.state);
            st.network.cut_in_place(host, &ids, round);
            st.network.blocked().clone()
        };
        for p in &requests {
            let params = json!({"requestId": p.fetch_id, "errorReason": "BlockedByClient"});
            self.send("Fetch.failRequest", params);
        }
        let changed = std::sync::Arc::clone(&lock(self.state).changed);
        changed.notify_one();
        if new_cut.is_some() {
            self.cut.insert(host.to_string());
            let patterns: Vec<Value> = blocked
                .iter()
                .map(|h| json!({"urlPattern": format!("*://{h}/*"), "block": true}))
                .collect();
            self.send("Network.setBlockedURLs", json!({ "urlPatterns": patterns }));
        }
    }

    /// The trace's round for a cut in place (`named`: the document named the host and its
    /// probe started at the document's arrival; a host cut before any request of it paused
    /// has no types).
    fn round(&self, host: &str, requests: &[Paused], window: Duration, named: bool) -> Value {
        let mut types: BTreeMap<&str, usize> = BTreeMap::new();
        for p in requests {
            *types.entry(p.resource_type.as_str()).or_default() += 1;
        }
        json!({
            "at_ms": crate::sdk::fetch::outcome::round1(
                self.nav_start.get().map_or(0.0, |t| t.elapsed().as_secs_f64() * 1000.0)),
            "hosts": [{"host": host, "types": types, "blocking": true}],
            "reloaded": false,
            "in_place": true,
            "window_ms": window.as_millis() as u64,
            "named_by_document": named,
        })
    }

    /// Send a command without waiting for its answer here (a request the page dropped
    /// meanwhile needs nothing, so an error changes nothing).
    fn send(&mut self, method: &'static str, params: Value) {
        let (conn, session) = (self.conn, self.session);
        self.sends.push(Box::pin(async move {
            let _ = conn.send(Some(session), method, params, SEND_TIMEOUT).await;
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_scripts_and_stylesheets_at_the_request_stage_are_held() {
        let ev =
            |t: &str| json!({"requestId": "1", "resourceType": t, "request": {"url": "http://a/"}});
        assert!(is_held_kind(&ev("Script")));
        assert!(is_held_kind(&ev("Stylesheet")));
        assert!(!is_held_kind(&ev("Document")));
        assert!(!is_held_kind(&ev("Image")));
        let mut response = ev("Script");
        response["responseStatusCode"] = json!(200);
        assert!(!is_held_kind(&response));
        let mut failed = ev("Stylesheet");
        failed["responseErrorReason"] = json!("Failed");
        assert!(!is_held_kind(&failed));
    }
}
