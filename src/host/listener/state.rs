//! What the listener reads from the host: the live upstream browser and its status.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::watch;

use super::config::ListenerConfig;
use crate::error::{AfError, ErrorCode};

/// The running browser's DevTools endpoints, both on loopback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    /// The browser target's WebSocket URL (`ws://127.0.0.1:PORT/devtools/browser/<id>`).
    pub browser_ws_url: String,
    /// The DevTools HTTP base (`http://127.0.0.1:PORT`), for `/json/*` and page sockets.
    pub http_base: String,
}

/// Host readiness as `/health` reports it (serialized lowercase).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HostStatus {
    /// Browser up and serving.
    Ok,
    /// Browser (or display) still starting or restarting.
    Starting,
    /// Up, but something is wrong (e.g. a child keeps crashing).
    Degraded,
}

/// The host's live state, as the listener sees it. The host implements this.
pub trait HostView: Send + Sync + 'static {
    /// The browser to proxy to; `None` while starting or restarting.
    fn upstream(&self) -> Option<Upstream>;
    /// Current readiness.
    fn status(&self) -> HostStatus;
    /// Extra `/health` fields (`backend`, `profile`, restart counts …), as a JSON object.
    fn health_details(&self) -> serde_json::Value;
    /// The `/capabilities` document (without `code`, which the listener adds).
    fn capabilities(&self) -> serde_json::Value;
    /// Relaunch the browser under persistent profile `name` (`-` for a fresh ephemeral one);
    /// resolves to whether anything changed. Hosts that cannot switch refuse.
    fn switch_profile(
        &self,
        name: String,
    ) -> futures_util::future::BoxFuture<'static, Result<bool, AfError>> {
        let _ = name;
        Box::pin(async {
            Err(AfError::new(
                ErrorCode::BackendUnsupported,
                "this host cannot switch profiles",
            ))
        })
    }
}

/// Shared state of every route.
pub struct ListenerState {
    /// The host's live view.
    pub view: Arc<dyn HostView>,
    /// The listener configuration.
    pub config: ListenerConfig,
    /// When the listener state was created (for `uptime_s`).
    pub started: Instant,
    /// Loopback HTTP client for the browser's DevTools `/json/*` documents.
    pub(crate) http: reqwest::Client,
    /// Bumped to disconnect every proxied WebSocket (shutdown, profile switch).
    disconnect: watch::Sender<u64>,
}

impl std::fmt::Debug for ListenerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListenerState")
            .field("config", &self.config)
            .field("started", &self.started)
            .finish_non_exhaustive()
    }
}

impl ListenerState {
    /// New state over `view` with `config` (validated: a non-loopback listener needs a token).
    pub fn new(view: Arc<dyn HostView>, config: ListenerConfig) -> Result<ListenerState, AfError> {
        config.validate()?;
        let http = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| {
                AfError::new(
                    ErrorCode::IoError,
                    format!("cannot build the DevTools HTTP client: {e}"),
                )
            })?;
        let (disconnect, _) = watch::channel(0);
        Ok(ListenerState {
            view,
            config,
            started: Instant::now(),
            http,
            disconnect,
        })
    }

    /// Close every proxied `/cdp` WebSocket now (e.g. before switching the browser profile).
    pub fn disconnect_all(&self) {
        self.disconnect.send_modify(|generation| *generation += 1);
    }

    /// A receiver that changes when [`ListenerState::disconnect_all`] is called.
    pub(crate) fn disconnected(&self) -> watch::Receiver<u64> {
        self.disconnect.subscribe()
    }

    /// Seconds since the state was created.
    pub fn uptime_s(&self) -> u64 {
        self.started.elapsed().as_secs()
    }
}
