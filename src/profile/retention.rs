//! Retention by age for what afhttp leaves on disk besides whole profiles: the files a
//! host captured under `<profile>/downloads/` and the default fetch output directories
//! `<tmp>/afhttp-out/<request_id>/` (`afhttp profile prune --downloads --outputs`).
//!
//! Only direct children of those two kinds of directory are ever removed, each judged by
//! the newest modification time anywhere inside it (so an entry still being written is
//! young). Symlinks are never followed: a symlinked directory, or a symlink entry, is
//! reported as skipped and left alone; `remove_dir_all` does not follow links inside a tree.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::Serialize;

use super::admin::{dir_size, system_rfc3339};
use crate::error::AfError;

/// The retention `--downloads`/`--outputs` use when `--older-than` is not given.
pub const DEFAULT_RETENTION: &str = "7d";

/// The parent of default fetch output directories, `<tmp>/afhttp-out`.
pub fn outputs_root() -> PathBuf {
    std::env::temp_dir().join("afhttp-out")
}

/// A host's MCP output area, `$XDG_DATA_HOME/afhttp/mcp-out` (beside the profile store):
/// where fetches that `/mcp` triggers write, pruned by the host (time to live and size cap)
/// and by `profile prune --outputs`. `env` is the front end's snapshot.
pub fn mcp_outputs_root(env: &crate::env::Snapshot) -> Result<PathBuf, AfError> {
    let profiles = super::profiles_root(env)?;
    Ok(profiles
        .parent()
        .map(|p| p.join("mcp-out"))
        .unwrap_or_else(|| profiles.join("mcp-out")))
}

/// One entry removed (or, on a dry run, that would be).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct RemovedEntry {
    /// Absolute path.
    pub path: PathBuf,
    /// Bytes it held (regular files, symlinks not followed).
    pub size_bytes: u64,
    /// The newest modification time inside it, which it was judged by.
    pub modified_at_rfc3339: String,
}

/// One entry left alone, and why.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SkippedEntry {
    /// Absolute path.
    pub path: PathBuf,
    /// Human reason.
    pub reason: String,
}

/// What pruning one directory did.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct RetentionOutcome {
    /// Removed (or would be, on a dry run).
    pub removed: Vec<RemovedEntry>,
    /// Old enough but left alone, or the directory itself refused.
    pub skipped: Vec<SkippedEntry>,
}

impl RetentionOutcome {
    /// Append another directory's outcome.
    pub fn extend(&mut self, other: RetentionOutcome) {
        self.removed.extend(other.removed);
        self.skipped.extend(other.skipped);
    }
}

/// The moment `older_than` ago; entries last modified before it are removed.
pub fn cutoff(older_than: Duration) -> Result<SystemTime, AfError> {
    SystemTime::now()
        .checked_sub(older_than)
        .ok_or_else(|| AfError::invalid("--older-than reaches before the start of time"))
}

/// Remove (or with `dry_run` only list) the direct children of `dir` whose newest
/// modification time is before `cutoff`. A missing `dir` is nothing to do; a `dir` that is
/// a symlink, not a directory, or (with `must_own`) not owned by this user is refused as a
/// whole and reported as skipped.
pub fn prune_children(
    dir: &Path,
    cutoff: SystemTime,
    dry_run: bool,
    must_own: bool,
) -> Result<RetentionOutcome, AfError> {
    let mut out = RetentionOutcome::default();
    let meta = match fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(AfError::io(format_args!("inspect {}", dir.display()), &e)),
    };
    let refuse = |reason: &str| SkippedEntry {
        path: dir.to_path_buf(),
        reason: reason.to_string(),
    };
    if meta.file_type().is_symlink() {
        out.skipped.push(refuse(
            "a symlink; refusing to follow it out of afhttp's directories",
        ));
        return Ok(out);
    }
    if !meta.is_dir() {
        out.skipped.push(refuse("not a directory"));
        return Ok(out);
    }
    if must_own && meta.uid() != nix::unistd::geteuid().as_raw() {
        out.skipped
            .push(refuse("not owned by this user; refusing to delete there"));
        return Ok(out);
    }
    let entries =
        fs::read_dir(dir).map_err(|e| AfError::io(format_args!("list {}", dir.display()), &e))?;
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            out.skipped.push(SkippedEntry {
                path,
                reason: "a symlink; left alone (never followed)".into(),
            });
            continue;
        }
        let newest = newest_mtime(&path, &meta);
        if newest >= cutoff {
            continue;
        }
        let entry = RemovedEntry {
            size_bytes: if meta.is_dir() {
                dir_size(&path)
            } else {
                meta.len()
            },
            modified_at_rfc3339: system_rfc3339(newest),
            path,
        };
        if !dry_run {
            let removed = if meta.is_dir() {
                fs::remove_dir_all(&entry.path)
            } else {
                fs::remove_file(&entry.path)
            };
            if let Err(e) = removed {
                out.skipped.push(SkippedEntry {
                    path: entry.path,
                    reason: format!("cannot remove: {e}"),
                });
                continue;
            }
        }
        out.removed.push(entry);
    }
    Ok(out)
}

/// The newest modification time of `path` and everything under it (symlinks not followed;
/// unreadable parts count as now, so doubt keeps an entry).
pub fn newest_mtime(path: &Path, meta: &fs::Metadata) -> SystemTime {
    let mtime = |m: &fs::Metadata| m.modified().unwrap_or_else(|_| SystemTime::now());
    let mut newest = mtime(meta);
    if !meta.is_dir() {
        return newest;
    }
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            return SystemTime::now();
        };
        for entry in entries.flatten() {
            let Ok(m) = fs::symlink_metadata(entry.path()) else {
                continue;
            };
            newest = newest.max(mtime(&m));
            if m.is_dir() {
                stack.push(entry.path());
            }
        }
    }
    newest
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn age(path: &Path, secs: u64) {
        let t = SystemTime::now() - Duration::from_secs(secs);
        fs::File::open(path).unwrap().set_modified(t).unwrap();
    }

    #[test]
    fn removes_old_children_keeps_young_and_symlinks() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("afhttp-out");
        fs::create_dir(&root).unwrap();
        let old = root.join("old");
        fs::create_dir(&old).unwrap();
        fs::write(old.join("a.txt"), b"12345").unwrap();
        age(&old.join("a.txt"), 3600);
        age(&old, 3600);
        // Old directory, but a file inside was just written: kept.
        let busy = root.join("busy");
        fs::create_dir(&busy).unwrap();
        fs::write(busy.join("new.txt"), b"x").unwrap();
        age(&busy, 3600);
        let outside = tmp.path().join("outside");
        fs::create_dir(&outside).unwrap();
        fs::write(outside.join("keep.txt"), b"keep").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();

        let cut = cutoff(Duration::from_secs(60)).unwrap();
        let dry = prune_children(&root, cut, true, true).unwrap();
        assert_eq!(dry.removed.len(), 1);
        assert!(old.exists());
        let done = prune_children(&root, cut, false, true).unwrap();
        assert_eq!(done.removed[0].path, old);
        assert_eq!(done.removed[0].size_bytes, 5);
        assert!(!old.exists() && busy.exists());
        assert!(outside.join("keep.txt").exists());
        assert_eq!(done.skipped.len(), 1);
        assert_eq!(done.skipped[0].path, root.join("link"));
    }

    #[test]
    fn a_symlinked_root_is_refused_and_a_missing_one_is_empty() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        fs::create_dir(&real).unwrap();
        fs::write(real.join("f"), b"f").unwrap();
        age(&real.join("f"), 3600);
        let link = tmp.path().join("downloads");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let cut = cutoff(Duration::from_secs(60)).unwrap();
        let out = prune_children(&link, cut, false, false).unwrap();
        assert!(out.removed.is_empty());
        assert_eq!(out.skipped[0].path, link);
        assert!(real.join("f").exists());
        let none = prune_children(&tmp.path().join("missing"), cut, false, false).unwrap();
        assert_eq!(none, RetentionOutcome::default());
    }
}
