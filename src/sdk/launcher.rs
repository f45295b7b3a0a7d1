//! How the SDK gets a throwaway browser for a fetch that names no host: a [`BrowserLauncher`]
//! that the caller passes in. The SDK defines the contract; the `host` layer implements it
//! (`host::inline::InlineLauncher`, a private host in this process), and the CLI, the MCP
//! front end and the host hand it to the requests they build. A request without one answers
//! `render_unavailable` when it needs a browser and has no host.

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::future::BoxFuture;

use crate::error::{AfError, ErrorCode};
use crate::profile::Backend;
use crate::sdk::cdp::CdpConnection;
use crate::sdk::endpoint::Endpoint;
use crate::sdk::fetch::TransportOptions;

/// What a launch is asked for: the browser and the traffic rules of the one fetch it serves.
#[derive(Debug, Clone, Copy)]
pub struct LaunchSpec<'a> {
    /// The browser executable (`None`: the launcher's default).
    pub browser_bin: Option<&'a std::path::Path>,
    /// The browser family (`None`: the launcher's default).
    pub family: Option<Backend>,
    /// Proxy, extra CA and certificate checks the browser's traffic follows.
    pub transport: &'a TransportOptions,
}

/// Starts an ephemeral browser (with whatever serves it) for one fetch or one client.
pub trait BrowserLauncher: Send + Sync {
    /// Start one. No browser executable at all is `render_unavailable`; one that does not
    /// start is `browser_launch_failed`.
    fn launch<'a>(
        &'a self,
        spec: LaunchSpec<'a>,
    ) -> BoxFuture<'a, Result<Box<dyn LaunchedBrowser>, AfError>>;
}

/// A browser a [`BrowserLauncher`] started; [`LaunchedBrowser::stop`] (or dropping it) ends
/// it and removes what it wrote.
pub trait LaunchedBrowser: Send + Sync {
    /// Where its host listens (control calls and `/cdp`).
    fn endpoint(&self) -> &Endpoint;
    /// The backend family (`chromium`, `lightpanda`, ...), as `/health` would report it.
    fn family(&self) -> Option<&str>;
    /// A CDP connection straight to the browser (no listener hop), when one is open.
    fn connection(&self) -> Option<Arc<CdpConnection>>;
    /// Stop it in order and wait.
    fn stop(self: Box<Self>) -> BoxFuture<'static, ()>;
}

/// A shared launcher, as a request carries it.
#[derive(Clone)]
pub struct Launcher(pub Arc<dyn BrowserLauncher>);

impl std::fmt::Debug for Launcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Launcher")
    }
}

impl Launcher {
    /// Launch with `launcher`, or refuse when there is none.
    pub async fn launch_with(
        launcher: Option<&Launcher>,
        browser_bin: Option<&PathBuf>,
        family: Option<Backend>,
        transport: &TransportOptions,
    ) -> Result<Box<dyn LaunchedBrowser>, AfError> {
        let Some(launcher) = launcher else {
            return Err(no_launcher());
        };
        let spec = LaunchSpec {
            browser_bin: browser_bin.map(PathBuf::as_path),
            family,
            transport,
        };
        launcher.0.launch(spec).await
    }
}

/// `render_unavailable`: a browser is needed, no host is named and nothing can start one.
pub fn no_launcher() -> AfError {
    AfError::new(
        ErrorCode::RenderUnavailable,
        "no browser is available: the request names no host and no browser launcher was given",
    )
    .with_hint("set endpoint_url to a running `afhttp host`, or pass a browser launcher")
}

#[cfg(test)]
mod tests {
    use crate::error::ErrorCode;
    use crate::sdk::fetch::FetchSpec;

    /// A fetch that needs a browser, names no host and carries no launcher is refused as
    /// `render_unavailable` before anything is written.
    #[tokio::test]
    async fn a_browser_fetch_without_host_or_launcher_is_render_unavailable() {
        let out = tempfile::tempdir().unwrap();
        let spec = FetchSpec {
            url: "http://127.0.0.1:9/".into(),
            render: Some("always".into()),
            out: Some(out.path().join("o")),
            ..FetchSpec::default()
        };
        let failure = crate::sdk::fetch::fetch(spec.validate().unwrap())
            .await
            .unwrap_err();
        assert_eq!(failure.error.code, ErrorCode::RenderUnavailable);
        assert!(!failure.error.retryable());
    }
}
