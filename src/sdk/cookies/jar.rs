//! The JSON cookie jar file: `{"schema_version":1,"cookies":[...]}`, pretty-printed, mode 0600.
//!
//! Writers hold an exclusive `flock` on the sibling `<jar>.lock` for the whole
//! read-modify-write, and replace the jar by atomic rename, so concurrent processes never lose
//! each other's cookies and readers never see a partial file. A jar that cannot be parsed is an
//! `io_error` and is never overwritten.

use std::fs::{self, File, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};
use serde::{Deserialize, Serialize};
use url::Url;

use super::matching::{self, Selection};
use super::parse::parse_set_cookie;
use super::{now_unix, Cookie};
use crate::error::{AfError, ErrorCode};
use crate::fsutil;

/// The jar format version this build reads and writes.
pub const SCHEMA_VERSION: u32 = 1;

/// The cookies of one jar file, session cookies included.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CookieJar {
    /// Stored cookies, unique by (name, domain, path, host_only).
    pub cookies: Vec<Cookie>,
}

/// The on-disk shape.
#[derive(Serialize, Deserialize)]
struct JarFile {
    schema_version: u32,
    #[serde(default)]
    cookies: Vec<Cookie>,
}

impl CookieJar {
    /// Read the jar at `path` without locking: a missing file is an empty jar; an unreadable
    /// or corrupt one is `io_error`; a directory or a symlink to a non-file is
    /// `invalid_argument`.
    pub fn load(path: &Path) -> Result<CookieJar, AfError> {
        load_target(&jar_target(path)?)
    }

    /// Store `cookie` (RFC 6265 §5.3 step 11): replace the cookie with the same name, domain,
    /// path and host-only flag, keeping its creation time; a cookie already expired at
    /// `now_unix` only deletes that match.
    pub fn store(&mut self, mut cookie: Cookie, now_unix: i64) {
        let first = self.cookies.iter().position(|c| c.same_identity(&cookie));
        if cookie.is_expired(now_unix) {
            self.cookies.retain(|c| !c.same_identity(&cookie));
            return;
        }
        match first {
            Some(i) => {
                cookie.created_at_unix = self.cookies[i].created_at_unix;
                // Hand-edited jars may hold duplicates; keep only the replaced slot.
                let mut index = 0;
                self.cookies.retain(|c| {
                    let keep = index <= i || !c.same_identity(&cookie);
                    index += 1;
                    keep
                });
                self.cookies[i] = cookie;
            }
            None => self.cookies.push(cookie),
        }
    }

    /// Parse and store every `Set-Cookie` header received for `request_url`; returns how many
    /// were accepted (deletions included). Ignored headers are dropped, as a browser would.
    pub fn store_set_cookie_headers<'a>(
        &mut self,
        headers: impl IntoIterator<Item = &'a str>,
        request_url: &Url,
        now_unix: i64,
    ) -> usize {
        let mut accepted = 0;
        for header in headers {
            if let Some(cookie) = parse_set_cookie(header, request_url, now_unix) {
                self.store(cookie, now_unix);
                accepted += 1;
            }
        }
        accepted
    }

    /// Drop every cookie expired at `now_unix`; session cookies stay.
    pub fn purge_expired(&mut self, now_unix: i64) {
        self.cookies.retain(|c| !c.is_expired(now_unix));
    }

    /// The `Cookie` header for `url` and the cookies skipped (see [`matching::select_for_url`]).
    pub fn select_for_url(&self, url: &Url, now_unix: i64) -> Selection {
        matching::select_for_url(&self.cookies, url, now_unix)
    }

    /// Parse jar file contents as [`CookieJar::load`] does after reading them (`io_error` when
    /// corrupt); hand-edited duplicates and unsafe values are kept as written.
    pub fn from_json_bytes(bytes: &[u8]) -> Result<CookieJar, AfError> {
        decode(bytes).map_err(|why| {
            AfError::new(ErrorCode::IoError, format!("cookie jar is corrupt: {why}"))
        })
    }

    /// The pretty-printed file contents, with a trailing newline.
    pub fn to_json_bytes(&self) -> Result<Vec<u8>, AfError> {
        let file = JarFile {
            schema_version: SCHEMA_VERSION,
            cookies: self.cookies.clone(),
        };
        let mut bytes = serde_json::to_vec_pretty(&file)
            .map_err(|e| AfError::new(ErrorCode::IoError, format!("serialize cookie jar: {e}")))?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}

/// Read the jar at `path` under a shared lock (missing file: empty jar, nothing created).
pub fn read_jar_file(path: &Path) -> Result<CookieJar, AfError> {
    let target = jar_target(path)?;
    if !target.exists() {
        return Ok(CookieJar::default());
    }
    let (dir, name) = split_target(&target)?;
    // Writers rename whole files into place, so an unlocked read is still consistent; the lock
    // is best effort for directories we cannot create a lock file in.
    let _lock = lock(&dir, &name, FlockArg::LockShared).ok();
    load_target(&target)
}

/// Lock the jar at `path` exclusively, load it, apply `f`, purge expired cookies and write it
/// back atomically (0600; parent directory created 0700). A corrupt jar is `io_error` and is
/// left untouched; `f` is not called then.
pub fn update_jar_file<T>(path: &Path, f: impl FnOnce(&mut CookieJar) -> T) -> Result<T, AfError> {
    let target = jar_target(path)?;
    let (dir, name) = split_target(&target)?;
    fsutil::create_private_dir_all(&dir)?;
    let _lock = lock(&dir, &name, FlockArg::LockExclusive)?;
    let mut jar = load_target(&target)?;
    let out = f(&mut jar);
    jar.purge_expired(now_unix());
    fsutil::write_private_file(&dir, &name, &jar.to_json_bytes()?)?;
    Ok(out)
}

/// The file the jar really is: `path`, or the regular file a symlink named by the user leads
/// to (so the link survives updates and every alias shares one lock).
fn jar_target(path: &Path) -> Result<PathBuf, AfError> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(path.to_path_buf()),
        Err(e) => return Err(AfError::io(format_args!("inspect {}", path.display()), &e)),
    };
    if meta.is_file() {
        return Ok(path.to_path_buf());
    }
    if meta.is_dir() {
        return Err(
            AfError::invalid(format!("cookie jar {} is a directory", path.display()))
                .with_hint("set cookie_jar to a file, e.g. ./cookies.jar.json")
                .with_field("cookie_jar"),
        );
    }
    if meta.file_type().is_symlink() && fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return fs::canonicalize(path)
            .map_err(|e| AfError::io(format_args!("resolve {}", path.display()), &e));
    }
    Err(AfError::invalid(format!(
        "cookie jar {} is not a regular file (or a symlink to one)",
        path.display()
    )))
}

/// The directory and file name of a jar path.
fn split_target(target: &Path) -> Result<(PathBuf, String), AfError> {
    let name = target
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| {
            AfError::invalid(format!(
                "cookie jar path {} has no UTF-8 file name",
                target.display()
            ))
        })?
        .to_string();
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((dir, name))
}

/// Take a `flock` on `dir/<name>.lock` (created 0600, never through a symlink); released when
/// the returned guard drops.
fn lock(dir: &Path, name: &str, arg: FlockArg) -> Result<Flock<File>, AfError> {
    let lock_path = dir.join(format!("{name}.lock"));
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&lock_path)
        .map_err(|e| AfError::io(format_args!("open lock {}", lock_path.display()), &e))?;
    loop {
        match Flock::lock(file, arg) {
            Ok(guard) => return Ok(guard),
            Err((f, Errno::EINTR)) => file = f,
            Err((_, errno)) => {
                return Err(AfError::io(
                    format_args!("lock {}", lock_path.display()),
                    &std::io::Error::from(errno),
                ))
            }
        }
    }
}

/// Read and parse a resolved jar path; missing or blank file → empty jar.
fn load_target(target: &Path) -> Result<CookieJar, AfError> {
    let bytes = match fs::read(target) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(CookieJar::default()),
        Err(e) => {
            return Err(AfError::io(
                format_args!("read cookie jar {}", target.display()),
                &e,
            ))
        }
    };
    decode(&bytes).map_err(|why| {
        AfError::new(
            ErrorCode::IoError,
            format!("cookie jar {} is corrupt: {why}", target.display()),
        )
        .with_hint("fix or remove the file; afhttp leaves a corrupt jar untouched")
    })
}

/// Parse jar file contents: blank → empty jar; otherwise the JSON document of this schema
/// version, or why not.
fn decode(bytes: &[u8]) -> Result<CookieJar, String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(CookieJar::default());
    }
    let file: JarFile = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    if file.schema_version != SCHEMA_VERSION {
        return Err(format!(
            "schema_version {} is not supported (expected {SCHEMA_VERSION})",
            file.schema_version
        ));
    }
    Ok(CookieJar {
        cookies: file.cookies,
    })
}

#[cfg(test)]
#[path = "jar_tests.rs"]
mod tests;
