//! `afhttp-profile.json`: advisory lifecycle metadata inside each persistent profile.
//!
//! The metadata is advisory, but its schema and backend are checked because the backend
//! directory is part of the isolation boundary (spec §7).

use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::name::{Backend, ProfileName};
use crate::error::{AfError, ErrorCode};
use crate::fsutil;

/// File name of the metadata inside a profile directory.
pub const METADATA_FILE: &str = "afhttp-profile.json";

/// The metadata schema this build reads and writes.
pub const SCHEMA_VERSION: u32 = 2;

/// Contents of `afhttp-profile.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileMetadata {
    /// Always [`SCHEMA_VERSION`] when written by this build.
    pub schema_version: u32,
    /// Logical profile name (the directory name).
    pub name: String,
    /// Backend directory the profile lives under.
    pub backend: String,
    /// When the profile was first created.
    pub created_at_rfc3339: String,
    /// When a host (or admin command) last used it; `prune` measures age from this.
    pub last_used_at_rfc3339: String,
    /// afhttp version of the last host that used it.
    #[serde(default)]
    pub last_host_version: String,
}

impl ProfileMetadata {
    /// Fresh metadata for a profile created now by this afhttp version.
    pub fn new(backend: Backend, name: &ProfileName) -> Self {
        let now = now_rfc3339();
        ProfileMetadata {
            schema_version: SCHEMA_VERSION,
            name: name.as_str().to_string(),
            backend: backend.as_str().to_string(),
            created_at_rfc3339: now.clone(),
            last_used_at_rfc3339: now,
            last_host_version: crate::VERSION.to_string(),
        }
    }

    /// Check the schema and backend against the directory it was found in (`profile_mismatch`).
    pub fn validate(&self, backend: Backend) -> Result<(), AfError> {
        if self.schema_version != SCHEMA_VERSION {
            return Err(AfError::new(
                ErrorCode::ProfileMismatch,
                format!(
                    "profile metadata has schema_version {}, this afhttp reads {SCHEMA_VERSION}",
                    self.schema_version
                ),
            )
            .with_hint("use a matching afhttp version, or delete the profile"));
        }
        if self.backend != backend.as_str() {
            return Err(AfError::new(
                ErrorCode::ProfileMismatch,
                format!(
                    "profile metadata names backend {:?} but the profile lives under {:?}",
                    self.backend,
                    backend.as_str()
                ),
            )
            .with_hint("profiles are not shared between backends; use the matching --browser or delete the profile"));
        }
        Ok(())
    }

    /// `last_used_at_rfc3339` parsed, when it is valid RFC 3339.
    pub fn last_used_at(&self) -> Option<OffsetDateTime> {
        OffsetDateTime::parse(&self.last_used_at_rfc3339, &Rfc3339).ok()
    }
}

/// Read `<profile_dir>/afhttp-profile.json`: `Ok(None)` when missing, `profile_mismatch` when
/// it is not valid metadata JSON, `io_error` when it cannot be read.
pub fn read_metadata(profile_dir: &Path) -> Result<Option<ProfileMetadata>, AfError> {
    let path = profile_dir.join(METADATA_FILE);
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(AfError::io(format_args!("read {}", path.display()), &e)),
    };
    serde_json::from_slice(&bytes).map(Some).map_err(|e| {
        AfError::new(
            ErrorCode::ProfileMismatch,
            format!("{} is not valid profile metadata: {e}", path.display()),
        )
        .with_hint("fix or remove the file, or delete the profile")
    })
}

/// Write `meta` atomically (0600, temp file + rename) into `profile_dir`.
pub fn write_metadata(profile_dir: &Path, meta: &ProfileMetadata) -> Result<(), AfError> {
    let mut bytes = serde_json::to_vec_pretty(meta)
        .map_err(|e| AfError::new(ErrorCode::IoError, format!("encode metadata: {e}")))?;
    bytes.push(b'\n');
    fsutil::write_private_file(profile_dir, METADATA_FILE, &bytes)?;
    Ok(())
}

/// Set `last_used_at_rfc3339` to now and `last_host_version` to this version; metadata that
/// is missing is created. Returns what was written.
pub fn touch_last_used(
    profile_dir: &Path,
    backend: Backend,
    name: &ProfileName,
) -> Result<ProfileMetadata, AfError> {
    let meta = match read_metadata(profile_dir)? {
        Some(mut meta) => {
            meta.validate(backend)?;
            meta.last_used_at_rfc3339 = now_rfc3339();
            meta.last_host_version = crate::VERSION.to_string();
            meta
        }
        None => ProfileMetadata::new(backend, name),
    };
    write_metadata(profile_dir, &meta)?;
    Ok(meta)
}

/// Whether a profile's metadata could be used, as admin commands report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetadataStatus {
    /// Present, parseable, schema and backend match.
    Ok,
    /// No metadata file (not an error for admin commands).
    Missing,
    /// Unreadable, malformed, or schema/backend mismatch.
    Invalid,
}

impl MetadataStatus {
    /// `ok`, `missing` or `invalid`.
    pub fn as_str(self) -> &'static str {
        match self {
            MetadataStatus::Ok => "ok",
            MetadataStatus::Missing => "missing",
            MetadataStatus::Invalid => "invalid",
        }
    }
}

/// Metadata as admin commands see it: never an error, always a status.
#[derive(Debug, Clone)]
pub struct MetadataReport {
    /// Overall status.
    pub status: MetadataStatus,
    /// The parsed metadata, when it parsed (also for a schema/backend mismatch).
    pub metadata: Option<ProfileMetadata>,
    /// Why it is invalid, when it is.
    pub problem: Option<String>,
}

/// Inspect a profile's metadata for admin commands.
pub fn inspect_metadata(profile_dir: &Path, backend: Backend) -> MetadataReport {
    match read_metadata(profile_dir) {
        Ok(None) => MetadataReport {
            status: MetadataStatus::Missing,
            metadata: None,
            problem: None,
        },
        Ok(Some(meta)) => match meta.validate(backend) {
            Ok(()) => MetadataReport {
                status: MetadataStatus::Ok,
                metadata: Some(meta),
                problem: None,
            },
            Err(e) => MetadataReport {
                status: MetadataStatus::Invalid,
                metadata: Some(meta),
                problem: Some(e.message),
            },
        },
        Err(e) => MetadataReport {
            status: MetadataStatus::Invalid,
            metadata: None,
            problem: Some(e.message),
        },
    }
}

/// The current UTC time as RFC 3339 with whole seconds (`2026-05-27T01:23:45Z`).
pub fn now_rfc3339() -> String {
    format_rfc3339(OffsetDateTime::now_utc())
}

/// Format `t` in UTC as RFC 3339 with whole seconds.
pub fn format_rfc3339(t: OffsetDateTime) -> String {
    let t = t
        .to_offset(time::UtcOffset::UTC)
        .replace_nanosecond(0)
        .unwrap_or(t);
    // Formatting only fails for years outside 0..=9999, which system clocks do not produce.
    t.format(&Rfc3339)
        .unwrap_or_else(|_| t.unix_timestamp().to_string())
}

/// Format a Unix timestamp (seconds) as RFC 3339, when it is representable.
pub fn unix_to_rfc3339(secs: i64) -> Option<String> {
    let t = OffsetDateTime::from_unix_timestamp(secs).ok()?;
    t.format(&Rfc3339).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name() -> ProfileName {
        ProfileName::parse("work").unwrap()
    }

    #[test]
    fn round_trip_and_touch() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(read_metadata(tmp.path()).unwrap().is_none());
        let mut meta = ProfileMetadata::new(Backend::Brave, &name());
        meta.last_used_at_rfc3339 = "2020-01-01T00:00:00Z".into();
        write_metadata(tmp.path(), &meta).unwrap();
        let back = read_metadata(tmp.path()).unwrap().unwrap();
        assert_eq!(back, meta);
        let v: serde_json::Value =
            serde_json::from_slice(&fs::read(tmp.path().join(METADATA_FILE)).unwrap()).unwrap();
        assert_eq!(v["schema_version"], 2);
        assert_eq!(v["backend"], "brave");
        assert!(v["created_at_rfc3339"].as_str().unwrap().ends_with('Z'));

        let touched = touch_last_used(tmp.path(), Backend::Brave, &name()).unwrap();
        assert_ne!(touched.last_used_at_rfc3339, "2020-01-01T00:00:00Z");
        assert_eq!(touched.created_at_rfc3339, meta.created_at_rfc3339);
        assert!(touched.last_used_at().is_some());
        assert_eq!(
            inspect_metadata(tmp.path(), Backend::Brave).status,
            MetadataStatus::Ok
        );
    }

    #[test]
    fn mismatches_are_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let meta = ProfileMetadata::new(Backend::Brave, &name());
        write_metadata(tmp.path(), &meta).unwrap();
        let err = touch_last_used(tmp.path(), Backend::Chromium, &name()).unwrap_err();
        assert_eq!(err.code, ErrorCode::ProfileMismatch);
        assert_eq!(
            inspect_metadata(tmp.path(), Backend::Chromium).status,
            MetadataStatus::Invalid
        );

        let mut old = meta.clone();
        old.schema_version = 1;
        assert_eq!(
            old.validate(Backend::Brave).unwrap_err().code,
            ErrorCode::ProfileMismatch
        );

        fs::write(tmp.path().join(METADATA_FILE), b"{not json").unwrap();
        assert_eq!(
            read_metadata(tmp.path()).unwrap_err().code,
            ErrorCode::ProfileMismatch
        );
        let report = inspect_metadata(tmp.path(), Backend::Brave);
        assert_eq!(report.status, MetadataStatus::Invalid);
        assert!(report.problem.is_some());
    }

    #[test]
    fn rfc3339_whole_seconds() {
        assert_eq!(unix_to_rfc3339(0).unwrap(), "1970-01-01T00:00:00Z");
        assert!(!now_rfc3339().contains('.'));
    }
}
