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
    if room_for_a_tab(state).await {
        return ws::Message::Text(text);
    }
    frame["method"] = json!(HOST_BUSY_METHOD);
    frame["params"] = json!({});
    ws::Message::Text(frame.to_string().into())
}

/// Whether a client may have one more tab: fewer than `--max-tabs` are open (logged as a
/// `warn` when not). True when the browser's list is unavailable: the browser answers then.
/// A ready tab of the pool is given only when this is true, like a tab the browser creates.
pub async fn room_for_a_tab(state: &ListenerState) -> bool {
    let Some(open) = open_pages(state).await else {
        return true;
    };
    if open < state.config.max_tabs {
        return true;
    }
    crate::host::log::log(
        crate::host::log::Level::Warn,
        "tab cap full: refusing Target.createTarget",
        json!({"open_tabs": open, "max_tabs": state.config.max_tabs}),
    );
    false
}

/// How many page targets the clients have open now (`/health` `tabs_active`, what
/// `--max-tabs` caps): the browser's page list without the host's own tabs (the pool's
/// ready tabs and the one it is making ready) and without the tabs whose close went through
/// the host. A ready tab a fetch took counts.
pub async fn open_pages(state: &ListenerState) -> Option<usize> {
    let upstream = state.view.upstream()?;
    let list = super::devtools::fetch_json(&upstream.http_base, "/json/list")
        .await
        .ok()?;
    let pages: Vec<&str> = list
        .as_array()?
        .iter()
        .filter(|t| t.get("type").and_then(Value::as_str) == Some("page"))
        .filter_map(|t| t.get("id").and_then(Value::as_str))
        .collect();
    state.pool.listed(&pages.iter().copied().collect());
    let hidden = state.pool.hidden().await;
    Some(pages.iter().filter(|id| !hidden.contains(**id)).count())
}
