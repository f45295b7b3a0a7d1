//! Child processes the host owns (browser, display server, window manager, websockify):
//! a cleared environment, their own process group, and stopping the whole group.
//!
//! Chromium forks zygotes, renderers and GPU helpers, Xvnc and websockify fork too; signalling
//! only the main pid can leave them behind, so each child runs in its own group and the group
//! is what we stop.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::process::{Child, Command};
use tokio::time::{sleep, timeout, Instant};

use crate::host::stderr::{drain, Tail};

/// Parent variables copied through when set: the executable search path and locale/timezone.
pub(crate) const INHERITED: &[&str] = &["PATH", "LANG", "LC_ALL", "TZ"];

/// How long to wait for a killed group to disappear.
const AFTER_KILL: Duration = Duration::from_secs(2);

/// The allowlisted part of a child's environment: [`INHERITED`] from `parent`, then `HOME`.
/// Everything else (proxies, `AFHTTP_*` secrets, `XDG_RUNTIME_DIR`, `DISPLAY`) stays out
/// unless the caller adds it.
pub(crate) fn base_env(
    home: &Path,
    parent: impl Fn(&str) -> Option<String>,
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = INHERITED
        .iter()
        .filter_map(|name| parent(name).map(|value| (name.to_string(), value)))
        .collect();
    env.push(("HOME".to_string(), home.display().to_string()));
    env
}

/// Spawn `program` isolated: cleared environment plus `env`, its own process group, cwd
/// `cwd`, stdin/stdout closed and stderr piped (for a [`Tail`]). Returns the child and its pid
/// (which is also its process group id).
pub(crate) fn spawn_isolated(
    program: &Path,
    args: &[String],
    env: &[(String, String)],
    cwd: &Path,
) -> std::io::Result<(Child, u32)> {
    let path = env
        .iter()
        .find(|(k, _)| k == crate::env::PATH)
        .map(|(_, v)| v.as_str());
    let mut cmd = match pdeathsig_wrapper(path).filter(|_| program.is_file()) {
        Some(setpriv) => {
            let mut c = Command::new(setpriv);
            c.args(["--pdeathsig", "KILL", "--"]).arg(program);
            c
        }
        None => Command::new(program),
    };
    cmd.args(args)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    let child = cmd.spawn()?;
    let pid = child.id().ok_or_else(|| {
        std::io::Error::other(format!(
            "{} exited before it could be tracked",
            program.display()
        ))
    })?;
    Ok((child, pid))
}

/// util-linux `setpriv`, when installed and able to set a parent-death signal.
///
/// Each child runs in its own process group, so it outlives a host (or an inline fetch) that
/// is killed with SIGKILL, holding its profile and display. `setpriv --pdeathsig KILL` makes
/// the kernel kill it when the thread that spawned it dies, then execs the real program (same
/// pid). Setting the signal ourselves would need `pre_exec`, i.e. unsafe code. Spawning
/// threads here are the main thread or tokio workers, which live as long as the host.
/// `path` is the child's `PATH` (the parent's, passed through); the first spawn decides for
/// the process.
fn pdeathsig_wrapper(path: Option<&str>) -> Option<&'static Path> {
    static SETPRIV: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    SETPRIV
        .get_or_init(|| {
            let found = std::env::split_paths(path.unwrap_or_default())
                .chain([std::path::PathBuf::from("/usr/bin"), "/bin".into()])
                .map(|dir| dir.join("setpriv"))
                .find(|p| p.is_file())?;
            // An old util-linux without --pdeathsig would fail every spawn: try it once.
            let works = std::process::Command::new(&found)
                .args(["--pdeathsig", "KILL", "--", "true"])
                .env_clear()
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            works.then_some(found)
        })
        .as_deref()
}

/// A helper process (not the browser) in its own group; dropping it kills the group.
#[derive(Debug)]
pub(crate) struct GroupChild {
    /// Short name for logs (`Xvnc`, `websockify`, ...).
    pub name: &'static str,
    /// Main pid, also the process group id.
    pub pid: u32,
    child: Child,
    tail: Tail,
    stopped: bool,
}

impl GroupChild {
    /// [`spawn_isolated`] and keep draining its stderr into a tail.
    pub fn spawn(
        name: &'static str,
        program: &Path,
        args: &[String],
        env: &[(String, String)],
        cwd: &Path,
    ) -> std::io::Result<GroupChild> {
        let (mut child, pid) = spawn_isolated(program, args, env, cwd)?;
        let tail = Tail::default();
        if let Some(stderr) = child.stderr.take() {
            // Nothing to wait for in the output; the drain keeps the pipe empty and the tail.
            drop(drain(stderr, tail.clone()));
        }
        Ok(GroupChild {
            name,
            pid,
            child,
            tail,
            stopped: false,
        })
    }

    /// Whether the main process has exited (it is reaped if so).
    pub fn has_exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// Whether the main process or any other member of its group still runs.
    fn alive(&mut self) -> bool {
        !self.has_exited() || group_alive(self.pid)
    }

    /// The last lines the process wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        self.tail.text()
    }

    /// SIGTERM to the group, up to `grace`, then SIGKILL; waits (bounded) until the group is
    /// gone. Idempotent.
    pub async fn shutdown(&mut self, grace: Duration) {
        if self.stopped {
            return;
        }
        signal_group(self.pid, Signal::SIGTERM);
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline && self.alive() {
            sleep(Duration::from_millis(25)).await;
        }
        if self.alive() {
            kill_group_and_wait(self.pid, &mut self.child).await;
        }
        self.stopped = true;
    }
}

impl Drop for GroupChild {
    fn drop(&mut self) {
        if !self.stopped {
            signal_group(self.pid, Signal::SIGKILL);
        }
    }
}

/// SIGKILL the whole group led by `child` and wait (bounded) until the leader is reaped and
/// no member is left.
pub(crate) async fn kill_group_and_wait(pgid: u32, child: &mut Child) {
    signal_group(pgid, Signal::SIGKILL);
    // A killed group gains no members (a fork racing the kill fails), so /proc is scanned
    // once for them and only they are polled after: a full scan costs milliseconds on a
    // busy machine, every 5 ms.
    let members = group_members(pgid);
    let _ = timeout(AFTER_KILL, child.wait()).await;
    let deadline = Instant::now() + AFTER_KILL;
    match members {
        Some(mut pids) => loop {
            pids.retain(|&pid| in_group(pid, pgid));
            if pids.is_empty() || Instant::now() >= deadline {
                break;
            }
            sleep(Duration::from_millis(5)).await;
        },
        None => {
            while Instant::now() < deadline && group_alive(pgid) {
                sleep(Duration::from_millis(5)).await;
            }
        }
    }
}

/// Pids of group `pgid`'s live members, from one scan of `/proc` (`None` without `/proc`).
fn group_members(pgid: u32) -> Option<Vec<u32>> {
    let entries = std::fs::read_dir("/proc").ok()?;
    Some(
        entries
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|&pid| in_group(pid, pgid))
            .collect(),
    )
}

/// Whether process `pid` is alive (not a zombie) and in group `pgid`.
fn in_group(pid: u32, pgid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| parse_stat(&stat))
        .is_some_and(|(state, pgrp)| state != 'Z' && state != 'X' && pgrp == pgid)
}

/// Send `signal` to every process in group `pgid`; a group that is already gone is fine.
pub(crate) fn signal_group(pgid: u32, signal: Signal) {
    if let Ok(raw) = i32::try_from(pgid) {
        // ESRCH (nobody left) is the expected outcome late in a shutdown.
        let _ = killpg(Pid::from_raw(raw), signal);
    }
}

/// Whether any live (non-zombie) process still belongs to group `pgid`.
///
/// Zombies are excluded: once a member is reparented, reaping it is its new parent's job, and
/// a zombie holds no resources a browser could use. Without `/proc` this falls back to a null
/// signal, which also counts zombies and so errs towards "still alive".
pub(crate) fn group_alive(pgid: u32) -> bool {
    match proc_dirs() {
        Some(dirs) => dirs.into_iter().any(|dir| {
            std::fs::read_to_string(dir.join("stat"))
                .ok()
                .and_then(|stat| parse_stat(&stat))
                .is_some_and(|(state, pgrp)| state != 'Z' && state != 'X' && pgrp == pgid)
        }),
        None => i32::try_from(pgid)
            .map(|raw| killpg(Pid::from_raw(raw), None).is_ok())
            .unwrap_or(false),
    }
}

/// The `/proc/<pid>` directories of every process (`None` without `/proc`).
pub(crate) fn proc_dirs() -> Option<Vec<std::path::PathBuf>> {
    let entries = std::fs::read_dir("/proc").ok()?;
    Some(
        entries
            .filter_map(Result::ok)
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .bytes()
                    .all(|b| b.is_ascii_digit())
            })
            .map(|e| e.path())
            .collect(),
    )
}

/// `(state, pgrp)` from a `/proc/<pid>/stat` line.
///
/// The command name sits in parentheses and may itself contain spaces or parentheses, so the
/// fields are read after the last `)`.
pub(crate) fn parse_stat(stat: &str) -> Option<(char, u32)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, pgrp))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_names_parse() {
        assert_eq!(
            parse_stat("123 (chromium) S 1 123 123 0 -1"),
            Some(('S', 123))
        );
        assert_eq!(parse_stat("9 (a) b (c)) Z 1 77 77 0"), Some(('Z', 77)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn our_own_group_is_alive_and_a_bogus_one_is_not() {
        let own = nix::unistd::getpgrp().as_raw() as u32;
        assert!(group_alive(own));
        assert!(!group_alive(u32::MAX - 7));
    }
}
