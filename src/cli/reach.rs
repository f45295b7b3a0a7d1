//! Where the host is, for every command that talks to one: the one group of flags
//! ([`HostArgs`]: `--endpoint-url`, `--token-secret`, `--token-secret-file`, `--fleet`) and
//! the steps that resolve it (the token, the fleet, container discovery).
//!
//! The order is the same everywhere: `--endpoint-url` (most specific), else `--fleet`, else
//! the managed local container where a host is required, else local.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use serde_json::Value;

use crate::env;
use crate::error::{AfError, ErrorCode};
use crate::sdk::fleet::Fleet;
use crate::sdk::secret::Secret;

/// How to reach a host (flattened into `fetch`, `mcp` and the driver commands).
#[derive(Debug, Clone, Args)]
pub struct HostArgs {
    /// Browser host to drive (ws://, wss://, http://, https:// or unix:/path).
    #[arg(long, value_name = "URL", env = env::ENDPOINT_URL)]
    pub endpoint_url: Option<String>,
    /// Bearer token for the host.
    #[arg(long, value_name = "STRING", env = env::TOKEN_SECRET, hide_env_values = true)]
    pub token_secret: Option<Secret>,
    /// File holding the bearer token.
    #[arg(long, value_name = "PATH", env = env::TOKEN_SECRET_FILE)]
    pub token_secret_file: Option<PathBuf>,
    #[command(flatten)]
    pub fleet: FleetOpt,
}

impl HostArgs {
    /// The token from `--token-secret` (wins) or `--token-secret-file`.
    pub fn token(&self) -> Result<Option<Secret>, AfError> {
        resolve_token(
            self.token_secret.as_ref(),
            self.token_secret_file.as_deref(),
        )
    }

    /// The fleet and its connect bound when `--fleet` is given and `--endpoint-url` (more
    /// specific, it wins) is not.
    pub fn routing_fleet(&self) -> Result<Option<(Fleet, Duration)>, AfError> {
        if self.endpoint_url.is_some() {
            return Ok(None);
        }
        let connect = self.fleet.connect_timeout()?;
        Ok(self.fleet.parsed()?.map(|f| (f, connect)))
    }

    /// Whether neither an endpoint nor a fleet is named (fetches are local).
    pub fn is_local(&self) -> bool {
        self.endpoint_url.is_none() && self.fleet.fleet.is_none()
    }
}

/// `--fleet` and its connect bound.
#[derive(Debug, Clone, Args)]
pub struct FleetOpt {
    /// Fleet of hosts instead of one endpoint: NAME=URL or URL entries, comma-separated or
    /// one per line in @FILE; `ephemeral:` marks stateless hosts; `dns:HOST:PORT` adds every
    /// address HOST resolves to as a stateless host. --endpoint-url wins when both are given.
    #[arg(long, value_name = "SPEC", env = env::FLEET)]
    pub fleet: Option<String>,
    /// Bound for reaching one fleet member (health, load, profiles), in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 2_000)]
    pub fleet_connect_timeout_ms: u64,
}

impl FleetOpt {
    /// The connect bound, checked.
    pub fn connect_timeout(&self) -> Result<Duration, AfError> {
        if self.fleet_connect_timeout_ms == 0 || self.fleet_connect_timeout_ms > 600_000 {
            return Err(AfError::invalid(
                "--fleet-connect-timeout-ms must be between 1 and 600000",
            ));
        }
        Ok(Duration::from_millis(self.fleet_connect_timeout_ms))
    }

    /// The parsed fleet, when one was given.
    pub fn parsed(&self) -> Result<Option<Fleet>, AfError> {
        let Some(spec) = &self.fleet else {
            return Ok(None);
        };
        Ok(Some(super::block_on(Fleet::parse(spec))??))
    }
}

/// A host found without `--endpoint-url`.
#[derive(Debug)]
pub struct Found {
    /// The endpoint to use.
    pub endpoint_url: String,
    /// Its token, when one was read.
    pub token: Option<Secret>,
    /// For the event's trace.
    pub trace: Value,
}

/// The error when no endpoint was given and none was discovered.
pub fn no_endpoint() -> AfError {
    AfError::new(ErrorCode::InvalidEndpoint, "no host endpoint given").with_hint(
        "pass --endpoint-url or set AFHTTP_ENDPOINT_URL, or run `afhttp container install` for a local host",
    )
}

/// Discover the managed local container, or fail with "no host endpoint given".
pub fn discover(need_token: bool) -> Result<Found, AfError> {
    discover_opt(need_token)?.ok_or_else(no_endpoint)
}

/// The managed local container (label → port, token through the engine); `None` when no
/// engine answers or none is installed.
#[cfg(feature = "container")]
pub fn discover_opt(need_token: bool) -> Result<Option<Found>, AfError> {
    let found = super::block_on(crate::container::discover::for_driver(need_token))??;
    Ok(found.map(|d| Found {
        trace: serde_json::json!({
            "endpoint_source": "container",
            "container_name": d.container.name,
            "container_version": d.container.version,
            "endpoint_url": d.endpoint_url,
        }),
        endpoint_url: d.endpoint_url,
        token: d.token,
    }))
}

/// Without the container feature there is nothing to discover.
#[cfg(not(feature = "container"))]
pub fn discover_opt(_need_token: bool) -> Result<Option<Found>, AfError> {
    Ok(None)
}

/// The token from `--token-secret` (wins) or `--token-secret-file`.
pub fn resolve_token(
    secret: Option<&Secret>,
    file: Option<&std::path::Path>,
) -> Result<Option<Secret>, AfError> {
    if let Some(s) = secret {
        return Ok(Some(s.clone()));
    }
    let Some(path) = file else { return Ok(None) };
    let raw = std::fs::read_to_string(path).map_err(|e| {
        AfError::invalid(format!(
            "--token-secret-file {}: cannot read ({e})",
            path.display()
        ))
    })?;
    let token = raw.trim().to_string();
    if token.is_empty() {
        return Err(AfError::invalid(format!(
            "--token-secret-file {} is empty",
            path.display()
        )));
    }
    Ok(Some(Secret::new(token)))
}
