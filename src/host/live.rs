//! The host's live state as the listener reads it: the current browser, the takeover
//! display, readiness and restart counts.

use std::sync::{Arc, RwLock};

use serde_json::{json, Value};

use crate::error::{AfError, ErrorCode};
use crate::host::browser::{self, RunningBrowser};
use crate::host::capabilities;
use crate::host::display::{Provider, RunningDisplay};
use crate::host::downloads::{DownloadKeeper, DownloadRecord};
use crate::host::listener::{HostStatus, HostView, TakeoverUpstream, Upstream};
use crate::host::recent_requests::RecentRequests;
use crate::host::recorder;
use crate::profile::Backend;

/// Restarts after a crash, as `/health` reports them.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Restarts {
    /// Browser relaunches.
    pub browser: u32,
    /// Display provider restarts.
    pub display: u32,
}

/// A request to relaunch the browser under another profile.
pub(crate) struct SwitchRequest {
    pub name: String,
    pub before_stop: futures_util::future::BoxFuture<'static, ()>,
    pub reply: tokio::sync::oneshot::Sender<Result<bool, AfError>>,
}

/// The live state the listener reads.
pub(crate) struct LiveView {
    pub backend: Backend,
    pub upstream: RwLock<Option<Upstream>>,
    pub status: RwLock<HostStatus>,
    pub product: RwLock<Option<String>>,
    pub profile: RwLock<Value>,
    pub restarts: RwLock<Restarts>,
    pub switch: tokio::sync::mpsc::UnboundedSender<SwitchRequest>,
    /// `--recent-requests-cap` records (`None`: off).
    pub recent: Option<Arc<RecentRequests>>,
    /// The recorder task of the current browser.
    pub recorder: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// `--takeover-provider` (`None`: off).
    pub takeover: Option<Provider>,
    /// The display's web client while it is up.
    pub display: RwLock<Option<TakeoverUpstream>>,
    /// Downloads of the current browser, and the task keeping its download behavior.
    pub downloads: DownloadKeeper,
    /// The profile store (`None`: the front end's environment locates none).
    pub profiles_root: Option<std::path::PathBuf>,
}

impl LiveView {
    /// The persistent profiles on this host's disk for its backend, and the one its browser
    /// runs on now: what a fleet driver routes `--profile` fetches by (behind the token).
    fn profiles(&self) -> Value {
        let active = self
            .profile
            .read()
            .ok()
            .filter(|p| p.get("kind").and_then(Value::as_str) == Some("persistent"))
            .and_then(|p| p.get("name").and_then(Value::as_str).map(String::from));
        let names: Vec<String> = self
            .profiles_root
            .as_deref()
            .map_or(Ok(Vec::new()), |root| {
                crate::profile::list_profiles(root, Some(self.backend))
            })
            .map(|dirs| {
                dirs.into_iter()
                    .map(|d| d.name.as_str().to_string())
                    .collect()
            })
            .unwrap_or_default();
        json!({"active": active, "persistent": names})
    }
}

impl HostView for LiveView {
    fn upstream(&self) -> Option<Upstream> {
        self.upstream.read().ok().and_then(|u| u.clone())
    }

    fn status(&self) -> HostStatus {
        self.status
            .read()
            .map(|s| *s)
            .unwrap_or(HostStatus::Degraded)
    }

    fn health_details(&self) -> Value {
        let product = self.product.read().ok().and_then(|p| p.clone());
        let restarts = self.restarts.read().map(|r| *r).unwrap_or_default();
        json!({
            "backend": {
                "family": self.backend.family(),
                "name": self.backend.as_str(),
                "version": product,
                "connected": self.upstream().is_some(),
            },
            "profile": self.profile.read().map(|p| p.clone()).unwrap_or(Value::Null),
            "restarts": {"browser": restarts.browser, "display": restarts.display},
            "takeover": {
                "provider": self.takeover.map_or("off", Provider::as_str),
                "connected": self.takeover_upstream().is_some(),
            },
        })
    }

    fn capabilities(&self) -> Value {
        let product = self.product.read().ok().and_then(|p| p.clone());
        let mut doc = capabilities::document(
            self.backend,
            product.as_deref(),
            self.takeover.map(Provider::as_str),
        );
        doc["recent_requests"] = json!({
            "enabled": self.recent.is_some(),
            "cap": self.recent.as_ref().map_or(0, |r| r.cap()),
        });
        doc["profiles"] = self.profiles();
        doc
    }

    fn profile_is_active(&self, name: &str) -> bool {
        // `-` always asks for a fresh ephemeral profile, so it is never "already active".
        name != crate::profile::EPHEMERAL
            && self
                .profile
                .read()
                .is_ok_and(|p| p.get("name").and_then(Value::as_str) == Some(name))
    }

    fn takeover_provider(&self) -> Option<&'static str> {
        self.takeover.map(Provider::as_str)
    }

    fn takeover_upstream(&self) -> Option<TakeoverUpstream> {
        self.display.read().ok().and_then(|d| d.clone())
    }

    fn download(&self, guid: &str) -> Option<DownloadRecord> {
        self.downloads.get(guid)
    }

    fn recent_requests(&self) -> Value {
        match &self.recent {
            Some(r) => r.document(),
            None => json!({"enabled": false, "cap": 0, "dropped": 0, "records": []}),
        }
    }

    fn switch_profile(
        &self,
        name: String,
        before_stop: futures_util::future::BoxFuture<'static, ()>,
    ) -> futures_util::future::BoxFuture<'static, Result<bool, AfError>> {
        let (reply, rx) = tokio::sync::oneshot::channel();
        let sent = self.switch.send(SwitchRequest {
            name,
            before_stop,
            reply,
        });
        Box::pin(async move {
            sent.map_err(|_| AfError::new(ErrorCode::CdpUnavailable, "the host is shutting down"))?;
            rx.await
                .map_err(|_| AfError::new(ErrorCode::CdpUnavailable, "the host is shutting down"))?
        })
    }
}

impl LiveView {
    /// Publish the display's web client (`None` while it is down).
    pub fn set_display(&self, d: Option<&RunningDisplay>) {
        if let Ok(mut slot) = self.display.write() {
            *slot = d.map(|d| TakeoverUpstream {
                web: d.web,
                entry: d.entry.clone(),
            });
        }
    }

    /// Count one restart after a crash.
    pub fn count_restart(&self, display: bool) {
        if let Ok(mut r) = self.restarts.write() {
            if display {
                r.display += 1;
            } else {
                r.browser += 1;
            }
        }
    }

    /// Start recording `b` (when `--recent-requests-cap` is on), replacing the old recorder.
    pub fn record(&self, b: &RunningBrowser) {
        let Some(store) = &self.recent else {
            return;
        };
        let task = recorder::spawn(&b.ws_url, Arc::clone(store));
        if let Ok(mut slot) = self.recorder.lock() {
            if let Some(old) = slot.replace(task) {
                old.abort();
            }
        }
    }

    /// Stop the recorder and the download keeper (shutdown).
    pub fn stop_recording(&self) {
        if let Some(old) = self.recorder.lock().ok().and_then(|mut s| s.take()) {
            old.abort();
        }
        self.downloads.stop();
    }

    /// Ask the browser for its product string in the background and record it.
    pub fn refresh_product(self: &Arc<Self>, b: &RunningBrowser) -> tokio::task::JoinHandle<()> {
        let view = Arc::clone(self);
        let http_base = b.http_base.clone();
        let known = b.product.clone();
        tokio::spawn(async move {
            let product = match known {
                Some(p) => Some(p),
                None => browser::product(&http_base).await,
            };
            if let (Some(product), Ok(mut p)) = (product, view.product.write()) {
                *p = Some(product);
            }
        })
    }

    pub fn set(&self, b: Option<&RunningBrowser>, status: HostStatus) {
        if let Ok(mut u) = self.upstream.write() {
            *u = b.map(|b| Upstream {
                browser_ws_url: b.ws_url.clone(),
                http_base: b.http_base.clone(),
            });
        }
        if let (Some(product), Ok(mut p)) =
            (b.and_then(|b| b.product.clone()), self.product.write())
        {
            *p = Some(product);
        }
        if let Ok(mut s) = self.status.write() {
            *s = status;
        }
    }
}
