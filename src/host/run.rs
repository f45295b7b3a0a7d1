//! `afhttp host` at run time: open the profile, start the takeover display (if any), launch
//! the browser, serve the listener, then hand everything to the supervisor
//! ([`crate::host::supervisor`]) until SIGINT/SIGTERM.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tempfile::TempDir;
use tokio::signal::unix::{signal, SignalKind};

use crate::error::{AfError, ErrorCode};
use crate::host::browser::{self, LaunchOptions};
use crate::host::display::{self, DisplayOptions, Provider, RunningDisplay};
use crate::host::downloads::DownloadKeeper;
use crate::host::listener::{
    self, HostStatus, ListenAddr, ListenerConfig, ListenerState, TokenSecret,
};
use crate::host::live::{LiveView, Restarts};
use crate::host::log::{log, Level};
use crate::host::profile_session::ActiveProfile;
use crate::host::recent_requests::RecentRequests;
use crate::host::restart_budget::{RestartBudget, RESTART_WINDOW};
use crate::host::supervisor::{supervise, Supervised};
use crate::profile::Backend;

/// The takeover display's framebuffer, which the browser window fills.
const DISPLAY_SIZE: (u32, u32) = (1280, 720);

/// Everything `afhttp host` needs, validated.
#[derive(Debug, Clone)]
pub struct HostOptions {
    /// Listen address.
    pub listen: ListenAddr,
    /// `--profile` (`None`/`-` = ephemeral).
    pub profile: Option<String>,
    /// Headless (true) or headful.
    pub headless: bool,
    /// Backend (`None` = auto).
    pub backend: Option<Backend>,
    /// `--browser-bin`.
    pub browser_bin: Option<PathBuf>,
    /// Bearer token.
    pub token: Option<TokenSecret>,
    /// Serve `/health`.
    pub health: bool,
    /// Unauthenticated minimal `/health`.
    pub health_public_minimal: bool,
    /// Browser proxy (credentials allowed; never shown).
    pub proxy_url: Option<crate::sdk::secret::Secret>,
    /// A CA (PEM) that may sign an `https://` `proxy_url`'s certificate when the egress
    /// proxy chains to it (an inline browser's `--ca-cert`).
    pub proxy_ca: Option<PathBuf>,
    /// `--engine-env`.
    pub engine_env: Vec<(String, String)>,
    /// `--browser-arg`.
    pub browser_args: Vec<String>,
    /// `--allowed-host`.
    pub allowed_hosts: Vec<String>,
    /// `--trusted-proxy` address blocks.
    pub trusted_proxies: Vec<(std::net::IpAddr, u8)>,
    /// Chromium sandbox off (`AFHTTP_NO_SANDBOX`).
    pub no_sandbox: bool,
    /// The front end's environment, read once: the program search path (`PATH`) where the
    /// browser and the display programs are looked for, the variables children inherit
    /// ([`crate::host::procs::INHERITED`]), and the profile store's location.
    pub env: crate::env::Snapshot,
    /// Browser start bound.
    pub startup_timeout: Duration,
    /// Whether the ready document waits (bounded) for the browser's product string; an
    /// inline host skips the wait because nothing reads it there.
    pub wait_for_product: bool,
    /// `--recent-requests-cap` (0 = off).
    pub recent_requests_cap: usize,
    /// `--profile-switch-wait-ms`.
    pub profile_switch_wait: Duration,
    /// `--ephemeral-only`: refuse every persistent profile.
    pub ephemeral_only: bool,
    /// `--upload-max-bytes`.
    pub upload_max_bytes: u64,
    /// `--max-clients`.
    pub max_clients: usize,
    /// `--max-tabs`.
    pub max_tabs: usize,
    /// `--tab-pool` (an inline host keeps none: it serves one fetch, over its own tab).
    pub tab_pool: usize,
    /// `--takeover-provider` (`None`: off).
    pub takeover: Option<Provider>,
    /// `--takeover-quality-percent`.
    pub takeover_quality_percent: u8,
    /// The browser's egress policy (`None`: no `--egress-policy`, the browser connects
    /// directly).
    pub egress: Option<crate::host::egress::Policy>,
    /// Where an ephemeral profile is created (`None`: the temp dir).
    pub ephemeral_root: Option<std::path::PathBuf>,
    /// The window a crashing browser or display gets its restarts in (ten minutes; tests
    /// shorten it).
    pub restart_window: Duration,
    /// How `/mcp` is served (`None`: it answers 404).
    pub mcp: Option<crate::host::mcp_host::McpHostOptions>,
}

impl HostOptions {
    /// The program search path (the front end's `PATH`).
    pub fn search_path(&self) -> Option<std::ffi::OsString> {
        self.env.get_os(crate::env::PATH).map(Into::into)
    }

    /// Defaults for an ephemeral, tokenless loopback host (tests, inline fetch); the sandbox
    /// switch and the search path come from the front end's `env`.
    pub fn local(listen: ListenAddr, env: &crate::env::Snapshot) -> HostOptions {
        HostOptions {
            listen,
            profile: None,
            headless: true,
            backend: None,
            browser_bin: None,
            token: None,
            health: true,
            health_public_minimal: false,
            proxy_url: None,
            proxy_ca: None,
            engine_env: Vec::new(),
            browser_args: Vec::new(),
            allowed_hosts: Vec::new(),
            trusted_proxies: Vec::new(),
            no_sandbox: env.is_true(crate::env::NO_SANDBOX),
            env: env.clone(),
            startup_timeout: Duration::from_secs(30),
            wait_for_product: true,
            recent_requests_cap: 0,
            profile_switch_wait: Duration::from_secs(15),
            ephemeral_only: false,
            upload_max_bytes: listener::config::DEFAULT_UPLOAD_MAX_BYTES,
            max_clients: listener::config::DEFAULT_MAX_CLIENTS,
            max_tabs: listener::config::DEFAULT_MAX_TABS,
            tab_pool: listener::config::DEFAULT_TAB_POOL,
            takeover: None,
            takeover_quality_percent: 80,
            // Off natively (precise network errors, no extra hop); the image turns it on.
            egress: None,
            ephemeral_root: None,
            restart_window: RESTART_WINDOW,
            mcp: None,
        }
    }
}

/// A running host, until [`RunningHost::stop`].
pub struct RunningHost {
    /// What the listener bound (`tcp:IP:PORT` or `unix:/path`).
    pub local: String,
    /// The ready document printed as `host_ready`.
    pub ready: Value,
    view: Arc<LiveView>,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Result<(), AfError>>,
}

impl RunningHost {
    /// A browser-level CDP connection to the current browser, already open (the download
    /// keeper's), for a driver in this same process; `None` when there is none.
    pub fn browser_connection(&self) -> Option<Arc<crate::sdk::cdp::CdpConnection>> {
        self.view.downloads.connection()
    }

    /// Stop in order (listener, browser, profile) and wait for it.
    pub async fn stop(self) -> Result<(), AfError> {
        let _ = self.stop.send(());
        self.task
            .await
            .map_err(|e| AfError::new(ErrorCode::IoError, format!("host task failed: {e}")))?
    }
}

/// Start a host: profile, browser, listener. Returns once it serves.
pub async fn start(opts: HostOptions) -> Result<RunningHost, AfError> {
    // Refuse a bad listener before any browser or profile is touched.
    let config = listener_config(&opts)?;
    let (backend, binary) = resolve_browser(&opts)?;
    let egress = start_egress(&opts, backend).await?;
    let profile = ActiveProfile::open_in(
        opts.profile.as_deref(),
        backend,
        opts.ephemeral_root.as_deref(),
        &opts.env,
    )?;
    let started = Instant::now();
    let (display, display_dir) = start_display(&opts).await?;
    let launch_opts = launch_options(&opts, backend, binary, &profile, egress.as_ref(), &display);
    let first = browser::launch(&launch_opts).await?;
    log(
        Level::Info,
        "browser started",
        json!({"backend": backend.as_str(), "pid": first.pid, "ms": started.elapsed().as_millis() as u64}),
    );
    let (switch_tx, switch_rx) = tokio::sync::mpsc::unbounded_channel();
    let view = live_view(&opts, backend, &profile, switch_tx);
    view.set_display(display.as_ref().map(|(d, _)| d));
    view.set(Some(&first), HostStatus::Ok);
    view.downloads
        .attach(&first.ws_url, &profile.downloads_dir())
        .await;
    view.record(&first);
    let product_task = view.refresh_product(&first);
    let served = serve_listener(&opts, Arc::clone(&view), config).await?;
    if opts.wait_for_product {
        let _ = tokio::time::timeout(Duration::from_secs(3), product_task).await;
    }
    let ready = ready_document(
        &opts,
        &view,
        ReadyFacts {
            local: &served.bound.local,
            browser_pid: first.pid,
            profile: &profile,
            egress_running: egress.is_some(),
            display: &display,
            mcp: served.mcp_doc,
            started,
        },
    );
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let local = served.bound.local.clone();
    let supervised = Supervised {
        browser: first,
        launch_opts,
        profile,
        name: opts
            .profile
            .clone()
            .filter(|n| n != crate::profile::EPHEMERAL),
        display,
        display_dir,
        uploads: served.uploads,
        browser_budget: RestartBudget::new(opts.restart_window),
        display_budget: RestartBudget::new(opts.restart_window),
    };
    let supervised_view = Arc::clone(&view);
    let (bound, listener_stop) = (served.bound, served.listener_stop);
    let mcp_pruner = served.mcp_pruner;
    let task = tokio::spawn(async move {
        // The egress proxy and the MCP output pruner live as long as the supervisor
        // (browser relaunches reuse the proxy).
        let _egress = egress;
        let _mcp_pruner = mcp_pruner;
        supervise(
            supervised,
            supervised_view,
            bound,
            listener_stop,
            stop_rx,
            switch_rx,
        )
        .await
    });
    Ok(RunningHost {
        local,
        ready,
        view,
        stop: stop_tx,
        task,
    })
}

/// The listener's configuration from `opts`, validated.
fn listener_config(opts: &HostOptions) -> Result<ListenerConfig, AfError> {
    let mut config = ListenerConfig::new(opts.listen.clone());
    config.token = opts.token.clone();
    config.health = opts.health;
    config.health_public_minimal = opts.health_public_minimal;
    config.allowed_hosts = opts.allowed_hosts.clone();
    config.trusted_proxies = opts.trusted_proxies.clone();
    config.profile_switch_wait = opts.profile_switch_wait;
    config.ephemeral_only = opts.ephemeral_only;
    config.upload_max_bytes = opts.upload_max_bytes;
    config.max_clients = opts.max_clients;
    config.max_tabs = opts.max_tabs;
    // Ready tabs wait in the window's tab strip: a human at a headful browser would see them.
    config.tab_pool = if opts.headless { opts.tab_pool } else { 0 };
    // With a takeover display the browser draws on it (headful), and a new browser context
    // opens a window of its own, mapped over the tab a human is handed: no ready isolated
    // tabs there (an isolated fetch makes its context when it needs one, and disposes of it).
    config.tab_pool_isolated = opts.headless && opts.takeover.is_none();
    config.validate()?;
    Ok(config)
}

/// The backend and its executable: as given, or the first Chromium-family browser on PATH.
fn resolve_browser(opts: &HostOptions) -> Result<(Backend, PathBuf), AfError> {
    let path_env = opts.search_path();
    match (opts.backend, &opts.browser_bin) {
        (Some(b), explicit) => Ok((
            b,
            browser::resolve_binary(b, explicit.as_deref(), path_env.as_deref())?,
        )),
        (None, Some(explicit)) => Ok((
            Backend::Chromium,
            browser::resolve_binary(Backend::Chromium, Some(explicit), path_env.as_deref())?,
        )),
        (None, None) => browser::resolve_auto(path_env.as_deref()).ok_or_else(|| {
            AfError::new(
                ErrorCode::BrowserLaunchFailed,
                "no Chromium-family browser found on PATH",
            )
            .with_hint("install chromium, or pass --browser-bin")
        }),
    }
}

/// A takeover display and its private state directory (none without `--takeover-provider`).
type Display = Option<(RunningDisplay, DisplayOptions)>;

/// Start the takeover display, when one is asked for.
async fn start_display(opts: &HostOptions) -> Result<(Display, Option<TempDir>), AfError> {
    let Some(provider) = opts.takeover else {
        return Ok((None, None));
    };
    let dir = tempfile::Builder::new()
        .prefix("afhttp-display-")
        .tempdir()
        .map_err(|e| AfError::io("create the display's state directory", &e))?;
    let dopts = DisplayOptions {
        provider,
        quality_percent: opts.takeover_quality_percent,
        size: DISPLAY_SIZE,
        state_dir: dir.path().to_path_buf(),
        parent_env: opts.env.clone(),
    };
    let running = display::start(&dopts).await?;
    Ok((Some((running, dopts)), Some(dir)))
}

/// How the browser is launched (and relaunched by the supervisor).
fn launch_options(
    opts: &HostOptions,
    backend: Backend,
    binary: PathBuf,
    profile: &ActiveProfile,
    egress: Option<&crate::host::egress::EgressProxy>,
    display: &Display,
) -> LaunchOptions {
    LaunchOptions {
        backend,
        binary,
        user_data_dir: profile.path().to_path_buf(),
        // A takeover display needs a real window on it.
        headless: opts.headless && display.is_none(),
        no_sandbox: opts.no_sandbox,
        // Behind the egress proxy when there is one (it chains to --proxy-url itself).
        proxy_url: match egress {
            Some(proxy) => Some(proxy.proxy_url()),
            None => opts.proxy_url.as_ref().map(|p| p.expose().to_string()),
        },
        extra_args: opts.browser_args.clone(),
        engine_env: opts.engine_env.clone(),
        display: display.as_ref().map(|(d, _)| d.display.clone()),
        downloads_dir: Some(profile.downloads_dir()),
        window_size: DISPLAY_SIZE,
        startup_timeout: opts.startup_timeout,
        fingerprint_seed: None,
        parent_env: opts.env.clone(),
    }
}

/// The view of the running host that the listener and the supervisor share.
fn live_view(
    opts: &HostOptions,
    backend: Backend,
    profile: &ActiveProfile,
    switch: tokio::sync::mpsc::UnboundedSender<crate::host::live::SwitchRequest>,
) -> Arc<LiveView> {
    Arc::new(LiveView {
        backend,
        upstream: RwLock::new(None),
        status: RwLock::new(HostStatus::Starting),
        product: RwLock::new(None),
        profile: RwLock::new(profile.describe()),
        restarts: RwLock::new(Restarts::default()),
        switch,
        recent: (opts.recent_requests_cap > 0)
            .then(|| Arc::new(RecentRequests::new(opts.recent_requests_cap))),
        recorder: std::sync::Mutex::new(None),
        downloads: DownloadKeeper::default(),
        takeover: opts.takeover,
        display: RwLock::new(None),
        profiles_root: crate::profile::profiles_root(&opts.env).ok(),
    })
}

/// The bound listener and what goes with it.
struct Served {
    bound: listener::BoundListener,
    uploads: Arc<listener::uploads::UploadStore>,
    /// Closes the listener (the supervisor sends it when it shuts down).
    listener_stop: tokio::sync::oneshot::Sender<()>,
    /// The `/mcp` part of the ready document.
    mcp_doc: Value,
    /// Prunes `/mcp`'s outputs while the host runs.
    mcp_pruner: Option<AbortOnDrop>,
}

/// Bind and serve the listener (with `/mcp` when asked for).
async fn serve_listener(
    opts: &HostOptions,
    view: Arc<LiveView>,
    config: ListenerConfig,
) -> Result<Served, AfError> {
    let state = ListenerState::new(view, config)?;
    #[cfg(feature = "mcp")]
    let (state, mcp_link) = match &opts.mcp {
        Some(mcp) => {
            let (state, link) = crate::host::mcp_host::attach(
                state,
                mcp,
                opts.token.as_ref(),
                opts.egress.clone(),
                &opts.env,
            );
            (state, Some(link))
        }
        None => (state, None),
    };
    #[cfg(not(feature = "mcp"))]
    let _ = opts;
    let state = Arc::new(state);
    let uploads = Arc::clone(&state.uploads);
    let (listener_stop, listener_stop_rx) = tokio::sync::oneshot::channel::<()>();
    let bound = listener::serve(state, async {
        let _ = listener_stop_rx.await;
    })
    .await?;
    #[cfg(feature = "mcp")]
    let (mcp_pruner, mcp_doc) = match &mcp_link {
        Some(Ok(link)) => {
            let (pruner, doc) = link.bound(&bound.local)?;
            (Some(AbortOnDrop(pruner)), doc)
        }
        Some(Err(e)) => {
            log(
                Level::Warn,
                "/mcp is off: its output area cannot be used",
                json!({"code": e.code.as_str(), "error": e.message}),
            );
            let doc = json!({"served": false, "reason": e.code.as_str(), "message": e.message});
            (None, doc)
        }
        None => (None, json!({"served": false, "reason": "off"})),
    };
    #[cfg(not(feature = "mcp"))]
    let (mcp_pruner, mcp_doc) = (
        None,
        json!({"served": false, "reason": "backend_unsupported"}),
    );
    Ok(Served {
        bound,
        uploads,
        listener_stop,
        mcp_doc,
        mcp_pruner,
    })
}

/// What the ready document reports besides the options.
struct ReadyFacts<'a> {
    local: &'a str,
    browser_pid: u32,
    profile: &'a ActiveProfile,
    egress_running: bool,
    display: &'a Display,
    mcp: Value,
    started: Instant,
}

/// The `host_ready` document.
fn ready_document(opts: &HostOptions, view: &LiveView, f: ReadyFacts<'_>) -> Value {
    let product = view.product.read().ok().and_then(|p| p.clone());
    let backend = view.backend;
    json!({
        "listen": f.local,
        "endpoint_url": endpoint_url(f.local),
        "backend": {"name": backend.as_str(), "family": backend.family(), "version": product},
        "browser_pid": f.browser_pid,
        "profile": f.profile.describe(),
        "profile_path": f.profile.path(),
        "token_required": opts.token.is_some(),
        "egress": match (f.egress_running, &opts.egress) {
            (true, Some(policy)) => json!({
                "enforced": true,
                "policy": policy.name(),
                "allow": policy.allow.len(),
            }),
            (false, Some(_)) => json!({"enforced": false, "reason": "backend_unsupported"}),
            _ => json!({"enforced": false, "reason": "off"}),
        },
        "takeover": match f.display {
            Some((d, _)) => json!({
                "provider": d.provider.as_str(),
                "display": d.display,
                "panel_path": "/takeover/panel",
                "pids": d.pids(),
            }),
            None => json!({"provider": "off"}),
        },
        "mcp": f.mcp,
        "startup_ms": f.started.elapsed().as_millis() as u64,
        "version": crate::VERSION,
    })
}

/// Aborts a background task when dropped (the MCP output pruner ends with the host).
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Start the egress proxy for a Chromium-family browser. Other backends run without it
/// (reported in the ready document), unless a policy beyond the default was asked for, which
/// they refuse.
async fn start_egress(
    opts: &HostOptions,
    backend: Backend,
) -> Result<Option<crate::host::egress::EgressProxy>, AfError> {
    let Some(policy) = &opts.egress else {
        return Ok(None);
    };
    if matches!(backend, Backend::Lightpanda | Backend::Camoufox) {
        if *policy != crate::host::egress::Policy::default() {
            return Err(AfError::new(
                ErrorCode::BackendUnsupported,
                format!("the {backend} backend cannot run behind the egress policy"),
            )
            .with_hint("use a Chromium-family --browser, or drop --deny-private-networks and --egress-allow"));
        }
        return Ok(None);
    }
    crate::host::egress::start(
        policy.clone(),
        opts.proxy_url
            .as_ref()
            .map(crate::sdk::secret::Secret::expose),
        opts.proxy_ca.as_deref(),
    )
    .await
    .map(Some)
}

/// The driver-facing URL for a bound listener.
pub fn endpoint_url(local: &str) -> String {
    match local.strip_prefix("tcp:") {
        Some(addr) => format!("ws://{addr}"),
        None => local.to_string(),
    }
}

/// Run a host in the foreground until SIGINT/SIGTERM; `on_ready` gets the ready document.
pub async fn run_foreground(
    opts: HostOptions,
    on_ready: impl FnOnce(&Value),
) -> Result<(), AfError> {
    let mut term =
        signal(SignalKind::terminate()).map_err(|e| AfError::io("install SIGTERM handler", &e))?;
    let mut int =
        signal(SignalKind::interrupt()).map_err(|e| AfError::io("install SIGINT handler", &e))?;
    let mut host = start(opts).await?;
    on_ready(&host.ready);
    tokio::select! {
        _ = term.recv() => log(Level::Info, "SIGTERM: shutting down", json!({})),
        _ = int.recv() => log(Level::Info, "SIGINT: shutting down", json!({})),
        // The supervisor ended on its own (a child that keeps crashing): the host exits
        // with its error instead of lingering without a listener until a signal.
        ended = &mut host.task => {
            return ended
                .map_err(|e| AfError::new(ErrorCode::IoError, format!("host task failed: {e}")))?;
        }
    }
    host.stop().await
}
