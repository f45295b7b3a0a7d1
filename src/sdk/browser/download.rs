//! A navigation that becomes a download: the tab's `Page.downloadWillBegin` /
//! `Page.downloadProgress` events, and waiting for the download to settle. The bytes stay
//! on the host until the driver fetches them over the listener (`sdk::transfer`).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::session::{lock, Shared};

/// A download the tab started, as its events describe it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TabDownload {
    /// The browser's download id (`GET /downloads/{guid}` on the host).
    pub guid: String,
    /// The name the server or page suggested.
    pub suggested_filename: String,
    /// The URL downloaded.
    pub url: String,
    /// `inProgress`, `completed` or `canceled`.
    pub state: String,
    /// Expected size (0 when unknown).
    pub total_bytes: u64,
    /// Bytes the browser received.
    pub received_bytes: u64,
}

impl TabDownload {
    /// A download as its `*.downloadWillBegin` event announces it.
    pub fn begin(guid: &str, p: &Value) -> TabDownload {
        TabDownload {
            guid: guid.to_string(),
            suggested_filename: p["suggestedFilename"].as_str().unwrap_or("").into(),
            url: p["url"].as_str().unwrap_or("").into(),
            state: "inProgress".into(),
            ..TabDownload::default()
        }
    }

    /// Fold one `*.downloadProgress` event in; an event without a count leaves the last one
    /// standing.
    pub fn progress(&mut self, p: &Value) {
        if let Some(s) = p["state"].as_str() {
            self.state = s.to_string();
        }
        if let Some(n) = p["totalBytes"].as_f64() {
            self.total_bytes = n.max(0.0) as u64;
        }
        if let Some(n) = p["receivedBytes"].as_f64() {
            self.received_bytes = n.max(0.0) as u64;
        }
    }

    /// Whether the browser is done with it (completed or canceled).
    pub fn settled(&self) -> bool {
        self.state == "completed" || self.state == "canceled"
    }

    /// `trace.download`.
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.guid,
            "suggested_filename": self.suggested_filename,
            "url": self.url,
            "state": self.state,
            "total_bytes": self.total_bytes,
            "received_bytes": self.received_bytes,
        })
    }
}

/// Fold one `Page.download*` event into `list`.
pub fn on_event(list: &mut Vec<TabDownload>, method: &str, p: &Value) {
    let Some(guid) = p["guid"].as_str() else {
        return;
    };
    match method {
        "Page.downloadWillBegin" if !list.iter().any(|d| d.guid == guid) => {
            list.push(TabDownload::begin(guid, p));
        }
        "Page.downloadProgress" => {
            if let Some(d) = list.iter_mut().find(|d| d.guid == guid) {
                d.progress(p);
            }
        }
        _ => {}
    }
}

/// The tab's first download once it settled, or as it stands at `deadline`; `None` when no
/// download began by then.
pub async fn settle(state: &Shared, deadline: Instant) -> Option<TabDownload> {
    loop {
        let first = lock(state).downloads.first().cloned();
        match first {
            Some(d) if d.settled() => return Some(d),
            d if Instant::now() >= deadline => return d,
            _ => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn folds_begin_and_progress() {
        let mut list = Vec::new();
        on_event(
            &mut list,
            "Page.downloadWillBegin",
            &json!({"guid": "g", "url": "http://h/r", "suggestedFilename": "r.csv"}),
        );
        on_event(
            &mut list,
            "Page.downloadProgress",
            &json!({"guid": "g", "state": "inProgress", "totalBytes": 10, "receivedBytes": 4}),
        );
        assert!(!list[0].settled());
        on_event(
            &mut list,
            "Page.downloadProgress",
            &json!({"guid": "g", "state": "completed", "totalBytes": 10, "receivedBytes": 10}),
        );
        // Progress for a download this tab did not begin is ignored.
        on_event(
            &mut list,
            "Page.downloadProgress",
            &json!({"guid": "other"}),
        );
        assert_eq!(list.len(), 1);
        assert!(list[0].settled());
        assert_eq!(list[0].to_json()["suggested_filename"], "r.csv");
        assert_eq!(list[0].received_bytes, 10);
    }
}
