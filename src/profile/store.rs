//! Where profiles live: `<root>/<backend>/<name>/`, creation, lookup and enumeration.

use std::fs;
use std::path::{Path, PathBuf};

use super::lock::{try_lock, ProfileLock, LOCK_FILE};
use super::metadata::{
    read_metadata, touch_last_used, write_metadata, ProfileMetadata, METADATA_FILE,
};
use super::name::{Backend, ProfileName};
use crate::env;
use crate::error::{AfError, ErrorCode};
use crate::fsutil;

/// Cookie jar file name inside a profile directory.
pub const COOKIE_JAR_FILE: &str = "cookies.jar.json";

/// Directory (inside a profile) where the host captures downloads.
pub const DOWNLOADS_DIR: &str = "downloads";

/// The profile root: `$XDG_DATA_HOME/afhttp/profiles`, else `$HOME/.local/share/afhttp/profiles`.
///
/// A relative `XDG_DATA_HOME` is ignored, as the XDG spec asks. `invalid_argument` when
/// neither variable of `env` (the front end's snapshot) gives an absolute path.
pub fn profiles_root(env: &env::Snapshot) -> Result<PathBuf, AfError> {
    let data = env
        .get(env::XDG_DATA_HOME)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            env.get(env::HOME)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|h| h.join(".local/share"))
        })
        .ok_or_else(|| {
            AfError::invalid("cannot locate the profile store: neither XDG_DATA_HOME nor HOME is an absolute path")
                .with_hint("set HOME or XDG_DATA_HOME")
        })?;
    Ok(data.join("afhttp").join("profiles"))
}

/// One persistent profile directory in the store (it may or may not exist yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileDir {
    /// Backend it is scoped to.
    pub backend: Backend,
    /// Logical name.
    pub name: ProfileName,
    /// `<root>/<backend>/<name>`.
    pub path: PathBuf,
}

impl ProfileDir {
    /// The profile at `<root>/<backend>/<name>` (no I/O).
    pub fn at(root: &Path, backend: Backend, name: ProfileName) -> Self {
        let path = root.join(backend.as_str()).join(name.as_str());
        ProfileDir {
            backend,
            name,
            path,
        }
    }

    /// The browser user-data-dir and the directory everything else lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `<profile>/afhttp.lock` (flock plus owner pid record).
    pub fn lock_path(&self) -> PathBuf {
        self.path.join(LOCK_FILE)
    }

    /// `<profile>/afhttp-profile.json`.
    pub fn metadata_path(&self) -> PathBuf {
        self.path.join(METADATA_FILE)
    }

    /// `<profile>/cookies.jar.json`, the profile's implicit cookie jar.
    pub fn cookie_jar_path(&self) -> PathBuf {
        self.path.join(COOKIE_JAR_FILE)
    }

    /// `<profile>/downloads`, where the host captures downloads.
    pub fn downloads_dir(&self) -> PathBuf {
        self.path.join(DOWNLOADS_DIR)
    }

    /// Take this profile's exclusive lock ([`super::try_lock`]).
    pub fn try_lock(&self) -> Result<ProfileLock, AfError> {
        try_lock(&self.path)
    }

    /// Record a use now ([`super::touch_last_used`]).
    pub fn touch_last_used(&self) -> Result<ProfileMetadata, AfError> {
        touch_last_used(&self.path, self.backend, &self.name)
    }

    /// Whether the directory exists as a real directory (a symlink does not count).
    pub fn exists(&self) -> bool {
        fs::symlink_metadata(&self.path).is_ok_and(|m| m.is_dir())
    }
}

/// Refuse a profile path that is a symlink or not a directory; `Ok(false)` when absent.
fn check_real_dir(path: &Path) -> Result<bool, AfError> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => Ok(true),
        Ok(m) if m.file_type().is_symlink() => Err(AfError::invalid(format!(
            "profile path {} is a symlink; refusing to use it",
            path.display()
        ))
        .with_hint("profiles must be real directories inside the profile store")),
        Ok(_) => Err(AfError::invalid(format!(
            "profile path {} exists and is not a directory",
            path.display()
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(AfError::io(format_args!("inspect {}", path.display()), &e)),
    }
}

/// Open the persistent profile `<root>/<backend>/<name>`, creating it (0700) with fresh
/// metadata on first use; existing metadata must match (`profile_mismatch`), missing
/// metadata is written. Does not lock: callers take [`super::try_lock`] next.
pub fn open_or_create(
    root: &Path,
    backend: Backend,
    name: &ProfileName,
) -> Result<ProfileDir, AfError> {
    let dir = ProfileDir::at(root, backend, name.clone());
    if !check_real_dir(&dir.path)? {
        fsutil::create_private_dir_all(&dir.path)?;
        // A racing creator may have planted a symlink between the check and the create.
        check_real_dir(&dir.path)?;
    }
    match read_metadata(&dir.path)? {
        Some(meta) => meta.validate(backend)?,
        None => write_metadata(&dir.path, &ProfileMetadata::new(backend, name))?,
    }
    Ok(dir)
}

/// Find an existing profile by name: under `backend` when given, otherwise under whichever
/// single backend has it. `profile_not_found` when none; `invalid_argument` naming the
/// candidates when several backends have it; a symlinked profile path is refused.
pub fn resolve(
    root: &Path,
    name: &ProfileName,
    backend: Option<Backend>,
) -> Result<ProfileDir, AfError> {
    if let Some(b) = backend {
        let dir = ProfileDir::at(root, b, name.clone());
        return if check_real_dir(&dir.path)? {
            Ok(dir)
        } else {
            Err(not_found(name, Some(b)))
        };
    }
    let mut found = Vec::new();
    for b in Backend::ALL {
        let dir = ProfileDir::at(root, *b, name.clone());
        if check_real_dir(&dir.path)? {
            found.push(dir);
        }
    }
    match found.len() {
        0 => Err(not_found(name, None)),
        1 => Ok(found.remove(0)),
        _ => {
            let names: Vec<&str> = found.iter().map(|d| d.backend.as_str()).collect();
            Err(AfError::invalid(format!(
                "profile {:?} exists under several backends: {}",
                name.as_str(),
                names.join(", ")
            ))
            .with_hint(format!("pass --backend {}", names.join("|"))))
        }
    }
}

fn not_found(name: &ProfileName, backend: Option<Backend>) -> AfError {
    let where_ = backend.map_or(String::new(), |b| format!(" under backend {b}"));
    AfError::new(
        ErrorCode::ProfileNotFound,
        format!("no persistent profile named {:?}{where_}", name.as_str()),
    )
    .with_hint("run `afhttp profile list` to see the profiles")
}

/// Every persistent profile directory in the store, sorted by backend then name.
///
/// Entries that are not real directories (symlinks, files) or whose names are not valid
/// profile names are skipped, so nothing outside the store is ever reported or touched.
pub fn list_profiles(root: &Path, backend: Option<Backend>) -> Result<Vec<ProfileDir>, AfError> {
    let mut out = Vec::new();
    let backends: Vec<Backend> = backend.map_or_else(|| Backend::ALL.to_vec(), |b| vec![b]);
    for b in backends {
        let dir = root.join(b.as_str());
        for entry in read_dir_or_empty(&dir)? {
            let Some(name) = entry.to_str().and_then(|s| ProfileName::parse(s).ok()) else {
                continue;
            };
            let pd = ProfileDir::at(root, b, name);
            if pd.exists() {
                out.push(pd);
            }
        }
    }
    out.sort_by(|a, b| (a.backend, &a.name).cmp(&(b.backend, &b.name)));
    Ok(out)
}

/// Old unscoped `<root>/<name>` directories (not a backend name): deprecated data that
/// `list` reports by name but never uses or migrates.
pub fn deprecated_unscoped(root: &Path) -> Result<Vec<PathBuf>, AfError> {
    let mut out: Vec<PathBuf> = read_dir_or_empty(root)?
        .into_iter()
        .filter(|n| {
            n.to_str()
                .is_none_or(|s| Backend::ALL.iter().all(|b| b.as_str() != s))
        })
        .map(|n| root.join(n))
        .filter(|p| fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
        .collect();
    out.sort();
    Ok(out)
}

fn read_dir_or_empty(dir: &Path) -> Result<Vec<std::ffi::OsString>, AfError> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(AfError::io(format_args!("list {}", dir.display()), &e)),
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| AfError::io(format_args!("list {}", dir.display()), &e))?;
        names.push(entry.file_name());
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, MetadataExt};

    fn n(s: &str) -> ProfileName {
        ProfileName::parse(s).unwrap()
    }

    #[test]
    fn open_creates_private_dir_and_metadata_then_validates() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("profiles");
        let dir = open_or_create(&root, Backend::Brave, &n("work")).unwrap();
        assert_eq!(dir.path, root.join("brave/work"));
        assert_eq!(fs::metadata(&dir.path).unwrap().mode() & 0o777, 0o700);
        let meta = read_metadata(&dir.path).unwrap().unwrap();
        assert_eq!(meta.backend, "brave");
        assert_eq!(meta.name, "work");
        // Second open validates and keeps the metadata.
        let again = open_or_create(&root, Backend::Brave, &n("work")).unwrap();
        assert_eq!(read_metadata(&again.path).unwrap().unwrap(), meta);
        let lock = again.try_lock().unwrap();
        assert_eq!(
            again.touch_last_used().unwrap().created_at_rfc3339,
            meta.created_at_rfc3339
        );
        drop(lock);

        // Metadata claiming another backend is a mismatch.
        let mut wrong = meta.clone();
        wrong.backend = "chromium".into();
        write_metadata(&dir.path, &wrong).unwrap();
        let err = open_or_create(&root, Backend::Brave, &n("work")).unwrap_err();
        assert_eq!(err.code, ErrorCode::ProfileMismatch);
    }

    #[test]
    fn resolve_and_list() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        assert_eq!(
            resolve(root, &n("work"), None).unwrap_err().code,
            ErrorCode::ProfileNotFound
        );
        fs::create_dir_all(root.join("chromium/work")).unwrap();
        fs::create_dir_all(root.join("chromium/.hidden")).unwrap();
        fs::create_dir_all(root.join("oldname")).unwrap();
        fs::write(root.join("chromium/file"), b"").unwrap();
        symlink(tmp.path(), root.join("chromium/link")).unwrap();
        assert_eq!(
            resolve(root, &n("work"), None).unwrap().backend,
            Backend::Chromium
        );
        fs::create_dir_all(root.join("brave/work")).unwrap();
        let err = resolve(root, &n("work"), None).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument);
        assert!(err.message.contains("brave") && err.message.contains("chromium"));
        assert_eq!(
            resolve(root, &n("work"), Some(Backend::Brave))
                .unwrap()
                .path,
            root.join("brave/work")
        );
        assert_eq!(
            resolve(root, &n("link"), None).unwrap_err().code,
            ErrorCode::InvalidArgument
        );

        let all = list_profiles(root, None).unwrap();
        let got: Vec<String> = all
            .iter()
            .map(|d| format!("{}/{}", d.backend, d.name))
            .collect();
        assert_eq!(got, ["chromium/work", "brave/work"]);
        assert_eq!(list_profiles(root, Some(Backend::Brave)).unwrap().len(), 1);
        assert_eq!(
            deprecated_unscoped(root).unwrap(),
            vec![root.join("oldname")]
        );
    }
}
