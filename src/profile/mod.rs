//! The on-disk profile store: names, paths, locks, metadata and local administration.
//!
//! Layout: `<root>/<backend>/<name>/` with root `$XDG_DATA_HOME/afhttp/profiles` (see
//! [`profiles_root`]). Everything a profile owns lives inside its directory: the browser
//! user-data-dir contents, `cookies.jar.json`, `downloads/` (with its index `downloads.jsonl`), `afhttp-profile.json` and
//! `afhttp.lock` (the flock plus the owner's pid record, i.e. the spec's lockfile and PID file).
//!
//! A host uses a persistent profile in three steps:
//!
//! 1. [`open_or_create`] — create it (0700) or check its metadata (`profile_mismatch`);
//! 2. [`try_lock`] — take the exclusive lock (`profile_locked`), held for the host's life;
//! 3. [`touch_last_used`] — record the use for `profile prune`.
//!
//! Old unscoped `<root>/<name>` directories are ignored; [`deprecated_unscoped`] lists them so
//! `profile list` can say they exist. No I/O here depends on the browser: SDK-only builds use it.

mod admin;
mod cookies;
mod download_index;
mod duration;
mod lock;
mod metadata;
mod name;
mod retention;
mod store;

pub use admin::{
    delete_profile, dir_size, list_downloads, prune, system_rfc3339, DownloadEntry, DownloadState,
    PruneCandidate, PruneOutcome, Skipped,
};
pub use cookies::{redacted_cookies, RedactedCookie};
pub use download_index::{append_download_record, read_download_index, DOWNLOAD_INDEX_FILE};
pub use duration::parse_age;
pub use lock::{
    lock_status, this_hostname, try_lock, LockOwner, LockStatus, ProfileLock, LOCK_FILE,
};
pub use metadata::{
    format_rfc3339, inspect_metadata, now_rfc3339, read_metadata, touch_last_used, unix_to_rfc3339,
    write_metadata, MetadataReport, MetadataStatus, ProfileMetadata, METADATA_FILE, SCHEMA_VERSION,
};
pub use name::{Backend, ProfileName, EPHEMERAL, MAX_NAME_LEN};
pub use retention::{
    cutoff, mcp_outputs_root, newest_mtime, outputs_root, prune_children, RemovedEntry,
    RetentionOutcome, SkippedEntry, DEFAULT_RETENTION,
};
pub use store::{
    deprecated_unscoped, list_profiles, open_or_create, profiles_root, resolve, ProfileDir,
    COOKIE_JAR_FILE, DOWNLOADS_DIR,
};
