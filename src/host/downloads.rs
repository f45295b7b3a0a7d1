//! Browser downloads on the host: one CDP connection of the host's own keeps
//! `Browser.setDownloadBehavior` in force (Chromium resets it when the session that set it
//! goes away, and a headless browser would otherwise save into `~/Downloads`), and folds the
//! `Browser.download*` events into [`Downloads`], which `GET /downloads/{id}` serves from.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use crate::error::AfError;
use crate::host::log::{log, Level};
use crate::sdk::browser::download::TabDownload;
use crate::sdk::cdp::CdpConnection;
use crate::sdk::transfer::is_guid;

/// Bound on each keeper CDP call.
const CALL_TIMEOUT: Duration = Duration::from_secs(5);
/// Downloads remembered per browser; older records are forgotten (their files stay on disk).
const MAX_RECORDS: usize = 1000;

/// One download the browser started, as its events described it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownloadRecord {
    /// What the events said; the guid is also the file name under the downloads directory
    /// (the suggested name is never used as a host path).
    pub facts: TabDownload,
    /// Where the bytes are: `<downloads dir>/<guid>`.
    pub path: PathBuf,
}

/// The downloads of the current browser.
#[derive(Debug, Default)]
pub struct Downloads {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    dir: PathBuf,
    records: VecDeque<DownloadRecord>,
}

impl Downloads {
    /// An empty registry.
    pub fn new() -> Downloads {
        Downloads::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Forget every record and use `dir` from now on (a new browser or profile).
    pub fn reset(&self, dir: &Path) {
        let mut inner = self.lock();
        inner.dir = dir.to_path_buf();
        inner.records.clear();
    }

    /// The record of `guid`, if this browser started it.
    pub fn get(&self, guid: &str) -> Option<DownloadRecord> {
        self.lock()
            .records
            .iter()
            .find(|r| r.facts.guid == guid)
            .cloned()
    }

    /// Fold one `Browser.downloadWillBegin` / `Browser.downloadProgress` event; returns the
    /// record when this event settled it (completed or canceled).
    pub fn on_event(&self, method: &str, p: &Value) -> Option<DownloadRecord> {
        let guid = p["guid"].as_str().filter(|g| is_guid(g))?;
        let mut inner = self.lock();
        match method {
            "Browser.downloadWillBegin" => {
                let path = inner.dir.join(guid);
                inner.records.retain(|r| r.facts.guid != guid);
                inner.records.push_back(DownloadRecord {
                    facts: TabDownload::begin(guid, p),
                    path,
                });
                while inner.records.len() > MAX_RECORDS {
                    inner.records.pop_front();
                }
                None
            }
            "Browser.downloadProgress" => {
                let r = inner.records.iter_mut().find(|r| r.facts.guid == guid)?;
                let was_settled = r.facts.settled();
                r.facts.progress(p);
                (!was_settled && r.facts.settled()).then(|| r.clone())
            }
            _ => None,
        }
    }
}

/// The downloads of the host's current browser and the task that keeps its behavior.
#[derive(Debug, Default)]
pub struct DownloadKeeper {
    registry: Arc<Downloads>,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// The keeper's browser-level connection, which an in-process driver may share.
    conn: Mutex<Option<Arc<CdpConnection>>>,
}

impl DownloadKeeper {
    /// Send the downloads of the browser at `browser_ws_url` to `dir` and track them, before
    /// any client can reach it (replacing the previous browser's keeper). A backend without
    /// the Browser download domain keeps serving, with a warning in the log.
    pub async fn attach(&self, browser_ws_url: &str, dir: &Path) {
        match keep(browser_ws_url, dir, Arc::clone(&self.registry)).await {
            Ok((task, conn)) => {
                let mut slot = self.task.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(old) = slot.replace(task) {
                    old.abort();
                }
                *self.conn.lock().unwrap_or_else(|p| p.into_inner()) = Some(conn);
            }
            Err(e) => log(
                Level::Warn,
                "downloads are not captured by this browser",
                json!({"error": e.message}),
            ),
        }
    }

    /// The record of `guid`, if the current browser started it.
    pub fn get(&self, guid: &str) -> Option<DownloadRecord> {
        self.registry.get(guid)
    }

    /// The current browser's CDP connection the keeper holds open (`None` before the first
    /// attach succeeded or after [`DownloadKeeper::stop`]). An inline host's own fetch drives
    /// the browser over it: no second WebSocket, no listener hop.
    pub fn connection(&self) -> Option<Arc<CdpConnection>> {
        self.conn
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .filter(|c| !c.is_closed())
    }

    /// Stop keeping (host shutdown).
    pub fn stop(&self) {
        let taken = self.task.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(task) = taken {
            task.abort();
        }
        self.conn.lock().unwrap_or_else(|p| p.into_inner()).take();
    }
}

/// Make `dir` (0700), point the browser at `browser_ws_url`'s downloads there, and keep the
/// connection open in a task that records events into `registry` until the browser goes.
///
/// Returns once the behavior is in force, so no client can start a download before it,
/// with the connection (which stays open while the task or any other holder keeps it).
pub async fn keep(
    browser_ws_url: &str,
    dir: &Path,
    registry: Arc<Downloads>,
) -> Result<(tokio::task::JoinHandle<()>, Arc<CdpConnection>), AfError> {
    crate::fsutil::create_private_dir_all(dir)?;
    registry.reset(dir);
    let conn = CdpConnection::connect_devtools(browser_ws_url, CALL_TIMEOUT).await?;
    let mut events = conn.subscribe(None);
    // `<profile>/downloads` → `<profile>`, where the index lives.
    let profile_dir = dir.parent().map(Path::to_path_buf);
    conn.send(
        None,
        "Browser.setDownloadBehavior",
        json!({"behavior": "allowAndName", "downloadPath": dir, "eventsEnabled": true}),
        CALL_TIMEOUT,
    )
    .await?;
    let held = Arc::clone(&conn);
    let task = tokio::spawn(async move {
        // The connection lives as long as this task: dropping it would reset the behavior.
        let _conn = held;
        while let Some(ev) = events.recv().await {
            if !ev.method.starts_with("Browser.download") {
                continue;
            }
            let settled = registry.on_event(&ev.method, &ev.params);
            if let (Some(r), Some(profile)) = (settled, &profile_dir) {
                let line = json!({
                    "id": r.facts.guid,
                    "suggested_filename": r.facts.suggested_filename,
                    "url": r.facts.url,
                    "state": r.facts.state,
                    "total_bytes": r.facts.total_bytes,
                    "finished_at_rfc3339": crate::profile::now_rfc3339(),
                });
                if let Err(e) = crate::profile::append_download_record(profile, &line) {
                    log(
                        Level::Warn,
                        "download index not written",
                        json!({"error": e.message}),
                    );
                }
            }
        }
        log(Level::Debug, "download keeper stopped", json!({}));
    });
    Ok((task, conn))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn folds_events() {
        let d = Downloads::new();
        d.reset(Path::new("/dl"));
        let g = "ca76e7a0-1851-41cf-ab51-da8ad0d3a891";
        d.on_event(
            "Browser.downloadWillBegin",
            &json!({"guid": g, "url": "http://h/f", "suggestedFilename": "f.csv"}),
        );
        let settled = d.on_event(
            "Browser.downloadProgress",
            &json!({"guid": g, "state": "completed", "totalBytes": 5, "receivedBytes": 5.0}),
        );
        assert_eq!(settled.unwrap().facts.guid, g);
        // Settled once: a repeated completion event is not reported again.
        assert!(d
            .on_event(
                "Browser.downloadProgress",
                &json!({"guid": g, "state": "completed"})
            )
            .is_none());
        // A malformed guid is never recorded.
        d.on_event("Browser.downloadWillBegin", &json!({"guid": "../x"}));
        let r = d.get(g).unwrap();
        assert_eq!(r.path, Path::new("/dl").join(g));
        assert_eq!(
            (r.facts.state.as_str(), r.facts.received_bytes),
            ("completed", 5)
        );
        assert_eq!(r.facts.suggested_filename, "f.csv");
        assert!(d.get("../x").is_none());
        d.reset(Path::new("/other"));
        assert!(d.get(g).is_none());
    }
}
