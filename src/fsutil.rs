//! Private, atomic file-system writes shared by artifacts, cookie jars, profiles and skills.
//!
//! Directories are created 0700 and files 0600; a file is written to a fresh temporary
//! name in its final directory and renamed into place, so readers never see a partial
//! file and a pre-planted symlink at the final name is replaced, never followed.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::{AfError, ErrorCode};

/// Create `dir` and any missing parents with mode 0700. An existing path must be a directory.
pub fn create_private_dir_all(dir: &Path) -> Result<(), AfError> {
    match fs::symlink_metadata(dir) {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(meta) if meta.file_type().is_symlink() => {
            // A symlink the user named is honoured only if it leads to a directory.
            return match fs::metadata(dir) {
                Ok(m) if m.is_dir() => Ok(()),
                _ => Err(AfError::invalid(format!(
                    "{} is a symlink that does not lead to a directory",
                    dir.display()
                ))),
            };
        }
        Ok(_) => {
            return Err(AfError::invalid(format!(
                "{} exists and is not a directory",
                dir.display()
            )))
        }
        Err(_) => {}
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists
                || e.raw_os_error() == Some(libc::ENOTDIR)
            {
                AfError::invalid(format!("cannot create directory {}: {e}", dir.display()))
            } else {
                AfError::io(format_args!("create directory {}", dir.display()), &e)
            }
        })
}

/// Create exactly `dir` (its parent must exist) with mode 0700; fails if it already exists.
pub fn create_fresh_private_dir(dir: &Path) -> Result<(), AfError> {
    fs::DirBuilder::new()
        .mode(0o700)
        .create(dir)
        .map_err(|e| AfError::io(format_args!("create directory {}", dir.display()), &e))
}

/// Ensure a shared-temp parent such as `/tmp/afhttp-out` is a real directory owned by us
/// and not writable by others, creating it 0700 if missing.
pub fn ensure_owned_private_dir(dir: &Path) -> Result<(), AfError> {
    use std::os::unix::fs::MetadataExt;
    if let Err(e) = fs::DirBuilder::new().mode(0o700).create(dir) {
        if e.kind() != std::io::ErrorKind::AlreadyExists {
            return Err(AfError::io(
                format_args!("create directory {}", dir.display()),
                &e,
            ));
        }
    }
    let meta = fs::symlink_metadata(dir)
        .map_err(|e| AfError::io(format_args!("inspect {}", dir.display()), &e))?;
    let uid = nix::unistd::geteuid().as_raw();
    if !meta.is_dir() || meta.uid() != uid {
        return Err(AfError::new(
            ErrorCode::IoError,
            format!(
                "{} is not a directory owned by this user; refusing to write artifacts there",
                dir.display()
            ),
        )
        .with_hint("pass --out <dir> or remove the foreign path"));
    }
    if meta.mode() & 0o022 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
            .map_err(|e| AfError::io(format_args!("chmod {}", dir.display()), &e))?;
    }
    Ok(())
}

/// A file being written privately in its final directory; [`PrivateFile::commit`] renames
/// it into place, dropping it without commit removes it.
pub struct PrivateFile {
    temp: std::io::BufWriter<tempfile::NamedTempFile>,
    target: PathBuf,
}

impl PrivateFile {
    /// Start writing `dir/name`.
    pub fn create(dir: &Path, name: &str) -> Result<Self, AfError> {
        let temp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".partial")
            .permissions(fs::Permissions::from_mode(0o600))
            .tempfile_in(dir)
            .map_err(|e| AfError::io(format_args!("create file in {}", dir.display()), &e))?;
        Ok(PrivateFile {
            temp: std::io::BufWriter::with_capacity(256 * 1024, temp),
            target: dir.join(name),
        })
    }

    /// Append bytes.
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<(), AfError> {
        let target = &self.target;
        self.temp
            .write_all(bytes)
            .map_err(|e| AfError::io(format_args!("write {}", target.display()), &e))
    }

    /// Rename into place (no fsync: artifacts favour speed); returns the final path.
    pub fn commit(self) -> Result<PathBuf, AfError> {
        self.finish(false)
    }

    /// Flush to stable storage, then rename into place (state files: jars, metadata, tokens).
    pub fn commit_durable(self) -> Result<PathBuf, AfError> {
        self.finish(true)
    }

    fn finish(self, durable: bool) -> Result<PathBuf, AfError> {
        let target = self.target;
        let temp = self
            .temp
            .into_inner()
            .map_err(|e| AfError::io(format_args!("write {}", target.display()), e.error()))?;
        if durable {
            temp.as_file()
                .sync_all()
                .map_err(|e| AfError::io(format_args!("sync {}", target.display()), &e))?;
        }
        temp.persist(&target)
            .map_err(|e| AfError::io(format_args!("rename into {}", target.display()), &e.error))?;
        Ok(target)
    }
}

/// Write `bytes` to `dir/name` atomically and durably with mode 0600; returns the final path.
pub fn write_private_file(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf, AfError> {
    let mut f = PrivateFile::create(dir, name)?;
    f.write_all(bytes)?;
    f.commit_durable()
}

/// Write an artifact to `dir/name` atomically with mode 0600 (no fsync); returns the final path.
pub fn write_private_artifact(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf, AfError> {
    let mut f = PrivateFile::create(dir, name)?;
    f.write_all(bytes)?;
    f.commit()
}

/// Make a path absolute against the current directory without touching the file system.
pub fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|cwd| cwd.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    }
}

/// A new temp directory (0700) named `prefix` and six random characters, whose path has at
/// most `max` bytes, for Unix sockets (at most 107 bytes) to go in it: in the user's temp dir
/// when it leaves room, else in `/tmp` (a deep `TMPDIR`: a private temp dir, a CI workspace).
pub fn short_tempdir(prefix: &str, max: usize) -> std::io::Result<tempfile::TempDir> {
    let mut last = None;
    for root in short_tempdir_roots(&std::env::temp_dir(), prefix, max) {
        match tempfile::Builder::new().prefix(prefix).tempdir_in(&root) {
            Ok(dir) if dir.path().as_os_str().len() <= max => return Ok(dir),
            Ok(_) => {}
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        std::io::Error::other(format!("no temp dir leaves a path of at most {max} bytes"))
    }))
}

/// Where [`short_tempdir`] tries, in order: the temp dir `tmp` when a directory in it fits
/// `max`, then `/tmp`.
fn short_tempdir_roots(tmp: &Path, prefix: &str, max: usize) -> Vec<PathBuf> {
    // `/`, the prefix and tempfile's six random characters.
    let fits = tmp.as_os_str().len() + 1 + prefix.len() + 6 <= max;
    let system = PathBuf::from("/tmp");
    match fits && tmp != system {
        true => vec![tmp.to_path_buf(), system],
        false => vec![system],
    }
}

/// The first `len` bytes of `file` as a stream of chunks of at most `chunk` bytes: exactly
/// what a `Content-Length` announced, even if the file grows while it streams.
pub fn file_chunks(
    file: tokio::fs::File,
    len: u64,
    chunk: usize,
) -> impl futures_util::Stream<Item = std::io::Result<bytes::Bytes>> + Send + 'static {
    use tokio::io::AsyncReadExt;
    futures_util::stream::unfold(Some(file.take(len)), move |reader| async move {
        let mut reader = reader?;
        let mut buf = vec![0u8; chunk];
        match reader.read(&mut buf).await {
            Ok(0) => None,
            Ok(n) => {
                buf.truncate(n);
                Some((Ok(bytes::Bytes::from(buf)), Some(reader)))
            }
            Err(e) => Some((Err(e), None)),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn a_deep_temp_dir_gives_way_to_tmp() {
        let short = Path::new("/var/tmp/u");
        let roots = |tmp: &str| short_tempdir_roots(Path::new(tmp), "afhttp-x-", 40);
        assert_eq!(roots("/var/tmp/u"), [short, Path::new("/tmp")]);
        // The fresh-machine script's TMPDIR plus a test fixture's.
        let deep = "/var/tmp/afhttp-fresh-AbCdEf/tmp/.tmpAbCdEf/tmp";
        assert_eq!(roots(deep), [Path::new("/tmp")]);
        assert_eq!(roots("/tmp"), [Path::new("/tmp")]);
        let dir = short_tempdir("afhttp-x-", 40).unwrap();
        assert!(
            dir.path().as_os_str().len() <= 40,
            "{}",
            dir.path().display()
        );
        assert!(dir.path().is_dir());
    }

    #[test]
    fn dirs_0700_files_0600_atomic() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/b");
        create_private_dir_all(&dir).unwrap();
        assert_eq!(fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
        let p = write_private_file(&dir, "x.txt", b"hi").unwrap();
        assert_eq!(fs::metadata(&p).unwrap().mode() & 0o777, 0o600);
        assert_eq!(fs::read(&p).unwrap(), b"hi");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
    }

    #[test]
    fn planted_symlink_is_replaced_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let victim = tmp.path().join("victim");
        fs::write(&victim, b"keep").unwrap();
        std::os::unix::fs::symlink(&victim, tmp.path().join("body.html")).unwrap();
        write_private_file(tmp.path(), "body.html", b"new").unwrap();
        assert_eq!(fs::read(&victim).unwrap(), b"keep");
        assert!(!fs::symlink_metadata(tmp.path().join("body.html"))
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[test]
    fn dropped_file_leaves_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        {
            let mut f = PrivateFile::create(tmp.path(), "big.bin").unwrap();
            f.write_all(b"partial").unwrap();
        }
        assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 0);
    }

    #[test]
    fn out_pointing_at_file_is_invalid() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("file");
        fs::write(&f, b"").unwrap();
        assert_eq!(
            create_private_dir_all(&f).unwrap_err().code,
            ErrorCode::InvalidArgument
        );
    }
}
