//! Where `POST /uploads` puts drivers' files: the store the listener state owns (the
//! transfer routes write into it).

use std::path::PathBuf;
use std::sync::Mutex;

use crate::error::AfError;

/// Files drivers uploaded, in a private temp directory created on first use and removed
/// when the host stops. They outlive the upload call: a page reads an attached file lazily
/// (on submit), so deleting it after `DOM.setFileInputFiles` would break the form.
#[derive(Debug, Default)]
pub struct UploadStore {
    dir: Mutex<Option<tempfile::TempDir>>,
}

impl UploadStore {
    /// The store's directory, created (0700, in `TMPDIR`) on first use.
    pub(super) fn dir(&self) -> Result<PathBuf, AfError> {
        let mut slot = self.dir.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(d) = slot.as_ref() {
            return Ok(d.path().to_path_buf());
        }
        let d = tempfile::Builder::new()
            .prefix("afhttp-uploads-")
            .tempdir()
            .map_err(|e| AfError::io("create the upload directory", &e))?;
        let path = d.path().to_path_buf();
        *slot = Some(d);
        Ok(path)
    }

    /// Delete every stored upload (host shutdown).
    pub fn remove_all(&self) {
        let taken = self.dir.lock().unwrap_or_else(|p| p.into_inner()).take();
        drop(taken);
    }
}
