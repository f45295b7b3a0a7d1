//! `afhttp host` at run time: open the profile, launch the browser, serve the listener,
//! relaunch a browser that dies, and shut everything down in order on SIGINT/SIGTERM.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::signal::unix::{signal, SignalKind};

use crate::error::{AfError, ErrorCode};
use crate::host::browser::{self, LaunchOptions, RunningBrowser};
use crate::host::capabilities;
use crate::host::downloads::{DownloadKeeper, DownloadRecord};
use crate::host::listener::{
    self, HostStatus, HostView, ListenAddr, ListenerConfig, ListenerState, TokenSecret, Upstream,
};
use crate::host::log::{log, Level};
use crate::host::profile_session::ActiveProfile;
use crate::host::recent_requests::RecentRequests;
use crate::host::recorder;
use crate::profile::Backend;

/// How long the browser gets to exit before SIGKILL.
const BROWSER_GRACE: Duration = Duration::from_secs(3);
/// Relaunches allowed before the host gives up on a crashing browser.
const MAX_RELAUNCHES: u32 = 5;

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
    /// Browser proxy.
    pub proxy_url: Option<String>,
    /// `--engine-env`.
    pub engine_env: Vec<(String, String)>,
    /// `--browser-arg`.
    pub browser_args: Vec<String>,
    /// `--allowed-host`.
    pub allowed_hosts: Vec<String>,
    /// Chromium sandbox off (`AFHTTP_NO_SANDBOX`).
    pub no_sandbox: bool,
    /// Browser start bound.
    pub startup_timeout: Duration,
    /// Whether the ready document waits (bounded) for the browser's product string; an
    /// inline host skips the wait because nothing reads it there.
    pub wait_for_product: bool,
    /// `--recent-requests-cap` (0 = off).
    pub recent_requests_cap: usize,
    /// `--profile-switch-wait-ms`.
    pub profile_switch_wait: Duration,
    /// `--upload-max-bytes`.
    pub upload_max_bytes: u64,
}

impl HostOptions {
    /// Defaults for an ephemeral, tokenless loopback host (tests, inline fetch).
    pub fn local(listen: ListenAddr) -> HostOptions {
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
            engine_env: Vec::new(),
            browser_args: Vec::new(),
            allowed_hosts: Vec::new(),
            no_sandbox: crate::env::var(crate::env::NO_SANDBOX)
                .is_some_and(|v| crate::env::is_truthy(&v)),
            startup_timeout: Duration::from_secs(30),
            wait_for_product: true,
            recent_requests_cap: 0,
            profile_switch_wait: Duration::from_secs(15),
            upload_max_bytes: listener::transfer::DEFAULT_UPLOAD_MAX_BYTES,
        }
    }
}

/// A request to relaunch the browser under another profile.
struct SwitchRequest {
    name: String,
    before_stop: futures_util::future::BoxFuture<'static, ()>,
    reply: tokio::sync::oneshot::Sender<Result<bool, AfError>>,
}

/// The live state the listener reads.
struct LiveView {
    backend: Backend,
    upstream: RwLock<Option<Upstream>>,
    status: RwLock<HostStatus>,
    product: RwLock<Option<String>>,
    profile: RwLock<Value>,
    restarts: RwLock<u32>,
    switch: tokio::sync::mpsc::UnboundedSender<SwitchRequest>,
    /// `--recent-requests-cap` records (`None`: off).
    recent: Option<Arc<RecentRequests>>,
    /// The recorder task of the current browser.
    recorder: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Downloads of the current browser, and the task keeping its download behavior.
    downloads: DownloadKeeper,
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
        json!({
            "backend": {
                "family": self.backend.family(),
                "name": self.backend.as_str(),
                "version": product,
                "connected": self.upstream().is_some(),
            },
            "profile": self.profile.read().map(|p| p.clone()).unwrap_or(Value::Null),
            "restarts": {"browser": self.restarts.read().map(|r| *r).unwrap_or(0)},
        })
    }

    fn capabilities(&self) -> Value {
        let product = self.product.read().ok().and_then(|p| p.clone());
        let mut doc = capabilities::document(self.backend, product.as_deref(), None);
        doc["recent_requests"] = json!({
            "enabled": self.recent.is_some(),
            "cap": self.recent.as_ref().map_or(0, |r| r.cap()),
        });
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
    /// Start recording `b` (when `--recent-requests-cap` is on), replacing the old recorder.
    fn record(&self, b: &RunningBrowser) {
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
    fn stop_recording(&self) {
        if let Some(old) = self.recorder.lock().ok().and_then(|mut s| s.take()) {
            old.abort();
        }
        self.downloads.stop();
    }

    /// Ask the browser for its product string in the background and record it.
    fn refresh_product(self: &Arc<Self>, b: &RunningBrowser) -> tokio::task::JoinHandle<()> {
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

    fn set(&self, b: Option<&RunningBrowser>, status: HostStatus) {
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

/// A running host, until [`RunningHost::stop`].
pub struct RunningHost {
    /// What the listener bound (`tcp:IP:PORT` or `unix:/path`).
    pub local: String,
    /// The ready document printed as `host_ready`.
    pub ready: Value,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Result<(), AfError>>,
}

impl RunningHost {
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
    let mut config = ListenerConfig::new(opts.listen.clone());
    config.token = opts.token.clone();
    config.health = opts.health;
    config.health_public_minimal = opts.health_public_minimal;
    config.allowed_hosts = opts.allowed_hosts.clone();
    config.profile_switch_wait = opts.profile_switch_wait;
    config.upload_max_bytes = opts.upload_max_bytes;
    config.validate()?;
    let path_env = std::env::var_os("PATH");
    let (backend, binary) = match (opts.backend, &opts.browser_bin) {
        (Some(b), explicit) => (
            b,
            browser::resolve_binary(b, explicit.as_deref(), path_env.as_deref())?,
        ),
        (None, Some(explicit)) => (
            Backend::Chromium,
            browser::resolve_binary(Backend::Chromium, Some(explicit), path_env.as_deref())?,
        ),
        (None, None) => browser::resolve_auto(path_env.as_deref()).ok_or_else(|| {
            AfError::new(
                ErrorCode::BrowserLaunchFailed,
                "no Chromium-family browser found on PATH",
            )
            .with_hint("install chromium, or pass --browser-bin")
        })?,
    };
    let profile = ActiveProfile::open(opts.profile.as_deref(), backend)?;
    let launch_opts = LaunchOptions {
        backend,
        binary,
        user_data_dir: profile.path().to_path_buf(),
        headless: opts.headless,
        no_sandbox: opts.no_sandbox,
        proxy_url: opts.proxy_url.clone(),
        extra_args: opts.browser_args.clone(),
        engine_env: opts.engine_env.clone(),
        display: None,
        downloads_dir: Some(profile.downloads_dir()),
        window_size: (1280, 720),
        startup_timeout: opts.startup_timeout,
        fingerprint_seed: None,
    };
    let started = Instant::now();
    let first = browser::launch(&launch_opts).await?;
    log(
        Level::Info,
        "browser started",
        json!({"backend": backend.as_str(), "pid": first.pid, "ms": started.elapsed().as_millis() as u64}),
    );
    let (switch_tx, switch_rx) = tokio::sync::mpsc::unbounded_channel();
    let view = Arc::new(LiveView {
        backend,
        upstream: RwLock::new(None),
        status: RwLock::new(HostStatus::Starting),
        product: RwLock::new(None),
        profile: RwLock::new(profile.describe()),
        restarts: RwLock::new(0),
        switch: switch_tx,
        recent: (opts.recent_requests_cap > 0)
            .then(|| Arc::new(RecentRequests::new(opts.recent_requests_cap))),
        recorder: std::sync::Mutex::new(None),
        downloads: DownloadKeeper::default(),
    });
    view.downloads
        .attach(&first.ws_url, &profile.downloads_dir())
        .await;
    view.set(Some(&first), HostStatus::Ok);
    view.record(&first);
    let product_task = view.refresh_product(&first);
    let state = Arc::new(ListenerState::new(view.clone(), config)?);
    let uploads = Arc::clone(&state.uploads);
    let (listener_stop_tx, listener_stop_rx) = tokio::sync::oneshot::channel::<()>();
    let bound = listener::serve(state, async {
        let _ = listener_stop_rx.await;
    })
    .await?;
    if opts.wait_for_product {
        let _ = tokio::time::timeout(Duration::from_secs(3), product_task).await;
    }
    let product = view.product.read().ok().and_then(|p| p.clone());
    let ready = json!({
        "listen": bound.local,
        "endpoint_url": endpoint_url(&bound.local),
        "backend": {"name": backend.as_str(), "family": backend.family(), "version": product},
        "browser_pid": first.pid,
        "profile": profile.describe(),
        "profile_path": profile.path(),
        "token_required": opts.token.is_some(),
        "takeover": {"provider": "off"},
        "version": crate::VERSION,
    });
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let local = bound.local.clone();
    let name = opts
        .profile
        .clone()
        .filter(|n| n != crate::profile::EPHEMERAL);
    let supervised = Supervised {
        browser: first,
        launch_opts,
        profile,
        name,
        uploads,
    };
    let task = tokio::spawn(supervise(
        supervised,
        view,
        bound,
        listener_stop_tx,
        stop_rx,
        switch_rx,
    ));
    Ok(RunningHost {
        local,
        ready,
        stop: stop_tx,
        task,
    })
}

/// The driver-facing URL for a bound listener.
pub fn endpoint_url(local: &str) -> String {
    match local.strip_prefix("tcp:") {
        Some(addr) => format!("ws://{addr}"),
        None => local.to_string(),
    }
}

/// What the supervisor owns: the browser, how to launch it, and its profile.
struct Supervised {
    browser: RunningBrowser,
    launch_opts: LaunchOptions,
    profile: ActiveProfile,
    /// Persistent profile name (`None`: ephemeral).
    name: Option<String>,
    /// Driver uploads, deleted once the listener is closed.
    uploads: Arc<listener::transfer::UploadStore>,
}

async fn supervise(
    mut s: Supervised,
    view: Arc<LiveView>,
    bound: listener::BoundListener,
    listener_stop: tokio::sync::oneshot::Sender<()>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
    mut switches: tokio::sync::mpsc::UnboundedReceiver<SwitchRequest>,
) -> Result<(), AfError> {
    let mut relaunches = 0u32;
    let outcome = loop {
        tokio::select! {
            _ = &mut stop => break Ok(()),
            Some(req) = switches.recv() => {
                let result = switch(&mut s, &view, &req.name, req.before_stop).await;
                let _ = req.reply.send(result);
            }
            _ = tokio::time::sleep(Duration::from_millis(500)) => {
                if !s.browser.has_exited() {
                    continue;
                }
                log(Level::Warn, "browser exited; relaunching", json!({"pid": s.browser.pid, "stderr_tail": s.browser.stderr_tail()}));
                view.set(None, HostStatus::Starting);
                if relaunches >= MAX_RELAUNCHES {
                    view.set(None, HostStatus::Degraded);
                    break Err(AfError::new(ErrorCode::BrowserLaunchFailed, "the browser keeps exiting; giving up"));
                }
                relaunches += 1;
                if let Ok(mut r) = view.restarts.write() { *r = relaunches; }
                tokio::time::sleep(Duration::from_millis(250u64 << relaunches.min(5))).await;
                match browser::launch(&s.launch_opts).await {
                    Ok(b) => {
                        s.browser = b;
                        view.downloads.attach(&s.browser.ws_url, &s.profile.downloads_dir()).await;
                        view.set(Some(&s.browser), HostStatus::Ok);
                        view.refresh_product(&s.browser);
                        view.record(&s.browser);
                    }
                    Err(e) => log(Level::Error, "browser relaunch failed", json!({"error": e.message})),
                }
            }
        }
    };
    // Ordered shutdown: stop taking work, then the browser, then the profile.
    let stopping = Instant::now();
    let ms = |t: Instant| t.elapsed().as_millis() as u64;
    view.set(None, HostStatus::Starting);
    view.stop_recording();
    let _ = listener_stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(3), bound.join).await;
    log(Level::Debug, "listener closed", json!({"ms": ms(stopping)}));
    s.uploads.remove_all();
    if s.name.is_some() {
        stop_browser(&mut s.browser).await;
    } else {
        // An ephemeral profile is deleted next: nothing on disk is worth a graceful close.
        s.browser.kill_now().await;
    }
    log(Level::Debug, "browser stopped", json!({"ms": ms(stopping)}));
    drop(s.profile);
    log(Level::Info, "host stopped", json!({"ms": ms(stopping)}));
    outcome
}

/// Stop a browser so that its profile is saved: `Browser.close` over CDP (Chromium then
/// flushes cookies and storage to disk), then the signals of [`RunningBrowser::shutdown`].
async fn stop_browser(b: &mut RunningBrowser) {
    let quick = Duration::from_secs(2);
    if let Ok(url) = url::Url::parse(&b.ws_url) {
        if let (Some(host), Some(port)) = (url.host_str(), url.port()) {
            let ep = crate::sdk::endpoint::Endpoint::Tcp {
                tls: false,
                host: host.to_string(),
                port,
            };
            if let Ok(conn) =
                crate::sdk::cdp::CdpConnection::connect(&ep, url.path(), None, quick).await
            {
                let _ = conn.call(None, "Browser.close", json!({}), quick).await;
                let deadline = Instant::now() + quick;
                while Instant::now() < deadline && !b.has_exited() {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }
    b.shutdown(BROWSER_GRACE).await;
}

/// Relaunch under profile `name`. The new profile is opened (and locked) before the old
/// browser stops, so a locked or invalid profile leaves the running browser untouched.
async fn switch(
    s: &mut Supervised,
    view: &Arc<LiveView>,
    name: &str,
    before_stop: futures_util::future::BoxFuture<'static, ()>,
) -> Result<bool, AfError> {
    let wanted = (name != crate::profile::EPHEMERAL).then(|| name.to_string());
    if wanted.is_some() && wanted == s.name {
        return Ok(false);
    }
    let next = ActiveProfile::open(wanted.as_deref(), s.launch_opts.backend)?;
    before_stop.await;
    let mut opts = s.launch_opts.clone();
    opts.user_data_dir = next.path().to_path_buf();
    opts.downloads_dir = Some(next.downloads_dir());
    view.set(None, HostStatus::Starting);
    stop_browser(&mut s.browser).await;
    match browser::launch(&opts).await {
        Ok(b) => {
            s.browser = b;
            s.launch_opts = opts;
            s.profile = next;
            s.name = wanted;
            if let Ok(mut p) = view.profile.write() {
                *p = s.profile.describe();
            }
            view.downloads
                .attach(&s.browser.ws_url, &s.profile.downloads_dir())
                .await;
            view.set(Some(&s.browser), HostStatus::Ok);
            view.refresh_product(&s.browser);
            // Records of one identity do not outlive it.
            if let Some(r) = &view.recent {
                r.clear();
            }
            view.record(&s.browser);
            log(Level::Info, "profile switched", json!({"profile": s.name}));
            Ok(true)
        }
        Err(e) => {
            drop(next);
            if let Ok(b) = browser::launch(&s.launch_opts).await {
                s.browser = b;
                view.downloads
                    .attach(&s.browser.ws_url, &s.profile.downloads_dir())
                    .await;
                view.set(Some(&s.browser), HostStatus::Ok);
                view.record(&s.browser);
            }
            Err(e)
        }
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
    let host = start(opts).await?;
    on_ready(&host.ready);
    tokio::select! {
        _ = term.recv() => log(Level::Info, "SIGTERM: shutting down", json!({})),
        _ = int.recv() => log(Level::Info, "SIGINT: shutting down", json!({})),
    }
    host.stop().await
}
