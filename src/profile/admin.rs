//! Local-only administration: sizes, downloads, delete and prune.
//!
//! Nothing here is reachable over a host endpoint (spec §7: no remote profile destruction).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use time::OffsetDateTime;

use super::lock::{lock_status, try_lock};
use super::metadata::{format_rfc3339, inspect_metadata};
use super::name::Backend;
use super::store::{list_profiles, ProfileDir};
use crate::error::{AfError, ErrorCode};

/// Approximate bytes under `path`: regular files' sizes, never following symlinks.
/// Unreadable entries are skipped (the number is advisory).
pub fn dir_size(path: &Path) -> u64 {
    let mut total = 0u64;
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = fs::symlink_metadata(entry.path()) else {
                continue;
            };
            if meta.is_dir() {
                stack.push(entry.path());
            } else if meta.is_file() {
                total = total.saturating_add(meta.len());
            }
        }
    }
    total
}

/// Whether a captured download is finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DownloadState {
    /// A finished file.
    Complete,
    /// A partial file still being written (Chromium `.crdownload`, Firefox `.part`).
    InProgress,
}

impl DownloadState {
    /// `complete` or `in_progress`.
    pub fn as_str(self) -> &'static str {
        match self {
            DownloadState::Complete => "complete",
            DownloadState::InProgress => "in_progress",
        }
    }
}

/// One file under `<profile>/downloads`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DownloadEntry {
    /// Absolute path.
    pub path: PathBuf,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Completion state.
    pub state: DownloadState,
    /// Last modification time.
    pub modified_at_rfc3339: Option<String>,
}

/// List the regular files under `downloads_dir` (recursively, symlinks skipped), sorted by
/// path. A missing directory is an empty list.
pub fn list_downloads(downloads_dir: &Path) -> Result<Vec<DownloadEntry>, AfError> {
    match fs::symlink_metadata(downloads_dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Ok(Vec::new()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(AfError::io(
                format_args!("inspect {}", downloads_dir.display()),
                &e,
            ))
        }
    }
    let mut out = Vec::new();
    let mut stack = vec![downloads_dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = fs::read_dir(&dir)
            .map_err(|e| AfError::io(format_args!("list {}", dir.display()), &e))?;
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                stack.push(path);
            } else if meta.is_file() {
                let partial = path
                    .extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| e == "crdownload" || e == "part");
                out.push(DownloadEntry {
                    size_bytes: meta.len(),
                    state: if partial {
                        DownloadState::InProgress
                    } else {
                        DownloadState::Complete
                    },
                    modified_at_rfc3339: meta.modified().ok().map(system_rfc3339),
                    path,
                });
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// Format a `SystemTime` as RFC 3339 (UTC, whole seconds).
pub fn system_rfc3339(t: SystemTime) -> String {
    format_rfc3339(OffsetDateTime::from(t))
}

/// Delete an unlocked persistent profile directory.
///
/// The lock is taken for the duration of the removal, so a host cannot start on the profile
/// half-way through; a held lock is `profile_delete_locked`. The directory itself must not be
/// a symlink, and `remove_dir_all` never follows symlinks inside it.
pub fn delete_profile(dir: &ProfileDir) -> Result<(), AfError> {
    let meta = fs::symlink_metadata(&dir.path)
        .map_err(|e| AfError::io(format_args!("inspect {}", dir.path.display()), &e))?;
    if !meta.is_dir() {
        return Err(AfError::invalid(format!(
            "{} is not a real directory (symlink or file); refusing to delete it",
            dir.path.display()
        )));
    }
    let lock = try_lock(&dir.path).map_err(|e| {
        if e.code == ErrorCode::ProfileLocked {
            AfError::new(ErrorCode::ProfileDeleteLocked, e.message)
                .with_hint("stop the host using this profile, then delete it")
        } else {
            e
        }
    })?;
    let removed = fs::remove_dir_all(&dir.path)
        .map_err(|e| AfError::io(format_args!("delete {}", dir.path.display()), &e));
    drop(lock);
    removed
}

/// Why a prune candidate was left alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The profile.
    pub profile: ProfileDir,
    /// Human reason (`locked by pid N`, or the delete error).
    pub reason: String,
    /// Owner pid when it was locked and recorded.
    pub lock_owner_pid: Option<u32>,
}

/// A profile prune decided on, with the age it was judged by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PruneCandidate {
    /// The profile.
    pub profile: ProfileDir,
    /// `last_used_at_rfc3339` from metadata, else the directory mtime.
    pub last_used_at_rfc3339: String,
    /// Where that time came from: `metadata` or `mtime`.
    pub last_used_source: &'static str,
    /// Approximate size before deletion.
    pub size_bytes: u64,
}

/// What `prune` did (or would do with `dry_run`).
#[derive(Debug, Clone, Default)]
pub struct PruneOutcome {
    /// Deleted profiles, or those that would be with `dry_run`.
    pub pruned: Vec<PruneCandidate>,
    /// Old enough but left alone (locked, or deletion failed).
    pub skipped: Vec<Skipped>,
    /// The cutoff: profiles last used before it are candidates.
    pub cutoff_rfc3339: String,
}

/// Delete (or with `dry_run` only list) unlocked persistent profiles last used more than
/// `older_than` ago, optionally only under `backend`.
pub fn prune(
    root: &Path,
    older_than: Duration,
    backend: Option<Backend>,
    dry_run: bool,
) -> Result<PruneOutcome, AfError> {
    let now = OffsetDateTime::now_utc();
    let age = time::Duration::try_from(older_than)
        .map_err(|_| AfError::invalid("--older-than is too large"))?;
    let cutoff = now
        .checked_sub(age)
        .ok_or_else(|| AfError::invalid("--older-than reaches before the start of time"))?;
    let mut out = PruneOutcome {
        cutoff_rfc3339: format_rfc3339(cutoff),
        ..PruneOutcome::default()
    };
    for profile in list_profiles(root, backend)? {
        let Some((last_used, source)) = last_used(&profile) else {
            continue;
        };
        if last_used >= cutoff {
            continue;
        }
        let candidate = PruneCandidate {
            last_used_at_rfc3339: format_rfc3339(last_used),
            last_used_source: source,
            size_bytes: dir_size(&profile.path),
            profile,
        };
        let status = lock_status(&candidate.profile.path);
        if status.locked {
            out.skipped
                .push(skipped_locked(candidate.profile, status.owner_pid));
            continue;
        }
        if dry_run {
            out.pruned.push(candidate);
            continue;
        }
        match delete_profile(&candidate.profile) {
            Ok(()) => out.pruned.push(candidate),
            Err(e) if e.code == ErrorCode::ProfileDeleteLocked => {
                let pid = lock_status(&candidate.profile.path).owner_pid;
                out.skipped.push(skipped_locked(candidate.profile, pid));
            }
            Err(e) => out.skipped.push(Skipped {
                profile: candidate.profile,
                reason: e.message,
                lock_owner_pid: None,
            }),
        }
    }
    Ok(out)
}

fn skipped_locked(profile: ProfileDir, pid: Option<u32>) -> Skipped {
    let reason = match pid {
        Some(pid) => format!("locked by pid {pid}"),
        None => "locked".to_string(),
    };
    Skipped {
        profile,
        reason,
        lock_owner_pid: pid,
    }
}

/// When a profile was last used: valid metadata's `last_used_at_rfc3339`, else the mtime.
fn last_used(profile: &ProfileDir) -> Option<(OffsetDateTime, &'static str)> {
    let report = inspect_metadata(&profile.path, profile.backend);
    if let Some(t) = report.metadata.as_ref().and_then(|m| m.last_used_at()) {
        return Some((t, "metadata"));
    }
    let mtime = fs::symlink_metadata(&profile.path).ok()?.modified().ok()?;
    Some((OffsetDateTime::from(mtime), "mtime"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::metadata::{write_metadata, ProfileMetadata};
    use crate::profile::name::ProfileName;
    use crate::profile::store::open_or_create;

    #[test]
    fn downloads_listing() {
        let tmp = tempfile::tempdir().unwrap();
        let dl = tmp.path().join("downloads");
        assert!(list_downloads(&dl).unwrap().is_empty());
        fs::create_dir_all(dl.join("sub")).unwrap();
        fs::write(dl.join("report.pdf"), b"12345").unwrap();
        fs::write(dl.join("big.zip.crdownload"), b"12").unwrap();
        fs::write(dl.join("sub/x.txt"), b"x").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dl.join("link")).unwrap();
        let got = list_downloads(&dl).unwrap();
        let summary: Vec<(String, u64, &str)> = got
            .iter()
            .map(|d| {
                (
                    d.path.strip_prefix(&dl).unwrap().display().to_string(),
                    d.size_bytes,
                    d.state.as_str(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("big.zip.crdownload".to_string(), 2, "in_progress"),
                ("report.pdf".to_string(), 5, "complete"),
                ("sub/x.txt".to_string(), 1, "complete"),
            ]
        );
        assert!(got[0].modified_at_rfc3339.is_some());
    }

    #[test]
    fn size_does_not_follow_symlinks() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("huge"), vec![0u8; 4096]).unwrap();
        fs::write(tmp.path().join("a"), b"abc").unwrap();
        std::os::unix::fs::symlink(outside.path(), tmp.path().join("out")).unwrap();
        assert_eq!(dir_size(tmp.path()), 3);
    }

    #[test]
    fn delete_refuses_locked_and_keeps_symlink_targets() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("keep"), b"k").unwrap();
        let name = ProfileName::parse("work").unwrap();
        let dir = open_or_create(tmp.path(), Backend::Chromium, &name).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path.join("escape")).unwrap();

        let held = try_lock(&dir.path).unwrap();
        let err = delete_profile(&dir).unwrap_err();
        assert_eq!(err.code, ErrorCode::ProfileDeleteLocked);
        drop(held);

        delete_profile(&dir).unwrap();
        assert!(!dir.path.exists());
        assert!(outside.path().join("keep").exists());
    }

    #[test]
    fn prune_respects_age_locks_and_dry_run() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let mk = |n: &str, last_used: &str| {
            let name = ProfileName::parse(n).unwrap();
            let dir = open_or_create(root, Backend::Chromium, &name).unwrap();
            let mut meta = ProfileMetadata::new(Backend::Chromium, &name);
            meta.last_used_at_rfc3339 = last_used.into();
            write_metadata(&dir.path, &meta).unwrap();
            dir
        };
        let old = mk("old", "2001-01-01T00:00:00Z");
        let busy = mk("busy", "2001-01-01T00:00:00Z");
        let fresh = mk("fresh", &crate::profile::metadata::now_rfc3339());
        let held = try_lock(&busy.path).unwrap();
        let day = Duration::from_secs(86400);

        let dry = prune(root, day, None, true).unwrap();
        assert_eq!(dry.pruned.len(), 1);
        assert_eq!(dry.pruned[0].profile, old);
        assert_eq!(dry.pruned[0].last_used_source, "metadata");
        assert_eq!(dry.skipped.len(), 1);
        assert_eq!(dry.skipped[0].lock_owner_pid, Some(std::process::id()));
        assert!(old.exists());

        let real = prune(root, day, None, false).unwrap();
        assert_eq!(real.pruned.len(), 1);
        assert!(!old.exists());
        assert!(busy.exists() && fresh.exists());
        drop(held);
    }
}
