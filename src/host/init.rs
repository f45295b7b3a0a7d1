//! PID 1 duties for `afhttp host` as a container entrypoint (no shell, no tini).
//!
//! A browser leaves orphans (crash handlers, zygotes of a stopped browser) that the kernel
//! hands to PID 1; a PID 1 that never reaps them fills the process table with zombies. A
//! global `waitpid(-1)` inside the tokio host would steal the exit statuses of the host's own
//! children, so PID 1 forks first: the parent becomes this small synchronous init (reap
//! everything, forward signals to the host), the child returns and runs the host as usual.

use nix::sys::signal::{kill, SigSet, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::{fork, getpid, ForkResult, Pid};

use crate::error::AfError;

/// Signals the init passes on to the host.
const FORWARDED: &[Signal] = &[
    Signal::SIGTERM,
    Signal::SIGINT,
    Signal::SIGHUP,
    Signal::SIGQUIT,
    Signal::SIGUSR1,
    Signal::SIGUSR2,
];

/// What the caller does next.
#[derive(Debug, PartialEq, Eq)]
pub enum Role {
    /// Run the host (not PID 1, or the forked child).
    Host,
    /// The init is done: exit with this status (the host's, or 128+N if a signal killed it).
    Exit(u8),
}

/// Fork an init when this process is PID 1. Call before any thread exists.
pub fn become_init_if_pid1() -> Result<Role, AfError> {
    if getpid() != Pid::from_raw(1) {
        return Ok(Role::Host);
    }
    let mut set = SigSet::empty();
    for s in FORWARDED {
        set.add(*s);
    }
    set.add(Signal::SIGCHLD);
    // Blocked before the fork so nothing arrives between fork and the first `sigwait`.
    set.thread_block()
        .map_err(|e| init_error("block signals", e))?;
    // SAFETY: called from `afhttp host` before the async runtime or any other thread
    // starts, so the child is a complete copy of a single-threaded process.
    #[allow(unsafe_code)]
    let forked = unsafe { fork() }.map_err(|e| init_error("fork the host", e))?;
    match forked {
        ForkResult::Child => {
            set.thread_unblock()
                .map_err(|e| init_error("unblock signals", e))?;
            Ok(Role::Host)
        }
        ForkResult::Parent { child } => Ok(Role::Exit(supervise(child, &set))),
    }
}

fn init_error(doing: &str, e: nix::errno::Errno) -> AfError {
    AfError::new(
        crate::error::ErrorCode::BrowserLaunchFailed,
        format!("PID 1 init: {doing}: {e}"),
    )
}

/// Wait for signals until the host exits: reap every child, forward the rest.
fn supervise(host: Pid, set: &SigSet) -> u8 {
    loop {
        match set.wait() {
            Ok(Signal::SIGCHLD) => {
                if let Some(code) = reap(host) {
                    return code;
                }
            }
            Ok(sig) => {
                let _ = kill(host, sig);
            }
            // EINTR and friends: wait again.
            Err(_) => {
                if let Some(code) = reap(host) {
                    return code;
                }
            }
        }
    }
}

/// Reap every exited child; the host's exit status once it is among them.
fn reap(host: Pid) -> Option<u8> {
    loop {
        match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::Exited(pid, code)) if pid == host => {
                return Some(u8::try_from(code).unwrap_or(1));
            }
            Ok(WaitStatus::Signaled(pid, sig, _)) if pid == host => {
                return Some(128u8.saturating_add(sig as u8));
            }
            Ok(WaitStatus::StillAlive) => return None,
            Ok(_) => continue,
            // ECHILD: no children left at all (the host is gone without a status we saw).
            Err(nix::errno::Errno::ECHILD) => return Some(1),
            Err(_) => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn not_pid1_runs_the_host_directly() {
        assert_eq!(super::become_init_if_pid1().unwrap(), super::Role::Host);
    }
}
