//! `--recent-requests-cap N`: the last N request/response metadata records across the
//! host's browser, folded from `Network.*` events, served at `GET /recent-requests`.
//!
//! Metadata only: URL, method, type, status, sizes, timing and failure. Headers and bodies
//! are not kept (they carry credentials); the per-fetch `network.json` is where those live.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use serde_json::{json, Value};

use crate::sdk::cdp::network::{NetworkEvent, RequestWillBeSent};
use crate::sdk::cdp::CdpEvent;

/// One request as the recorder saw it.
#[derive(Debug, Clone, PartialEq)]
struct Record {
    seq: u64,
    target_id: String,
    request_id: String,
    url: String,
    method: String,
    resource_type: String,
    state: &'static str,
    status: Option<u64>,
    mime_type: Option<String>,
    from_cache: bool,
    redirected_to: Option<String>,
    encoded_bytes: Option<u64>,
    failure: Option<String>,
    started_wall: Option<f64>,
    started_mono: Option<f64>,
    ended_mono: Option<f64>,
}

impl Record {
    fn to_json(&self) -> Value {
        let duration_ms = match (self.started_mono, self.ended_mono) {
            (Some(a), Some(b)) if b >= a => Some(((b - a) * 1000.0 * 10.0).round() / 10.0),
            _ => None,
        };
        json!({
            "seq": self.seq,
            "target_id": self.target_id,
            "request_id": self.request_id,
            "url": self.url,
            "method": self.method,
            "resource_type": self.resource_type,
            "state": self.state,
            "status": self.status,
            "mime_type": self.mime_type,
            "from_cache": self.from_cache,
            "redirected_to": self.redirected_to,
            "encoded_bytes": self.encoded_bytes,
            "failure": self.failure,
            "started_at": self.started_wall.and_then(wall_to_rfc3339),
            "duration_ms": duration_ms,
        })
    }
}

/// RFC 3339 with milliseconds from CDP's `wallTime` (Unix seconds as a float).
fn wall_to_rfc3339(secs: f64) -> Option<String> {
    let millis = (secs * 1000.0).round() as i128;
    let t = time::OffsetDateTime::from_unix_timestamp_nanos(millis * 1_000_000).ok()?;
    t.format(&time::format_description::well_known::Rfc3339)
        .ok()
}

/// The bounded store; shared between the recorder task and the listener.
#[derive(Debug)]
pub struct RecentRequests {
    cap: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    records: VecDeque<Record>,
    /// `(session, request id)` → seq of the live record for that request.
    live: HashMap<(String, String), u64>,
    /// session → target id.
    sessions: HashMap<String, String>,
    next_seq: u64,
    dropped: u64,
    /// `Network.*` events that did not decode.
    undecodable: u64,
}

impl Inner {
    fn get_mut(&mut self, seq: u64) -> Option<&mut Record> {
        let first = self.records.front()?.seq;
        let idx = usize::try_from(seq.checked_sub(first)?).ok()?;
        self.records.get_mut(idx)
    }

    fn live_mut(&mut self, session: &str, request_id: &str) -> Option<&mut Record> {
        let seq = *self
            .live
            .get(&(session.to_string(), request_id.to_string()))?;
        self.get_mut(seq)
    }
}

impl RecentRequests {
    /// A store keeping the last `cap` records (`cap` > 0).
    pub fn new(cap: usize) -> RecentRequests {
        RecentRequests {
            cap: cap.max(1),
            inner: Mutex::new(Inner::default()),
        }
    }

    /// How many records are kept.
    pub fn cap(&self) -> usize {
        self.cap
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A poisoned lock only means a panic elsewhere; the records are still usable.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Note which target a flattened session belongs to.
    pub fn attach(&self, session: &str, target_id: &str) {
        self.lock()
            .sessions
            .insert(session.to_string(), target_id.to_string());
    }

    /// Forget a session (its target closed or detached); its records stay.
    pub fn detach(&self, session: &str) {
        let mut inner = self.lock();
        inner.sessions.remove(session);
        inner.live.retain(|(s, _), _| s != session);
    }

    /// Drop every record (a profile switch: records of one identity do not outlive it).
    pub fn clear(&self) {
        let mut inner = self.lock();
        inner.records.clear();
        inner.live.clear();
    }

    /// Fold one `Network.*` event of a flattened session into the store, decoded by the
    /// same [`NetworkEvent::decode`] as the browser path's `network.json`; an event that
    /// does not decode is counted (`undecodable_events`).
    pub fn fold(&self, event: &CdpEvent) {
        let Some(session) = event.session_id.as_deref() else {
            return;
        };
        let decoded = NetworkEvent::decode(&event.method, &event.params);
        let mut inner = self.lock();
        let ev = match decoded {
            Ok(ev) => ev,
            Err(_) => {
                inner.undecodable += 1;
                return;
            }
        };
        match ev {
            NetworkEvent::RequestWillBeSent(p) => self.started(&mut inner, session, &p),
            NetworkEvent::ResponseReceived(p) => {
                if let Some(r) = inner.live_mut(session, &p.request_id) {
                    r.status = p.response.status;
                    r.mime_type = p.response.mime_type.clone();
                    r.from_cache = p.response.from_cache();
                    r.state = "responded";
                }
            }
            NetworkEvent::ServedFromCache(p) => {
                if let Some(r) = inner.live_mut(session, &p.request_id) {
                    r.from_cache = true;
                }
            }
            NetworkEvent::LoadingFinished(p) => {
                if let Some(r) = inner.live_mut(session, &p.request_id) {
                    r.state = "finished";
                    r.encoded_bytes = p.encoded_data_length.map(|b| b as u64);
                    r.ended_mono = p.timestamp;
                }
                inner.live.remove(&(session.to_string(), p.request_id));
            }
            NetworkEvent::LoadingFailed(p) => {
                if let Some(r) = inner.live_mut(session, &p.request_id) {
                    r.state = "failed";
                    r.failure = Some(p.error_text.clone());
                    r.ended_mono = p.timestamp;
                }
                inner.live.remove(&(session.to_string(), p.request_id));
            }
            _ => {}
        }
    }

    /// `requestWillBeSent`: a new record (closing the hop it redirects from).
    fn started(&self, inner: &mut Inner, session: &str, p: &RequestWillBeSent) {
        let request_id = p.request_id.as_str();
        if request_id.is_empty() {
            return;
        }
        let url = p.request.url.clone();
        if let Some(redirect) = &p.redirect_response {
            // The same request id continues at `url`: close the previous hop.
            if let Some(prev) = inner.live_mut(session, request_id) {
                prev.status = redirect.status;
                prev.mime_type = redirect.mime_type.clone();
                prev.state = "finished";
                prev.redirected_to = Some(url.clone());
                prev.ended_mono = p.timestamp;
            }
        }
        let target_id = inner.sessions.get(session).cloned().unwrap_or_default();
        let seq = inner.next_seq;
        inner.next_seq += 1;
        let method = match p.request.method.as_str() {
            "" => "GET".to_string(),
            m => m.to_string(),
        };
        inner.records.push_back(Record {
            seq,
            target_id,
            request_id: request_id.to_string(),
            url,
            method,
            resource_type: p
                .resource_type
                .as_ref()
                .map_or("Other", |t| t.as_str())
                .to_string(),
            state: "pending",
            status: None,
            mime_type: None,
            from_cache: false,
            redirected_to: None,
            encoded_bytes: None,
            failure: None,
            started_wall: p.wall_time,
            started_mono: p.timestamp,
            ended_mono: None,
        });
        inner
            .live
            .insert((session.to_string(), request_id.to_string()), seq);
        while inner.records.len() > self.cap {
            if let Some(old) = inner.records.pop_front() {
                inner.dropped += 1;
                inner.live.retain(|_, s| *s != old.seq);
            }
        }
    }

    /// The `GET /recent-requests` document, oldest record first.
    pub fn document(&self) -> Value {
        let inner = self.lock();
        json!({
            "enabled": true,
            "cap": self.cap,
            "dropped": inner.dropped,
            "undecodable_events": inner.undecodable,
            "records": inner.records.iter().map(Record::to_json).collect::<Vec<_>>(),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn ev(method: &str, params: Value) -> CdpEvent {
        CdpEvent {
            method: method.into(),
            params,
            session_id: Some("S".into()),
        }
    }

    #[test]
    fn folds_a_redirect_and_a_failure_and_keeps_the_cap() {
        let store = RecentRequests::new(3);
        store.attach("S", "T1");
        store.fold(&ev("Network.requestWillBeSent", json!({"requestId": "1", "request": {"url": "http://a/old", "method": "GET"}, "type": "Document", "timestamp": 1.0, "wallTime": 1_700_000_000.25})));
        store.fold(&ev("Network.requestWillBeSent", json!({"requestId": "1", "request": {"url": "http://a/new", "method": "GET"}, "type": "Document", "timestamp": 1.1, "redirectResponse": {"status": 301}})));
        store.fold(&ev(
            "Network.responseReceived",
            json!({"requestId": "1", "response": {"status": 200, "mimeType": "text/html"}}),
        ));
        store.fold(&ev(
            "Network.loadingFinished",
            json!({"requestId": "1", "timestamp": 1.5, "encodedDataLength": 120.0}),
        ));
        let doc = store.document();
        let r = doc["records"].as_array().unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0]["status"], 301);
        assert_eq!(r[0]["redirected_to"], "http://a/new");
        assert_eq!(r[0]["target_id"], "T1");
        assert_eq!(r[0]["started_at"], "2023-11-14T22:13:20.25Z");
        assert_eq!(r[1]["state"], "finished");
        assert_eq!(r[1]["status"], 200);
        assert_eq!(r[1]["duration_ms"], 400.0);
        assert_eq!(r[1]["encoded_bytes"], 120);
        store.fold(&ev("Network.requestWillBeSent", json!({"requestId": "2", "request": {"url": "http://a/x", "method": "POST"}, "type": "XHR"})));
        store.fold(&ev(
            "Network.loadingFailed",
            json!({"requestId": "2", "errorText": "net::ERR_CONNECTION_REFUSED"}),
        ));
        store.fold(&ev(
            "Network.requestWillBeSent",
            json!({"requestId": "3", "request": {"url": "http://a/y"}, "type": "Fetch"}),
        ));
        let doc = store.document();
        let r = doc["records"].as_array().unwrap();
        assert_eq!(r.len(), 3, "capped");
        assert_eq!(doc["dropped"], 1);
        assert_eq!(r[1]["failure"], "net::ERR_CONNECTION_REFUSED");
        assert_eq!(r[2]["state"], "pending");
        // A late event for an evicted record is ignored, not misapplied.
        store.fold(&ev(
            "Network.loadingFinished",
            json!({"requestId": "zzz", "timestamp": 2.0}),
        ));
        store.clear();
        assert_eq!(store.document()["records"].as_array().unwrap().len(), 0);
    }

    /// Events go through the decoder `network.json` uses: unknown fields and an unknown
    /// resource type are kept, and an event that does not decode is counted, not lost.
    #[test]
    fn unknown_fields_and_types_are_kept_and_undecodable_events_counted() {
        let store = RecentRequests::new(4);
        store.fold(&ev("Network.requestWillBeSent", json!({"requestId": "1", "request": {"url": "http://a/", "method": "GET", "newField": 1}, "type": "Teleport", "futureParam": {"x": true}})));
        store.fold(&ev(
            "Network.responseReceived",
            json!({"requestId": "1", "type": "Teleport", "response": {"status": 200, "mimeType": "text/html", "fromEdgeCache": true}}),
        ));
        store.fold(&ev(
            "Network.loadingFinished",
            json!({"requestId": "1", "encodedDataLength": "many"}),
        ));
        let doc = store.document();
        let r = &doc["records"][0];
        assert_eq!(r["resource_type"], "Teleport");
        assert_eq!(r["status"], 200);
        assert_eq!(
            r["state"], "responded",
            "the bad loadingFinished was not applied"
        );
        assert_eq!(doc["undecodable_events"], 1);
    }
}
