//! One request hop as CDP reports it, and its `network.json` entry.

use base64::Engine as _;
use serde_json::{json, Value};

use super::bodies::BodyRecord;
use super::hints::{self, GraphqlHint};
use super::streams::StreamLog;
use crate::sdk::cdp::network as cdp;
use crate::sdk::redact;

/// Where a request stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum State {
    /// Sent, no response headers yet.
    #[default]
    Pending,
    /// Response headers arrived, body still loading.
    Responded,
    /// Loaded completely (a redirect hop counts once the next hop starts).
    Finished,
    /// `Network.loadingFailed`.
    Failed,
}

impl State {
    /// The JSON name.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Responded => "responded",
            State::Finished => "finished",
            State::Failed => "failed",
        }
    }

    /// Neither finished nor failed.
    pub fn is_open(self) -> bool {
        matches!(self, State::Pending | State::Responded)
    }
}

/// The response half of a hop.
#[derive(Debug, Clone, Default)]
pub struct Response {
    /// HTTP status.
    pub status: u16,
    /// Status text.
    pub status_text: String,
    /// Headers from `Network.Response` (lower-case names).
    pub headers: Vec<(String, String)>,
    /// MIME type as the browser sniffed it.
    pub mime_type: String,
    /// `http/1.1`, `h2`, ...
    pub protocol: Option<String>,
    /// `ip:port` of the peer.
    pub remote_address: Option<String>,
    /// Served from the HTTP (disk) cache.
    pub from_disk_cache: bool,
    /// Served from the prefetch cache.
    pub from_prefetch_cache: bool,
    /// Served by a service worker.
    pub from_service_worker: bool,
    /// `network`, `cache-storage`, `http-cache` or `fallback-code` when a service worker answered.
    pub service_worker_response_source: Option<String>,
    /// Whether the connection was reused.
    pub connection_reused: Option<bool>,
    /// CDP `ResourceTiming`, milliseconds relative to its `requestTime`.
    pub resource_timing: Value,
    /// Bytes received for the headers (`Response.encodedDataLength`).
    pub header_bytes: Option<f64>,
}

/// Post data as the request carried it.
#[derive(Debug, Clone, Default)]
pub struct PostData {
    /// `hasPostData`.
    pub present: bool,
    /// The bytes CDP inlined (may be missing for large bodies).
    pub bytes: Option<Vec<u8>>,
    /// The request's `content-type`.
    pub content_type: Option<String>,
}

/// `Network.loadingFailed` details.
#[derive(Debug, Clone, Default)]
pub struct Failure {
    /// `net::ERR_...`.
    pub error_text: String,
    /// The page (or navigation) cancelled it.
    pub canceled: bool,
    /// CSP, mixed content, ORB, ...
    pub blocked_reason: Option<String>,
    /// CORS error name.
    pub cors_error: Option<String>,
}

/// One request hop. CDP reuses a `requestId` across redirects; each hop gets its own entry.
#[derive(Debug, Clone, Default)]
pub struct Entry {
    /// Stable id: the CDP request id for the first hop, `<id>.r<N>` for the Nth redirect hop.
    pub id: String,
    /// The CDP request id (shared by the hops of one redirect chain).
    pub cdp_request_id: String,
    /// Position in the redirect chain (0 first).
    pub hop: usize,
    /// Id of the hop before this one.
    pub redirected_from: Option<String>,
    /// Id of the hop after this one.
    pub redirected_to: Option<String>,
    /// Current state.
    pub state: State,
    /// Request URL of this hop.
    pub url: String,
    /// Method.
    pub method: String,
    /// CDP resource type (`Document`, `XHR`, `Fetch`, `WebSocket`, ...).
    pub resource_type: String,
    /// Frame that issued it.
    pub frame_id: String,
    /// Loader (document load) it belongs to.
    pub loader_id: String,
    /// Priority (initial, updated by `resourceChangedPriority`).
    pub priority: Option<String>,
    /// CDP initiator, already mapped to the artifact's shape.
    pub initiator: Value,
    /// Headers from `Network.Request` (lower-case names).
    pub request_headers: Vec<(String, String)>,
    /// Wire headers from `requestWillBeSentExtraInfo` (cookies show up here).
    pub request_headers_extra: Option<Vec<(String, String)>>,
    /// Cookies the browser attached or blocked (`associatedCookies`).
    pub request_cookies: Vec<Value>,
    /// Post data.
    pub post: PostData,
    /// GraphQL hint, from the URL or post body.
    pub graphql: Option<GraphqlHint>,
    /// The response, once headers arrived.
    pub response: Option<Response>,
    /// Wire headers from `responseReceivedExtraInfo` (`set-cookie` shows up here).
    pub response_headers_extra: Option<Vec<(String, String)>>,
    /// Cookies the response tried to set that were blocked.
    pub blocked_response_cookies: Vec<Value>,
    /// `Network.requestServedFromCache`.
    pub from_memory_cache: bool,
    /// Failure details.
    pub failure: Option<Failure>,
    /// Monotonic seconds: sent, response headers, finished/failed.
    pub sent_at: Option<f64>,
    /// Monotonic seconds when response headers arrived.
    pub responded_at: Option<f64>,
    /// Monotonic seconds when it finished or failed.
    pub ended_at: Option<f64>,
    /// Wall-clock seconds when sent.
    pub wall_time: Option<f64>,
    /// Sum of `dataReceived.dataLength` (decoded bytes).
    pub decoded_bytes: u64,
    /// Bytes over the wire (`loadingFinished`, or the redirect response's).
    pub encoded_bytes: Option<f64>,
    /// WebSocket frames or EventSource messages.
    pub stream: Option<StreamLog>,
    /// When the collector saw the request start (the stall window counts from here).
    pub seen: Option<std::time::Instant>,
    /// `renderBlockingBehavior` (`Blocking`, `InBodyParserBlocking`, `NonBlocking`, ...).
    pub render_blocking: Option<String>,
}

/// Header pairs from a CDP `Headers` object, names lower-case; CDP joins repeats with `\n`.
pub fn header_pairs(v: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(map) = v.as_object() {
        for (k, val) in map {
            let text = val
                .as_str()
                .map(String::from)
                .unwrap_or_else(|| val.to_string());
            for part in text.split('\n') {
                out.push((k.to_ascii_lowercase(), part.to_string()));
            }
        }
    }
    out
}

/// `base` with every header named in `extra` replaced by `extra`'s values.
pub fn merge_headers(
    base: &[(String, String)],
    extra: Option<&Vec<(String, String)>>,
) -> Vec<(String, String)> {
    let Some(extra) = extra else {
        return base.to_vec();
    };
    let mut out: Vec<(String, String)> = base
        .iter()
        .filter(|(n, _)| !extra.iter().any(|(e, _)| e == n))
        .cloned()
        .collect();
    out.extend(extra.iter().cloned());
    out
}

fn s(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

fn opt_s(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .map(String::from)
}

/// Most initiator stack frames kept (async parents included).
const MAX_STACK_FRAMES: usize = 30;

/// The initiator in the artifact's shape; `id_of` maps a CDP request id to an entry id.
pub fn initiator(v: &Value, id_of: impl Fn(&str) -> Option<String>) -> Value {
    if !v.is_object() {
        return Value::Null;
    }
    let mut frames = Vec::new();
    let mut stack = v.get("stack");
    while let Some(st) = stack.filter(|s| s.is_object()) {
        for f in st["callFrames"].as_array().into_iter().flatten() {
            if frames.len() >= MAX_STACK_FRAMES {
                break;
            }
            // The readiness probe's wrappers of fetch, XHR and timers are ours, not the page's.
            if f["url"] == crate::sdk::browser::assets::READINESS_SOURCE_URL {
                continue;
            }
            let mut frame = json!({
                "function_name": f["functionName"],
                "url": redact::url(f["url"].as_str().unwrap_or("")),
                "line_number": f["lineNumber"],
                "column_number": f["columnNumber"],
            });
            // Frames of an async parent stack say what crossed the gap (`await`, `setTimeout`).
            if let Some(d) = st.get("description").and_then(Value::as_str) {
                frame["async_description"] = json!(d);
            }
            frames.push(frame);
        }
        stack = st.get("parent");
    }
    let mut out = json!({"type": s(v, "type")});
    if let Some(u) = opt_s(v, "url") {
        out["url"] = json!(redact::url(&u));
        out["line_number"] = v["lineNumber"].clone();
        out["column_number"] = v["columnNumber"].clone();
    }
    if let Some(rid) = opt_s(v, "requestId") {
        out["request_id"] = json!(id_of(&rid).unwrap_or(rid));
    }
    if !frames.is_empty() {
        out["stack"] = json!(frames);
    }
    out
}

/// The post data of a `Network.Request`: `postDataEntries` (base64) or `postData`.
pub fn post_data(request: &cdp::Request, headers: &[(String, String)]) -> PostData {
    let engine = base64::engine::general_purpose::STANDARD;
    let entries: Option<Vec<u8>> = request.post_data_entries.as_ref().map(|list| {
        list.iter()
            .filter_map(|e| e.bytes.as_deref())
            .filter_map(|b| engine.decode(b).ok())
            .flatten()
            .collect()
    });
    let bytes = entries
        .filter(|b| !b.is_empty())
        .or_else(|| request.post_data.as_ref().map(|t| t.as_bytes().to_vec()));
    PostData {
        present: request.has_post_data || bytes.is_some(),
        bytes,
        content_type: headers
            .iter()
            .find(|(n, _)| n == "content-type")
            .map(|(_, v)| v.clone()),
    }
}

/// The response half of a `Network.Response`.
pub fn response(r: &cdp::Response) -> Response {
    let ip = r.remote_ip_address.clone().filter(|t| !t.is_empty());
    let remote_address = ip.map(|ip| match r.remote_port {
        Some(port) if ip.contains(':') => format!("[{ip}]:{port}"),
        Some(port) => format!("{ip}:{port}"),
        None => ip,
    });
    let headers = header_pairs(&r.headers);
    // Behind the host's egress proxy the browser only knows the proxy's address; the proxy
    // names the server it connected to (plain HTTP only).
    let remote_address = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("x-afhttp-remote-address"))
        .map(|(_, v)| v.clone())
        .or(remote_address);
    Response {
        status: r.status.map_or(0, |n| n as u16),
        status_text: r.status_text.clone(),
        headers,
        mime_type: r.mime_type.clone().unwrap_or_default(),
        protocol: r.protocol.clone().filter(|t| !t.is_empty()),
        remote_address,
        from_disk_cache: r.from_disk_cache,
        from_prefetch_cache: r.from_prefetch_cache,
        from_service_worker: r.from_service_worker,
        service_worker_response_source: r
            .service_worker_response_source
            .clone()
            .filter(|t| !t.is_empty()),
        connection_reused: r.connection_reused,
        resource_timing: r.timing.clone().unwrap_or(Value::Null),
        header_bytes: r.encoded_data_length,
    }
}

impl Entry {
    /// A hop from `Network.requestWillBeSent`.
    pub fn from_request(
        id: String,
        hop: usize,
        p: &cdp::RequestWillBeSent,
        initiator: Value,
    ) -> Entry {
        let request = &p.request;
        let headers = header_pairs(&request.headers);
        let post = post_data(request, &headers);
        let url = request.url.clone();
        let graphql = hints::graphql(&url, post.bytes.as_deref());
        Entry {
            id,
            cdp_request_id: p.request_id.clone(),
            hop,
            url,
            method: request.method.clone(),
            resource_type: super::type_name(p.resource_type.as_ref()),
            frame_id: p.frame_id.clone(),
            loader_id: p.loader_id.clone(),
            priority: request.initial_priority.clone().filter(|t| !t.is_empty()),
            initiator,
            request_headers: headers,
            post,
            graphql,
            sent_at: p.timestamp,
            wall_time: p.wall_time,
            seen: Some(std::time::Instant::now()),
            render_blocking: p.render_blocking_behavior.clone().filter(|t| !t.is_empty()),
            ..Entry::default()
        }
    }

    /// HTTP status, once responded.
    pub fn status(&self) -> Option<u16> {
        self.response.as_ref().map(|r| r.status)
    }

    /// MIME type, once responded.
    pub fn mime_type(&self) -> Option<String> {
        self.response.as_ref().map(|r| r.mime_type.clone())
    }

    /// Response headers with the extra-info (wire) headers merged in.
    pub fn response_headers(&self) -> Vec<(String, String)> {
        match &self.response {
            Some(r) => merge_headers(&r.headers, self.response_headers_extra.as_ref()),
            None => Vec::new(),
        }
    }

    /// Request headers with the extra-info (wire) headers merged in.
    pub fn all_request_headers(&self) -> Vec<(String, String)> {
        merge_headers(&self.request_headers, self.request_headers_extra.as_ref())
    }

    /// Served from any cache (disk, memory or prefetch).
    pub fn from_cache(&self) -> bool {
        self.from_memory_cache
            || self
                .response
                .as_ref()
                .is_some_and(|r| r.from_disk_cache || r.from_prefetch_cache)
    }

    /// Served by a service worker.
    pub fn from_service_worker(&self) -> bool {
        self.response
            .as_ref()
            .is_some_and(|r| r.from_service_worker)
    }

    /// The entry as JSON. `t0` is the monotonic origin of `timing`; `body` is what body
    /// capture did for this entry, if it was selected.
    pub fn to_json(&self, t0: f64, redact_headers: bool, body: Option<&BodyRecord>) -> Value {
        let ms = |t: Option<f64>| t.map(|t| crate::sdk::fetch::outcome::round1((t - t0) * 1000.0));
        let post_size = self.post.bytes.as_ref().map(Vec::len);
        let post_json_valid = match (&self.post.bytes, &self.post.content_type) {
            (Some(b), Some(ct)) if hints::is_json_mime(ct) => Some(hints::json_valid(b)),
            (Some(b), _) if self.graphql.is_some() => Some(hints::json_valid(b)),
            _ => None,
        };
        let response = self.response.as_ref().map(|r| {
            json!({
                "status": r.status,
                "status_text": r.status_text,
                "headers": redact::headers(&self.response_headers(), redact_headers),
                "mime_type": r.mime_type,
                "protocol": r.protocol,
                "remote_address": r.remote_address,
                "connection_reused": r.connection_reused,
                "encoded_data_length": self.encoded_bytes,
                "decoded_body_length": (self.decoded_bytes > 0 || self.state == State::Finished).then_some(self.decoded_bytes),
                "header_bytes": r.header_bytes,
                "blocked_cookies": cookie_list(&self.blocked_response_cookies, redact_headers),
            })
        });
        let sw = self.response.as_ref();
        let mut e = json!({
            "request_id": self.id,
            "cdp_request_id": self.cdp_request_id,
            "state": self.state.as_str(),
            "resource_type": self.resource_type,
            "url": redact::url(&self.url),
            "method": self.method,
            "frame_id": self.frame_id,
            "loader_id": self.loader_id,
            "priority": self.priority,
            "initiator": self.initiator,
            "request_headers": redact::headers(&self.all_request_headers(), redact_headers),
            "request_headers_source": if self.request_headers_extra.is_some() { "extra_info" } else { "request" },
            "request_cookies": cookie_list(&self.request_cookies, redact_headers),
            "post_data": {
                "present": self.post.present,
                "size_bytes": post_size,
                "json_valid": post_json_valid,
            },
            "response": response,
            "timing": {
                "request_sent_ms": ms(self.sent_at),
                "response_headers_ms": ms(self.responded_at),
                "finished_ms": ms(self.ended_at),
                "started_unix_ms": self.wall_time.map(|w| (w * 1000.0).round()),
                "resource_timing": sw.map(|r| r.resource_timing.clone()),
            },
            "from_cache": self.from_cache(),
            "cache": {
                "from_disk_cache": sw.is_some_and(|r| r.from_disk_cache),
                "from_memory_cache": self.from_memory_cache,
                "from_prefetch_cache": sw.is_some_and(|r| r.from_prefetch_cache),
            },
            "from_service_worker": self.from_service_worker(),
            "service_worker_response_source": sw.and_then(|r| r.service_worker_response_source.clone()),
            "failure": self.failure.as_ref().map(|f| json!({
                "error_text": f.error_text,
                "canceled": f.canceled,
                "blocked_reason": f.blocked_reason,
                "cors_error": f.cors_error,
            })),
            "hints": {
                "graphql_operation_name": self.graphql.as_ref().and_then(|g| g.operation_name.clone()),
                "graphql_operation_type": self.graphql.as_ref().and_then(|g| g.operation_type),
                "json_valid": Value::Null,
            },
        });
        if let Some(from) = &self.redirected_from {
            e["redirected_from"] = json!(from);
        }
        if let Some(to) = &self.redirected_to {
            e["redirected_to"] = json!(to);
        }
        if let Some(stream) = &self.stream {
            let (key, v) = stream.to_json(t0);
            e[key] = v;
        }
        if let Some(b) = body {
            e["body_file"] = json!(b.file);
            e["body_capture"] = json!({
                "status": b.status,
                "encoding": b.encoding,
                "bytes_written": b.bytes_written,
                "original_bytes": b.original_bytes,
                "truncated": b.truncated,
                "error": b.error,
            });
            e["hints"]["json_valid"] = json!(b.json_valid);
            if let Some(p) = &b.post_data_file {
                e["post_data"]["post_data_file"] = json!(p);
            }
        }
        e
    }
}

/// CDP cookie records (`associatedCookies`, `blockedCookies`) without values when redacting.
fn cookie_list(list: &[Value], redact_values: bool) -> Value {
    let out: Vec<Value> = list
        .iter()
        .map(|c| {
            let cookie = if c["cookie"].is_object() {
                &c["cookie"]
            } else {
                c
            };
            let name = cookie["name"].as_str().map(String::from).or_else(|| {
                // Blocked Set-Cookie lines carry only the raw line.
                c["cookieLine"]
                    .as_str()
                    .and_then(|l| l.split('=').next())
                    .map(|n| n.trim().to_string())
            });
            let value = if redact_values {
                json!(crate::envelope::REDACTED)
            } else {
                cookie["value"]
                    .as_str()
                    .map(|v| json!(v))
                    .or_else(|| c["cookieLine"].as_str().map(|l| json!(l)))
                    .unwrap_or(Value::Null)
            };
            json!({
                "name": name,
                "value": value,
                "domain": cookie["domain"],
                "path": cookie["path"],
                "blocked_reasons": c.get("blockedReasons").cloned().unwrap_or(json!([])),
            })
        })
        .collect();
    json!(out)
}
