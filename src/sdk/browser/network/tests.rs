//! Folding CDP events: hops, extra-info headers, redaction, streams, readiness counts.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::*;

fn rwbs(log: &mut NetworkLog, id: &str, ty: &str, url: &str, extra: Value) {
    let mut p = json!({"requestId": id, "loaderId": "L1", "type": ty, "frameId": "F1",
        "timestamp": 100.0, "wallTime": 1_700_000_000.0,
        "initiator": {"type": "script", "stack": {"callFrames": [
            {"functionName": "load", "url": "http://a/app.js", "lineNumber": 3, "columnNumber": 7}]}},
        "request": {"url": url, "method": "GET", "headers": {"Accept": "*/*"}, "initialPriority": "High"}});
    if let (Some(p), Some(x)) = (p.as_object_mut(), extra.as_object()) {
        for (k, v) in x {
            p.insert(k.clone(), v.clone());
        }
    }
    log.on_event("Network.requestWillBeSent", &p);
}

fn doc(log: &NetworkLog) -> Value {
    log.to_json(true, &HashMap::new(), json!({}))
}

#[test]
fn redirect_hops_get_their_own_linked_entries() {
    let mut log = NetworkLog::new("F1");
    rwbs(&mut log, "D", "Document", "http://a/1", json!({}));
    rwbs(
        &mut log,
        "D",
        "Document",
        "http://a/2",
        json!({"timestamp": 100.1, "redirectResponse": {"status": 301, "statusText": "Moved",
            "headers": {"Location": "/2"}, "mimeType": "text/html", "encodedDataLength": 120}}),
    );
    rwbs(
        &mut log,
        "D",
        "Document",
        "http://a/3",
        json!({"timestamp": 100.2, "redirectResponse": {"status": 302, "headers": {}, "mimeType": ""}}),
    );
    log.on_event(
        "Network.responseReceived",
        &json!({"requestId": "D", "timestamp": 100.3, "type": "Document",
            "response": {"url": "http://a/3", "status": 200, "mimeType": "text/html", "headers": {},
                "remoteIPAddress": "127.0.0.1", "remotePort": 80, "protocol": "http/1.1"}}),
    );
    log.on_event(
        "Network.loadingFinished",
        &json!({"requestId": "D", "timestamp": 100.4, "encodedDataLength": 500}),
    );
    assert_eq!(log.document_redirects(), 2);
    assert_eq!(log.document().unwrap().status(), Some(200));
    let v = doc(&log);
    let e = v["entries"].as_array().unwrap();
    let ids: Vec<&str> = e
        .iter()
        .map(|x| x["request_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["D", "D.r1", "D.r2"]);
    let statuses: Vec<u64> = e
        .iter()
        .map(|x| x["response"]["status"].as_u64().unwrap())
        .collect();
    assert_eq!(statuses, [301, 302, 200]);
    assert_eq!(e[0]["redirected_to"], "D.r1");
    assert_eq!(e[1]["redirected_from"], "D");
    assert_eq!(e[1]["redirected_to"], "D.r2");
    assert_eq!(e[2]["redirected_from"], "D.r1");
    assert!(e[2].get("redirected_to").is_none());
    assert!(e.iter().all(|x| x["state"] == "finished"));
    assert_eq!(e[0]["url"], "http://a/1");
    assert_eq!(e[2]["is_main_document"], true);
    assert_eq!(e[0]["is_main_document"], false);
    assert_eq!(e[2]["response"]["remote_address"], "127.0.0.1:80");
    assert_eq!(e[2]["timing"]["finished_ms"], 400.0);
    assert_eq!(e[0]["initiator"]["stack"][0]["function_name"], "load");
    assert_eq!(e[0]["priority"], "High");
    assert_eq!(v["summary"]["finished_total"], 3);
}

#[test]
fn announced_extra_info_is_awaited_until_it_arrives() {
    let mut log = NetworkLog::new("F1");
    rwbs(&mut log, "X", "XHR", "http://a/api", json!({}));
    rwbs(&mut log, "Y", "XHR", "http://a/plain", json!({}));
    log.on_event(
        "Network.responseReceived",
        &json!({"requestId": "X", "hasExtraInfo": true, "response": {"url": "http://a/api", "status": 200}}),
    );
    log.on_event(
        "Network.responseReceived",
        &json!({"requestId": "Y", "response": {"url": "http://a/plain", "status": 200}}),
    );
    assert_eq!(log.awaiting_extra_info(), 1);
    log.on_event(
        "Network.responseReceivedExtraInfo",
        &json!({"requestId": "X", "headers": {"Set-Cookie": "a=1"}}),
    );
    assert_eq!(log.awaiting_extra_info(), 0);
}

#[test]
fn extra_info_headers_are_merged_and_redacted_per_hop() {
    let mut log = NetworkLog::new("F1");
    // Extra info may arrive before the hop it belongs to.
    log.on_event(
        "Network.requestWillBeSentExtraInfo",
        &json!({"requestId": "X", "headers": {"Cookie": "sid=1", "X-Api-Token": "t", "Accept": "*/*"},
            "associatedCookies": [{"blockedReasons": [], "cookie": {"name": "sid", "value": "1", "domain": "a", "path": "/"}}]}),
    );
    rwbs(&mut log, "X", "XHR", "http://a/api", json!({}));
    log.on_event(
        "Network.responseReceived",
        &json!({"requestId": "X", "response": {"url": "http://a/api", "status": 200,
            "mimeType": "application/json", "headers": {"Content-Type": "application/json"}}}),
    );
    log.on_event(
        "Network.responseReceivedExtraInfo",
        &json!({"requestId": "X", "headers": {"Set-Cookie": "a=1\nb=2", "Content-Type": "application/json"}}),
    );
    let v = doc(&log);
    let e = &v["entries"][0];
    assert_eq!(e["request_headers"]["cookie"], "***");
    assert_eq!(e["request_headers"]["x-api-token"], "***");
    assert_eq!(e["request_headers"]["accept"], "*/*");
    assert_eq!(e["request_headers_source"], "extra_info");
    assert_eq!(e["request_cookies"][0]["name"], "sid");
    assert_eq!(e["request_cookies"][0]["value"], "***");
    assert_eq!(e["response"]["headers"]["set-cookie"], "***\n***");
    assert_eq!(e["state"], "responded");
    let plain = log.to_json(false, &HashMap::new(), json!({}));
    assert_eq!(plain["entries"][0]["request_headers"]["cookie"], "sid=1");
    assert_eq!(plain["entries"][0]["request_cookies"][0]["value"], "1");
    assert_eq!(plain["summary"]["redacted"], false);
}

#[test]
fn failures_cache_and_service_worker_flags() {
    let mut log = NetworkLog::new("F1");
    rwbs(&mut log, "1", "Fetch", "http://a/x", json!({}));
    log.on_event(
        "Network.loadingFailed",
        &json!({"requestId": "1", "errorText": "net::ERR_CONNECTION_REFUSED", "canceled": false,
            "blockedReason": "mixed-content"}),
    );
    rwbs(&mut log, "2", "Script", "http://a/s.js", json!({}));
    log.on_event("Network.requestServedFromCache", &json!({"requestId": "2"}));
    log.on_event(
        "Network.responseReceived",
        &json!({"requestId": "2", "response": {"status": 200, "mimeType": "text/javascript",
            "headers": {}, "fromServiceWorker": true, "serviceWorkerResponseSource": "network"}}),
    );
    let v = doc(&log);
    let f = &v["entries"][0];
    assert_eq!(f["state"], "failed");
    assert_eq!(f["failure"]["error_text"], "net::ERR_CONNECTION_REFUSED");
    assert_eq!(f["failure"]["blocked_reason"], "mixed-content");
    let c = &v["entries"][1];
    assert_eq!(c["from_cache"], true);
    assert_eq!(c["cache"]["from_memory_cache"], true);
    assert_eq!(c["from_service_worker"], true);
    assert_eq!(c["service_worker_response_source"], "network");
    assert_eq!(v["summary"]["failed_total"], 1);
}

#[test]
fn graphql_hint_from_post_data() {
    let mut log = NetworkLog::new("F1");
    let body = r#"{"operationName":"AddItem","query":"mutation AddItem { add }"}"#;
    rwbs(
        &mut log,
        "G",
        "Fetch",
        "http://a/graphql",
        json!({"request": {"url": "http://a/graphql", "method": "POST", "hasPostData": true,
            "postData": body, "headers": {"Content-Type": "application/json"}}}),
    );
    let v = doc(&log);
    let e = &v["entries"][0];
    assert_eq!(e["hints"]["graphql_operation_name"], "AddItem");
    assert_eq!(e["hints"]["graphql_operation_type"], "mutation");
    assert_eq!(e["post_data"]["present"], true);
    assert_eq!(e["post_data"]["size_bytes"], body.len());
    assert_eq!(e["post_data"]["json_valid"], true);
}

#[test]
fn readiness_counts_and_warnings() {
    let mut log = NetworkLog::new("F1");
    rwbs(&mut log, "1", "XHR", "http://a/slow", json!({}));
    rwbs(&mut log, "2", "EventSource", "http://a/sse", json!({}));
    rwbs(&mut log, "3", "Image", "http://a/i.png", json!({}));
    // Streams never hold up idleness.
    assert_eq!(log.inflight(), 2);
    let w = log.mark_capture();
    let codes: Vec<&str> = w.iter().map(|w| w.code.as_str()).collect();
    assert_eq!(codes, ["network_not_idle", "pending_xhr_at_capture"]);
    assert!(w[1].message.contains("http://a/slow"));
    // Later events do not change the at-capture counts.
    log.on_event("Network.loadingFinished", &json!({"requestId": "1"}));
    let v = doc(&log);
    let s = &v["summary"];
    assert_eq!(s["inflight_total_at_capture"], 3);
    assert_eq!(s["pending_by_resource_type"]["XHR"], 1);
    assert_eq!(s["pending_by_resource_type"]["EventSource"], 1);
    assert_eq!(s["incomplete_total"], 2);
    assert_eq!(s["finished_total"], 1);
}

#[test]
fn websocket_and_event_source_streams() {
    let mut log = NetworkLog::new("F1").with_streams(true, false);
    log.on_event(
        "Network.webSocketCreated",
        &json!({"requestId": "W", "url": "ws://a/ws", "initiator": {"type": "script"}}),
    );
    log.on_event(
        "Network.webSocketWillSendHandshakeRequest",
        &json!({"requestId": "W", "timestamp": 1.0, "request": {"headers": {"Cookie": "s=1"}}}),
    );
    log.on_event(
        "Network.webSocketHandshakeResponseReceived",
        &json!({"requestId": "W", "timestamp": 1.1, "response": {"status": 101, "headers": {}}}),
    );
    log.on_event(
        "Network.webSocketFrameSent",
        &json!({"requestId": "W", "timestamp": 1.2, "response": {"opcode": 1, "payloadData": "ping"}}),
    );
    log.on_event(
        "Network.webSocketFrameReceived",
        &json!({"requestId": "W", "timestamp": 1.3, "response": {"opcode": 1, "payloadData": "echo:ping"}}),
    );
    rwbs(&mut log, "S", "EventSource", "http://a/sse", json!({}));
    log.on_event(
        "Network.eventSourceMessageReceived",
        &json!({"requestId": "S", "eventName": "message", "eventId": "1", "data": "hello"}),
    );
    assert_eq!(log.inflight(), 0);
    let v = doc(&log);
    let ws = &v["entries"][0];
    assert_eq!(ws["resource_type"], "WebSocket");
    assert_eq!(ws["state"], "responded");
    assert_eq!(ws["request_headers"]["cookie"], "***");
    assert_eq!(ws["websocket"]["frames"][1]["payload"], "echo:ping");
    assert_eq!(ws["websocket"]["frames"][0]["direction"], "sent");
    let sse = &v["entries"][1];
    assert_eq!(sse["event_source"]["recorded"], false);
    assert_eq!(sse["event_source"]["messages_total"], 1);
    assert_eq!(sse["event_source"]["messages"].as_array().unwrap().len(), 0);
    assert_eq!(v["summary"]["websocket_frames_total"], 2);
}

/// `network.json` reads events through the decoder `/recent-requests` shares: unknown fields
/// and an unknown resource type are kept, and an event that does not decode is counted in
/// the summary instead of vanishing.
#[test]
fn unknown_fields_and_types_are_kept_and_undecodable_events_counted() {
    let mut log = NetworkLog::new("F1");
    rwbs(
        &mut log,
        "T",
        "Teleport",
        "http://a/t",
        json!({"futureParam": {"x": [1]}, "request": {"url": "http://a/t", "method": "GET",
            "headers": {}, "brandNew": true}}),
    );
    log.on_event(
        "Network.responseReceived",
        &json!({"requestId": "T", "timestamp": 100.3, "type": "Teleport", "newFlag": 1,
            "response": {"status": 200, "mimeType": "text/plain", "headers": {},
                "fromEdgeCache": true}}),
    );
    log.on_event(
        "Network.loadingFinished",
        &json!({"requestId": "T", "timestamp": "soon"}),
    );
    log.on_event("Network.somethingNew", &json!({"requestId": "T"}));
    let v = doc(&log);
    let e = &v["entries"][0];
    assert_eq!(e["resource_type"], "Teleport");
    assert_eq!(e["response"]["status"], 200);
    assert_eq!(
        e["state"], "responded",
        "the bad loadingFinished was not applied"
    );
    assert_eq!(v["summary"]["undecodable_events"], 1);
}
