//! PID 1 duties for `afhttp host` as a container's entry point: reap orphans and forward
//! signals.
//!
//! A `waitpid(-1)` reaper in the same process as tokio's child handling would steal the exit
//! statuses tokio waits for, so as PID 1 afhttp stays a tiny synchronous init: it re-runs
//! itself (same arguments) as its only child — which runs the real host on tokio — and then
//! only waits for signals: SIGCHLD reaps every exited child (orphans reparented to us
//! included), SIGTERM/SIGINT/SIGHUP/SIGQUIT/SIGUSR1/SIGUSR2 are forwarded to the host. No
//! `fork` (re-exec keeps this free of unsafe code).

use std::process::Command;

use nix::errno::Errno;
use nix::sys::signal::{kill, sigprocmask, SigSet, SigmaskHow, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

/// Signals passed on to the host.
const FORWARDED: &[Signal] = &[
    Signal::SIGTERM,
    Signal::SIGINT,
    Signal::SIGHUP,
    Signal::SIGQUIT,
    Signal::SIGUSR1,
    Signal::SIGUSR2,
];

/// When this process is PID 1, run the host as a child and act as init until it exits;
/// returns the exit code to end with. `None` when not PID 1: the caller runs the host itself
/// (with the signals the init blocked unblocked again, since a child inherits the mask).
pub fn run_if_pid1() -> Option<u8> {
    if nix::unistd::getpid().as_raw() != 1 {
        let _ = sigprocmask(SigmaskHow::SIG_UNBLOCK, Some(&handled()), None);
        return None;
    }
    Some(run_init())
}

/// SIGCHLD plus the forwarded signals.
fn handled() -> SigSet {
    let mut set = SigSet::empty();
    set.add(Signal::SIGCHLD);
    for s in FORWARDED {
        set.add(*s);
    }
    set
}

fn run_init() -> u8 {
    let set = handled();
    // Blocked signals wait in the set until `wait` (and, blocked, are not dropped the way a
    // namespace's init drops signals it has no handler for); the child inherits the mask
    // and unblocks it in `run_if_pid1`.
    if sigprocmask(SigmaskHow::SIG_BLOCK, Some(&set), None).is_err() {
        return 1;
    }
    let child = match std::env::current_exe()
        .and_then(|exe| Command::new(exe).args(std::env::args_os().skip(1)).spawn())
    {
        Ok(c) => Pid::from_raw(c.id() as i32),
        Err(_) => return 1,
    };
    loop {
        let Ok(signal) = set.wait() else { continue };
        if signal == Signal::SIGCHLD {
            if let Some(code) = reap(child) {
                return code;
            }
        } else {
            // ESRCH: the host is already gone; its SIGCHLD is on the way.
            let _ = kill(child, signal);
        }
    }
}

/// Reap every exited child; the host's exit code once the host itself is among them.
fn reap(host: Pid) -> Option<u8> {
    let mut host_code = None;
    loop {
        match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) | Err(Errno::ECHILD) => return host_code,
            Ok(status) if status.pid() == Some(host) => host_code = exit_code(status),
            Ok(_) => {}
            Err(Errno::EINTR) => {}
            Err(_) => return host_code,
        }
    }
}

/// The init's exit code for the host's final status: its own code, or 128+N when a signal
/// killed it. `None` for statuses that are not an end (stopped, continued).
pub fn exit_code(status: WaitStatus) -> Option<u8> {
    match status {
        WaitStatus::Exited(_, code) => Some(u8::try_from(code).unwrap_or(1)),
        WaitStatus::Signaled(_, signal, _) => Some(128u8.saturating_add(signal as i32 as u8)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_host() {
        let p = Pid::from_raw(42);
        assert_eq!(exit_code(WaitStatus::Exited(p, 0)), Some(0));
        assert_eq!(exit_code(WaitStatus::Exited(p, 1)), Some(1));
        assert_eq!(
            exit_code(WaitStatus::Signaled(p, Signal::SIGKILL, false)),
            Some(137)
        );
        assert_eq!(
            exit_code(WaitStatus::Signaled(p, Signal::SIGTERM, true)),
            Some(143)
        );
        assert_eq!(exit_code(WaitStatus::Stopped(p, Signal::SIGSTOP)), None);
        assert_eq!(exit_code(WaitStatus::StillAlive), None);
    }

    #[test]
    fn not_pid1_here() {
        assert_eq!(run_if_pid1(), None);
    }
}
