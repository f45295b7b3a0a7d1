//! Signalling and observing a browser's whole process group.
//!
//! Chromium forks zygotes, renderers and GPU helpers; signalling only the main pid can leave
//! them behind, so the browser runs in its own group and the group is what we stop.

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

/// Send `signal` to every process in group `pgid`; a group that is already gone is fine.
pub(super) fn signal_group(pgid: u32, signal: Signal) {
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
pub(super) fn group_alive(pgid: u32) -> bool {
    match std::fs::read_dir("/proc") {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .bytes()
                    .all(|b| b.is_ascii_digit())
            })
            .any(|e| {
                std::fs::read_to_string(e.path().join("stat"))
                    .ok()
                    .and_then(|stat| parse_stat(&stat))
                    .is_some_and(|(state, pgrp)| state != 'Z' && state != 'X' && pgrp == pgid)
            }),
        Err(_) => i32::try_from(pgid)
            .map(|raw| killpg(Pid::from_raw(raw), None).is_ok())
            .unwrap_or(false),
    }
}

/// `(state, pgrp)` from a `/proc/<pid>/stat` line.
///
/// The command name sits in parentheses and may itself contain spaces or parentheses, so the
/// fields are read after the last `)`.
pub(super) fn parse_stat(stat: &str) -> Option<(char, u32)> {
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
