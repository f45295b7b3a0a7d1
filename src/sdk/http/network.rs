//! `network.json` for the HTTP path: one entry per hop, redirects linked.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::sdk::browser::network::summary;
use crate::sdk::http::exchange::Hop;
use crate::sdk::redact;

/// A hop has always responded; it is finished once its body was read.
fn state_of(hop: &Hop) -> &'static str {
    if hop.finished_ms.is_some() {
        "finished"
    } else {
        "responded"
    }
}

/// Build the `network.json` document for a chain of hops.
pub fn document(request_id: &str, hops: &[Hop], redact_headers: bool) -> Value {
    let id = |i: usize| format!("{request_id}.{i}");
    let entries: Vec<Value> = hops
        .iter()
        .enumerate()
        .map(|(i, hop)| {
            let mime = hop
                .response_headers
                .iter()
                .find(|(n, _)| n == "content-type")
                .map(|(_, v)| crate::sdk::content_type::essence(Some(v)));
            let state = state_of(hop);
            let mut e = json!({
                "request_id": id(i),
                "state": state,
                "resource_type": "document",
                "url": redact::url(hop.url.as_str()),
                "method": hop.method,
                "request_headers": redact::headers(&hop.request_headers, redact_headers),
                "post_data": {
                    "present": hop.request_body_bytes.is_some(),
                    "size_bytes": hop.request_body_bytes,
                },
                "response": {
                    "status": hop.status,
                    "status_text": hop.status_text,
                    "headers": redact::headers(&hop.response_headers, redact_headers),
                    "mime_type": mime,
                    "protocol": hop.protocol,
                    "remote_address": hop.remote_address,
                    "decoded_body_length": hop.body_bytes,
                },
                "timing": {
                    "request_sent_ms": hop.started_ms,
                    "response_headers_ms": hop.headers_ms,
                    "finished_ms": hop.finished_ms,
                },
                "from_cache": false,
                "cache": {"from_disk_cache": false, "from_memory_cache": false, "from_prefetch_cache": false},
                "from_service_worker": false,
            });
            if i > 0 {
                e["redirected_from"] = json!(id(i - 1));
            }
            if i + 1 < hops.len() {
                e["redirected_to"] = json!(id(i + 1));
            }
            e
        })
        .collect();
    let states = hops.iter().map(|h| (state_of(h), true));
    json!({
        "schema_version": 1,
        "source": "http",
        "entries": entries,
        "summary": summary::summary(states, 0, &BTreeMap::new(), redact_headers),
    })
}
