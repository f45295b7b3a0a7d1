//! WebSocket frames and EventSource messages, recorded (when asked) with count and size bounds.

use serde_json::{json, Value};

/// Most frames or messages kept per connection.
pub const MAX_ITEMS_PER_STREAM: usize = 1000;
/// Most frames or messages kept across the whole log.
pub const MAX_ITEMS_TOTAL: usize = 5000;
/// Longest payload kept per frame or message, in bytes; longer ones are cut.
pub const MAX_PAYLOAD_BYTES: usize = 64 * 1024;

/// What kind of stream an entry carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamKind {
    /// `Network.webSocket*`.
    WebSocket,
    /// `Network.eventSourceMessageReceived`.
    EventSource,
}

/// The frames or messages of one connection.
#[derive(Debug, Clone)]
pub struct StreamLog {
    /// WebSocket or EventSource.
    pub kind: StreamKind,
    /// Whether payloads are recorded (`--capture-ws` / `--capture-sse`).
    pub record: bool,
    /// Kept frames/messages.
    pub items: Vec<Value>,
    /// Frames/messages seen, kept or not.
    pub total: usize,
    /// Frames/messages seen but not kept because a count bound was reached.
    pub dropped: usize,
    /// Payloads cut at [`MAX_PAYLOAD_BYTES`].
    pub truncated_payloads: usize,
    /// The socket closed (`webSocketClosed`).
    pub closed: bool,
    /// `webSocketFrameError` messages.
    pub errors: Vec<String>,
}

/// Cut `text` to at most `max` bytes on a char boundary.
pub fn cut(text: &str, max: usize) -> (&str, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}

impl StreamLog {
    /// An empty log.
    pub fn new(kind: StreamKind, record: bool) -> StreamLog {
        StreamLog {
            kind,
            record,
            items: Vec::new(),
            total: 0,
            dropped: 0,
            truncated_payloads: 0,
            closed: false,
            errors: Vec::new(),
        }
    }

    /// Add one frame/message. `payload` is its text (base64 for binary WebSocket frames);
    /// `fields` are the other recorded fields. `budget` is what is left of the log-wide bound.
    /// Returns whether it was kept.
    pub fn push(&mut self, payload: &str, mut fields: Value, budget: &mut usize) -> bool {
        self.total += 1;
        if !self.record {
            return false;
        }
        if self.items.len() >= MAX_ITEMS_PER_STREAM || *budget == 0 {
            self.dropped += 1;
            return false;
        }
        *budget -= 1;
        let (kept, truncated) = cut(payload, MAX_PAYLOAD_BYTES);
        if truncated {
            self.truncated_payloads += 1;
        }
        let key = match self.kind {
            StreamKind::WebSocket => "payload",
            StreamKind::EventSource => "data",
        };
        fields[key] = json!(kept);
        fields[&format!("{key}_bytes")] = json!(payload.len());
        fields[&format!("{key}_truncated")] = json!(truncated);
        self.items.push(fields);
        true
    }

    /// The artifact key and value: `websocket` or `event_source`. Timestamps in items are
    /// monotonic seconds until shifted here by `t0` into milliseconds.
    pub fn to_json(&self, t0: f64) -> (&'static str, Value) {
        let items: Vec<Value> = self
            .items
            .iter()
            .map(|i| {
                let mut i = i.clone();
                if let Some(t) = i["timestamp_ms"].as_f64() {
                    i["timestamp_ms"] =
                        json!(crate::sdk::fetch::outcome::round1((t - t0) * 1000.0));
                }
                i
            })
            .collect();
        match self.kind {
            StreamKind::WebSocket => (
                "websocket",
                json!({
                    "recorded": self.record,
                    "frames": items,
                    "frames_total": self.total,
                    "frames_dropped": self.dropped,
                    "payloads_truncated": self.truncated_payloads,
                    "closed": self.closed,
                    "errors": self.errors,
                }),
            ),
            StreamKind::EventSource => (
                "event_source",
                json!({
                    "recorded": self.record,
                    "messages": items,
                    "messages_total": self.total,
                    "messages_dropped": self.dropped,
                    "payloads_truncated": self.truncated_payloads,
                }),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_count_and_size() {
        let mut log = StreamLog::new(StreamKind::WebSocket, true);
        let mut budget = 2;
        let big = "é".repeat(MAX_PAYLOAD_BYTES);
        assert!(log.push(&big, json!({"direction": "sent"}), &mut budget));
        assert!(log.push("hi", json!({"direction": "received"}), &mut budget));
        assert!(!log.push("x", json!({}), &mut budget));
        assert_eq!((log.total, log.dropped, log.truncated_payloads), (3, 1, 1));
        let kept = log.items[0]["payload"].as_str().unwrap();
        assert!(kept.len() <= MAX_PAYLOAD_BYTES);
        assert_eq!(log.items[0]["payload_bytes"], big.len());
        let (key, v) = log.to_json(0.0);
        assert_eq!(key, "websocket");
        assert_eq!(v["frames"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn not_recorded_counts_only() {
        let mut log = StreamLog::new(StreamKind::EventSource, false);
        let mut budget = 10;
        assert!(!log.push("data", json!({}), &mut budget));
        assert_eq!((log.total, log.items.len(), budget), (1, 0, 10));
        assert_eq!(log.to_json(0.0).1["messages_total"], 1);
    }
}
