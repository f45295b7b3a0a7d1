//! The artifact directory of one fetch, and per-attempt rollback so a failed or retried
//! attempt leaves no file behind.

use std::path::{Path, PathBuf};

use crate::error::AfError;
use crate::fsutil;

/// Where one fetch writes its artifacts.
#[derive(Debug)]
pub struct OutDir {
    path: PathBuf,
    /// True when afhttp chose the directory (default temp location) and created it.
    owned: bool,
    /// Files committed by the current attempt.
    attempt_files: Vec<PathBuf>,
}

impl OutDir {
    /// Resolve `--out` (created 0700 if missing) or `<root>/<request_id>/`, `root` being
    /// `out_root` or `<tmp>/afhttp-out`.
    pub fn prepare(
        out: Option<&Path>,
        out_root: Option<&Path>,
        request_id: &str,
    ) -> Result<OutDir, AfError> {
        match out {
            Some(dir) => {
                let path = fsutil::absolute(dir);
                fsutil::create_private_dir_all(&path)?;
                Ok(OutDir {
                    path,
                    owned: false,
                    attempt_files: Vec::new(),
                })
            }
            None => {
                let parent = out_root
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|| std::env::temp_dir().join("afhttp-out"));
                fsutil::ensure_owned_private_dir(&parent)?;
                let path = parent.join(request_id);
                fsutil::create_fresh_private_dir(&path)?;
                Ok(OutDir {
                    path,
                    owned: true,
                    attempt_files: Vec::new(),
                })
            }
        }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Start an attempt: forget the previous attempt's successful files.
    pub fn begin_attempt(&mut self) {
        self.attempt_files.clear();
    }

    /// Write a whole file for the current attempt.
    pub fn write(&mut self, name: &str, bytes: &[u8]) -> Result<PathBuf, AfError> {
        let p = fsutil::write_private_artifact(&self.path, name, bytes)?;
        self.attempt_files.push(p.clone());
        Ok(p)
    }

    /// Write a whole file into the private subdirectory `sub` (created 0700) for the current
    /// attempt.
    pub fn write_in(&mut self, sub: &str, name: &str, bytes: &[u8]) -> Result<PathBuf, AfError> {
        let dir = self.path.join(sub);
        fsutil::create_private_dir_all(&dir)?;
        let p = fsutil::write_private_artifact(&dir, name, bytes)?;
        self.attempt_files.push(p.clone());
        Ok(p)
    }

    /// Start a streamed file for the current attempt.
    pub fn stream(&self, name: &str) -> Result<fsutil::PrivateFile, AfError> {
        fsutil::PrivateFile::create(&self.path, name)
    }

    /// Start a streamed file in the private subdirectory `sub` (created 0700).
    pub fn stream_in(&self, sub: &str, name: &str) -> Result<fsutil::PrivateFile, AfError> {
        let dir = self.path.join(sub);
        fsutil::create_private_dir_all(&dir)?;
        fsutil::PrivateFile::create(&dir, name)
    }

    /// Record a streamed file that was committed.
    pub fn committed(&mut self, path: PathBuf) {
        self.attempt_files.push(path);
    }

    /// Remove what the current attempt wrote.
    pub fn rollback_attempt(&mut self) {
        for p in self.attempt_files.drain(..) {
            let _ = std::fs::remove_file(p);
        }
    }

    /// After a failed fetch: remove a directory afhttp created if nothing is in it.
    pub fn cleanup_if_empty(&self) {
        if self.owned {
            let _ = std::fs::remove_dir(&self.path);
        }
    }
}
