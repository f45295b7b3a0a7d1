//! `<profile>/downloads.jsonl`: one JSON line per download the host's browser finished
//! (`id`, `suggested_filename`, `url`, `state`, `total_bytes`, `finished_at_rfc3339`). The
//! files under `downloads/` are named by id, so this index is what gives them back the names
//! and URLs `afhttp profile downloads` reports.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde_json::Value;

use crate::error::AfError;

/// The index file name inside a profile directory.
pub const DOWNLOAD_INDEX_FILE: &str = "downloads.jsonl";
/// Longest index read back (older lines past it are ignored, newer ones kept).
const MAX_INDEX_BYTES: u64 = 16 * 1024 * 1024;

/// Append `record` (a JSON object with an `id`) to the index of `profile_dir` (0600, never
/// through a symlink).
pub fn append_download_record(profile_dir: &Path, record: &Value) -> Result<(), AfError> {
    let path = profile_dir.join(DOWNLOAD_INDEX_FILE);
    let mut line = record.to_string();
    line.push('\n');
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()))
        .map_err(|e| AfError::io(format_args!("append to {}", path.display()), &e))
}

/// The index of `profile_dir` by download id (the last line for an id wins). A missing or
/// unreadable index is empty; malformed lines are skipped.
pub fn read_download_index(profile_dir: &Path) -> HashMap<String, Value> {
    let path = profile_dir.join(DOWNLOAD_INDEX_FILE);
    let Ok(mut f) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
    else {
        return HashMap::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if len > MAX_INDEX_BYTES {
        use std::io::Seek;
        let _ = f.seek(std::io::SeekFrom::Start(len - MAX_INDEX_BYTES));
    }
    let mut raw = Vec::new();
    let _ = f.take(MAX_INDEX_BYTES).read_to_end(&mut raw);
    String::from_utf8_lossy(&raw)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| Some((v.get("id")?.as_str()?.to_string(), v)))
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn appends_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_download_index(dir.path()).is_empty());
        append_download_record(dir.path(), &json!({"id": "a", "state": "inProgress"})).unwrap();
        append_download_record(dir.path(), &json!({"id": "a", "state": "completed"})).unwrap();
        append_download_record(dir.path(), &json!({"id": "b", "url": "http://h/"})).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join(DOWNLOAD_INDEX_FILE))
            .unwrap()
            .write_all(b"not json\n{\"no_id\":1}\n")
            .unwrap();
        let idx = read_download_index(dir.path());
        assert_eq!(idx.len(), 2);
        assert_eq!(idx["a"]["state"], "completed");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join(DOWNLOAD_INDEX_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
