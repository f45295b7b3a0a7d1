//! The host's short-lived memory of third-party hosts that stalled (`/stalled-hosts`).
//!
//! A fetch that cut a stalled third party (`--stall-cutoff-ms`) reports its hosts here; the
//! next fetches on this host read the list and block those hosts from the start (when they
//! are another site than the page's), so they pay neither the stall window nor a reload.
//! Bounded: at most [`CAP`] hosts, each forgotten [`TTL`] after it last stalled, so a host
//! that answers again is tried again within minutes. In memory only: a host restart forgets.
//!
//! It also remembers the other-site hosts that answered the in-place cut's probe
//! (`answered`, same bounds), so the next fetches let their scripts and stylesheets go out
//! at once instead of holding the first request for a probe. The latest report of a host
//! wins: a host reported stalled is no longer remembered as answering, and the reverse.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// How long a host that stalled stays blocked for later fetches.
pub const TTL: Duration = crate::sdk::defaults::STALL_MEMORY_TTL;
/// The most hosts remembered; the oldest report goes first.
pub const CAP: usize = 256;
/// The most hosts one report may carry.
pub const MAX_PER_REPORT: usize = 64;

type Hosts = HashMap<String, Instant>;

/// Hosts (`host[:port]`) that stalled, and ones that answered, with when they were last
/// reported.
#[derive(Debug, Default)]
pub struct StallMemory {
    hosts: Mutex<(Hosts, Hosts)>,
}

impl StallMemory {
    /// Remember `hosts` as stalled now; entries that are not a `host[:port]` are ignored.
    /// Returns how many were taken.
    pub fn note(&self, hosts: &[String]) -> usize {
        self.note_at(hosts, true, Instant::now())
    }

    /// Remember `hosts` as answering now (same rules as [`StallMemory::note`]).
    pub fn note_answered(&self, hosts: &[String]) -> usize {
        self.note_at(hosts, false, Instant::now())
    }

    fn note_at(&self, hosts: &[String], stalled: bool, now: Instant) -> usize {
        let mut maps = self.lock();
        let (stalls, answers) = &mut *maps;
        let (into, from) = match stalled {
            true => (stalls, answers),
            false => (answers, stalls),
        };
        forget_expired(into, now);
        let mut taken = 0;
        for h in hosts.iter().take(MAX_PER_REPORT) {
            if !is_host_port(h) {
                continue;
            }
            let h = h.to_ascii_lowercase();
            from.remove(&h);
            into.insert(h, now);
            taken += 1;
        }
        while into.len() > CAP {
            let Some(oldest) = into.iter().min_by_key(|(_, t)| **t).map(|(h, _)| h.clone()) else {
                break;
            };
            into.remove(&oldest);
        }
        taken
    }

    /// The remembered hosts with the age of their last report, oldest report first, as
    /// `GET /stalled-hosts` answers them.
    pub fn to_json(&self) -> Value {
        self.to_json_at(Instant::now())
    }

    fn to_json_at(&self, now: Instant) -> Value {
        let mut maps = self.lock();
        let (stalls, answers) = &mut *maps;
        json!({
            "ttl_ms": TTL.as_millis() as u64,
            "cap": CAP,
            "hosts": listed(stalls, now),
            "answered": listed(answers, now),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (Hosts, Hosts)> {
        self.hosts.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The hosts of `map` with the age of their last report, oldest report first.
fn listed(map: &mut Hosts, now: Instant) -> Vec<Value> {
    forget_expired(map, now);
    let mut hosts: Vec<(&String, Duration)> = map
        .iter()
        .map(|(h, t)| (h, now.saturating_duration_since(*t)))
        .collect();
    hosts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    hosts
        .into_iter()
        .map(|(h, age)| json!({"host": h, "age_ms": age.as_millis() as u64}))
        .collect()
}

fn forget_expired(map: &mut HashMap<String, Instant>, now: Instant) {
    map.retain(|_, t| now.saturating_duration_since(*t) < TTL);
}

/// A host name or address with an optional port, as a URL's authority gives it (no
/// credentials, no path): what a blocked-URL pattern `*://HOST/*` may carry.
fn is_host_port(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 300
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '[' | ']'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(v: &Value) -> Vec<String> {
        v["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["host"].as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn a_host_is_remembered_until_its_ttl_passes() {
        let m = StallMemory::default();
        let t0 = Instant::now();
        assert_eq!(m.note_at(&["Ads.Example:8080".into()], true, t0), 1);
        assert_eq!(hosts(&m.to_json_at(t0 + TTL / 2)), ["ads.example:8080"]);
        assert!(hosts(&m.to_json_at(t0 + TTL)).is_empty());
    }

    #[test]
    fn a_new_report_renews_a_host() {
        let m = StallMemory::default();
        let t0 = Instant::now();
        m.note_at(&["a.example".into()], true, t0);
        m.note_at(&["a.example".into()], true, t0 + TTL / 2);
        assert_eq!(hosts(&m.to_json_at(t0 + TTL)), ["a.example"]);
    }

    #[test]
    fn the_memory_is_bounded_and_drops_the_oldest() {
        let m = StallMemory::default();
        let t0 = Instant::now();
        for i in 0..CAP + 5 {
            m.note_at(
                &[format!("h{i}.example")],
                true,
                t0 + Duration::from_millis(i as u64),
            );
        }
        let kept = hosts(&m.to_json_at(t0 + Duration::from_secs(1)));
        assert_eq!(kept.len(), CAP);
        assert!(!kept.contains(&"h0.example".to_string()));
        assert!(kept.contains(&format!("h{}.example", CAP + 4)));
    }

    #[test]
    fn the_latest_report_of_a_host_wins() {
        let m = StallMemory::default();
        let t0 = Instant::now();
        m.note_at(&["a.example".into(), "b.example".into()], false, t0);
        m.note_at(&["a.example".into()], true, t0);
        let v = m.to_json_at(t0);
        assert_eq!(hosts(&v), ["a.example"]);
        let answered: Vec<&str> = v["answered"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["host"].as_str().unwrap())
            .collect();
        assert_eq!(answered, ["b.example"]);
        m.note_at(&["a.example".into()], false, t0);
        assert!(hosts(&m.to_json_at(t0)).is_empty());
    }

    #[test]
    fn entries_that_are_not_a_host_are_ignored() {
        let m = StallMemory::default();
        let bad = ["", "a.example/x", "*", "u@a.example", "a b"].map(String::from);
        assert_eq!(m.note(&bad), 0);
        assert_eq!(m.note(&["[::1]:9".into(), "127.0.0.2:9".into()]), 2);
    }
}
