//! Browsers orphaned on a persistent profile by a host that was killed (SIGKILL, OOM).
//!
//! The profile's `flock` dies with its host, but the host's browser runs in its own process
//! group and survives it, still holding Chromium's `SingletonLock`; the next host's browser
//! would then refuse the profile ("Failed to create a ProcessSingleton"). Whoever holds the
//! profile lock owns the profile, so any browser still running on that directory is such an
//! orphan: it is asked to stop (so it flushes cookies and storage), then killed.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use serde_json::json;

use crate::host::log::{log, Level};
use crate::host::procs::{group_alive, parse_stat, proc_dirs, signal_group};

/// How long an orphan gets to exit after SIGTERM, and after SIGKILL.
const GRACE: Duration = Duration::from_secs(3);

/// Stop every process group led by a browser whose `--user-data-dir` is `profile_dir`.
/// Call only while holding the profile lock. Returns how many groups were stopped.
pub fn stop_orphaned_browsers(profile_dir: &Path) -> usize {
    let groups = browser_groups_on(profile_dir);
    if groups.is_empty() {
        return 0;
    }
    log(
        Level::Warn,
        "stopping a browser a dead host left on the profile",
        json!({"profile_path": profile_dir, "pgids": groups}),
    );
    for signal in [Signal::SIGTERM, Signal::SIGKILL] {
        for g in &groups {
            signal_group(*g, signal);
        }
        let deadline = Instant::now() + GRACE;
        while Instant::now() < deadline && groups.iter().any(|g| group_alive(*g)) {
            std::thread::sleep(Duration::from_millis(25));
        }
        if !groups.iter().any(|g| group_alive(*g)) {
            break;
        }
    }
    groups.len()
}

/// Process groups of live processes started with `--user-data-dir=<profile_dir>`.
fn browser_groups_on(profile_dir: &Path) -> Vec<u32> {
    let mut wanted = b"--user-data-dir=".to_vec();
    wanted.extend_from_slice(profile_dir.as_os_str().as_bytes());
    let own = nix::unistd::getpgrp().as_raw() as u32;
    let mut groups: Vec<u32> = proc_dirs()
        .unwrap_or_default()
        .into_iter()
        .filter(|dir| {
            std::fs::read(dir.join("cmdline"))
                .is_ok_and(|c| c.split(|b| *b == 0).any(|arg| arg == wanted.as_slice()))
        })
        .filter_map(|dir| {
            let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
            let (state, pgrp) = parse_stat(&stat)?;
            (state != 'Z' && state != 'X' && pgrp != own && pgrp > 1).then_some(pgrp)
        })
        .collect();
    groups.sort_unstable();
    groups.dedup();
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_nobody_runs_on_has_no_orphans() {
        let dir = std::env::temp_dir().join("afhttp-no-such-profile-for-orphans");
        assert!(browser_groups_on(&dir).is_empty());
        assert_eq!(stop_orphaned_browsers(&dir), 0);
    }
}
