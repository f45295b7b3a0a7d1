//! The profile a host runs on: an ephemeral temp dir removed on exit, or a persistent
//! profile held under its lock for the host's lifetime.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::error::{AfError, ErrorCode};
use crate::profile::{self, Backend, ProfileDir, ProfileLock, ProfileName};

/// The active profile of a host.
pub enum ActiveProfile {
    /// `--profile -` (or omitted): a private temp dir, deleted when dropped.
    Ephemeral(tempfile::TempDir),
    /// A named profile under the store, locked while held.
    Persistent {
        /// Where it lives.
        dir: ProfileDir,
        /// Released when dropped.
        lock: ProfileLock,
    },
}

impl ActiveProfile {
    /// Open the profile named by `--profile` (`None` or `-` is ephemeral, in the temp dir);
    /// a persistent one is in the profile store `env` (the front end's snapshot) locates.
    pub fn open(
        name: Option<&str>,
        backend: Backend,
        env: &crate::env::Snapshot,
    ) -> Result<ActiveProfile, AfError> {
        ActiveProfile::open_in(name, backend, None, env)
    }

    /// [`ActiveProfile::open`], with an ephemeral profile created under `ephemeral_root`
    /// when given (the temp dir if that fails).
    pub fn open_in(
        name: Option<&str>,
        backend: Backend,
        ephemeral_root: Option<&Path>,
        env: &crate::env::Snapshot,
    ) -> Result<ActiveProfile, AfError> {
        match name {
            None | Some(profile::EPHEMERAL) => {
                let mut builder = tempfile::Builder::new();
                builder.prefix("afhttp-profile-");
                let dir = ephemeral_root
                    .and_then(|root| builder.tempdir_in(root).ok())
                    .map_or_else(|| builder.tempdir(), Ok)
                    .map_err(|e| AfError::io("create an ephemeral profile", &e))?;
                Ok(ActiveProfile::Ephemeral(dir))
            }
            Some(raw) => {
                if !backend.supports_persistent_profiles() {
                    return Err(AfError::new(
                        ErrorCode::BackendUnsupported,
                        format!(
                            "the {} backend does not support persistent profiles yet",
                            backend.as_str()
                        ),
                    )
                    .with_hint("use --profile - (ephemeral)"));
                }
                let name = ProfileName::parse(raw)?;
                let root = profile::profiles_root(env)?;
                let dir = profile::open_or_create(&root, backend, &name)?;
                let lock = dir.try_lock()?;
                // The lock is ours, so a browser still on the directory is a dead host's.
                crate::host::orphans::stop_orphaned_browsers(dir.path());
                dir.touch_last_used()?;
                Ok(ActiveProfile::Persistent { dir, lock })
            }
        }
    }

    /// The browser user-data-dir.
    pub fn path(&self) -> &Path {
        match self {
            ActiveProfile::Ephemeral(t) => t.path(),
            ActiveProfile::Persistent { dir, .. } => dir.path(),
        }
    }

    /// Start deleting an ephemeral profile's files off the async runtime (`None` for a
    /// persistent one, which is kept). Dropping the profile still removes whatever is left.
    pub fn sweep(&self) -> Option<tokio::task::JoinHandle<()>> {
        let ActiveProfile::Ephemeral(dir) = self else {
            return None;
        };
        let path = dir.path().to_path_buf();
        Some(tokio::task::spawn_blocking(move || {
            let _ = std::fs::remove_dir_all(path);
        }))
    }

    /// Where downloads land.
    pub fn downloads_dir(&self) -> PathBuf {
        self.path().join(profile::DOWNLOADS_DIR)
    }

    /// `{kind, name, locked}` for `/health`.
    pub fn describe(&self) -> Value {
        match self {
            ActiveProfile::Ephemeral(_) => {
                json!({"kind": "ephemeral", "name": null, "locked": false})
            }
            ActiveProfile::Persistent { dir, lock } => json!({
                "kind": "persistent",
                "name": dir.name.as_str(),
                "locked": true,
                "lock_owner_pid": lock.owner().pid,
            }),
        }
    }
}
