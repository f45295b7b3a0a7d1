//! Starting a browser, waiting for its CDP endpoint, and stopping its whole process group.

use std::path::Path;
use std::process::ExitStatus;
use std::time::Duration;

use nix::sys::signal::Signal;
use tokio::process::Child;
use tokio::time::{sleep, timeout, Instant};

use crate::error::{AfError, ErrorCode};
use crate::profile::Backend;

use super::args::{camoufox_command, chromium_args, lightpanda_command};
use super::{browser_env, find_executable, LaunchOptions};
use crate::host::procs::{group_alive, kill_group_and_wait, signal_group, spawn_isolated};
use crate::host::stderr::{drain, Tail};

/// How often a port-polled backend's `/json/version` is tried during startup.
const POLL_EVERY: Duration = Duration::from_millis(100);
/// How long one `/json/version` request may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(3);
/// How long to wait for a killed process and its stderr after a failed start.
const AFTER_KILL: Duration = Duration::from_secs(2);

/// A browser process afhttp started and owns; dropping it kills the whole process group.
#[derive(Debug)]
pub struct RunningBrowser {
    /// The backend that was launched.
    pub backend: Backend,
    /// The browser-level CDP WebSocket URL (`ws://127.0.0.1:PORT/...`).
    pub ws_url: String,
    /// The DevTools HTTP root, `http://127.0.0.1:PORT`.
    pub http_base: String,
    /// Process id of the launched program, which is also its process group id.
    pub pid: u32,
    /// `Browser` from `/json/version` (e.g. `Chrome/156.0...`) for polled backends, which
    /// answer it while starting; Chromium-family launches leave it `None` (see [`product`]).
    pub product: Option<String>,
    child: Child,
    tail: Tail,
    stopped: bool,
    /// The browser's `TMPDIR` (see [`scratch_dir`]), removed when this drops: after `Drop`
    /// has signalled the group, since fields drop after `Drop::drop` runs.
    scratch: Option<tempfile::TempDir>,
}

impl RunningBrowser {
    /// Stop the browser: SIGTERM to the main process, then to the whole group, up to `grace`
    /// in all, then SIGKILL to the group, and reap the main process. Idempotent.
    pub async fn shutdown(&mut self, grace: Duration) {
        if self.stopped {
            return;
        }
        // The main process first: Chromium then shuts its helpers down itself, and its
        // network service flushes cookies to disk. Signalling the whole group at once kills
        // that service before it can write, losing the profile's cookies.
        let _ =
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.pid as i32), Signal::SIGTERM);
        let deadline = Instant::now() + grace;
        let polite = Instant::now() + grace * 2 / 3;
        while Instant::now() < polite && !self.all_gone() {
            sleep(Duration::from_millis(50)).await;
        }
        if !self.all_gone() {
            signal_group(self.pid, Signal::SIGTERM);
        }
        while Instant::now() < deadline && !self.all_gone() {
            sleep(Duration::from_millis(50)).await;
        }
        if !self.all_gone() {
            kill_group_and_wait(self.pid, &mut self.child).await;
        }
        self.stopped = true;
    }

    /// Send SIGKILL to the whole process group without waiting (see
    /// [`RunningBrowser::kill_now`]).
    pub fn kill_signal(&self) {
        if !self.stopped {
            signal_group(self.pid, Signal::SIGKILL);
        }
    }

    /// Kill the whole process group at once and wait until it is gone (bounded). For a
    /// browser whose profile is deleted next: there is nothing on disk worth a clean exit.
    pub async fn kill_now(&mut self) {
        if self.stopped {
            return;
        }
        kill_group_and_wait(self.pid, &mut self.child).await;
        self.stopped = true;
    }

    /// Forget a group already sent SIGKILL by [`RunningBrowser::kill_signal`] without waiting
    /// for the kernel to tear it down; the main process is reaped by the runtime later.
    pub fn abandon_killed(&mut self) {
        self.kill_signal();
        self.stopped = true;
    }

    /// Whether the main browser process has exited (it is reaped if so).
    pub fn has_exited(&mut self) -> bool {
        // An error means the status was taken elsewhere: the process is gone either way.
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// The last lines (up to 40) the browser wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        self.tail.text()
    }

    fn all_gone(&mut self) -> bool {
        self.has_exited() && !group_alive(self.pid)
    }
}

impl Drop for RunningBrowser {
    fn drop(&mut self) {
        if !self.stopped {
            // No orphan browsers: whatever is left of the group dies with its owner.
            signal_group(self.pid, Signal::SIGKILL);
        }
    }
}

/// Start the browser `opts` describes and wait until its CDP endpoint answers.
///
/// Chromium-family backends are started with `--remote-debugging-port=0` and their
/// `DevTools listening on ws://...` stderr line is awaited; Lightpanda (and Camoufox via
/// foxbridge, untested here) get a pre-reserved loopback port and `/json/version` is polled.
/// A browser that exits, or does not answer within `startup_timeout`, is
/// `browser_launch_failed` with its stderr tail in the message; refused arguments or
/// environment entries are `invalid_argument`.
pub async fn launch(opts: &LaunchOptions) -> Result<RunningBrowser, AfError> {
    let mut env = browser_env(opts)?;
    std::fs::create_dir_all(&opts.user_data_dir)
        .map_err(|e| AfError::io(format!("creating {}", opts.user_data_dir.display()), &e))?;
    let scratch = scratch_dir(&mut env);
    let launched = match opts.backend {
        Backend::Lightpanda => {
            let port = reserve_port()?;
            let args = lightpanda_command(opts, port)?;
            launch_polled(opts, &opts.binary, &args, &env, port).await
        }
        Backend::Camoufox => {
            let parent_path = opts.parent_env.get_os(crate::env::PATH);
            let foxbridge = find_executable("foxbridge", parent_path)
                .ok_or_else(|| launch_failed("foxbridge is not on PATH".to_string()))?;
            let port = reserve_port()?;
            let args = camoufox_command(opts, port)?;
            launch_polled(opts, &foxbridge, &args, &env, port).await
        }
        _ => launch_chromium(opts, &chromium_args(opts)?, &env).await,
    };
    launched.map(|mut b| {
        b.scratch = scratch;
        b
    })
}

/// The longest scratch directory path given to a browser: Chromium puts its singleton socket
/// at `$TMPDIR/org.chromium.Chromium.XXXXXX/SingletonSocket`, and a Unix socket path has at
/// most 107 bytes.
const SCRATCH_PATH_MAX: usize = 60;

/// A private temp directory for the browser (`TMPDIR` in `env`, unless `--engine-env` set
/// one), removed with the [`RunningBrowser`]. Chromium leaves its singleton socket directory
/// in the temp dir when it is killed, as every ephemeral browser is: one per fetch, forever,
/// in a shared `/tmp`. Made in the user's temp dir, or in `/tmp` when a path there would be
/// too long for the socket (a deep `TMPDIR`); `None` (the browser's default temp dir) when
/// neither works.
fn scratch_dir(env: &mut Vec<(String, String)>) -> Option<tempfile::TempDir> {
    if env.iter().any(|(k, _)| k == "TMPDIR") {
        return None;
    }
    let dir = crate::fsutil::short_tempdir("afhttp-browser-tmp-", SCRATCH_PATH_MAX).ok()?;
    env.push(("TMPDIR".to_string(), dir.path().to_str()?.to_string()));
    Some(dir)
}

/// Outcome of waiting for a starting browser.
enum Startup {
    Ready(String),
    Exited(Option<ExitStatus>),
    TimedOut,
}

async fn launch_chromium(
    opts: &LaunchOptions,
    args: &[String],
    env: &[(String, String)],
) -> Result<RunningBrowser, AfError> {
    let (mut child, pid, tail) = spawn(opts, &opts.binary, args, env)?;
    let stderr = child.stderr.take();
    let mut url_rx = match stderr {
        Some(stderr) => drain(stderr, tail.clone()),
        None => return Err(fail_start(opts, child, pid, tail, Startup::Exited(None)).await),
    };
    let deadline = Instant::now() + opts.startup_timeout;
    let outcome = tokio::select! {
        url = &mut url_rx => match url {
            Ok(url) => Startup::Ready(url),
            // stderr closed without the line: the browser is going or gone.
            Err(_) => Startup::Exited(timeout(AFTER_KILL, child.wait()).await.ok().and_then(Result::ok)),
        },
        status = child.wait() => Startup::Exited(status.ok()),
        () = tokio::time::sleep_until(deadline) => Startup::TimedOut,
    };
    let ws_url = match outcome {
        Startup::Ready(url) => url,
        other => return Err(fail_start(opts, child, pid, tail, other).await),
    };
    let port = url::Url::parse(&ws_url).ok().and_then(|u| u.port());
    let Some(port) = port else {
        let err = launch_failed(format!("unexpected DevTools URL {ws_url:?}"));
        signal_group(pid, Signal::SIGKILL);
        return Err(err);
    };
    // The product string is not asked for here: a browser that has just printed its
    // DevTools line takes ~150 ms to answer `/json/version`, which would sit on every cold
    // start. [`product`] asks later, off the critical path.
    Ok(RunningBrowser {
        backend: opts.backend,
        ws_url,
        http_base: format!("http://127.0.0.1:{port}"),
        pid,
        product: None,
        child,
        tail,
        stopped: false,
        scratch: None,
    })
}

async fn launch_polled(
    opts: &LaunchOptions,
    program: &Path,
    args: &[String],
    env: &[(String, String)],
    port: u16,
) -> Result<RunningBrowser, AfError> {
    let (mut child, pid, tail) = spawn(opts, program, args, env)?;
    if let Some(stderr) = child.stderr.take() {
        // No DevTools line to wait for; the drain only keeps the pipe empty and the tail.
        drop(drain(stderr, tail.clone()));
    }
    let http_base = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + opts.startup_timeout;
    let version = loop {
        if Instant::now() >= deadline {
            return Err(fail_start(opts, child, pid, tail, Startup::TimedOut).await);
        }
        tokio::select! {
            status = child.wait() => {
                return Err(fail_start(opts, child, pid, tail, Startup::Exited(status.ok())).await);
            }
            () = sleep(POLL_EVERY) => {}
        }
        if let Some(version) = json_version(&http_base).await {
            break version;
        }
    };
    let ws_url = version
        .get("webSocketDebuggerUrl")
        .and_then(|v| v.as_str())
        .map_or_else(|| format!("ws://127.0.0.1:{port}/"), String::from);
    let product = version
        .get("Browser")
        .and_then(|v| v.as_str())
        .map(String::from);
    Ok(RunningBrowser {
        backend: opts.backend,
        ws_url,
        http_base,
        pid,
        product,
        child,
        tail,
        stopped: false,
        scratch: None,
    })
}

/// Spawn `program` isolated (see [`spawn_isolated`]) with its cwd in the profile.
fn spawn(
    opts: &LaunchOptions,
    program: &Path,
    args: &[String],
    env: &[(String, String)],
) -> Result<(Child, u32, Tail), AfError> {
    let (child, pid) = spawn_isolated(program, args, env, &opts.user_data_dir).map_err(|e| {
        launch_failed(format!("could not start {}: {e}", program.display()))
            .with_hint("check that --browser-bin names a working browser executable")
    })?;
    Ok((child, pid, Tail::default()))
}

/// Kill what is left of a browser that did not start and describe why, with its stderr tail.
async fn fail_start(
    opts: &LaunchOptions,
    mut child: Child,
    pid: u32,
    tail: Tail,
    outcome: Startup,
) -> AfError {
    signal_group(pid, Signal::SIGKILL);
    let _ = timeout(AFTER_KILL, child.wait()).await;
    // Let the drain task read what the dying browser wrote before the tail is taken.
    sleep(Duration::from_millis(100)).await;
    let what = match outcome {
        Startup::Exited(Some(status)) => format!("exited during startup ({status})"),
        Startup::Exited(None) | Startup::Ready(_) => "exited during startup".to_string(),
        Startup::TimedOut => format!(
            "did not open its CDP endpoint within {:.1}s",
            opts.startup_timeout.as_secs_f64()
        ),
    };
    let text = tail.text();
    let mut err = launch_failed(format!(
        "{} ({}) {what}; stderr tail:\n{text}",
        opts.backend,
        opts.binary.display()
    ));
    err.hint = Some(
        if text.contains("--no-sandbox") || text.contains("as root") {
            "running as root (or without user namespaces) needs the sandbox off: set AFHTTP_NO_SANDBOX=1, ideally inside a container".to_string()
        } else {
            "read the stderr tail above; --browser-bin picks another executable".to_string()
        },
    );
    err
}

fn launch_failed(message: String) -> AfError {
    AfError::new(ErrorCode::BrowserLaunchFailed, message)
}

/// A free loopback port for backends that cannot pick their own and report it.
///
/// The port is released before the browser binds it, so another process could take it in
/// between; the browser then fails to start and the error says so.
fn reserve_port() -> Result<u16, AfError> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|addr| addr.port())
        .map_err(|e| AfError::io("reserving a loopback port", &e))
}

/// `GET <http_base>/json/version`, bypassing any ambient proxy; `None` when it does not answer.
async fn json_version(http_base: &str) -> Option<serde_json::Value> {
    let endpoint = crate::sdk::endpoint::Endpoint::parse(http_base).ok()?;
    crate::sdk::host_http::request(
        &endpoint,
        "GET",
        "/json/version",
        None,
        None,
        VERSION_TIMEOUT,
    )
    .await
    .ok()
    .map(|r| r.body)
    .filter(serde_json::Value::is_object)
}

/// The browser's product string (`Browser` of `/json/version`, e.g. `Chrome/156.0...`).
pub async fn product(http_base: &str) -> Option<String> {
    json_version(http_base)
        .await
        .and_then(|v| v.get("Browser")?.as_str().map(String::from))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scratch_dir_fits_the_socket_path_whatever_the_temp_dir() {
        let mut env = Vec::new();
        let dir = scratch_dir(&mut env).expect("a scratch dir");
        let (_, path) = env.iter().find(|(k, _)| k == "TMPDIR").unwrap();
        assert_eq!(Path::new(path), dir.path());
        assert!(path.len() <= SCRATCH_PATH_MAX, "{path}");
        let mut given = vec![("TMPDIR".to_string(), "/mine".to_string())];
        assert!(scratch_dir(&mut given).is_none());
        assert_eq!(given.len(), 1);
    }
}
