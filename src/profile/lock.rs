//! The profile lock: `<profile>/afhttp.lock`, held with an exclusive `flock`.
//!
//! `flock` alone decides ownership. After taking it the owner writes
//! `{"pid","started_at_rfc3339","hostname"}` into the same file; that content is the spec's
//! "PID file" and is information only (pids repeat across containers, so it never decides
//! anything). The lock belongs to an open file description, so it is released when the
//! [`ProfileLock`] is dropped or the process dies, and two opens in one process contend.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use serde::{Deserialize, Serialize};

use super::metadata::now_rfc3339;
use crate::error::{AfError, ErrorCode};

/// File name of the lock (and owner record) inside a profile directory.
pub const LOCK_FILE: &str = "afhttp.lock";

/// What the lock owner records about itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockOwner {
    /// Owner process id (in its own pid namespace).
    pub pid: u32,
    /// When the owner took the lock.
    pub started_at_rfc3339: String,
    /// Owner's hostname, to tell containers apart.
    #[serde(default)]
    pub hostname: String,
}

/// A held profile lock; dropping it clears the owner record and releases the `flock`.
#[derive(Debug)]
pub struct ProfileLock {
    file: Flock<File>,
    path: PathBuf,
    owner: LockOwner,
}

impl ProfileLock {
    /// Path of the lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The owner record this process wrote.
    pub fn owner(&self) -> &LockOwner {
        &self.owner
    }
}

impl Drop for ProfileLock {
    fn drop(&mut self) {
        // Clear the record before unlocking so a stale pid never outlives the lock.
        let _ = self.file.set_len(0);
    }
}

/// Whether a profile is locked, and by whom when the owner recorded it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LockStatus {
    /// Someone holds the lock (or it could not be probed; see [`lock_status`]).
    pub locked: bool,
    /// The owner's recorded pid, when locked and recorded.
    pub owner_pid: Option<u32>,
    /// The owner's recorded start time, when locked and recorded.
    pub owner_started_at_rfc3339: Option<String>,
    /// The owner's recorded hostname, when locked and recorded.
    pub owner_hostname: Option<String>,
}

fn open_lock_file(path: &Path, create: bool) -> std::io::Result<File> {
    let mut opts = OpenOptions::new();
    opts.read(true).custom_flags(libc::O_NOFOLLOW);
    if create {
        opts.write(true).create(true).truncate(false).mode(0o600);
    }
    opts.open(path)
}

fn read_owner(path: &Path) -> Option<LockOwner> {
    let mut s = String::new();
    open_lock_file(path, false)
        .ok()?
        .read_to_string(&mut s)
        .ok()?;
    serde_json::from_str(&s).ok()
}

/// This machine's hostname, as a lock owner records it.
pub fn this_hostname() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|p| {
            std::fs::read_to_string(p)
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        })
        .unwrap_or_default()
}

/// Take the exclusive lock of the profile at `profile_dir` without waiting.
///
/// `profile_locked` (naming the recorded owner pid) when another open file description holds
/// it; `io_error` when the lock file cannot be opened.
pub fn try_lock(profile_dir: &Path) -> Result<ProfileLock, AfError> {
    let path = profile_dir.join(LOCK_FILE);
    let file = open_lock_file(&path, true)
        .map_err(|e| AfError::io(format_args!("open {}", path.display()), &e))?;
    let mut file = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(f) => f,
        Err((_, Errno::EWOULDBLOCK)) => return Err(locked_error(profile_dir, &path)),
        Err((_, errno)) => {
            return Err(AfError::io(
                format_args!("lock {}", path.display()),
                &std::io::Error::from(errno),
            ))
        }
    };
    let owner = LockOwner {
        pid: std::process::id(),
        started_at_rfc3339: now_rfc3339(),
        hostname: this_hostname(),
    };
    let record = serde_json::to_vec(&owner)
        .map_err(|e| AfError::new(ErrorCode::IoError, format!("encode lock owner: {e}")))?;
    // Written in place: replacing the file would leave the lock on an unlinked inode.
    file.set_len(0)
        .and_then(|()| file.write_all(&record))
        .map_err(|e| AfError::io(format_args!("write {}", path.display()), &e))?;
    Ok(ProfileLock { file, path, owner })
}

/// The owner record of a lock someone else holds. The holder writes its record just after
/// taking the lock, so a racing reader can see an empty file or the previous (dead) owner's
/// record; it retries briefly for a record naming a live process on this machine.
fn current_owner(path: &Path) -> Option<LockOwner> {
    let here = this_hostname();
    let deadline = Instant::now() + Duration::from_millis(500);
    loop {
        let owner = read_owner(path);
        let settled = match &owner {
            Some(o) => o.hostname != here || Path::new(&format!("/proc/{}", o.pid)).exists(),
            None => false,
        };
        if settled || Instant::now() >= deadline {
            return owner;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn locked_error(profile_dir: &Path, path: &Path) -> AfError {
    let who = match current_owner(path) {
        Some(o) if o.hostname.is_empty() => format!("pid {}", o.pid),
        Some(o) => format!("pid {} on {}", o.pid, o.hostname),
        None => "another process".to_string(),
    };
    AfError::new(
        ErrorCode::ProfileLocked,
        format!("profile {} is locked by {who}", profile_dir.display()),
    )
    .with_hint("stop the host using it, or use another profile name")
}

/// Probe whether the profile at `profile_dir` is locked, without keeping the lock.
///
/// The probe takes and releases a non-blocking exclusive lock on a separate open file
/// description. A missing lock file means unlocked; a lock file that cannot be opened or
/// probed is reported as locked with no owner, the cautious answer for deletion.
pub fn lock_status(profile_dir: &Path) -> LockStatus {
    let path = profile_dir.join(LOCK_FILE);
    let file = match open_lock_file(&path, false) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return LockStatus::default(),
        Err(_) => {
            return LockStatus {
                locked: true,
                ..LockStatus::default()
            }
        }
    };
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(probe) => {
            drop(probe);
            LockStatus::default()
        }
        Err((_, errno)) => {
            let owner = if errno == Errno::EWOULDBLOCK {
                current_owner(&path)
            } else {
                None
            };
            LockStatus {
                locked: true,
                owner_pid: owner.as_ref().map(|o| o.pid),
                owner_started_at_rfc3339: owner.as_ref().map(|o| o.started_at_rfc3339.clone()),
                owner_hostname: owner.map(|o| o.hostname).filter(|h| !h.is_empty()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contention_within_one_process() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(!lock_status(tmp.path()).locked);

        let held = try_lock(tmp.path()).unwrap();
        assert_eq!(held.owner().pid, std::process::id());
        let err = try_lock(tmp.path()).unwrap_err();
        assert_eq!(err.code, ErrorCode::ProfileLocked);
        assert!(err.message.contains(&std::process::id().to_string()));

        let status = lock_status(tmp.path());
        assert!(status.locked);
        assert_eq!(status.owner_pid, Some(std::process::id()));
        assert!(status.owner_started_at_rfc3339.is_some());
        // The probe must not have released or stolen the held lock.
        assert!(try_lock(tmp.path()).is_err());

        drop(held);
        let status = lock_status(tmp.path());
        assert_eq!(status, LockStatus::default());
        assert_eq!(std::fs::read(tmp.path().join(LOCK_FILE)).unwrap().len(), 0);
        let again = try_lock(tmp.path()).unwrap();
        drop(again);
    }

    /// A racer that sees the lock before the holder wrote its record (an empty file, or a
    /// dead previous owner's record) waits for the live holder's record.
    #[test]
    fn a_racer_names_the_holder_written_just_after_locking() {
        let tmp = tempfile::tempdir().unwrap();
        let held = try_lock(tmp.path()).unwrap();
        let dead = LockOwner {
            pid: u32::MAX - 1,
            started_at_rfc3339: now_rfc3339(),
            hostname: this_hostname(),
        };
        std::fs::write(held.path(), serde_json::to_vec(&dead).unwrap()).unwrap();
        let path = held.path().to_path_buf();
        let writer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(60));
            let live = serde_json::to_vec(&LockOwner {
                pid: std::process::id(),
                started_at_rfc3339: now_rfc3339(),
                hostname: this_hostname(),
            })
            .unwrap();
            std::fs::write(path, live).unwrap();
        });
        let err = try_lock(tmp.path()).unwrap_err();
        writer.join().unwrap();
        assert!(
            err.message.contains(&format!("pid {}", std::process::id())),
            "{}",
            err.message
        );
    }

    #[test]
    fn lock_file_is_private_and_not_followed() {
        use std::os::unix::fs::{symlink, MetadataExt};
        let tmp = tempfile::tempdir().unwrap();
        let lock = try_lock(tmp.path()).unwrap();
        let mode = std::fs::metadata(lock.path()).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o600);
        drop(lock);

        let other = tempfile::tempdir().unwrap();
        let victim = other.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        symlink(&victim, other.path().join(LOCK_FILE)).unwrap();
        assert_eq!(try_lock(other.path()).unwrap_err().code, ErrorCode::IoError);
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
    }
}
