//! `afhttp profile`: local-only inspection and administration of persistent profiles.

use clap::{Args, Subcommand};
use serde_json::{json, Map, Value};

use crate::envelope::Event;
use crate::error::AfError;
use crate::profile::{
    self, Backend, LockStatus, MetadataReport, ProfileDir, ProfileName, PruneCandidate, Skipped,
};

/// Arguments of `afhttp profile`.
#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// The profile operation.
    #[command(subcommand)]
    pub command: ProfileCommand,
}

/// `afhttp profile` operations; all act on this machine's profile store only.
#[derive(Debug, Subcommand)]
pub enum ProfileCommand {
    /// List persistent profiles with backend, size, metadata status, last use and lock.
    List(ListArgs),
    /// Show one profile's metadata, path, disk usage, lock owner and browser family.
    Info(NameArgs),
    /// Report whether a profile is locked and by which pid.
    LockStatus(NameArgs),
    /// List files captured under the profile's downloads/ directory (read-only).
    Downloads(NameArgs),
    /// List the profile's cookie jar without values (names, scope, flags, expiry, value size).
    Cookies(NameArgs),
    /// Delete an unlocked persistent profile.
    Delete(DeleteArgs),
    /// Delete unlocked persistent profiles not used for a while; with --downloads/--outputs,
    /// remove old captured downloads and default fetch output directories instead.
    Prune(PruneArgs),
}

/// Arguments of `afhttp profile list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only this backend: chromium, chrome, chrome-headless-shell, fingerprint-chromium, edge, brave, lightpanda, camoufox.
    #[arg(long, value_name = "BACKEND")]
    pub backend: Option<String>,
}

/// A profile chosen by name (and backend when the name exists under several).
#[derive(Debug, Args)]
pub struct NameArgs {
    /// Profile name.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Backend directory to look in; required when several backends have this name.
    #[arg(long, value_name = "BACKEND")]
    pub backend: Option<String>,
}

/// Arguments of `afhttp profile delete`.
#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// The profile.
    #[command(flatten)]
    pub target: NameArgs,
    /// Repeat the profile name to confirm the deletion.
    #[arg(long, value_name = "NAME")]
    pub confirm: Option<String>,
}

/// Arguments of `afhttp profile prune`.
#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Age threshold by last use: a whole number and a unit, e.g. 30d, 12h, 90m (also s, w).
    /// Required to prune whole profiles; --downloads/--outputs alone default to 7d.
    #[arg(long, value_name = "AGE", allow_hyphen_values = true)]
    pub older_than: Option<String>,
    /// Remove files under each profile's downloads/ last modified before the age (profiles
    /// in use included: only old files go).
    #[arg(long)]
    pub downloads: bool,
    /// Remove default fetch output directories (<tmp>/afhttp-out/<request_id>/) and a host's
    /// MCP output directories ($XDG_DATA_HOME/afhttp/mcp-out/*/) last modified before the age
    /// (directories given with --out outside them are never touched).
    #[arg(long)]
    pub outputs: bool,
    /// Also prune whole profiles when --downloads or --outputs is given (the default without
    /// them).
    #[arg(long)]
    pub profiles: bool,
    /// Report the candidates without deleting anything.
    #[arg(long)]
    pub dry_run: bool,
    /// Only prune under this backend.
    #[arg(long, value_name = "BACKEND")]
    pub backend: Option<String>,
}

/// Run `afhttp profile`.
pub fn run(args: ProfileArgs) -> Event {
    let (code, outcome) = match args.command {
        ProfileCommand::List(a) => ("profile_list", list(a)),
        ProfileCommand::Info(a) => ("profile_info", info(a)),
        ProfileCommand::LockStatus(a) => ("profile_lock_status", lock_status(a)),
        ProfileCommand::Downloads(a) => ("profile_downloads", downloads(a)),
        ProfileCommand::Cookies(a) => ("profile_cookies", cookies(a)),
        ProfileCommand::Delete(a) => ("profile_delete", delete(a)),
        ProfileCommand::Prune(a) => ("profile_prune", prune(a)),
    };
    match outcome {
        Ok(result) => Event::result(code, result, None),
        Err(e) => Event::error(&e, None),
    }
}

fn parse_backend(raw: Option<&str>) -> Result<Option<Backend>, AfError> {
    raw.map(Backend::parse).transpose()
}

fn find(args: &NameArgs) -> Result<ProfileDir, AfError> {
    let name = ProfileName::parse(&args.name)?;
    let backend = parse_backend(args.backend.as_deref())?;
    profile::resolve(&profile::profiles_root(super::env())?, &name, backend)
}

fn identity(dir: &ProfileDir) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("backend".into(), json!(dir.backend.as_str()));
    m.insert("name".into(), json!(dir.name.as_str()));
    m.insert("path".into(), json!(dir.path));
    m
}

fn lock_fields(m: &mut Map<String, Value>, status: &LockStatus) {
    m.insert("locked".into(), json!(status.locked));
    if let Some(pid) = status.owner_pid {
        m.insert("lock_owner_pid".into(), json!(pid));
    }
    if let Some(t) = &status.owner_started_at_rfc3339 {
        m.insert("lock_owner_started_at_rfc3339".into(), json!(t));
    }
    if let Some(h) = &status.owner_hostname {
        m.insert("lock_owner_hostname".into(), json!(h));
    }
}

fn last_used(report: &MetadataReport) -> Option<&str> {
    report
        .metadata
        .as_ref()
        .map(|m| m.last_used_at_rfc3339.as_str())
}

fn list(args: ListArgs) -> Result<Value, AfError> {
    let root = profile::profiles_root(super::env())?;
    let backend = parse_backend(args.backend.as_deref())?;
    let mut profiles = Vec::new();
    for dir in profile::list_profiles(&root, backend)? {
        let report = profile::inspect_metadata(&dir.path, dir.backend);
        let mut m = identity(&dir);
        m.insert("size_bytes".into(), json!(profile::dir_size(&dir.path)));
        m.insert("metadata_status".into(), json!(report.status.as_str()));
        if let Some(t) = last_used(&report) {
            m.insert("last_used_at_rfc3339".into(), json!(t));
        }
        lock_fields(&mut m, &profile::lock_status(&dir.path));
        profiles.push(Value::Object(m));
    }
    let unscoped = profile::deprecated_unscoped(&root)?;
    Ok(json!({
        "root": root,
        "profiles": profiles,
        "deprecated_unscoped": unscoped,
    }))
}

fn info(args: NameArgs) -> Result<Value, AfError> {
    let dir = find(&args)?;
    let report = profile::inspect_metadata(&dir.path, dir.backend);
    let mut m = identity(&dir);
    m.insert("browser_family".into(), json!(dir.backend.family()));
    m.insert("size_bytes".into(), json!(profile::dir_size(&dir.path)));
    m.insert("metadata_status".into(), json!(report.status.as_str()));
    if let Some(meta) = &report.metadata {
        m.insert("metadata".into(), json!(meta));
    }
    if let Some(problem) = &report.problem {
        m.insert("metadata_problem".into(), json!(problem));
    }
    if let Some(t) = last_used(&report) {
        m.insert("last_used_at_rfc3339".into(), json!(t));
    }
    lock_fields(&mut m, &profile::lock_status(&dir.path));
    m.insert("cookie_jar_file".into(), json!(dir.cookie_jar_path()));
    m.insert(
        "cookie_jar_present".into(),
        json!(dir.cookie_jar_path().is_file()),
    );
    m.insert("downloads_dir".into(), json!(dir.downloads_dir()));
    m.insert(
        "persistent_supported".into(),
        json!(dir.backend.supports_persistent_profiles()),
    );
    Ok(Value::Object(m))
}

fn lock_status(args: NameArgs) -> Result<Value, AfError> {
    let dir = find(&args)?;
    let mut m = identity(&dir);
    m.insert("lock_file".into(), json!(dir.lock_path()));
    lock_fields(&mut m, &profile::lock_status(&dir.path));
    Ok(Value::Object(m))
}

fn downloads(args: NameArgs) -> Result<Value, AfError> {
    let dir = find(&args)?;
    let index = profile::read_download_index(&dir.path);
    let files: Vec<Value> = profile::list_downloads(&dir.downloads_dir())?
        .into_iter()
        .map(|d| {
            let mut v = json!({
                "path": d.path,
                "size_bytes": d.size_bytes,
                "state": d.state.as_str(),
                "modified_at_rfc3339": d.modified_at_rfc3339,
            });
            // Files are named by download id; the host's index gives back name and URL.
            let known = d
                .path
                .file_name()
                .and_then(|n| index.get(&*n.to_string_lossy()));
            if let Some(rec) = known {
                for key in ["id", "suggested_filename", "url"] {
                    if let Some(x) = rec.get(key) {
                        v[key] = x.clone();
                    }
                }
            }
            v
        })
        .collect();
    let mut m = identity(&dir);
    m.insert("downloads_dir".into(), json!(dir.downloads_dir()));
    m.insert("downloads".into(), Value::Array(files));
    Ok(Value::Object(m))
}

fn cookies(args: NameArgs) -> Result<Value, AfError> {
    let dir = find(&args)?;
    let jar = dir.cookie_jar_path();
    let found = profile::redacted_cookies(&jar)?;
    let mut m = identity(&dir);
    m.insert("cookie_jar_file".into(), json!(jar));
    m.insert("cookie_jar_present".into(), json!(found.is_some()));
    m.insert("cookies".into(), json!(found.unwrap_or_default()));
    Ok(Value::Object(m))
}

fn delete(args: DeleteArgs) -> Result<Value, AfError> {
    let name = ProfileName::parse(&args.target.name)?;
    if args.confirm.as_deref() != Some(name.as_str()) {
        return Err(AfError::invalid(format!(
            "deleting profile {:?} needs --confirm {}",
            name.as_str(),
            name.as_str()
        ))
        .with_hint("repeat the profile name with --confirm to delete it"));
    }
    let dir = find(&args.target)?;
    let size = profile::dir_size(&dir.path);
    profile::delete_profile(&dir)?;
    let mut m = identity(&dir);
    m.insert("deleted".into(), json!(true));
    m.insert("size_bytes".into(), json!(size));
    Ok(Value::Object(m))
}

fn candidate_json(c: &PruneCandidate) -> Value {
    let mut m = identity(&c.profile);
    m.insert("last_used_at_rfc3339".into(), json!(c.last_used_at_rfc3339));
    m.insert("last_used_source".into(), json!(c.last_used_source));
    m.insert("size_bytes".into(), json!(c.size_bytes));
    Value::Object(m)
}

fn skipped_json(s: &Skipped) -> Value {
    let mut m = identity(&s.profile);
    m.insert("reason".into(), json!(s.reason));
    if let Some(pid) = s.lock_owner_pid {
        m.insert("lock_owner_pid".into(), json!(pid));
    }
    Value::Object(m)
}

fn prune(args: PruneArgs) -> Result<Value, AfError> {
    let whole_profiles = args.profiles || !(args.downloads || args.outputs);
    let older_than = match (&args.older_than, whole_profiles) {
        (Some(raw), _) => raw.trim().to_string(),
        (None, false) => profile::DEFAULT_RETENTION.to_string(),
        (None, true) => {
            return Err(
                AfError::invalid("--older-than is required to prune whole profiles")
                    .with_hint("e.g. --older-than 30d, or --downloads/--outputs (default 7d)"),
            )
        }
    };
    let age = profile::parse_age(&older_than)?;
    let backend = parse_backend(args.backend.as_deref())?;
    let root = profile::profiles_root(super::env())?;
    let mut m = Map::new();
    m.insert("root".into(), json!(root));
    m.insert("older_than".into(), json!(older_than));
    m.insert("dry_run".into(), json!(args.dry_run));
    if whole_profiles {
        let outcome = profile::prune(&root, age, backend, args.dry_run)?;
        let pruned: Vec<Value> = outcome.pruned.iter().map(candidate_json).collect();
        let skipped: Vec<Value> = outcome.skipped.iter().map(skipped_json).collect();
        let key = if args.dry_run {
            "would_delete"
        } else {
            "deleted"
        };
        m.insert("cutoff_rfc3339".into(), json!(outcome.cutoff_rfc3339));
        m.insert(key.into(), Value::Array(pruned));
        m.insert("skipped".into(), Value::Array(skipped));
    }
    let cutoff = profile::cutoff(age)?;
    m.entry("cutoff_rfc3339")
        .or_insert_with(|| json!(profile::system_rfc3339(cutoff)));
    if args.downloads {
        let mut all = profile::RetentionOutcome::default();
        for dir in profile::list_profiles(&root, backend)? {
            all.extend(profile::prune_children(
                &dir.downloads_dir(),
                cutoff,
                args.dry_run,
                false,
            )?);
        }
        m.insert("downloads".into(), retention_json(all, args.dry_run));
    }
    if args.outputs {
        let dir = profile::outputs_root();
        let outcome = profile::prune_children(&dir, cutoff, args.dry_run, true)?;
        let mut doc = retention_json(outcome, args.dry_run);
        doc["root"] = json!(dir);
        m.insert("outputs".into(), doc);
        // A host's MCP output area, beside the profile store (the host prunes it too).
        let dir = profile::mcp_outputs_root(super::env())?;
        let outcome = profile::prune_children(&dir, cutoff, args.dry_run, true)?;
        let mut doc = retention_json(outcome, args.dry_run);
        doc["root"] = json!(dir);
        m.insert("mcp_outputs".into(), doc);
    }
    Ok(Value::Object(m))
}

/// `{"removed"|"would_remove": [...], "skipped": [...], "bytes": N}`.
fn retention_json(outcome: profile::RetentionOutcome, dry_run: bool) -> Value {
    let key = if dry_run { "would_remove" } else { "removed" };
    let bytes: u64 = outcome.removed.iter().map(|r| r.size_bytes).sum();
    let mut m = Map::new();
    m.insert(key.into(), json!(outcome.removed));
    m.insert("skipped".into(), json!(outcome.skipped));
    m.insert("bytes".into(), json!(bytes));
    Value::Object(m)
}
