//! A host's MCP output area: where the fetches `/mcp` triggers write, the only place its
//! `read_artifact` and `resources/read` read from (for any authenticated caller, since they
//! all hold the host token), and its pruning by time to live and total size.
//!
//! The output directories are direct children of the root. Pruning removes a child whose
//! newest modification time is older than the time to live, then, while the children
//! together are larger than the cap, the oldest ones, never one a fetch still in flight may
//! be writing (modified after the oldest in-flight fetch began).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use crate::error::AfError;
use crate::profile;

/// Default time to live of an output directory.
pub const DEFAULT_TTL: Duration = Duration::from_secs(24 * 60 * 60);
/// Default cap of the whole area, in bytes (1 GiB).
pub const DEFAULT_MAX_BYTES: u64 = 1024 * 1024 * 1024;

/// The output area and its limits.
#[derive(Debug)]
pub struct ArtifactArea {
    root: PathBuf,
    ttl: Duration,
    max_bytes: u64,
    /// Start times of the fetches in flight.
    in_flight: Mutex<Vec<(u64, SystemTime)>>,
    next_id: std::sync::atomic::AtomicU64,
    /// Woken when a fetch ends, so the cap is enforced right after it.
    pub(crate) fetched: tokio::sync::Notify,
}

/// How far before a fetch began its files may appear to have been written.
const BUSY_MARGIN: Duration = Duration::from_secs(2);

/// What one pruning pass removed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Pruned {
    /// The directories (or stray files) removed.
    pub removed: Vec<PathBuf>,
    /// Their bytes.
    pub bytes: u64,
}

/// Marks a fetch in flight until dropped (then wakes the pruner).
pub struct InFlight {
    area: Arc<ArtifactArea>,
    id: u64,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Ok(mut v) = self.area.in_flight.lock() {
            v.retain(|(id, _)| *id != self.id);
        }
        self.area.fetched.notify_one();
    }
}

impl ArtifactArea {
    /// The area at `root` (created 0700 if missing), with a time to live and a size cap in
    /// bytes (0: no cap).
    pub fn open(root: &Path, ttl: Duration, max_bytes: u64) -> Result<ArtifactArea, AfError> {
        crate::fsutil::create_private_dir_all(root)?;
        crate::fsutil::ensure_owned_private_dir(root)?;
        let root = root
            .canonicalize()
            .map_err(|e| AfError::io(format_args!("resolve {}", root.display()), &e))?;
        Ok(ArtifactArea {
            root,
            ttl,
            max_bytes,
            in_flight: Mutex::new(Vec::new()),
            next_id: std::sync::atomic::AtomicU64::new(0),
            fetched: tokio::sync::Notify::new(),
        })
    }

    /// The (canonical) root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The time to live.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The size cap (0: none).
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// Count a fetch as in flight until the guard is dropped.
    pub fn begin(self: &Arc<Self>) -> InFlight {
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Ok(mut v) = self.in_flight.lock() {
            v.push((id, SystemTime::now()));
        }
        InFlight {
            area: Arc::clone(self),
            id,
        }
    }

    /// The output directories, newest first.
    pub fn dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<(SystemTime, PathBuf)> = children(&self.root)
            .into_iter()
            .filter(|(_, meta)| meta.is_dir())
            .map(|(p, meta)| (profile::newest_mtime(&p, &meta), p))
            .collect();
        dirs.sort_by_key(|d| std::cmp::Reverse(d.0));
        dirs.into_iter().map(|(_, p)| p).collect()
    }

    /// One pruning pass: the time to live, then the size cap.
    pub fn prune(&self) -> Result<Pruned, AfError> {
        let mut out = Pruned::default();
        let cutoff = SystemTime::now()
            .checked_sub(self.ttl)
            .unwrap_or(SystemTime::UNIX_EPOCH);
        let aged = profile::prune_children(&self.root, cutoff, false, true)?;
        for r in aged.removed {
            out.bytes += r.size_bytes;
            out.removed.push(r.path);
        }
        if self.max_bytes == 0 {
            return Ok(out);
        }
        let busy_since = self
            .in_flight
            .lock()
            .ok()
            .and_then(|v| v.iter().map(|(_, t)| *t).min())
            // File times come from a coarser clock than `SystemTime::now()`: a file written
            // just after a fetch began may carry a slightly earlier time.
            .map(|t| t.checked_sub(BUSY_MARGIN).unwrap_or(t));
        let mut entries: Vec<(SystemTime, u64, PathBuf, bool)> = children(&self.root)
            .into_iter()
            .filter(|(_, meta)| !meta.file_type().is_symlink())
            .map(|(p, meta)| {
                let size = if meta.is_dir() {
                    profile::dir_size(&p)
                } else {
                    meta.len()
                };
                (profile::newest_mtime(&p, &meta), size, p, meta.is_dir())
            })
            .collect();
        let mut total: u64 = entries.iter().map(|e| e.1).sum();
        entries.sort_by_key(|e| e.0);
        for (mtime, size, path, is_dir) in entries {
            if total <= self.max_bytes {
                break;
            }
            if busy_since.is_some_and(|since| mtime >= since) {
                continue;
            }
            let removed = if is_dir {
                fs::remove_dir_all(&path)
            } else {
                fs::remove_file(&path)
            };
            if removed.is_ok() {
                total = total.saturating_sub(size);
                out.bytes += size;
                out.removed.push(path);
            }
        }
        Ok(out)
    }

    /// How often the pruner looks without being woken: a quarter of the time to live,
    /// between one second and a minute.
    pub fn interval(&self) -> Duration {
        (self.ttl / 4).clamp(Duration::from_secs(1), Duration::from_secs(60))
    }
}

/// Prune `area` now, after every fetch and every [`ArtifactArea::interval`], until the
/// returned task is aborted. `report` hears of every pass that removed something.
pub fn spawn_pruner(
    area: Arc<ArtifactArea>,
    report: impl Fn(&Pruned) + Send + Sync + 'static,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let pass = Arc::clone(&area);
            if let Ok(Ok(pruned)) = tokio::task::spawn_blocking(move || pass.prune()).await {
                if !pruned.removed.is_empty() {
                    report(&pruned);
                }
            }
            tokio::select! {
                _ = area.fetched.notified() => {}
                _ = tokio::time::sleep(area.interval()) => {}
            }
        }
    })
}

/// The direct children of `dir` with their (not followed) metadata.
fn children(dir: &Path) -> Vec<(PathBuf, fs::Metadata)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            fs::symlink_metadata(&p).ok().map(|m| (p, m))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn age(path: &Path, secs: u64) {
        let t = SystemTime::now() - Duration::from_secs(secs);
        fs::File::open(path).unwrap().set_modified(t).unwrap();
    }

    fn out_dir(root: &Path, name: &str, bytes: usize, secs_old: u64) -> PathBuf {
        let d = root.join(name);
        fs::create_dir(&d).unwrap();
        fs::write(d.join("body.html"), vec![b'x'; bytes]).unwrap();
        age(&d.join("body.html"), secs_old);
        age(&d, secs_old);
        d
    }

    #[test]
    fn the_time_to_live_then_the_cap_oldest_first() {
        let tmp = tempfile::tempdir().unwrap();
        let area = ArtifactArea::open(&tmp.path().join("mcp-out"), Duration::from_secs(3600), 250)
            .unwrap();
        let root = area.root().to_path_buf();
        let expired = out_dir(&root, "expired", 10, 7200);
        let old = out_dir(&root, "old", 100, 600);
        let mid = out_dir(&root, "mid", 100, 300);
        let new = out_dir(&root, "new", 100, 10);
        assert_eq!(
            area.dirs(),
            [new.clone(), mid.clone(), old.clone(), expired.clone()]
        );
        let pruned = area.prune().unwrap();
        // The expired one by age, then the oldest until 200 <= 250.
        assert_eq!(pruned.removed, [expired.clone(), old.clone()]);
        assert_eq!(pruned.bytes, 110);
        assert!(mid.exists() && new.exists());
        assert_eq!(area.prune().unwrap(), Pruned::default());
    }

    #[test]
    fn the_cap_spares_what_a_fetch_in_flight_may_write() {
        let tmp = tempfile::tempdir().unwrap();
        let area = Arc::new(
            ArtifactArea::open(&tmp.path().join("mcp-out"), Duration::from_secs(3600), 50).unwrap(),
        );
        let root = area.root().to_path_buf();
        let old = out_dir(&root, "old", 100, 600);
        let guard = area.begin();
        let busy = root.join("busy");
        fs::create_dir(&busy).unwrap();
        fs::write(busy.join("body.html"), vec![b'x'; 100]).unwrap();
        assert_eq!(area.prune().unwrap().removed, [old]);
        assert!(busy.exists(), "in flight: kept over the cap");
        drop(guard);
        assert_eq!(area.prune().unwrap().removed, [busy]);
        // No cap: nothing but age counts.
        let open = ArtifactArea::open(&root, Duration::from_secs(3600), 0).unwrap();
        out_dir(&root, "big", 1000, 10);
        assert!(open.prune().unwrap().removed.is_empty());
    }
}
