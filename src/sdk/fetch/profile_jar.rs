//! The implicit cookie jar of a persistent profile (`<profile>/cookies.jar.json`, spec §7),
//! used when the host runs that profile from this machine's profile store (DESIGN.md
//! "Cookies"), so `afhttp profile cookies NAME` shows what the profile's fetches stored.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::profile::{self, Backend, ProfileName};
use crate::sdk::client::Client;

/// The jar of the profile `name` when the host behind `client` runs it from this machine's
/// profile store: the host reports `name` as its active persistent profile, and the local
/// directory of that name is locked by the process (pid and hostname) the host reports as
/// the lock's owner. A host elsewhere (another machine, a container) has its own store, so
/// a same-named local profile is never taken for it. Any doubt is `None`: no implicit jar.
/// `root` is this machine's profile store.
pub async fn local_profile_jar(client: &Client, name: &str, root: &Path) -> Option<PathBuf> {
    if name == profile::EPHEMERAL {
        return None;
    }
    let health = client.health().await.ok()?;
    let active = health.get("profile")?;
    if active.get("kind").and_then(Value::as_str) != Some("persistent")
        || active.get("name").and_then(Value::as_str) != Some(name)
    {
        return None;
    }
    let owner_pid = active.get("lock_owner_pid").and_then(Value::as_u64)?;
    let backend: Backend = health
        .pointer("/backend/name")
        .and_then(Value::as_str)?
        .parse()
        .ok()?;
    let name = ProfileName::parse(name).ok()?;
    let dir = profile::resolve(root, &name, Some(backend)).ok()?;
    let lock = profile::lock_status(dir.path());
    let here = profile::this_hostname();
    (lock.locked
        && lock.owner_pid.map(u64::from) == Some(owner_pid)
        && lock.owner_hostname.as_deref() == Some(here.as_str()))
    .then(|| dir.cookie_jar_path())
}
