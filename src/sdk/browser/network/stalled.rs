//! Third-party requests that stall: which ones have gone without a response for the stall
//! window, and how the log records them once they are cut ([`crate::sdk::browser::stall`]).
//!
//! A cut request is failed in the log with `blocked_reason: "third_party_cut"`: the ones
//! the old document left open when the page was reloaded, and the ones the reload's
//! `Network.setBlockedURLs` blocked (Chromium reports those as blocked by the `inspector`).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use super::pending::{host_of, is_first_party};
use super::{entry, NetworkLog, State, STREAMING_TYPES};

/// Whether an entry already failed as cut (a later `loadingFailed` keeps that reason).
pub fn was_cut(e: &entry::Entry) -> bool {
    e.failure
        .as_ref()
        .is_some_and(|f| f.blocked_reason.as_deref() == Some(CUT_REASON))
}

/// `failure.blocked_reason` of a request cut for stalling.
pub const CUT_REASON: &str = "third_party_cut";

/// One third-party request without a response for at least the stall window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stalled {
    /// `host[:port]`.
    pub host: String,
    /// The CDP resource type.
    pub resource_type: String,
    /// `renderBlockingBehavior`, when the browser reported it.
    pub render_blocking: Option<String>,
    /// Issued by the main frame (not a subframe).
    pub main_frame: bool,
    /// The frame that issued it (for a subframe's document: that subframe).
    pub frame_id: String,
    /// The log entry's id.
    pub id: String,
}

impl Stalled {
    /// A subframe's own document (an iframe): cut by navigating the frame away, since a
    /// blocked-URL list does not apply to frame navigations.
    pub fn is_frame(&self) -> bool {
        self.resource_type == "Document" && !self.main_frame
    }
}

impl Stalled {
    /// Whether the parser or the first render waits on it.
    pub fn blocks_page(&self, parsed: bool) -> bool {
        let blocking = matches!(
            self.render_blocking.as_deref(),
            Some("Blocking" | "InBodyParserBlocking")
        );
        let parser_waits = !parsed
            && self.main_frame
            && matches!(self.resource_type.as_str(), "Script" | "Stylesheet");
        blocking || parser_waits
    }
}

/// The `blocked_reason` to record for a failed request: [`CUT_REASON`] when the blocked-URL
/// list of a cut blocked it.
pub fn blocked_reason(reason: Option<&str>, url: &str, cut: &BTreeSet<String>) -> Option<String> {
    match reason {
        Some("inspector") if cut.contains(&host_of(url)) => Some(CUT_REASON.to_string()),
        r => r.map(String::from),
    }
}

impl NetworkLog {
    /// Third-party requests still waiting for their response headers whose stall window
    /// has passed (streams and the main document excepted).
    pub fn stalled(&self, window: Duration) -> Vec<Stalled> {
        let now = Instant::now();
        self.stall_candidates()
            .filter(|e| {
                e.seen
                    .is_some_and(|t| now.saturating_duration_since(t) >= self.window_for(e, window))
            })
            .map(|e| Stalled {
                host: host_of(&e.url),
                resource_type: e.resource_type.clone(),
                render_blocking: e.render_blocking.clone(),
                main_frame: e.frame_id == self.main_frame,
                frame_id: e.frame_id.clone(),
                id: e.id.clone(),
            })
            .collect()
    }

    /// Whether a cut's reload was sent and its document has not committed yet: the old
    /// document's requests, which the reload drops, are not cut again meanwhile.
    pub fn reload_pending(&self) -> bool {
        self.superseding
    }

    /// When the next waiting third-party request reaches the stall window (none while a
    /// cut's reload is pending).
    pub fn next_stall_at(&self, window: Duration) -> Option<Instant> {
        if self.superseding {
            return None;
        }
        self.stall_candidates()
            .filter_map(|e| Some(e.seen? + self.window_for(e, window)))
            .min()
    }

    /// The reload's window for `e`: doubled for a script or stylesheet once the in-place
    /// cut is at work, since the browser queues such a request behind the ones held paused
    /// (they fill its per-host and per-page slots) and pauses it only when they are cut;
    /// the in-place cut then decides on it at once or within its own window.
    fn window_for(&self, e: &entry::Entry, window: Duration) -> Duration {
        match self.holding && matches!(e.resource_type.as_str(), "Script" | "Stylesheet") {
            true => window * 2,
            false => window,
        }
    }

    /// Third-party requests still waiting, but not the ones the in-place cut holds paused
    /// (it cuts those itself at their window).
    fn stall_candidates(&self) -> impl Iterator<Item = &entry::Entry> {
        self.waiting_third_party()
            .filter(move |(id, e)| !self.held.contains(*id) && !self.held_host(e))
            .map(|(_, e)| e)
    }

    /// A script or stylesheet of a host the in-place cut holds or cut.
    fn held_host(&self, e: &entry::Entry) -> bool {
        matches!(e.resource_type.as_str(), "Script" | "Stylesheet")
            && self.held_hosts.contains(&host_of(&e.url))
    }

    /// Third-party requests still waiting for their response headers, with their CDP ids
    /// (streams and the main document excepted).
    fn waiting_third_party(&self) -> impl Iterator<Item = (&String, &entry::Entry)> {
        let site = self.document_site();
        let doc = self.document().map(|d| d.id.clone());
        self.inflight
            .iter()
            .filter_map(|id| Some((id, &self.entries[*self.chains.get(id)?.last()?])))
            .filter(move |(_, e)| {
                e.state == State::Pending
                    && !STREAMING_TYPES.contains(&e.resource_type.as_str())
                    && Some(&e.id) != doc.as_ref()
                    && !is_first_party(&e.url, site.as_deref())
            })
    }

    /// Whether a request the in-place cut holds paused (or one of a held host whose pause
    /// has not come yet) blocks the parser or the first render: the page is not ready
    /// before it is released or cut.
    pub fn holds_blocking(&self, parsed: bool) -> bool {
        self.waiting_third_party()
            .filter(|(id, e)| self.held.contains(*id) || self.held_host(e))
            .any(|(_, e)| {
                let main_frame = e.frame_id == self.main_frame;
                let parser_waits = !parsed && main_frame;
                parser_waits
                    || matches!(
                        e.render_blocking.as_deref(),
                        Some("Blocking" | "InBodyParserBlocking")
                    )
            })
    }

    /// The in-place cut paused request `id` (a CDP request id) of `host`.
    pub fn hold(&mut self, id: &str, host: &str) {
        self.held.insert(id.to_string());
        self.held_hosts.insert(host.to_string());
        self.holding = true;
    }

    /// The in-place cut probes `host` before any request of it paused (the document names
    /// it): its scripts and stylesheets are the cut's to decide.
    pub fn hold_host(&mut self, host: &str) {
        self.held_hosts.insert(host.to_string());
        self.holding = true;
    }

    /// The in-place cut let every request of `host` go on (the host answered its probe): a
    /// stall of them after that is the reload's to cut.
    pub fn release_host(&mut self, host: &str) {
        self.held_hosts.remove(host);
        self.probes_answered.insert(host.to_string());
    }

    /// Other-site hosts that answered the in-place cut's probe in this fetch.
    pub fn probes_answered(&self) -> &BTreeSet<String> {
        &self.probes_answered
    }

    /// The in-place cut let request `id` go on: its window starts again now, when it
    /// really goes out (a stall after that is cut by the reload).
    pub fn release(&mut self, id: &str) {
        self.held.remove(id);
        if let Some(&i) = self.chains.get(id).and_then(|h| h.last()) {
            self.entries[i].seen = Some(Instant::now());
        }
    }

    /// The in-place cut failed the paused requests `ids` of `host`: they are recorded as
    /// cut (now and when their `loadingFailed` comes), with the cut's `round` for the trace.
    pub fn cut_in_place(
        &mut self,
        host: &str,
        ids: &BTreeSet<String>,
        round: Option<serde_json::Value>,
    ) {
        self.cut_hosts.insert(host.to_string());
        self.held_hosts.insert(host.to_string());
        for id in ids {
            self.held.remove(id);
        }
        let ids: BTreeSet<String> = ids
            .iter()
            .filter_map(|id| Some(self.entries[*self.chains.get(id)?.last()?].id.clone()))
            .collect();
        self.close_open(|e| ids.contains(&e.id));
        self.in_place.extend(round);
    }

    /// The cuts made in place, for `trace.readiness.cuts.rounds`.
    pub fn in_place_rounds(&self) -> &[serde_json::Value] {
        &self.in_place
    }

    /// Every host cut or blocked so far (the blocked-URL list to keep).
    pub fn blocked(&self) -> &BTreeSet<String> {
        &self.cut_hosts
    }

    /// Whether `host` has answered a request of this page (any response).
    pub fn host_answered(&self, host: &str) -> bool {
        self.entries
            .iter()
            .any(|e| e.status().is_some() && host_of(&e.url) == host)
    }

    /// Record a cut of `hosts` before a reload: their open requests fail as cut, later
    /// blocked ones are recorded as cut too, and the next main-frame commit (the reload)
    /// closes what the old document leaves open.
    pub fn cut_hosts(&mut self, hosts: &BTreeSet<String>) {
        self.cut_hosts.extend(hosts.iter().cloned());
        self.superseding = true;
        let cut = self.cut_hosts.clone();
        self.close_open(|e| cut.contains(&host_of(&e.url)));
    }

    /// Record `hosts` as blocked from the start (they stalled in an earlier fetch): their
    /// blocked requests are recorded as cut.
    pub fn block_hosts(&mut self, hosts: &BTreeSet<String>) {
        self.cut_hosts.extend(hosts.iter().cloned());
    }

    /// Record the cut of single requests (frames navigated away), by entry id.
    pub fn cut_entries(&mut self, ids: &BTreeSet<String>) {
        self.close_open(|e| ids.contains(&e.id));
    }

    fn close_open(&mut self, pick: impl Fn(&entry::Entry) -> bool) {
        let open: Vec<String> = self.inflight.iter().cloned().collect();
        for id in open {
            let Some(&i) = self.chains.get(&id).and_then(|h| h.last()) else {
                continue;
            };
            let e = &mut self.entries[i];
            if e.state == State::Pending && pick(e) {
                close(e, "net::ERR_BLOCKED_BY_CLIENT", Some(CUT_REASON));
                self.inflight.remove(&id);
            }
        }
    }

    /// The main frame committed a document of `loader_id`: after a cut's reload, every
    /// request the old document left open is closed as aborted (the browser drops them
    /// without an event).
    pub fn main_committed(&mut self, loader_id: &str) {
        if !self.superseding {
            return;
        }
        self.superseding = false;
        let open: Vec<String> = self.inflight.iter().cloned().collect();
        for id in open {
            let Some(&i) = self.chains.get(&id).and_then(|h| h.last()) else {
                continue;
            };
            let e = &mut self.entries[i];
            if e.loader_id != loader_id {
                close(e, "net::ERR_ABORTED", None);
                self.inflight.remove(&id);
            }
        }
    }

    /// Requests cut for stalling, by host and resource type.
    pub fn cuts(&self) -> BTreeMap<String, BTreeMap<String, usize>> {
        let mut out: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
        for e in &self.entries {
            if was_cut(e) {
                *out.entry(host_of(&e.url))
                    .or_default()
                    .entry(e.resource_type.clone())
                    .or_default() += 1;
            }
        }
        out
    }
}

fn close(e: &mut entry::Entry, error_text: &str, reason: Option<&str>) {
    e.state = State::Failed;
    e.failure = Some(entry::Failure {
        error_text: error_text.to_string(),
        canceled: true,
        blocked_reason: reason.map(String::from),
        cors_error: None,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stalled(t: &str, rb: Option<&str>, main_frame: bool) -> Stalled {
        Stalled {
            host: "127.0.0.2:9".into(),
            resource_type: t.into(),
            render_blocking: rb.map(String::from),
            main_frame,
            frame_id: String::new(),
            id: String::new(),
        }
    }

    #[test]
    fn parser_and_render_blocking_requests_block_the_page() {
        assert!(stalled("Script", Some("Blocking"), true).blocks_page(true));
        assert!(stalled("Script", Some("InBodyParserBlocking"), true).blocks_page(false));
        assert!(stalled("Stylesheet", None, true).blocks_page(false));
        assert!(!stalled("Script", Some("NonBlocking"), true).blocks_page(true));
        assert!(!stalled("Script", None, false).blocks_page(false));
        assert!(!stalled("Image", None, true).blocks_page(false));
        assert!(!stalled("Document", None, false).blocks_page(false));
    }

    #[test]
    fn blocked_requests_of_a_cut_host_are_recorded_as_cut() {
        let cut: BTreeSet<String> = ["127.0.0.2:9".to_string()].into();
        assert_eq!(
            blocked_reason(Some("inspector"), "http://127.0.0.2:9/a.js", &cut).as_deref(),
            Some(CUT_REASON)
        );
        assert_eq!(
            blocked_reason(Some("inspector"), "http://127.0.0.3:9/a.js", &cut).as_deref(),
            Some("inspector")
        );
        assert_eq!(
            blocked_reason(Some("csp"), "http://127.0.0.2:9/a.js", &cut).as_deref(),
            Some("csp")
        );
        assert_eq!(blocked_reason(None, "http://127.0.0.2:9/", &cut), None);
    }
}
