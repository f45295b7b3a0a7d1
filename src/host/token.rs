//! The host's bearer token: from the flag/environment, or a token file created on first
//! start with a fresh random token (mode 0600).

use std::path::Path;

use crate::error::AfError;
use crate::fsutil;
use crate::sdk::secret::Secret;

/// A new random token (256 bits, hex).
pub fn generate() -> String {
    let a = uuid::Uuid::new_v4().simple().to_string();
    let b = uuid::Uuid::new_v4().simple().to_string();
    format!("{a}{b}")
}

/// Read `path`, or create it with a fresh token when it does not exist.
pub fn load_or_create(path: &Path) -> Result<Secret, AfError> {
    match std::fs::read_to_string(path) {
        Ok(raw) => {
            let t = raw.trim().to_string();
            if t.is_empty() {
                return Err(AfError::invalid(format!(
                    "token file {} is empty",
                    path.display()
                )));
            }
            Ok(Secret::new(t))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let dir = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            fsutil::create_private_dir_all(dir)?;
            let name = path.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
                AfError::invalid(format!("bad token file path {}", path.display()))
            })?;
            let token = generate();
            fsutil::write_private_file(dir, name, format!("{token}\n").as_bytes())?;
            Ok(Secret::new(token))
        }
        Err(e) => Err(AfError::io(
            format_args!("read token file {}", path.display()),
            &e,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn created_once_then_reused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sub/host-token");
        let t1 = load_or_create(&p).unwrap();
        assert_eq!(t1.expose().len(), 64);
        assert_eq!(std::fs::metadata(&p).unwrap().mode() & 0o777, 0o600);
        assert_eq!(load_or_create(&p).unwrap(), t1);
    }
}
