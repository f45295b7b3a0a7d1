//! Concurrency caps: `--max-clients` (CDP clients at once) and `--max-tabs` (page targets).
//!
//! A full cap answers `host_busy` (retryable) right away instead of letting the browser
//! degrade under more work than it can carry.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::extract::ws;
use serde_json::{json, Value};

use super::state::ListenerState;
use crate::sdk::cdp::HOST_BUSY_METHOD;

/// A counter of CDP client slots with a ceiling.
#[derive(Debug)]
pub struct Slots {
    used: Arc<AtomicUsize>,
    max: usize,
}

/// One taken slot, given back when dropped.
#[derive(Debug)]
pub struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Slots {
    /// `max` slots, none taken.
    pub fn new(max: usize) -> Slots {
        Slots {
            used: Arc::default(),
            max,
        }
    }

    /// Take a slot, or `None` when all `max` are taken (checked and taken atomically, so
    /// racing clients can never overshoot).
    pub fn try_take(&self) -> Option<Slot> {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max).then_some(n + 1)
            })
            .ok()
            .map(|_| Slot(self.used.clone()))
    }

    /// How many slots are taken now.
    pub fn in_use(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    /// The ceiling.
    pub fn max(&self) -> usize {
        self.max
    }
}

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
    let list = super::routes::fetch_json(&upstream.http_base, "/json/list")
        .await
        .ok()?;
    Some(
        list.as_array()?
            .iter()
            .filter(|t| t.get("type").and_then(Value::as_str) == Some("page"))
            .count(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_refuse_beyond_the_cap_and_come_back_on_drop() {
        let slots = Slots::new(2);
        let a = slots.try_take();
        let b = slots.try_take();
        assert!(a.is_some() && b.is_some());
        assert!(slots.try_take().is_none());
        assert_eq!(slots.in_use(), 2);
        drop(a);
        assert_eq!(slots.in_use(), 1);
        assert!(slots.try_take().is_some());
        assert_eq!(slots.in_use(), 1);
        assert_eq!(slots.max(), 2);
    }
}
