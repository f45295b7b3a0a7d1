//! A private, ephemeral host inside the current process: a unix socket in a private temp
//! directory, no token (only this process can reach it), stopped when dropped. It is the
//! SDK's [`BrowserLauncher`] ([`InlineLauncher`]): the CLI and MCP front ends hand it to the
//! requests they build.

use std::sync::Arc;

use futures_util::future::BoxFuture;

use crate::env::Snapshot;
use crate::error::{AfError, ErrorCode};
use crate::host::listener::ListenAddr;
use crate::host::run::{self, HostOptions, RunningHost};
use crate::sdk::endpoint::Endpoint;
use crate::sdk::fetch::TransportOptions;
use crate::sdk::launcher::{BrowserLauncher, LaunchSpec, LaunchedBrowser, Launcher};
use crate::sdk::secret::Secret;

/// Starts an [`InlineHost`] per launch (the browser from the spec, else `AFHTTP_BROWSER_BIN`,
/// else PATH, both from the front end's environment snapshot).
#[derive(Debug, Clone, Default)]
pub struct InlineLauncher {
    env: Snapshot,
}

impl InlineLauncher {
    /// A launcher that takes `AFHTTP_BROWSER_BIN`, `AFHTTP_NO_SANDBOX`, `PATH` and `TMPDIR`
    /// from `env`.
    pub fn new(env: &Snapshot) -> InlineLauncher {
        InlineLauncher { env: env.clone() }
    }

    /// The launcher as a request carries it.
    pub fn shared(env: &Snapshot) -> Launcher {
        Launcher(Arc::new(InlineLauncher::new(env)))
    }
}

/// Spec §13's convenience: `Client::inline_ephemeral()` starts a private in-process host
/// and returns a client that owns it. It lives here, in `host`, so that `sdk` names nothing
/// above it; it is [`crate::sdk::client::Client::launch`] with [`InlineLauncher`].
impl crate::sdk::client::Client {
    /// A client for a private, ephemeral in-process host, stopped by [`Client::close`] or
    /// on drop (needs the `host` feature). It is an entry point: it reads the process
    /// environment once, as the CLI does ([`InlineLauncher::new`] takes a snapshot instead).
    ///
    /// [`Client::close`]: crate::sdk::client::Client::close
    pub async fn inline_ephemeral() -> Result<crate::sdk::client::Client, AfError> {
        let launcher = InlineLauncher::new(&Snapshot::read());
        crate::sdk::client::Client::launch(&launcher).await
    }
}

impl BrowserLauncher for InlineLauncher {
    fn launch<'a>(
        &'a self,
        spec: LaunchSpec<'a>,
    ) -> BoxFuture<'a, Result<Box<dyn LaunchedBrowser>, AfError>> {
        Box::pin(async move {
            let host = InlineHost::start(
                &self.env,
                spec.browser_bin.map(std::path::Path::to_path_buf),
                spec.family,
                spec.transport,
            )
            .await?;
            Ok(Box::new(host) as Box<dyn LaunchedBrowser>)
        })
    }
}

impl LaunchedBrowser for InlineHost {
    fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    fn family(&self) -> Option<&str> {
        self.family.as_deref()
    }

    fn connection(&self) -> Option<Arc<crate::sdk::cdp::CdpConnection>> {
        self.browser_connection()
    }

    fn stop(self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(InlineHost::stop(*self))
    }
}

/// An inline host; dropping it stops the browser and removes its profile.
pub struct InlineHost {
    running: Option<RunningHost>,
    /// Where it listens.
    pub endpoint: Endpoint,
    /// The backend family (`chromium`, `lightpanda`, ...), as `/health` would report it.
    pub family: Option<String>,
    // Declared last: the socket directory outlives the host that listens in it.
    _dir: tempfile::TempDir,
}

impl std::fmt::Debug for InlineHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InlineHost")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl InlineHost {
    /// Start one with the browser `family` (default: the chromium family) from `browser_bin`
    /// (or `env`'s `AFHTTP_BROWSER_BIN`, or its PATH), whose traffic follows the fetch's
    /// `transport` (proxy, extra CA, certificate checks off).
    ///
    /// No browser executable at all is `render_unavailable`; a browser that is there but
    /// does not start is `browser_launch_failed` with its stderr tail.
    pub async fn start(
        env: &Snapshot,
        browser_bin: Option<std::path::PathBuf>,
        family: Option<crate::profile::Backend>,
        transport: &TransportOptions,
    ) -> Result<InlineHost, AfError> {
        // Room for `/host.sock` in a Unix socket path (at most 107 bytes).
        let dir = crate::fsutil::short_tempdir("afhttp-inline-", 96)
            .map_err(|e| AfError::io("create the inline host directory", &e))?;
        let socket = dir.path().join("host.sock");
        let mut opts = HostOptions::local(ListenAddr::Unix(socket.clone()), env);
        opts.wait_for_product = false;
        // Its one fetch takes the browser's start-up tab.
        opts.tab_pool = 0;
        opts.ephemeral_root = memory_scratch_root(env);
        opts.backend = family;
        opts.browser_bin = browser_bin.or_else(|| env.get(crate::env::BROWSER_BIN).map(Into::into));
        require_some_browser(&opts)?;
        if let Some(policy) = &transport.egress {
            // Every request of the browser goes through the host's loopback egress proxy,
            // which enforces the fetch's policy and chains to its proxy, if any (whose own
            // address passes the policy first).
            if let Some(secret) = &transport.proxy_url {
                let proxy = secret.expose_url();
                let port = proxy.port_or_known_default().unwrap_or(1080);
                crate::sdk::egress::check_host(policy, proxy.host_str().unwrap_or_default(), port)
                    .await?;
                opts.proxy_url = Some(Secret::new(proxy.as_str()));
                opts.proxy_ca = transport.ca_cert.clone();
            }
            opts.egress = Some(policy.clone());
        } else if let Some(secret) = &transport.proxy_url {
            let proxy = secret.expose_url();
            if secret.has_credentials() {
                // Chromium sends no credentials from --proxy-server (and never authenticates
                // to a SOCKS5 proxy): the browser goes through the host's loopback proxy
                // (the egress proxy, default policy), which chains to this one with them.
                opts.egress = Some(crate::host::egress::Policy::default());
                opts.proxy_url = Some(Secret::new(proxy.as_str()));
                opts.proxy_ca = transport.ca_cert.clone();
            } else {
                opts.proxy_url = Some(Secret::new(browser_proxy(proxy)));
            }
        }
        if transport.tls_insecure {
            // This browser lives for one fetch and takes no other traffic.
            opts.browser_args
                .push("--ignore-certificate-errors".to_string());
        }
        if let Some(ca) = &transport.ca_cert {
            let home = dir.path().join("home");
            crate::host::nssdb::trust_ca(&home, ca).await?;
            opts.engine_env
                .push(("HOME".to_string(), home.display().to_string()));
        }
        let running = run::start(opts).await?;
        let family = running
            .ready
            .pointer("/backend/family")
            .and_then(serde_json::Value::as_str)
            .map(String::from);
        Ok(InlineHost {
            family,
            running: Some(running),
            endpoint: Endpoint::Unix(socket),
            _dir: dir,
        })
    }

    /// A CDP connection straight to the browser (no listener hop), when one is open.
    pub fn browser_connection(&self) -> Option<std::sync::Arc<crate::sdk::cdp::CdpConnection>> {
        self.running.as_ref()?.browser_connection()
    }

    /// Stop it in order and wait.
    pub async fn stop(mut self) {
        if let Some(r) = self.running.take() {
            let _ = r.stop().await;
        }
    }
}

/// `render_unavailable` when no browser executable can be found at all (an explicit
/// `--browser-bin` is checked, with its own error, by the host).
fn require_some_browser(opts: &HostOptions) -> Result<(), AfError> {
    if opts.browser_bin.is_some() {
        return Ok(());
    }
    let search_path = opts.search_path();
    let path_env = search_path.as_deref();
    let found = match opts.backend {
        Some(b) => crate::host::browser::resolve_binary(b, None, path_env).is_ok(),
        None => crate::host::browser::resolve_auto(path_env).is_some(),
    };
    if found {
        return Ok(());
    }
    Err(AfError::new(
        ErrorCode::RenderUnavailable,
        "no browser executable was found for the inline browser",
    )
    .with_hint("install chromium, or pass --browser-bin (or --endpoint-url of a host)"))
}

/// The `proxy_url` (without credentials) as Chromium's `--proxy-server` takes it; `socks5h`
/// is Chromium's `socks5` (it always resolves names through the proxy).
fn browser_proxy(proxy: &url::Url) -> String {
    let scheme = match proxy.scheme() {
        "socks5h" => "socks5",
        other => other,
    };
    let host = proxy.host_str().unwrap_or_default();
    match proxy.port() {
        Some(port) => format!("{scheme}://{host}:{port}"),
        None => format!("{scheme}://{host}"),
    }
}

/// The least free space a memory file system needs to take an inline fetch's profile.
const MEMORY_SCRATCH_MIN_FREE: u64 = 1 << 30;

/// Where an inline fetch's throwaway profile goes: `/dev/shm` when `env` has no `TMPDIR` and
/// `/dev/shm` is a tmpfs with at least 1 GiB free; otherwise `None` (the temp dir).
///
/// The browser writes hundreds of files into a fresh profile while it starts, and the
/// profile is deleted right after the one fetch: in memory both take a fraction of a disk's
/// time (about 100 ms of a cold fetch, measured in `bench/run_browser.py`). An explicit
/// `TMPDIR` is the user's choice and wins.
pub fn memory_scratch_root(env: &Snapshot) -> Option<std::path::PathBuf> {
    if env.get_os(crate::env::TMPDIR).is_some() {
        return None;
    }
    let shm = std::path::Path::new("/dev/shm");
    let fs = nix::sys::statfs::statfs(shm).ok()?;
    if fs.filesystem_type() != nix::sys::statfs::TMPFS_MAGIC {
        return None;
    }
    let vfs = nix::sys::statvfs::statvfs(shm).ok()?;
    let free = vfs.blocks_available().saturating_mul(vfs.fragment_size());
    (free >= MEMORY_SCRATCH_MIN_FREE).then(|| shm.to_path_buf())
}
