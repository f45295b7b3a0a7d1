//! Display providers for real-display takeover (spec §9): an X display with a web client on
//! loopback, which the listener reverse-proxies at `/takeover/panel`.
//!
//! Every process here is spawned like the browser (cleared environment, its own process
//! group, see [`crate::host::procs`]) and bound to loopback only: the authenticated listener
//! is the one way in.

pub mod kasmvnc;
pub mod novnc;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::{sleep, Instant};

use crate::error::{AfError, ErrorCode};
use crate::host::procs::GroupChild;

/// Where X servers put their sockets and lock files.
const X11_UNIX: &str = "/tmp/.X11-unix";
/// First display number tried (low numbers belong to real sessions).
const FIRST_DISPLAY: u32 = 20;
/// Display numbers tried before giving up.
const DISPLAY_RANGE: u32 = 200;
/// How long one component may take to answer.
const COMPONENT_TIMEOUT: Duration = Duration::from_secs(15);
/// How long each process gets to exit on SIGTERM before SIGKILL.
const GRACE: Duration = Duration::from_secs(2);

/// Which display provider runs the takeover display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// TigerVNC `Xvnc` + websockify + Debian's noVNC web client.
    Novnc,
    /// KasmVNC's `Xvnc` with its built-in web client.
    Kasmvnc,
}

impl Provider {
    /// Parse `--takeover-provider`: `off` is `None`.
    pub fn parse(raw: &str) -> Result<Option<Provider>, AfError> {
        match raw {
            "off" => Ok(None),
            "novnc" => Ok(Some(Provider::Novnc)),
            "kasmvnc" => Ok(Some(Provider::Kasmvnc)),
            other => Err(AfError::invalid(format!(
                "--takeover-provider must be off, novnc or kasmvnc, not {other:?}"
            ))),
        }
    }

    /// The flag value.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Novnc => "novnc",
            Provider::Kasmvnc => "kasmvnc",
        }
    }
}

/// What a display needs to start.
#[derive(Debug, Clone)]
pub struct DisplayOptions {
    /// The provider.
    pub provider: Provider,
    /// `--takeover-quality-percent` (0-100).
    pub quality_percent: u8,
    /// Framebuffer size; the browser window is made to fill it.
    pub size: (u32, u32),
    /// A private directory: the children's `HOME` and cwd.
    pub state_dir: PathBuf,
    /// The front end's environment: the variables the children inherit
    /// ([`crate::host::procs::INHERITED`]) and the `PATH` their programs are found on.
    pub parent_env: crate::env::Snapshot,
}

/// A running display: X server, optional window manager, web client on loopback.
#[derive(Debug)]
pub struct RunningDisplay {
    /// The provider that runs it.
    pub provider: Provider,
    /// The X display (`:N`) the browser is started on.
    pub display: String,
    /// The web client's loopback address (HTTP and its WebSocket).
    pub web: SocketAddr,
    /// The page (relative to `/takeover/panel/`, with its query) a human is sent to.
    pub entry: String,
    procs: Vec<GroupChild>,
}

impl RunningDisplay {
    /// Process ids of its components (each is also a process group id).
    pub fn pids(&self) -> Vec<u32> {
        self.procs.iter().map(|p| p.pid).collect()
    }

    /// The name of a component that has exited, with its stderr tail, if any has.
    pub fn exited(&mut self) -> Option<(&'static str, String)> {
        self.procs
            .iter_mut()
            .find_map(|p| p.has_exited().then(|| (p.name, p.stderr_tail())))
    }

    /// Stop every component, last started first (clients before the X server).
    pub async fn shutdown(&mut self) {
        for p in self.procs.iter_mut().rev() {
            p.shutdown(GRACE).await;
        }
    }
}

/// Start the display `opts` describes and wait until the X display accepts connections and
/// the web client answers on loopback. A missing component is `takeover_unavailable`; one
/// that does not come up is `browser_launch_failed` with its stderr tail.
pub async fn start(opts: &DisplayOptions) -> Result<RunningDisplay, AfError> {
    std::fs::create_dir_all(&opts.state_dir)
        .map_err(|e| AfError::io(format!("creating {}", opts.state_dir.display()), &e))?;
    match opts.provider {
        Provider::Novnc => novnc::start(opts).await,
        Provider::Kasmvnc => kasmvnc::start(opts).await,
    }
}

/// A free display number after `after`: no lock file and no socket, or a stale lock whose
/// server is gone (a killed X server leaves both behind; the next one replaces them).
pub(crate) fn free_display(after: Option<u32>) -> Option<u32> {
    let first = after.map_or(FIRST_DISPLAY, |n| n + 1);
    (first..FIRST_DISPLAY + DISPLAY_RANGE).find(|n| {
        match std::fs::read_to_string(format!("/tmp/.X{n}-lock")) {
            Ok(text) => text.trim().parse::<i32>().is_ok_and(|pid| {
                nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None)
                    == Err(nix::errno::Errno::ESRCH)
            }),
            Err(_) => !Path::new(&format!("{X11_UNIX}/X{n}")).exists(),
        }
    })
}

/// The environment of a display component: the shared allowlist from `opts.parent_env`,
/// `HOME` in the state dir, and `DISPLAY` when given.
pub(crate) fn component_env(opts: &DisplayOptions, display: Option<&str>) -> Vec<(String, String)> {
    let mut env = crate::host::procs::base_env(&opts.state_dir, |name| opts.parent_env.get(name));
    if let Some(d) = display {
        env.push(("DISPLAY".to_string(), d.to_string()));
    }
    env
}

/// Find `name` on the parent's PATH, or say which package provides it.
pub(crate) fn require(
    opts: &DisplayOptions,
    name: &str,
    package: &str,
) -> Result<PathBuf, AfError> {
    let path = opts.parent_env.get_os(crate::env::PATH);
    crate::host::browser::find_executable(name, path).ok_or_else(|| {
        AfError::new(
            ErrorCode::TakeoverUnavailable,
            format!("the takeover display needs {name}, which is not on PATH"),
        )
        .with_hint(format!("install {package}"))
    })
}

/// Spawn one component, mapping a spawn error to `browser_launch_failed`.
pub(crate) fn spawn(
    name: &'static str,
    program: &Path,
    args: &[String],
    env: &[(String, String)],
    cwd: &Path,
) -> Result<GroupChild, AfError> {
    GroupChild::spawn(name, program, args, env, cwd).map_err(|e| {
        failed(format!(
            "could not start {name} ({}): {e}",
            program.display()
        ))
    })
}

/// A component that did not come up.
pub(crate) fn failed(message: String) -> AfError {
    AfError::new(ErrorCode::BrowserLaunchFailed, message)
        .with_hint("read the stderr tail; the takeover display could not start")
}

/// Wait until X display `n` accepts a connection on its socket; `false` if `proc` exits or
/// the bound passes first.
pub(crate) async fn wait_for_x(n: u32, proc: &mut GroupChild) -> bool {
    let socket = format!("{X11_UNIX}/X{n}");
    let lock = format!("/tmp/.X{n}-lock");
    let deadline = Instant::now() + COMPONENT_TIMEOUT;
    while Instant::now() < deadline {
        // The socket must be our server's: two hosts starting at once can pick the same
        // free number, and the loser would otherwise take the winner's display as its own.
        // An X server writes its pid into the display's lock file.
        let ours = std::fs::read_to_string(&lock)
            .ok()
            .and_then(|text| text.trim().parse::<u32>().ok())
            == Some(proc.pid);
        if ours && tokio::net::UnixStream::connect(&socket).await.is_ok() {
            return true;
        }
        if proc.has_exited() {
            return false;
        }
        sleep(Duration::from_millis(25)).await;
    }
    false
}

/// Wait until a VNC server greets (`RFB 003.`) on loopback `port`; `false` if `proc` exits,
/// something else answers there, or the bound passes.
pub(crate) async fn wait_for_rfb(port: u16, proc: &mut GroupChild) -> bool {
    let deadline = Instant::now() + COMPONENT_TIMEOUT;
    while Instant::now() < deadline {
        if let Ok(mut s) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
            let mut greeting = [0u8; 8];
            let read = tokio::time::timeout(Duration::from_secs(2), s.read_exact(&mut greeting));
            return matches!(read.await, Ok(Ok(_))) && greeting.starts_with(b"RFB 003.");
        }
        if proc.has_exited() {
            return false;
        }
        sleep(Duration::from_millis(25)).await;
    }
    false
}

/// Wait until `GET path` on `addr` answers 200; `false` if `proc` exits or the bound passes.
pub(crate) async fn wait_for_web(addr: SocketAddr, path: &str, proc: &mut GroupChild) -> bool {
    let deadline = Instant::now() + COMPONENT_TIMEOUT;
    while Instant::now() < deadline {
        if http_status(addr, path).await == Some(200) {
            return true;
        }
        if proc.has_exited() {
            return false;
        }
        sleep(Duration::from_millis(25)).await;
    }
    false
}

/// The status code of one `GET path` on `addr` (HTTP/1.0, bounded).
async fn http_status(addr: SocketAddr, path: &str) -> Option<u16> {
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(addr).await.ok()?;
        let request = format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n");
        stream.write_all(request.as_bytes()).await.ok()?;
        let mut head = [0u8; 64];
        let n = stream.read(&mut head).await.ok()?;
        let line = std::str::from_utf8(&head[..n]).ok()?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    tokio::time::timeout(Duration::from_secs(2), exchange)
        .await
        .ok()
        .flatten()
}

/// A free loopback TCP port (released before the component binds it; a lost race makes the
/// component fail to start, which is reported).
pub(crate) fn reserve_port() -> Result<u16, AfError> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| AfError::io("reserving a loopback port", &e))
}

/// Map 0-100 % onto a 0-9 quality level (noVNC's `quality`, KasmVNC's video qualities).
pub fn quality_level(percent: u8) -> u8 {
    ((u32::from(percent.min(100)) * 9 + 50) / 100) as u8
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn providers_parse() {
        assert_eq!(Provider::parse("off").unwrap(), None);
        assert_eq!(Provider::parse("novnc").unwrap(), Some(Provider::Novnc));
        assert_eq!(Provider::parse("kasmvnc").unwrap(), Some(Provider::Kasmvnc));
        assert_eq!(
            Provider::parse("vnc").unwrap_err().code,
            ErrorCode::InvalidArgument
        );
    }

    #[test]
    fn quality_maps_onto_nine_levels() {
        assert_eq!(quality_level(0), 0);
        assert_eq!(quality_level(50), 5);
        assert_eq!(quality_level(80), 7);
        assert_eq!(quality_level(100), 9);
        assert_eq!(quality_level(255), 9);
    }

    #[test]
    fn a_free_display_has_no_socket() {
        let n = free_display(None).unwrap();
        assert!(n >= FIRST_DISPLAY);
        assert!(free_display(Some(n)).unwrap() > n);
    }

    #[test]
    fn component_env_is_scrubbed() {
        let opts = DisplayOptions {
            provider: Provider::Novnc,
            quality_percent: 50,
            size: (640, 480),
            state_dir: PathBuf::from("/tmp/x"),
            parent_env: crate::env::Snapshot::of([
                ("PATH".to_string(), "/usr/bin".into()),
                ("AFHTTP_TOKEN_SECRET".to_string(), "hunter2".into()),
                ("HOME".to_string(), "/root".into()),
            ]),
        };
        let env = component_env(&opts, Some(":21"));
        assert!(env.contains(&("HOME".into(), "/tmp/x".into())));
        assert!(env.contains(&("PATH".into(), "/usr/bin".into())));
        assert!(env.contains(&("DISPLAY".into(), ":21".into())));
        assert!(env.iter().all(|(k, _)| !k.starts_with("AFHTTP_")));
    }
}
