//! The host listener in this process over a fake host view: the real route table, auth,
//! Host/Origin checks and proxying, with the browser and display a test chooses.

use std::sync::Arc;

use afhttp::host::listener::{
    serve, BoundListener, HostStatus, HostView, ListenAddr, ListenerConfig, ListenerState,
    TakeoverUpstream, TokenSecret, Upstream,
};
use serde_json::{json, Value};

/// A host view a test sets up: the browser it points at (none: the host is still starting)
/// and a takeover display's web client (none: no display).
#[derive(Debug, Default, Clone)]
pub struct FakeView {
    /// The browser behind `/cdp` and `/json/*`.
    pub upstream: Option<Upstream>,
    /// The display's web client behind `/takeover/*`.
    pub panel: Option<TakeoverUpstream>,
}

impl FakeView {
    /// A view of the browser at `upstream`.
    pub fn browser(upstream: Upstream) -> FakeView {
        FakeView {
            upstream: Some(upstream),
            panel: None,
        }
    }
}

impl HostView for FakeView {
    fn upstream(&self) -> Option<Upstream> {
        self.upstream.clone()
    }
    fn status(&self) -> HostStatus {
        HostStatus::Ok
    }
    fn health_details(&self) -> Value {
        json!({"backend": {"family": "chromium", "connected": true},
               "profile": {"kind": "ephemeral"}})
    }
    fn capabilities(&self) -> Value {
        json!({"wait_modes": ["auto", "load"]})
    }
    fn takeover_provider(&self) -> Option<&'static str> {
        self.panel.as_ref().map(|_| "novnc")
    }
    fn takeover_upstream(&self) -> Option<TakeoverUpstream> {
        self.panel.clone()
    }
}

/// A listener configuration for `listen` (`tcp:…` or `unix:…`) with `token`, if any.
pub fn config(listen: &str, token: Option<&str>) -> ListenerConfig {
    ListenerConfig {
        token: token.map(|t| TokenSecret::new(t).unwrap()),
        ..ListenerConfig::new(ListenAddr::parse(listen).unwrap())
    }
}

/// The listener's state over `view` (for [`serve`] directly, as a refusal test does).
pub fn state(view: FakeView, config: ListenerConfig) -> Arc<ListenerState> {
    Arc::new(ListenerState::new(Arc::new(view), config).unwrap())
}

/// Serve `view` with `config` until the sender is used or dropped.
pub async fn start(
    view: FakeView,
    config: ListenerConfig,
) -> (BoundListener, tokio::sync::oneshot::Sender<()>) {
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let bound = serve(state(view, config), async move {
        let _ = stop_rx.await;
    })
    .await
    .unwrap();
    (bound, stop_tx)
}

/// The TCP port a listener bound.
pub fn port(bound: &BoundListener) -> u16 {
    bound.local.rsplit(':').next().unwrap().parse().unwrap()
}
