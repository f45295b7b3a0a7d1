//! Concurrency caps: `--max-clients` (CDP clients at once) and `--max-tabs` (page targets).
//!
//! A full cap answers `host_busy` (retryable) right away instead of letting the browser
//! degrade under more work than it can carry. The client slots themselves are
//! [`super::slots`].

use axum::extract::ws;
use serde_json::{json, Value};

use super::state::ListenerState;
use crate::sdk::cdp::HOST_BUSY_METHOD;

/// A client's frame on its way to the browser: a `Target.createTarget` while `--max-tabs`
/// page targets are open is renamed to [`HOST_BUSY_METHOD`], which the browser answers
/// with an "unknown method" error under the same id. That keeps the one reply per id the
/// client waits for on the browser's side of the splice, and the driver maps it to
/// `host_busy`. Every other frame passes unchanged.
///
/// The count comes from the browser's page list at that moment, so creations racing each
/// other can overshoot by at most the number of clients (itself capped).
pub async fn gate_text(state: &ListenerState, text: ws::Utf8Bytes) -> ws::Message {
    if !text.as_str().contains("Target.createTarget") {
        return ws::Message::Text(text);
    }
    let Ok(mut frame) = serde_json::from_str::<Value>(text.as_str()) else {
        return ws::Message::Text(text);
    };
    if frame.get("method").and_then(Value::as_str) != Some("Target.createTarget") {
        return ws::Message::Text(text);
    }
    let Some(open) = open_pages(state).await else {
        // The browser's list is unavailable: let the browser itself answer.
        return ws::Message::Text(text);
    };
    if open < state.config.max_tabs {
        return ws::Message::Text(text);
    }
    crate::host::log::log(
        crate::host::log::Level::Warn,
        "tab cap full: refusing Target.createTarget",
        json!({"open_tabs": open, "max_tabs": state.config.max_tabs}),
    );
    frame["method"] = json!(HOST_BUSY_METHOD);
    frame["params"] = json!({});
    ws::Message::Text(frame.to_string().into())
}

/// How many page targets the browser has open now.
pub async fn open_pages(state: &ListenerState) -> Option<usize> {
    let upstream = state.view.upstream()?;
    let list = super::devtools::fetch_json(&upstream.http_base, "/json/list")
        .await
        .ok()?;
    // The pool's ready tabs are the host's, not the clients'.
    let ready = state.pool.ready();
    Some(
        list.as_array()?
            .iter()
            .filter(|t| t.get("type").and_then(Value::as_str) == Some("page"))
            .filter(|t| {
                t.get("id")
                    .and_then(Value::as_str)
                    .is_none_or(|id| !ready.contains(id))
            })
            .count(),
    )
}
