//! The browser path's `network.json`: one tab session's `Network.*` events folded into one
//! entry per request hop, plus the in-flight bookkeeping the `idle` readiness signal uses.
//!
//! The collector only ever sees events of the fetch's own flattened session
//! ([`crate::sdk::cdp::CdpConnection::subscribe`] filters by session id), so concurrent fetches
//! on one browser never see each other's requests.
//!
//! - [`entry`]: one hop and its JSON; CDP reuses a request id across redirects, so hops get
//!   `<id>`, `<id>.r1`, `<id>.r2`, ... linked by `redirected_from` / `redirected_to`.
//! - [`bodies`]: response (and post data) bodies written under `network-bodies/`.
//! - [`streams`]: WebSocket frames and EventSource messages.
//! - [`hints`]: `json_valid` and GraphQL operation hints.
//! - [`summary`]: counts shared with the HTTP path's `network.json`.

pub mod bodies;
pub mod entry;
pub mod hints;
pub mod pending;
pub mod stalled;
pub mod streams;
pub mod summary;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::Instant;

use serde_json::{json, Value};

use crate::error::Warning;
use crate::sdk::cdp::network::{self as cdp_network, NetworkEvent, ResourceType};
use crate::sdk::redact;
pub use bodies::BodyRecord;
pub use entry::{Entry, State};
pub use pending::{readiness_warnings, PendingRequest};
use streams::{StreamKind, StreamLog};

/// Resource types that stay open by design and so never hold up the `idle` signal.
const STREAMING_TYPES: &[&str] = &["EventSource", "WebSocket"];

/// Whether a CDP resource type is XHR or fetch.
pub fn is_xhr(resource_type: &str) -> bool {
    matches!(resource_type, "XHR" | "Fetch")
}

/// What was still in flight when capture started.
#[derive(Debug, Clone, Default)]
pub struct CaptureSnapshot {
    /// Requests started and not finished or failed (streams included).
    pub inflight_total: usize,
    /// The same, by resource type.
    pub pending_by_resource_type: BTreeMap<String, usize>,
    /// In-flight requests that are not long-lived streams.
    pub not_idle: usize,
    /// URLs of in-flight XHR/fetch requests.
    pub pending_xhr: Vec<String>,
    /// The other in-flight requests (streams excepted) as `Type host`, for the warning.
    pub pending_named: Vec<String>,
}

/// The log of one session.
#[derive(Debug)]
pub struct NetworkLog {
    entries: Vec<Entry>,
    /// CDP request id → indexes of its hops, in order.
    chains: HashMap<String, Vec<usize>>,
    /// `requestWillBeSentExtraInfo` per CDP id, in arrival order (the Nth belongs to hop N).
    request_extra: HashMap<String, Vec<cdp_network::RequestExtraInfo>>,
    /// `responseReceivedExtraInfo` per CDP id, in arrival order.
    response_extra: HashMap<String, Vec<cdp_network::ResponseExtraInfo>>,
    /// `Network.*` events that did not decode.
    undecodable: usize,
    /// `responseReceived` events announcing a `responseReceivedExtraInfo` (`hasExtraInfo`),
    /// per CDP id.
    extra_announced: HashMap<String, usize>,
    inflight: HashSet<String>,
    last_activity: Instant,
    /// When the last request that holds `--wait auto` ended ([`pending`]).
    settle_done_at: Option<Instant>,
    main_frame: String,
    document: Option<String>,
    t0: Option<f64>,
    record_ws: bool,
    record_sse: bool,
    stream_budget: usize,
    at_capture: Option<CaptureSnapshot>,
    /// Hosts cut for stalling (`host[:port]`, [`stalled`]).
    cut_hosts: BTreeSet<String>,
    /// A reload with the cut hosts blocked is under way: the next main-frame commit closes
    /// what the old document left open.
    superseding: bool,
    /// CDP ids of requests paused for the in-place cut ([`crate::sdk::browser::stall_hold`]).
    held: HashSet<String>,
    /// Hosts the in-place cut holds or has cut: their scripts and stylesheets are its to
    /// decide, even before their pause arrives (the browser may queue a request it has
    /// announced).
    held_hosts: BTreeSet<String>,
    /// The in-place cut has paused a request of this page.
    holding: bool,
    /// `trace.readiness.cuts.rounds` entries of the cuts made in place.
    in_place: Vec<Value>,
    /// Other-site hosts whose probe answered in this fetch (for the host's memory).
    probes_answered: BTreeSet<String>,
}

/// A resource type as `network.json` spells it (empty when CDP gave none).
fn type_name(t: Option<&ResourceType>) -> String {
    t.map(|t| t.as_str().to_string()).unwrap_or_default()
}

impl NetworkLog {
    /// A log whose main document is the one loaded in frame `main_frame`.
    pub fn new(main_frame: &str) -> NetworkLog {
        NetworkLog {
            entries: Vec::new(),
            chains: HashMap::new(),
            request_extra: HashMap::new(),
            response_extra: HashMap::new(),
            undecodable: 0,
            extra_announced: HashMap::new(),
            inflight: HashSet::new(),
            last_activity: Instant::now(),
            settle_done_at: None,
            main_frame: main_frame.to_string(),
            document: None,
            t0: None,
            record_ws: false,
            record_sse: false,
            stream_budget: streams::MAX_ITEMS_TOTAL,
            at_capture: None,
            cut_hosts: BTreeSet::new(),
            superseding: false,
            held: HashSet::new(),
            held_hosts: BTreeSet::new(),
            holding: false,
            in_place: Vec::new(),
            probes_answered: BTreeSet::new(),
        }
    }

    /// Record WebSocket frames (`--capture-ws`) and EventSource messages (`--capture-sse`).
    pub fn with_streams(mut self, ws: bool, sse: bool) -> NetworkLog {
        self.record_ws = ws;
        self.record_sse = sse;
        self
    }

    /// Every hop, in the order they started.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    fn last_hop(&mut self, cdp_id: &str) -> Option<&mut Entry> {
        let i = *self.chains.get(cdp_id)?.last()?;
        self.entries.get_mut(i)
    }

    /// Fold one CDP event in; other domains are ignored. An event that does not decode
    /// ([`NetworkEvent::decode`]) is counted in `summary.undecodable_events`.
    pub fn on_event(&mut self, method: &str, p: &Value) {
        if !method.starts_with("Network.") {
            return;
        }
        match NetworkEvent::decode(method, p) {
            Ok(ev) => self.fold(ev),
            Err(_) => self.undecodable += 1,
        }
    }

    /// Fold one decoded event in.
    pub fn fold(&mut self, ev: NetworkEvent) {
        match ev {
            NetworkEvent::RequestWillBeSent(p) => {
                self.last_activity = Instant::now();
                if self.t0.is_none() {
                    self.t0 = p.timestamp;
                }
                self.request_will_be_sent(&p);
            }
            NetworkEvent::RequestExtraInfo(x) => {
                let id = x.request_id.clone();
                self.request_extra.entry(id.clone()).or_default().push(x);
                self.apply_extra(&id);
            }
            NetworkEvent::ResponseExtraInfo(x) => {
                let id = x.request_id.clone();
                self.response_extra.entry(id.clone()).or_default().push(x);
                self.apply_extra(&id);
            }
            NetworkEvent::ResponseReceived(p) => self.response_received(&p),
            NetworkEvent::ServedFromCache(p) => {
                if let Some(e) = self.last_hop(&p.request_id) {
                    e.from_memory_cache = true;
                }
            }
            NetworkEvent::DataReceived(p) => {
                self.last_activity = Instant::now();
                if let Some(e) = self.last_hop(&p.request_id) {
                    e.decoded_bytes += p.data_length.unwrap_or(0);
                }
            }
            NetworkEvent::PriorityChanged(p) => {
                if let Some(e) = self.last_hop(&p.request_id) {
                    e.priority = p.new_priority;
                }
            }
            NetworkEvent::LoadingFinished(p) => {
                self.last_activity = Instant::now();
                self.inflight.remove(&p.request_id);
                self.note_end(&p.request_id);
                if let Some(e) = self.last_hop(&p.request_id) {
                    e.state = State::Finished;
                    e.ended_at = p.timestamp;
                    e.encoded_bytes = p.encoded_data_length;
                }
            }
            NetworkEvent::LoadingFailed(p) => self.loading_failed(p),
            NetworkEvent::EventSourceMessage(p) => {
                let record = self.record_sse;
                let mut budget = self.stream_budget;
                if let Some(e) = self.last_hop(&p.request_id) {
                    let log = e
                        .stream
                        .get_or_insert_with(|| StreamLog::new(StreamKind::EventSource, record));
                    log.push(
                        &p.data,
                        json!({"event_name": p.event_name, "event_id": p.event_id, "timestamp_ms": p.timestamp}),
                        &mut budget,
                    );
                }
                self.stream_budget = budget;
            }
            ev => self.websocket(ev),
        }
    }

    fn response_received(&mut self, p: &cdp_network::ResponseReceived) {
        self.last_activity = Instant::now();
        if p.has_extra_info {
            *self
                .extra_announced
                .entry(p.request_id.clone())
                .or_default() += 1;
        }
        if let Some(e) = self.last_hop(&p.request_id) {
            e.response = Some(entry::response(&p.response));
            e.responded_at = p.timestamp;
            if e.state == State::Pending {
                e.state = State::Responded;
            }
            if e.resource_type.is_empty() {
                e.resource_type = type_name(p.resource_type.as_ref());
            }
        }
    }

    fn loading_failed(&mut self, p: cdp_network::LoadingFailed) {
        self.last_activity = Instant::now();
        self.inflight.remove(&p.request_id);
        self.note_end(&p.request_id);
        let last = self
            .chains
            .get(&p.request_id)
            .and_then(|h| h.last())
            .copied();
        let e = last.and_then(|i| self.entries.get_mut(i));
        if let Some(e) = e.filter(|e| !stalled::was_cut(e)) {
            e.state = State::Failed;
            e.ended_at = p.timestamp;
            e.failure = Some(entry::Failure {
                error_text: p.error_text,
                canceled: p.canceled,
                blocked_reason: stalled::blocked_reason(
                    p.blocked_reason.as_deref(),
                    &e.url,
                    &self.cut_hosts,
                ),
                cors_error: p.cors_error_status.cors_error,
            });
        }
    }

    fn request_will_be_sent(&mut self, p: &cdp_network::RequestWillBeSent) {
        let id = p.request_id.clone();
        let chain_len = self.chains.get(&id).map_or(0, Vec::len);
        let initiator = entry::initiator(&p.initiator, |rid| {
            let hops = self.chains.get(rid)?;
            hops.last().map(|&i| self.entries[i].id.clone())
        });
        if chain_len > 0 {
            // A redirect: same id; the previous hop's response rides along.
            let hop_id = format!("{id}.r{chain_len}");
            let prev_id = match self.last_hop(&id) {
                Some(prev) => {
                    if let Some(r) = &p.redirect_response {
                        prev.response = Some(entry::response(r));
                        prev.encoded_bytes = r.encoded_data_length;
                    }
                    prev.state = State::Finished;
                    prev.responded_at = prev.responded_at.or(p.timestamp);
                    prev.ended_at = p.timestamp;
                    prev.redirected_to = Some(hop_id.clone());
                    prev.id.clone()
                }
                None => String::new(),
            };
            let mut e = Entry::from_request(hop_id, chain_len, p, initiator);
            e.redirected_from = Some(prev_id);
            self.push(id.clone(), e);
        } else {
            let mut e = Entry::from_request(id.clone(), 0, p, initiator);
            let is_main_doc = e.resource_type == "Document" && e.frame_id == self.main_frame;
            if is_main_doc && !e.url.starts_with("about:") {
                self.document = Some(id.clone());
            }
            if e.resource_type == "EventSource" {
                e.stream = Some(StreamLog::new(StreamKind::EventSource, self.record_sse));
            }
            self.push(id.clone(), e);
        }
        self.inflight.insert(id.clone());
        self.apply_extra(&id);
    }

    fn push(&mut self, cdp_id: String, e: Entry) {
        self.chains
            .entry(cdp_id)
            .or_default()
            .push(self.entries.len());
        self.entries.push(e);
    }

    /// Give hop N of `cdp_id` the Nth extra-info event of each kind (they may arrive before
    /// or after the hop's own events).
    fn apply_extra(&mut self, cdp_id: &str) {
        let Some(hops) = self.chains.get(cdp_id) else {
            return;
        };
        for (n, &i) in hops.iter().enumerate() {
            let e = &mut self.entries[i];
            if let Some(x) = self.request_extra.get(cdp_id).and_then(|l| l.get(n)) {
                e.request_headers_extra = Some(entry::header_pairs(&x.headers));
                e.request_cookies = x.associated_cookies.clone();
            }
            if let Some(x) = self.response_extra.get(cdp_id).and_then(|l| l.get(n)) {
                e.response_headers_extra = Some(entry::header_pairs(&x.headers));
                e.blocked_response_cookies = x.blocked_cookies.clone();
            }
        }
    }

    fn websocket(&mut self, ev: NetworkEvent) {
        if let NetworkEvent::WebSocketCreated(p) = ev {
            if self.chains.contains_key(&p.request_id) {
                return;
            }
            let initiator = entry::initiator(&p.initiator, |_| None);
            let e = Entry {
                id: p.request_id.clone(),
                cdp_request_id: p.request_id.clone(),
                url: p.url,
                method: "GET".into(),
                resource_type: "WebSocket".into(),
                initiator,
                stream: Some(StreamLog::new(StreamKind::WebSocket, self.record_ws)),
                ..Entry::default()
            };
            self.push(p.request_id, e);
            return;
        }
        let id = match &ev {
            NetworkEvent::WebSocketRequest(p) | NetworkEvent::WebSocketResponse(p) => {
                p.request_id.clone()
            }
            NetworkEvent::WebSocketFrame(_, p) | NetworkEvent::WebSocketFrameError(p) => {
                p.request_id.clone()
            }
            NetworkEvent::WebSocketClosed(p) => p.request_id.clone(),
            _ => return,
        };
        let mut budget = self.stream_budget;
        let ends = matches!(
            ev,
            NetworkEvent::WebSocketResponse(_) | NetworkEvent::WebSocketClosed(_)
        );
        let Some(e) = self.last_hop(&id) else {
            return;
        };
        match ev {
            NetworkEvent::WebSocketRequest(p) => {
                e.request_headers = entry::header_pairs(&p.request.headers);
                e.sent_at = p.timestamp;
                e.wall_time = p.wall_time;
            }
            NetworkEvent::WebSocketResponse(p) => {
                e.response = Some(entry::response(&p.response));
                if p.response.request_headers.is_object() {
                    e.request_headers_extra =
                        Some(entry::header_pairs(&p.response.request_headers));
                }
                e.responded_at = p.timestamp;
                e.state = State::Responded;
            }
            NetworkEvent::WebSocketFrame(sent, p) => {
                let direction = if sent { "sent" } else { "received" };
                let opcode = p.response.opcode.unwrap_or(0);
                if let Some(log) = e.stream.as_mut() {
                    log.push(
                        &p.response.payload_data,
                        json!({
                            "direction": direction,
                            "opcode": opcode,
                            "payload_encoding": if opcode == 2 { "base64" } else { "utf8" },
                            "timestamp_ms": p.timestamp,
                        }),
                        &mut budget,
                    );
                }
            }
            NetworkEvent::WebSocketFrameError(p) => {
                if let Some(log) = e.stream.as_mut() {
                    log.errors.push(p.error_message);
                }
            }
            NetworkEvent::WebSocketClosed(p) => {
                if let Some(log) = e.stream.as_mut() {
                    log.closed = true;
                }
                e.state = State::Finished;
                e.ended_at = p.timestamp;
            }
            _ => {}
        }
        self.stream_budget = budget;
        if ends {
            self.note_end(&id);
        }
    }

    fn open_entries(&self) -> impl Iterator<Item = &Entry> {
        self.inflight
            .iter()
            .filter_map(|id| self.chains.get(id)?.last())
            .map(|&i| &self.entries[i])
    }

    /// Requests started and not yet finished or failed, long-lived streams (EventSource)
    /// excepted: an open event stream would otherwise keep a page from ever being idle.
    pub fn inflight(&self) -> usize {
        self.open_entries()
            .filter(|e| !STREAMING_TYPES.contains(&e.resource_type.as_str()))
            .count()
    }

    /// What is in flight now.
    pub fn snapshot(&self) -> CaptureSnapshot {
        let mut snap = CaptureSnapshot::default();
        for e in self.open_entries() {
            snap.inflight_total += 1;
            *snap
                .pending_by_resource_type
                .entry(e.resource_type.clone())
                .or_default() += 1;
            if !STREAMING_TYPES.contains(&e.resource_type.as_str()) {
                snap.not_idle += 1;
            }
            if is_xhr(&e.resource_type) {
                snap.pending_xhr.push(redact::url(&e.url));
            } else if !STREAMING_TYPES.contains(&e.resource_type.as_str()) {
                snap.pending_named.push(format!(
                    "{} {}",
                    e.resource_type,
                    pending::host_of(&e.url)
                ));
            }
        }
        snap.pending_xhr.sort();
        snap.pending_named.sort();
        snap
    }

    /// Freeze the "at capture" counts and return the readiness warnings
    /// (`network_not_idle`, `pending_xhr_at_capture`).
    pub fn mark_capture(&mut self) -> Vec<Warning> {
        let snap = self.snapshot();
        let warnings = readiness_warnings(&snap);
        self.at_capture = Some(snap);
        warnings
    }

    /// Responses whose announced wire headers (`set-cookie` among them) have not arrived:
    /// Chromium sends them in an event of their own, which can trail the response.
    pub fn awaiting_extra_info(&self) -> usize {
        self.extra_announced
            .iter()
            .map(|(id, n)| n.saturating_sub(self.response_extra.get(id).map_or(0, Vec::len)))
            .sum()
    }

    /// Milliseconds since the last request started, responded or ended.
    pub fn quiet_ms(&self) -> u64 {
        self.last_activity.elapsed().as_millis() as u64
    }

    /// The main document's last hop, once seen.
    pub fn document(&self) -> Option<&Entry> {
        let hops = self.chains.get(self.document.as_deref()?)?;
        hops.last().map(|&i| &self.entries[i])
    }

    /// Redirects the main document followed.
    pub fn document_redirects(&self) -> usize {
        self.document
            .as_deref()
            .and_then(|d| self.chains.get(d))
            .map_or(0, |h| h.len().saturating_sub(1))
    }

    /// Whether `e` is the last hop of its chain (the only one with a body to fetch).
    pub fn is_last_hop(&self, e: &Entry) -> bool {
        e.redirected_to.is_none()
    }

    /// The `network.json` document. `bodies` maps entry ids to what body capture did;
    /// `capture` describes the capture options in effect.
    pub fn to_json(
        &self,
        redact_headers: bool,
        bodies: &HashMap<String, BodyRecord>,
        capture: Value,
    ) -> Value {
        let t0 = self.t0.unwrap_or(0.0);
        let doc = self.document();
        let entries: Vec<Value> = self
            .entries
            .iter()
            .map(|e| {
                let mut v = e.to_json(t0, redact_headers, bodies.get(&e.id));
                v["is_main_document"] = json!(doc.is_some_and(|d| d.id == e.id));
                v
            })
            .collect();
        let snap = self.at_capture.clone().unwrap_or_else(|| self.snapshot());
        let mut summary = summary::summary(
            self.entries
                .iter()
                .map(|e| (e.state.as_str(), e.response.is_some())),
            snap.inflight_total,
            &snap.pending_by_resource_type,
            redact_headers,
        );
        let streams = |kind: StreamKind| -> usize {
            self.entries
                .iter()
                .filter_map(|e| e.stream.as_ref())
                .filter(|s| s.kind == kind)
                .map(|s| s.total)
                .sum()
        };
        summary["not_idle_at_capture"] = json!(snap.not_idle);
        summary["pending_xhr_at_capture"] = json!(snap.pending_xhr.len());
        summary["from_cache_total"] = json!(self.entries.iter().filter(|e| e.from_cache()).count());
        summary["from_service_worker_total"] = json!(self
            .entries
            .iter()
            .filter(|e| e.from_service_worker())
            .count());
        summary["websocket_frames_total"] = json!(streams(StreamKind::WebSocket));
        summary["undecodable_events"] = json!(self.undecodable);
        summary["event_source_messages_total"] = json!(streams(StreamKind::EventSource));
        let count = |status: &str| bodies.values().filter(|b| b.status == status).count();
        summary["bodies"] = json!({
            "captured": count("captured"),
            "truncated": count("truncated"),
            "failed": count("failed"),
            "skipped": count("skipped"),
        });
        json!({
            "schema_version": 1,
            "source": "cdp",
            "capture": capture,
            "entries": entries,
            "summary": summary,
        })
    }
}

#[cfg(test)]
mod tests;
