//! The host's supervisor: relaunch a browser or display that dies (with backoff, bounded),
//! switch profiles, and shut everything down in order.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::error::{AfError, ErrorCode};
use crate::host::browser::{self, LaunchOptions, RunningBrowser};
use crate::host::display::{self, DisplayOptions, RunningDisplay};
use crate::host::listener::{self, HostStatus};
use crate::host::live::{LiveView, SwitchRequest};
use crate::host::log::{log, Level};
use crate::host::profile_session::ActiveProfile;
use crate::host::restart_budget::RestartBudget;

/// How long the browser gets to exit before SIGKILL.
const BROWSER_GRACE: Duration = Duration::from_secs(3);
/// How often children are checked.
const CHECK_EVERY: Duration = Duration::from_millis(500);

/// Backoff before restart number `n` (1-based): 250 ms doubling, at most 8 s.
fn backoff(n: u32) -> Duration {
    Duration::from_millis(250u64 << n.saturating_sub(1).min(5))
}

/// What the supervisor owns: the browser, how to launch it, its profile, and the takeover
/// display with how to start it.
pub(crate) struct Supervised {
    /// The running browser.
    pub browser: RunningBrowser,
    /// How to (re)launch it.
    pub launch_opts: LaunchOptions,
    /// The active profile (locked while held).
    pub profile: ActiveProfile,
    /// Persistent profile name (`None`: ephemeral).
    pub name: Option<String>,
    /// The takeover display and how to restart it (`None`: no takeover).
    pub display: Option<(RunningDisplay, DisplayOptions)>,
    /// The display's private state directory, removed when the supervisor ends.
    pub display_dir: Option<tempfile::TempDir>,
    /// Driver uploads, deleted once the listener is closed.
    pub uploads: Arc<listener::uploads::UploadStore>,
    /// Restarts left for the browser.
    pub browser_budget: RestartBudget,
    /// Restarts left for the display.
    pub display_budget: RestartBudget,
}

pub(crate) async fn supervise(
    mut s: Supervised,
    view: Arc<LiveView>,
    bound: listener::BoundListener,
    listener_stop: tokio::sync::oneshot::Sender<()>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
    mut switches: tokio::sync::mpsc::UnboundedReceiver<SwitchRequest>,
) -> Result<(), AfError> {
    let outcome = loop {
        tokio::select! {
            _ = &mut stop => break Ok(()),
            Some(req) = switches.recv() => {
                let result = switch(&mut s, &view, &req.name, req.before_stop).await;
                let _ = req.reply.send(result);
            }
            () = tokio::time::sleep(CHECK_EVERY) => {
                if let Err(e) = check_children(&mut s, &view).await {
                    break Err(e);
                }
            }
        }
    };
    // Ordered shutdown: stop taking work (and close proxied sockets), then the browser,
    // the display, the profile, and last the listener's remaining connections.
    let stopping = Instant::now();
    let ms = |t: Instant| t.elapsed().as_millis() as u64;
    view.set(None, HostStatus::Starting);
    view.set_display(None);
    view.stop_recording();
    let _ = listener_stop.send(());
    if s.name.is_some() {
        stop_browser(&mut s.browser).await;
    } else {
        // An ephemeral profile is deleted next: nothing on disk is worth a graceful close.
        // Once SIGKILL is sent no process of the group runs another instruction, so the
        // kernel's teardown of their memory (tens of ms for a browser) is not waited for:
        // the profile goes at once. Only if a dying process still left a file behind is the
        // group waited for, and the rest removed when the profile drops below.
        s.browser.kill_signal();
        if let Some(sweep) = s.profile.sweep() {
            let _ = sweep.await;
        }
        if s.profile.path().exists() {
            s.browser.kill_now().await;
        } else {
            s.browser.abandon_killed();
        }
    }
    log(Level::Debug, "browser stopped", json!({"ms": ms(stopping)}));
    if let Some((d, _)) = s.display.as_mut() {
        d.shutdown().await;
        log(Level::Debug, "display stopped", json!({"ms": ms(stopping)}));
    }
    drop(s.display_dir);
    drop(s.profile);
    let _ = tokio::time::timeout(Duration::from_secs(3), bound.join).await;
    // No upload can arrive any more: the listener is closed.
    s.uploads.remove_all();
    log(Level::Info, "host stopped", json!({"ms": ms(stopping)}));
    outcome
}

/// One supervision tick: restart a dead display (and the browser that lost it), or a dead
/// browser. `/health` says `degraded` until the restart succeeds; a child that dies more
/// often than its [`RestartBudget`] allows ends the host with an error.
async fn check_children(s: &mut Supervised, view: &Arc<LiveView>) -> Result<(), AfError> {
    if let Some((d, opts)) = s.display.as_mut() {
        if let Some((name, tail)) = d.exited() {
            log(
                Level::Warn,
                "takeover display exited; restarting",
                json!({"component": name, "stderr_tail": tail}),
            );
            view.set(None, HostStatus::Degraded);
            view.set_display(None);
            let Some(n) = s.display_budget.spend(Instant::now()) else {
                return Err(AfError::new(
                    ErrorCode::BrowserLaunchFailed,
                    "the takeover display keeps exiting; giving up",
                ));
            };
            view.count_restart(true);
            // The browser lost its X connection: stop what is left of it before it is
            // relaunched on the new display.
            s.browser.kill_now().await;
            d.shutdown().await;
            tokio::time::sleep(backoff(n)).await;
            match display::start(opts).await {
                Ok(fresh) => {
                    s.launch_opts.display = Some(fresh.display.clone());
                    *d = fresh;
                    view.set_display(Some(d));
                }
                // Still dead: the next tick tries again, counted.
                Err(e) => {
                    log(
                        Level::Error,
                        "display restart failed",
                        json!({"error": e.message}),
                    );
                    return Ok(());
                }
            }
            return relaunch_browser(s, view).await;
        }
    }
    if !s.browser.has_exited() {
        return Ok(());
    }
    log(
        Level::Warn,
        "browser exited; relaunching",
        json!({"pid": s.browser.pid, "stderr_tail": s.browser.stderr_tail()}),
    );
    view.set(None, HostStatus::Degraded);
    let Some(n) = s.browser_budget.spend(Instant::now()) else {
        return Err(AfError::new(
            ErrorCode::BrowserLaunchFailed,
            "the browser keeps exiting; giving up",
        ));
    };
    view.count_restart(false);
    // Helpers of the dead browser (crash handler, zygotes) are still in its group.
    s.browser.kill_now().await;
    tokio::time::sleep(backoff(n)).await;
    relaunch_browser(s, view).await
}

/// Launch the browser again with the current options; a failure is logged and left for the
/// next tick (the dead browser is still seen as exited).
async fn relaunch_browser(s: &mut Supervised, view: &Arc<LiveView>) -> Result<(), AfError> {
    match browser::launch(&s.launch_opts).await {
        Ok(b) => {
            s.browser = b;
            view.downloads
                .attach(&s.browser.ws_url, &s.profile.downloads_dir())
                .await;
            view.set(Some(&s.browser), HostStatus::Ok);
            view.refresh_product(&s.browser);
            view.record(&s.browser);
            log(
                Level::Info,
                "browser relaunched",
                json!({"pid": s.browser.pid}),
            );
        }
        Err(e) => log(
            Level::Error,
            "browser relaunch failed",
            json!({"error": e.message}),
        ),
    }
    Ok(())
}

/// Stop a browser so that its profile is saved: `Browser.close` over CDP (Chromium then
/// flushes cookies and storage to disk), then the signals of [`RunningBrowser::shutdown`].
async fn stop_browser(b: &mut RunningBrowser) {
    let quick = Duration::from_secs(2);
    if let Ok(conn) = crate::sdk::cdp::CdpConnection::connect_devtools(&b.ws_url, quick).await {
        let _ = conn.call(None, "Browser.close", json!({}), quick).await;
        let deadline = Instant::now() + quick;
        while Instant::now() < deadline && !b.has_exited() {
            tokio::time::sleep(Duration::from_millis(50)).await;
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
    let next = ActiveProfile::open(
        wanted.as_deref(),
        s.launch_opts.backend,
        &s.launch_opts.parent_env,
    )?;
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
