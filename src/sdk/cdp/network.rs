//! `Network.*` events decoded once, into lenient typed structs that the browser path's
//! `network.json` ([`crate::sdk::browser::network`]) and the host's `/recent-requests`
//! share.
//!
//! Chrome's protocol drifts: every struct takes `#[serde(default)]` (a missing field is its
//! default), unknown fields are ignored, and the string enums keep a value they do not know
//! ([`ResourceType::Unknown`]) instead of failing. Values passed through as they are
//! (headers, initiators, timing, cookie records) stay `serde_json::Value`. An event whose
//! known fields have the wrong type does not decode: [`NetworkEvent::decode`] says so, and
//! the consumers count it rather than lose it silently.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// A CDP `Network.ResourceType`; a value this build does not know is kept as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceType {
    /// A known type, by its CDP name (`Document`, `XHR`, `Fetch`, `EventSource`, ...).
    Known(&'static str),
    /// A type newer than this build.
    Unknown(String),
}

/// The resource types CDP documents today.
const KNOWN_TYPES: &[&str] = &[
    "Document",
    "Stylesheet",
    "Image",
    "Media",
    "Font",
    "Script",
    "TextTrack",
    "XHR",
    "Fetch",
    "Prefetch",
    "EventSource",
    "WebSocket",
    "Manifest",
    "SignedExchange",
    "Ping",
    "CSPViolationReport",
    "Preflight",
    "FedCM",
    "Other",
];

impl ResourceType {
    /// The CDP name.
    pub fn as_str(&self) -> &str {
        match self {
            ResourceType::Known(t) => t,
            ResourceType::Unknown(t) => t,
        }
    }
}

impl From<&str> for ResourceType {
    fn from(s: &str) -> ResourceType {
        match KNOWN_TYPES.iter().find(|k| **k == s) {
            Some(k) => ResourceType::Known(k),
            None => ResourceType::Unknown(s.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for ResourceType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(ResourceType::from(s.as_str()))
    }
}

/// A `Network.Request`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Request {
    /// URL.
    pub url: String,
    /// Method.
    pub method: String,
    /// Headers object.
    pub headers: Value,
    /// Inlined post data.
    pub post_data: Option<String>,
    /// Whether there is post data at all.
    pub has_post_data: bool,
    /// Post data in parts (base64).
    pub post_data_entries: Option<Vec<PostDataEntry>>,
    /// Priority at start.
    pub initial_priority: Option<String>,
}

/// One part of a request's post data.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct PostDataEntry {
    /// Base64 bytes.
    pub bytes: Option<String>,
}

/// A `Network.Response` (also a WebSocket handshake response).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Response {
    /// HTTP status.
    pub status: Option<u64>,
    /// Status text.
    pub status_text: String,
    /// Headers object.
    pub headers: Value,
    /// The request headers a WebSocket handshake response carries.
    pub request_headers: Value,
    /// MIME type.
    pub mime_type: Option<String>,
    /// Protocol.
    pub protocol: Option<String>,
    /// Peer IP.
    #[serde(rename = "remoteIPAddress")]
    pub remote_ip_address: Option<String>,
    /// Peer port.
    pub remote_port: Option<u64>,
    /// Served from the disk cache.
    pub from_disk_cache: bool,
    /// Served from the memory cache.
    pub from_memory_cache: bool,
    /// Served from the prefetch cache.
    pub from_prefetch_cache: bool,
    /// Served by a service worker.
    pub from_service_worker: bool,
    /// Where a service worker's response came from.
    pub service_worker_response_source: Option<String>,
    /// Connection reuse.
    pub connection_reused: Option<bool>,
    /// `ResourceTiming`, passed through.
    pub timing: Option<Value>,
    /// Bytes received so far (the headers, or the whole of a redirect response).
    pub encoded_data_length: Option<f64>,
}

impl Response {
    /// Served from any cache.
    pub fn from_cache(&self) -> bool {
        self.from_disk_cache || self.from_memory_cache || self.from_prefetch_cache
    }
}

/// `Network.requestWillBeSent`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct RequestWillBeSent {
    /// Request id (reused across redirects).
    pub request_id: String,
    /// Loader id.
    pub loader_id: String,
    /// Frame id.
    pub frame_id: String,
    /// The request.
    pub request: Request,
    /// Monotonic seconds.
    pub timestamp: Option<f64>,
    /// Wall-clock seconds.
    pub wall_time: Option<f64>,
    /// Initiator, passed through.
    pub initiator: Value,
    /// The response of the hop this one redirects from.
    pub redirect_response: Option<Response>,
    /// Resource type.
    #[serde(rename = "type")]
    pub resource_type: Option<ResourceType>,
    /// `Blocking`, `InBodyParserBlocking`, `NonBlocking`, ...
    pub render_blocking_behavior: Option<String>,
}

/// `Network.responseReceived`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ResponseReceived {
    /// Request id.
    pub request_id: String,
    /// Monotonic seconds.
    pub timestamp: Option<f64>,
    /// Resource type.
    #[serde(rename = "type")]
    pub resource_type: Option<ResourceType>,
    /// The response.
    pub response: Response,
    /// A `responseReceivedExtraInfo` follows.
    pub has_extra_info: bool,
}

/// `Network.requestWillBeSentExtraInfo`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct RequestExtraInfo {
    /// Request id.
    pub request_id: String,
    /// Wire headers.
    pub headers: Value,
    /// Cookies attached or blocked, passed through.
    pub associated_cookies: Vec<Value>,
}

/// `Network.responseReceivedExtraInfo`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ResponseExtraInfo {
    /// Request id.
    pub request_id: String,
    /// Wire headers.
    pub headers: Value,
    /// Cookies the response could not set, passed through.
    pub blocked_cookies: Vec<Value>,
}

/// `Network.loadingFinished`, `dataReceived`, `requestServedFromCache`,
/// `resourceChangedPriority` and `webSocketClosed`: a request id and a few numbers.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Progress {
    /// Request id.
    pub request_id: String,
    /// Monotonic seconds.
    pub timestamp: Option<f64>,
    /// Bytes over the wire (`loadingFinished`).
    pub encoded_data_length: Option<f64>,
    /// Decoded bytes (`dataReceived`).
    pub data_length: Option<u64>,
    /// New priority (`resourceChangedPriority`).
    pub new_priority: Option<String>,
}

/// `Network.loadingFailed`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct LoadingFailed {
    /// Request id.
    pub request_id: String,
    /// Monotonic seconds.
    pub timestamp: Option<f64>,
    /// `net::ERR_...`.
    pub error_text: String,
    /// Cancelled by the page or navigation.
    pub canceled: bool,
    /// CSP, mixed content, ORB, ...
    pub blocked_reason: Option<String>,
    /// CORS failure.
    pub cors_error_status: CorsErrorStatus,
}

/// `Network.CorsErrorStatus`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CorsErrorStatus {
    /// CORS error name.
    pub cors_error: Option<String>,
}

/// `Network.webSocketCreated`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct WebSocketCreated {
    /// Request id.
    pub request_id: String,
    /// URL.
    pub url: String,
    /// Initiator, passed through.
    pub initiator: Value,
}

/// `Network.webSocketWillSendHandshakeRequest` and `webSocketHandshakeResponseReceived`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct WebSocketHandshake {
    /// Request id.
    pub request_id: String,
    /// Monotonic seconds.
    pub timestamp: Option<f64>,
    /// Wall-clock seconds (request only).
    pub wall_time: Option<f64>,
    /// The handshake request (its `headers`).
    pub request: Request,
    /// The handshake response.
    pub response: Response,
}

/// `Network.webSocketFrameSent`/`Received`/`Error`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct WebSocketFrame {
    /// Request id.
    pub request_id: String,
    /// Monotonic seconds.
    pub timestamp: Option<f64>,
    /// The frame.
    pub response: Frame,
    /// The error (`webSocketFrameError`).
    pub error_message: String,
}

/// A `Network.WebSocketFrame`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Frame {
    /// Opcode (1 text, 2 binary).
    pub opcode: Option<u64>,
    /// Payload (base64 for binary frames).
    pub payload_data: String,
}

/// `Network.eventSourceMessageReceived`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct EventSourceMessage {
    /// Request id.
    pub request_id: String,
    /// Monotonic seconds.
    pub timestamp: Option<f64>,
    /// Event name.
    pub event_name: Option<String>,
    /// Event id.
    pub event_id: Option<String>,
    /// Data.
    pub data: String,
}

/// One decoded `Network.*` event.
#[derive(Debug, Clone)]
pub enum NetworkEvent {
    /// `requestWillBeSent`.
    RequestWillBeSent(Box<RequestWillBeSent>),
    /// `requestWillBeSentExtraInfo`.
    RequestExtraInfo(RequestExtraInfo),
    /// `responseReceived`.
    ResponseReceived(Box<ResponseReceived>),
    /// `responseReceivedExtraInfo`.
    ResponseExtraInfo(ResponseExtraInfo),
    /// `requestServedFromCache`.
    ServedFromCache(Progress),
    /// `dataReceived`.
    DataReceived(Progress),
    /// `resourceChangedPriority`.
    PriorityChanged(Progress),
    /// `loadingFinished`.
    LoadingFinished(Progress),
    /// `loadingFailed`.
    LoadingFailed(LoadingFailed),
    /// `webSocketCreated`.
    WebSocketCreated(WebSocketCreated),
    /// `webSocketWillSendHandshakeRequest`.
    WebSocketRequest(Box<WebSocketHandshake>),
    /// `webSocketHandshakeResponseReceived`.
    WebSocketResponse(Box<WebSocketHandshake>),
    /// `webSocketFrameSent` (`true`) or `webSocketFrameReceived` (`false`).
    WebSocketFrame(bool, WebSocketFrame),
    /// `webSocketFrameError`.
    WebSocketFrameError(WebSocketFrame),
    /// `webSocketClosed`.
    WebSocketClosed(Progress),
    /// `eventSourceMessageReceived`.
    EventSourceMessage(EventSourceMessage),
    /// A `Network.*` event neither consumer reads (or another domain's).
    Other,
}

impl NetworkEvent {
    /// Decode `params` of event `method`. An error means a known field had the wrong type.
    pub fn decode(method: &str, params: &Value) -> Result<NetworkEvent, serde_json::Error> {
        fn de<'a, T: Deserialize<'a> + Default>(p: &'a Value) -> Result<T, serde_json::Error> {
            if p.is_null() {
                return Ok(T::default());
            }
            T::deserialize(p)
        }
        use NetworkEvent as E;
        Ok(match method {
            "Network.requestWillBeSent" => E::RequestWillBeSent(Box::new(de(params)?)),
            "Network.requestWillBeSentExtraInfo" => E::RequestExtraInfo(de(params)?),
            "Network.responseReceived" => E::ResponseReceived(Box::new(de(params)?)),
            "Network.responseReceivedExtraInfo" => E::ResponseExtraInfo(de(params)?),
            "Network.requestServedFromCache" => E::ServedFromCache(de(params)?),
            "Network.dataReceived" => E::DataReceived(de(params)?),
            "Network.resourceChangedPriority" => E::PriorityChanged(de(params)?),
            "Network.loadingFinished" => E::LoadingFinished(de(params)?),
            "Network.loadingFailed" => E::LoadingFailed(de(params)?),
            "Network.webSocketCreated" => E::WebSocketCreated(de(params)?),
            "Network.webSocketWillSendHandshakeRequest" => {
                E::WebSocketRequest(Box::new(de(params)?))
            }
            "Network.webSocketHandshakeResponseReceived" => {
                E::WebSocketResponse(Box::new(de(params)?))
            }
            "Network.webSocketFrameSent" => E::WebSocketFrame(true, de(params)?),
            "Network.webSocketFrameReceived" => E::WebSocketFrame(false, de(params)?),
            "Network.webSocketFrameError" => E::WebSocketFrameError(de(params)?),
            "Network.webSocketClosed" => E::WebSocketClosed(de(params)?),
            "Network.eventSourceMessageReceived" => E::EventSourceMessage(de(params)?),
            _ => E::Other,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_fields_and_enum_values_are_tolerated() {
        let p = json!({
            "requestId": "1", "frameId": "F", "loaderId": "L", "timestamp": 1.5,
            "type": "Teleport", "brandNewField": {"x": [1, 2]},
            "request": {"url": "http://a/", "method": "GET", "headers": {}, "isSameSite": true,
                        "futureThing": 7},
        });
        let NetworkEvent::RequestWillBeSent(r) =
            NetworkEvent::decode("Network.requestWillBeSent", &p).unwrap()
        else {
            panic!("not a requestWillBeSent");
        };
        assert_eq!(r.resource_type.as_ref().unwrap().as_str(), "Teleport");
        assert_eq!(
            r.resource_type,
            Some(ResourceType::Unknown("Teleport".into()))
        );
        assert_eq!(r.request.url, "http://a/");
        assert_eq!(r.timestamp, Some(1.5));
        // Missing fields are defaults; a known type is known.
        let p = json!({"requestId": "2", "type": "XHR"});
        let NetworkEvent::ResponseReceived(r) =
            NetworkEvent::decode("Network.responseReceived", &p).unwrap()
        else {
            panic!("not a responseReceived");
        };
        assert_eq!(r.resource_type, Some(ResourceType::Known("XHR")));
        assert_eq!(r.response.status, None);
        assert!(!r.has_extra_info);
        assert!(matches!(
            NetworkEvent::decode("Network.somethingNew", &json!({"a": 1})).unwrap(),
            NetworkEvent::Other
        ));
        // A known field of the wrong type is an error, not a silent default.
        assert!(NetworkEvent::decode("Network.loadingFinished", &json!({"requestId": 5})).is_err());
    }
}
