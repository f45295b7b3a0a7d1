//! Cutting stalled third parties (`--stall-cutoff-ms`).
//!
//! A request to another site than the page's (registrable domain) that has had no response
//! for the stall window is cut when it holds the page: a parser-blocking script or a
//! render-blocking stylesheet (any stalled third-party request under `--wait load` or
//! `idle`, which wait for it). CDP cannot fail a request once it has gone out, so the cut
//! blocks the stalled hosts (`Network.setBlockedURLs`, what a content blocker does) and
//! reloads the page: the browser sees blocked requests and parses on. GET navigations only;
//! at most [`MAX_ROUNDS`] cuts. A stalled iframe alone is navigated to `about:blank` instead
//! (blocked URLs do not apply to frame navigations). First-party requests are never cut. See
//! `docs/design.md` ("Stalled third parties") for the mechanisms weighed and the numbers.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::network::pending::is_first_party;
use super::network::stalled::Stalled;
use super::session::{lock, Shared};
use crate::error::{AfError, ErrorCode, Warning};
use crate::sdk::cdp::CdpConnection;
use crate::sdk::fetch::FetchRequest;
use crate::sdk::request::Wait;

/// Reloads one fetch may make for stalled hosts.
pub const MAX_ROUNDS: usize = 3;

/// Third-party hosts a host's recent fetches must have seen stall (and more of them than
/// answered) before a fetch on it starts with the halved window ([`stalling_network`]).
pub const STALLING_NETWORK_MIN_HOSTS: usize = 3;

/// Whether the host's recent fetches show a network where third parties stall: at least
/// [`STALLING_NETWORK_MIN_HOSTS`] hosts stalled, and more of them than answered a probe.
/// The fetch's window is then halved from its first hold, as it is within one fetch after
/// its first cut: a new third-party host on this network will most likely stall too, and
/// each one the parser meets costs a window. A network where third parties answer never
/// gets there (every host a fetch probes and hears from counts as answered).
pub fn stalling_network(browser: &crate::sdk::fetch::BrowserOptions) -> bool {
    let stalled = browser.remembered_stalls.len();
    stalled >= STALLING_NETWORK_MIN_HOSTS && stalled > browser.remembered_answers.len()
}

/// Block, before the navigation, the hosts that stalled in the host's recent fetches
/// (`req.browser.remembered_stalls`) that are another site than the page's: the page sees
/// their requests blocked from the start, with no window and no reload. Returns the hosts
/// blocked, with the age of their report (none when cutting is off).
pub async fn block_remembered(
    conn: &CdpConnection,
    session: &str,
    state: &Shared,
    req: &FetchRequest,
    t: Duration,
) -> Result<Vec<(String, u64)>, AfError> {
    if req.browser.stall_cutoff_ms == 0 {
        return Ok(Vec::new());
    }
    let site = crate::sdk::fetch::takeover::site_of(&req.url);
    let hosts: Vec<(String, u64)> = req
        .browser
        .remembered_stalls
        .iter()
        .filter(|(h, _)| !is_first_party(&format!("http://{h}/"), site.as_deref()))
        .cloned()
        .collect();
    if hosts.is_empty() {
        return Ok(hosts);
    }
    let names: BTreeSet<String> = hosts.iter().map(|(h, _)| h.clone()).collect();
    conn.send(
        Some(session),
        "Network.setBlockedURLs",
        json!({ "urlPatterns": patterns(&names) }),
        t,
    )
    .await?;
    lock(state).network.block_hosts(&names);
    Ok(hosts)
}

fn patterns(hosts: &BTreeSet<String>) -> Vec<Value> {
    hosts
        .iter()
        .map(|h| json!({"urlPattern": format!("*://{h}/*"), "block": true}))
        .collect()
}

/// The hosts a fetch cut for stalling, from its `trace.readiness.cuts` (what a host
/// remembers for its next fetches).
pub fn cut_hosts(trace: &crate::sdk::fetch::outcome::Trace) -> BTreeSet<String> {
    let rounds = trace
        .get("readiness")
        .and_then(|r| r.pointer("/cuts/rounds"))
        .and_then(Value::as_array);
    rounds
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("hosts").and_then(Value::as_array))
        .flatten()
        .filter_map(|h| h.get("host").and_then(Value::as_str))
        .map(String::from)
        .collect()
}

/// The other-site hosts that answered a probe of the cut in place in this fetch, from its
/// `trace.readiness.cuts.answered` (what a host remembers so as not to probe them again).
pub fn answered_hosts(trace: &crate::sdk::fetch::outcome::Trace) -> Vec<String> {
    trace
        .get("readiness")
        .and_then(|r| r.pointer("/cuts/answered"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(String::from)
        .collect()
}

/// The cutting state of one browser fetch.
#[derive(Debug)]
pub struct Cutter {
    /// The stall window; `None` when cutting is off (`--stall-cutoff-ms 0`).
    window: Option<Duration>,
    /// Why no reload is possible (a navigation with a method or body), when so.
    no_reload: Option<&'static str>,
    /// Hosts blocked so far.
    blocked: BTreeSet<String>,
    /// One entry per cut, for `trace.readiness.cuts`.
    rounds: Vec<Value>,
    /// Hosts blocked from the start because they stalled in the host's recent fetches, with
    /// the age of that report in ms.
    remembered: Vec<(String, u64)>,
    /// How many hosts the host remembered as answering (let go with no probe).
    remembered_answered: usize,
    /// The host's recent fetches show third parties stalling ([`stalling_network`]): the
    /// window is halved from the start.
    stalling_network: bool,
    nav_start: Instant,
}

impl Cutter {
    /// The cutter for `req`, whose navigation started at `nav_start` with the `remembered`
    /// hosts blocked ([`block_remembered`]).
    pub fn new(req: &FetchRequest, nav_start: Instant, remembered: Vec<(String, u64)>) -> Cutter {
        let ms = req.browser.stall_cutoff_ms;
        let no_reload = (req.method != "GET" || req.body.is_some())
            .then_some("the navigation has a method or body other than a plain GET");
        Cutter {
            window: (ms > 0).then(|| Duration::from_millis(ms)),
            no_reload,
            blocked: remembered.iter().map(|(h, _)| h.clone()).collect(),
            rounds: Vec::new(),
            remembered,
            remembered_answered: req.browser.remembered_answers.len(),
            stalling_network: stalling_network(&req.browser),
            nav_start,
        }
    }

    /// The window in force, `None` when no more cuts can be made. After a reload it is
    /// halved: the first cut showed that third parties stall on this network, and the ones
    /// the reloaded page reaches next (scripts that stalled ones would have written or
    /// inserted) cost a reload each all the same. The host's recent fetches can show the
    /// same before this one starts ([`stalling_network`]).
    fn active(&self) -> Option<Duration> {
        match self.window {
            Some(w) if self.no_reload.is_none() && self.rounds.len() < MAX_ROUNDS => {
                Some(match self.reloads() > 0 || self.stalling_network {
                    true => w / 2,
                    false => w,
                })
            }
            _ => None,
        }
    }

    /// When the next third-party request still waiting would reach the window (the wait
    /// wakes then).
    pub fn next_due(&self, state: &Shared) -> Option<Instant> {
        let w = self.active()?;
        lock(state).network.next_stall_at(w)
    }

    /// Whether a third-party request that blocks the parser or the first paint is still
    /// waiting for its response (inside its window): the page is not ready before it
    /// answers or is cut, since a capture would find it unparsed or unpainted.
    pub fn holds(&self, state: &Shared) -> bool {
        if self.window.is_none() {
            return false;
        }
        let st = lock(state);
        let parsed = st.dom_content_at.is_some();
        // Held paused by the in-place cut ([`super::stall_hold`]): released or cut at its
        // window, whether or not a reload is still possible.
        if st.network.holds_blocking(parsed) {
            return true;
        }
        if self.active().is_none() {
            return false;
        }
        st.network
            .stalled(Duration::ZERO)
            .iter()
            .any(|s| s.blocks_page(parsed))
    }

    /// Cut when a stalled third-party request holds the page for `wait`: block every
    /// stalled host and reload. `Ok(true)` when the page was reloaded.
    pub async fn check(
        &mut self,
        conn: &CdpConnection,
        session: &str,
        state: &Shared,
        wait: &Wait,
        t: Duration,
    ) -> Result<bool, AfError> {
        let Some(w) = self.active() else {
            return Ok(false);
        };
        let (stalled, parsed) = {
            let st = lock(state);
            if st.network.reload_pending() {
                // The reload drops the old document's requests: nothing of it to cut.
                return Ok(false);
            }
            (st.network.stalled(w), st.dom_content_at.is_some())
        };
        let waits_for_all = matches!(wait, Wait::Load | Wait::Idle);
        if !stalled
            .iter()
            .any(|s| waits_for_all || s.blocks_page(parsed))
        {
            return Ok(false);
        }
        // A frame is navigated away; anything else needs the reload.
        let reload = stalled.iter().any(|s| !s.is_frame());
        let hosts: BTreeSet<String> = stalled.iter().map(|s| s.host.clone()).collect();
        let mut round = round_json(&stalled, &hosts, parsed, reload, self.nav_start);
        round["window_ms"] = json!(w.as_millis() as u64);
        self.rounds.push(round);
        if !reload {
            let ids = stalled.iter().map(|s| s.id.clone()).collect();
            lock(state).network.cut_entries(&ids);
            for s in &stalled {
                let blank = json!({"url": "about:blank", "frameId": s.frame_id});
                // A frame that went away meanwhile needs no cut.
                let _ = conn.send(Some(session), "Page.navigate", blank, t).await;
            }
            return Ok(false);
        }
        self.blocked.extend(hosts.iter().cloned());
        // The hosts cut in place are blocked too: one list for the session.
        let blocked: BTreeSet<String> = self
            .blocked
            .union(lock(state).network.blocked())
            .cloned()
            .collect();
        conn.send(
            Some(session),
            "Network.setBlockedURLs",
            json!({ "urlPatterns": patterns(&blocked) }),
            t,
        )
        .await?;
        {
            let mut st = lock(state);
            st.network.cut_hosts(&hosts);
            // The reloaded document's own events decide from here.
            st.dom_content_at = None;
            st.load_at = None;
        }
        conn.send(Some(session), "Page.reload", json!({}), t)
            .await
            .map_err(|e| {
                AfError::new(
                    e.code,
                    format!("reloading without the stalled third parties: {}", e.message),
                )
            })?;
        Ok(true)
    }

    /// Every cut in time order: the reload rounds and the ones made in place.
    fn all_rounds(&self, state: &Shared) -> Vec<Value> {
        let mut all = self.rounds.clone();
        all.extend(lock(state).network.in_place_rounds().iter().cloned());
        all.sort_by(|a, b| {
            let at = |r: &Value| r["at_ms"].as_f64().unwrap_or(0.0);
            at(a).total_cmp(&at(b))
        });
        all
    }

    /// `trace.readiness.cuts`.
    pub fn signals(&self, state: &Shared) -> Value {
        json!({
            "stall_cutoff_ms": self.window.map(|w| w.as_millis() as u64).unwrap_or(0),
            "reload_unavailable": self.no_reload,
            "rounds": self.all_rounds(state),
            "remembered": self.remembered.iter()
                .map(|(h, age)| json!({"host": h, "age_ms": age}))
                .collect::<Vec<_>>(),
            "answered": lock(state).network.probes_answered(),
            "remembered_answered": self.remembered_answered,
            "stalling_network": self.stalling_network,
        })
    }

    fn reloads(&self) -> usize {
        self.rounds.iter().filter(|r| r["reloaded"] == true).count()
    }

    /// The `third_party_cut` warning, naming each host with its cut requests by type: the
    /// ones cut after the window, and the ones blocked from the start because their host
    /// stalled in an earlier fetch.
    pub fn warning(&self, state: &Shared) -> Option<Warning> {
        let cuts = lock(state).network.cuts();
        let rounds = self.all_rounds(state);
        let cut_now: BTreeSet<&str> = rounds
            .iter()
            .filter_map(|r| r.get("hosts").and_then(Value::as_array))
            .flatten()
            .filter_map(|h| h.get("host").and_then(Value::as_str))
            .collect();
        let (now, before): (Vec<_>, Vec<_>) = cuts
            .iter()
            .partition(|(host, _)| cut_now.contains(host.as_str()));
        let mut parts = Vec::new();
        if !rounds.is_empty() {
            parts.push(format!(
                "{} third-party request(s) cut after {} without a response \
                 (stall_cutoff_ms {}{}){}: {}",
                count(&now),
                windows_used(&rounds),
                self.window.map(|w| w.as_millis()).unwrap_or(0),
                match self.stalling_network {
                    true => ", halved: third parties stalled in this host's recent fetches",
                    false => "",
                },
                match self.reloads() {
                    0 => String::new(),
                    n => format!("; the page was reloaded {n} time(s) with their hosts blocked"),
                },
                describe(&now, &[])
            ));
        }
        if !before.is_empty() {
            parts.push(format!(
                "{} request(s) blocked from the start: their hosts stalled in this host's \
                 fetches of the last {} s (stall_cutoff_ms 0 fetches them): {}",
                count(&before),
                crate::sdk::defaults::STALL_MEMORY_TTL.as_secs(),
                describe(&before, &self.remembered)
            ));
        }
        if parts.is_empty() {
            return None;
        }
        Some(Warning::general(ErrorCode::ThirdPartyCut, parts.join(". ")))
    }
}

/// The windows the cut rounds waited, `800 ms` or `400-800 ms`.
fn windows_used(rounds: &[Value]) -> String {
    let ms: Vec<u64> = rounds
        .iter()
        .filter_map(|r| r.get("window_ms").and_then(Value::as_u64))
        .collect();
    match (ms.iter().min(), ms.iter().max()) {
        (Some(lo), Some(hi)) if lo != hi => format!("{lo}-{hi} ms"),
        (Some(w), _) => format!("{w} ms"),
        _ => "the window".to_string(),
    }
}

type HostCuts<'a> = Vec<(&'a String, &'a std::collections::BTreeMap<String, usize>)>;

fn count(cuts: &HostCuts) -> usize {
    cuts.iter().flat_map(|(_, t)| t.values()).sum()
}

/// `host (Script 2, Image 1)`, with `stalled N s ago` for a remembered host.
fn describe(cuts: &HostCuts, remembered: &[(String, u64)]) -> String {
    let hosts: Vec<String> = cuts
        .iter()
        .map(|(host, types)| {
            let mut t: Vec<String> = types.iter().map(|(k, n)| format!("{k} {n}")).collect();
            if let Some((_, age)) = remembered.iter().find(|(h, _)| h == *host) {
                t.push(format!("stalled {} s ago", age / 1000));
            }
            format!("{host} ({})", t.join(", "))
        })
        .collect();
    hosts.join("; ")
}

/// One cut for the trace: when, and which stalled requests it found, by host and type.
fn round_json(
    stalled: &[Stalled],
    hosts: &BTreeSet<String>,
    parsed: bool,
    reload: bool,
    nav_start: Instant,
) -> Value {
    let hosts: Vec<Value> = hosts
        .iter()
        .map(|h| {
            let mut types: std::collections::BTreeMap<&str, usize> = Default::default();
            let mut blocking = false;
            for s in stalled.iter().filter(|s| &s.host == h) {
                *types.entry(s.resource_type.as_str()).or_default() += 1;
                blocking |= s.blocks_page(parsed);
            }
            json!({"host": h, "types": types, "blocking": blocking})
        })
        .collect();
    json!({
        "at_ms": crate::sdk::fetch::outcome::round1(nav_start.elapsed().as_secs_f64() * 1000.0),
        "hosts": hosts,
        "reloaded": reload,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sdk::fetch::BrowserOptions;

    fn memory(stalled: usize, answered: usize) -> BrowserOptions {
        BrowserOptions {
            remembered_stalls: (0..stalled).map(|i| (format!("s{i}.test"), 0)).collect(),
            remembered_answers: (0..answered).map(|i| format!("a{i}.test")).collect(),
            ..BrowserOptions::default()
        }
    }

    #[test]
    fn a_network_stalls_when_enough_hosts_stalled_and_more_than_answered() {
        assert!(!stalling_network(&memory(0, 0)));
        assert!(!stalling_network(&memory(2, 0)));
        assert!(stalling_network(&memory(3, 0)));
        assert!(stalling_network(&memory(5, 4)));
        assert!(!stalling_network(&memory(5, 5)));
        assert!(!stalling_network(&memory(3, 40)));
    }

    #[test]
    fn the_warning_names_the_windows_the_rounds_waited() {
        let r = |w: u64| json!({"window_ms": w});
        assert_eq!(windows_used(&[r(800)]), "800 ms");
        assert_eq!(windows_used(&[r(800), r(400)]), "400-800 ms");
        assert_eq!(windows_used(&[json!({})]), "the window");
    }
}
