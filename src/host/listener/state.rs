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

/// The takeover display's web client on loopback, as the `/takeover/panel` proxy needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TakeoverUpstream {
    /// The web client's loopback address (HTTP and WebSocket).
    pub web: std::net::SocketAddr,
    /// The page under `/takeover/panel/` a human is sent to (path and query).
    pub entry: String,
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
    /// Whether `name` is the profile the browser runs on now (so asking for it is no switch).
    fn profile_is_active(&self, name: &str) -> bool {
        let _ = name;
        false
    }
    /// Relaunch the browser under persistent profile `name` (`-` for a fresh ephemeral one);
    /// resolves to whether anything changed. `before_stop` runs once the new profile is open
    /// (so a refused switch disturbs no one) and before the old browser stops: the listener
    /// drains and closes the other clients there. Hosts that cannot switch refuse.
    fn switch_profile(
        &self,
        name: String,
        before_stop: futures_util::future::BoxFuture<'static, ()>,
    ) -> futures_util::future::BoxFuture<'static, Result<bool, AfError>> {
        let _ = (name, before_stop);
        Box::pin(async {
            Err(AfError::new(
                ErrorCode::BackendUnsupported,
                "this host cannot switch profiles",
            ))
        })
    }
    /// A download of the current browser by guid (`GET /downloads/{id}`); hosts without a
    /// download keeper have none.
    fn download(&self, guid: &str) -> Option<crate::host::downloads::DownloadRecord> {
        let _ = guid;
        None
    }
    /// The configured takeover provider (`None`: the host serves no takeover).
    fn takeover_provider(&self) -> Option<&'static str> {
        None
    }
    /// The display's web client while it is up (`None` while restarting or without one).
    fn takeover_upstream(&self) -> Option<TakeoverUpstream> {
        None
    }
    /// `GET /recent-requests`: the last request records across the browser.
    fn recent_requests(&self) -> serde_json::Value {
        serde_json::json!({"enabled": false, "cap": 0, "records": []})
    }
}

/// Serves one `/mcp` request (the MCP server's HTTP transport, built outside the listener
/// so the listener does not depend on the MCP SDK).
pub type McpEndpoint = Arc<
    dyn Fn(
            axum::extract::Request,
        ) -> futures_util::future::BoxFuture<'static, axum::response::Response>
        + Send
        + Sync,
>;

/// Shared state of every route.
pub struct ListenerState {
    /// The host's live view.
    pub view: Arc<dyn HostView>,
    /// The listener configuration.
    pub config: ListenerConfig,
    /// When the listener state was created (for `uptime_s`).
    pub started: Instant,
    /// Changed to close every proxied WebSocket (shutdown, profile switch) with a reason.
    disconnect: watch::Sender<Disconnect>,
    /// How many proxied WebSockets are open.
    clients: watch::Sender<usize>,
    /// Written for the whole of a profile switch (and by every client that names a profile);
    /// other new `/cdp` clients read it, so they attach to the browser that comes out of a
    /// switch, not the one being stopped, without queueing behind each other.
    pub(crate) switching: tokio::sync::RwLock<()>,
    /// Files drivers uploaded (`POST /uploads`), removed when the host stops.
    pub uploads: Arc<super::uploads::UploadStore>,
    /// Takeover handoffs and sessions (in memory: a restart invalidates them).
    pub handoffs: super::handoff::HandoffStore,
    /// CDP client slots (`--max-clients`), taken before a `/cdp` upgrade.
    pub slots: super::slots::Slots,
    /// The `/mcp` server (`None`: `/mcp` answers 404 once authorized).
    pub mcp: Option<McpEndpoint>,
    /// Third-party hosts that stalled in recent fetches (`/stalled-hosts`).
    pub stalls: super::stall_memory::StallMemory,
    /// Ready tabs for fetches.
    pub pool: Arc<super::tab_pool::TabPool>,
}

/// A request to close every proxied WebSocket.
#[derive(Debug, Clone, Default)]
pub struct Disconnect {
    /// Bumped on every request.
    pub generation: u64,
    /// Sent to clients in the close frame (at most 123 bytes).
    pub reason: String,
}

/// Counts one open proxied WebSocket until dropped.
pub(crate) struct ClientGuard(watch::Sender<usize>);

impl Drop for ClientGuard {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
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
        let (disconnect, _) = watch::channel(Disconnect::default());
        let (clients, _) = watch::channel(0);
        let slots = super::slots::Slots::new(config.max_clients);
        let pool = Arc::new(
            super::tab_pool::TabPool::new(config.tab_pool).with_isolated(config.tab_pool_isolated),
        );
        Ok(ListenerState {
            view,
            config,
            started: Instant::now(),
            disconnect,
            clients,
            switching: tokio::sync::RwLock::new(()),
            uploads: Arc::default(),
            handoffs: super::handoff::HandoffStore::default(),
            slots,
            mcp: None,
            stalls: super::stall_memory::StallMemory::default(),
            pool,
        })
    }

    /// Serve `/mcp` with `endpoint`.
    pub fn with_mcp(mut self, endpoint: McpEndpoint) -> ListenerState {
        self.mcp = Some(endpoint);
        self
    }

    /// Close every proxied WebSocket now, telling each client `reason` in the close frame.
    pub fn disconnect_all(&self, reason: &str) {
        let mut reason = reason.to_string();
        // A close frame's reason is limited to 123 bytes; cut on a char boundary.
        while reason.len() > 123 {
            reason.pop();
        }
        self.disconnect.send_modify(|d| {
            d.generation += 1;
            d.reason = reason;
        });
    }

    /// A receiver that changes when [`ListenerState::disconnect_all`] is called.
    pub(crate) fn disconnected(&self) -> watch::Receiver<Disconnect> {
        self.disconnect.subscribe()
    }

    /// Count a proxied WebSocket as open until the guard is dropped.
    pub(crate) fn client_opened(&self) -> ClientGuard {
        self.clients.send_modify(|n| *n += 1);
        ClientGuard(self.clients.clone())
    }

    /// How many proxied WebSockets are open.
    pub fn open_clients(&self) -> usize {
        *self.clients.borrow()
    }

    /// Wait until no proxied WebSocket is open, at most `bound`; returns how many still are.
    pub async fn drain_clients(&self, bound: Duration) -> usize {
        let mut rx = self.clients.subscribe();
        let _ = tokio::time::timeout(bound, rx.wait_for(|n| *n == 0)).await;
        self.open_clients()
    }

    /// Seconds since the state was created.
    pub fn uptime_s(&self) -> u64 {
        self.started.elapsed().as_secs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_driver_knows_every_status() {
        for status in [HostStatus::Ok, HostStatus::Starting, HostStatus::Degraded] {
            let shown = serde_json::to_value(status).unwrap();
            assert!(
                crate::sdk::host_http::shape::HEALTH_STATUSES.contains(&shown.as_str().unwrap()),
                "{shown}"
            );
        }
    }
}
