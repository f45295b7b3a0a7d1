//! A minimal `network.json` built from one tab session's `Network.*` events, plus the
//! in-flight bookkeeping the `idle` readiness signal uses.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use serde_json::{json, Value};

use crate::sdk::redact;

/// One request as seen through CDP.
#[derive(Debug, Clone, Default)]
pub struct NetworkEntry {
    /// CDP request id.
    pub request_id: String,
    /// Current URL (the last hop after redirects).
    pub url: String,
    /// Method.
    pub method: String,
    /// CDP resource type (`Document`, `XHR`, `Fetch`, ...).
    pub resource_type: String,
    /// Frame that issued it.
    pub frame_id: String,
    /// Response status, once responded.
    pub status: Option<u16>,
    /// Response MIME type.
    pub mime_type: Option<String>,
    /// `pending`, `responded`, `finished` or `failed`.
    pub state: &'static str,
    /// Request headers as (name, value).
    pub request_headers: Vec<(String, String)>,
    /// Response headers as (lower-case name, value).
    pub response_headers: Vec<(String, String)>,
    /// Redirect hops: (url, status).
    pub redirects: Vec<(String, u16)>,
    /// `Network.loadingFailed` error text.
    pub failure: Option<String>,
    /// Encoded bytes received, once finished.
    pub encoded_bytes: Option<f64>,
}

/// The log of one session.
#[derive(Debug)]
pub struct NetworkLog {
    entries: Vec<NetworkEntry>,
    index: HashMap<String, usize>,
    inflight: HashSet<String>,
    last_activity: Instant,
    main_frame: String,
    document: Option<String>,
}

fn header_pairs(v: &Value, lower: bool) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(map) = v.as_object() {
        for (k, val) in map {
            let name = if lower {
                k.to_ascii_lowercase()
            } else {
                k.clone()
            };
            let text = val
                .as_str()
                .map(String::from)
                .unwrap_or_else(|| val.to_string());
            // CDP joins repeated headers with newlines.
            for part in text.split('\n') {
                out.push((name.clone(), part.to_string()));
            }
        }
    }
    out
}

fn s(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

impl NetworkLog {
    /// A log whose main document is the one loaded in frame `main_frame`.
    pub fn new(main_frame: &str) -> NetworkLog {
        NetworkLog {
            entries: Vec::new(),
            index: HashMap::new(),
            inflight: HashSet::new(),
            last_activity: Instant::now(),
            main_frame: main_frame.to_string(),
            document: None,
        }
    }

    /// Fold one CDP event in; other domains are ignored.
    pub fn on_event(&mut self, method: &str, p: &Value) {
        let id = s(p, "requestId");
        match method {
            "Network.requestWillBeSent" => {
                self.last_activity = Instant::now();
                self.inflight.insert(id.clone());
                let request = &p["request"];
                if let Some(&i) = self.index.get(&id) {
                    // A redirect: same id, the previous hop's response rides along.
                    let e = &mut self.entries[i];
                    let status = p["redirectResponse"]["status"].as_u64().unwrap_or(0);
                    e.redirects.push((e.url.clone(), status as u16));
                    e.url = s(request, "url");
                    e.state = "pending";
                    return;
                }
                let entry = NetworkEntry {
                    request_id: id.clone(),
                    url: s(request, "url"),
                    method: s(request, "method"),
                    resource_type: s(p, "type"),
                    frame_id: s(p, "frameId"),
                    state: "pending",
                    request_headers: header_pairs(&request["headers"], false),
                    ..NetworkEntry::default()
                };
                let is_main_doc =
                    entry.resource_type == "Document" && entry.frame_id == self.main_frame;
                if is_main_doc && !entry.url.starts_with("about:") {
                    self.document = Some(id.clone());
                }
                self.index.insert(id, self.entries.len());
                self.entries.push(entry);
            }
            "Network.responseReceived" => {
                self.last_activity = Instant::now();
                if let Some(&i) = self.index.get(&id) {
                    let r = &p["response"];
                    let e = &mut self.entries[i];
                    e.status = r["status"].as_u64().map(|n| n as u16);
                    e.mime_type = r["mimeType"].as_str().map(String::from);
                    e.response_headers = header_pairs(&r["headers"], true);
                    e.url = s(r, "url");
                    e.state = "responded";
                }
            }
            "Network.loadingFinished" | "Network.loadingFailed" => {
                self.last_activity = Instant::now();
                self.inflight.remove(&id);
                if let Some(&i) = self.index.get(&id) {
                    let e = &mut self.entries[i];
                    if method == "Network.loadingFinished" {
                        e.state = "finished";
                        e.encoded_bytes = p["encodedDataLength"].as_f64();
                    } else {
                        e.state = "failed";
                        e.failure = p["errorText"].as_str().map(String::from);
                    }
                }
            }
            _ => {}
        }
    }

    /// Requests started and not yet finished or failed.
    pub fn inflight(&self) -> usize {
        self.inflight.len()
    }

    /// URLs of XHR/Fetch requests still in flight.
    pub fn pending_xhr(&self) -> Vec<String> {
        self.inflight
            .iter()
            .filter_map(|id| self.index.get(id))
            .map(|&i| &self.entries[i])
            .filter(|e| e.resource_type == "XHR" || e.resource_type == "Fetch")
            .map(|e| redact::url(&e.url))
            .collect()
    }

    /// Milliseconds since the last request started, responded or ended.
    pub fn quiet_ms(&self) -> u64 {
        self.last_activity.elapsed().as_millis() as u64
    }

    /// The main document request, once seen.
    pub fn document(&self) -> Option<&NetworkEntry> {
        self.document
            .as_ref()
            .and_then(|id| self.index.get(id))
            .map(|&i| &self.entries[i])
    }

    /// The `network.json` document.
    pub fn to_json(&self, request_id: &str, redact_headers: bool) -> Value {
        let entries: Vec<Value> = self
            .entries
            .iter()
            .map(|e| {
                json!({
                    "request_id": e.request_id,
                    "url": redact::url(&e.url),
                    "method": e.method,
                    "resource_type": e.resource_type,
                    "frame_id": e.frame_id,
                    "status": e.status,
                    "mime_type": e.mime_type,
                    "state": e.state,
                    "is_main_document": self.document.as_deref() == Some(e.request_id.as_str()),
                    "redirects": e.redirects.iter().map(|(u, st)| json!({"url": redact::url(u), "status": st})).collect::<Vec<_>>(),
                    "failure_text": e.failure,
                    "encoded_bytes": e.encoded_bytes,
                    "request_headers": redact::headers(&e.request_headers, redact_headers),
                    "response_headers": redact::headers(&e.response_headers, redact_headers),
                })
            })
            .collect();
        json!({
            "schema_version": 1,
            "request_id": request_id,
            "source": "cdp",
            "redacted": redact_headers,
            "summary": {
                "requests_total": self.entries.len(),
                "pending_at_capture": self.inflight.len(),
                "failed": self.entries.iter().filter(|e| e.state == "failed").count(),
            },
            "entries": entries,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_redirect_and_redaction() {
        let mut log = NetworkLog::new("F1");
        log.on_event(
            "Network.requestWillBeSent",
            &json!({"requestId":"1","type":"Document","frameId":"F1",
                "request":{"url":"http://a/x","method":"GET","headers":{"Cookie":"s=1"}}}),
        );
        log.on_event(
            "Network.requestWillBeSent",
            &json!({"requestId":"1","type":"Document","frameId":"F1","redirectResponse":{"status":302},
                "request":{"url":"http://a/y","method":"GET","headers":{}}}),
        );
        assert_eq!(log.inflight(), 1);
        log.on_event(
            "Network.responseReceived",
            &json!({"requestId":"1","response":{"url":"http://a/y","status":200,"mimeType":"text/html",
                "headers":{"Set-Cookie":"a=1\nb=2","Content-Type":"text/html"}}}),
        );
        log.on_event(
            "Network.loadingFinished",
            &json!({"requestId":"1","encodedDataLength":10}),
        );
        assert_eq!(log.inflight(), 0);
        let doc = log.document().unwrap();
        assert_eq!(doc.status, Some(200));
        assert_eq!(doc.url, "http://a/y");
        let v = log.to_json("r", true);
        let e = &v["entries"][0];
        assert_eq!(e["state"], "finished");
        assert_eq!(e["redirects"][0]["status"], 302);
        assert_eq!(e["response_headers"]["set-cookie"], "***\n***");
        assert_eq!(e["request_headers"]["Cookie"], "***");
        assert_eq!(e["is_main_document"], true);
    }
}
