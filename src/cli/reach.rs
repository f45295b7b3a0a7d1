//! Where the host is, for every command that talks to one: the one group of flags
//! ([`HostArgs`]: `--endpoint-url`, [`TokenArgs`]' `--token-secret` and
//! `--token-secret-file`, `--fleet`) and the one resolve step ([`HostArgs::resolve`], then
//! [`Reach::discovered`] for container discovery).
//!
//! The order is the same everywhere: `--endpoint-url` (most specific), else `--fleet`, else
//! the managed local container where a host is required, else local.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use serde_json::Value;

use crate::env;
use crate::error::{AfError, ErrorCode};
use crate::sdk::endpoint::Endpoint;
use crate::sdk::fleet::Fleet;
use crate::sdk::secret::Secret;
use crate::sdk::target::{FleetTarget, HostTarget, Target};

/// How to reach a host (flattened into `fetch`, `mcp` and the driver commands).
#[derive(Debug, Clone, Args)]
pub struct HostArgs {
    /// Browser host to drive (ws://, wss://, http://, https:// or unix:/path).
    #[arg(long, value_name = "URL", env = env::ENDPOINT_URL)]
    pub endpoint_url: Option<String>,
    #[command(flatten)]
    pub token: TokenArgs,
    #[command(flatten)]
    pub fleet: FleetOpt,
}

/// The hosts' bearer token: the one definition of `--token-secret` and
/// `--token-secret-file`, flattened into [`HostArgs`], `fleet status` and `afhttp host`.
#[derive(Debug, Clone, Args)]
pub struct TokenArgs {
    /// Bearer token: what a driver sends to the host (every member of a fleet), what
    /// `afhttp host` requires from its clients.
    // A token may start with `-`: taken as a value, never parsed as (and echoed back as) an
    // unknown flag.
    #[arg(long, value_name = "STRING", env = env::TOKEN_SECRET, hide_env_values = true, allow_hyphen_values = true)]
    pub token_secret: Option<Secret>,
    /// File holding the bearer token (`afhttp host` creates it with a random token, mode
    /// 0600, when it is missing).
    #[arg(long, value_name = "PATH", env = env::TOKEN_SECRET_FILE)]
    pub token_secret_file: Option<PathBuf>,
}

impl TokenArgs {
    /// The token from `--token-secret` (wins) or `--token-secret-file`.
    pub fn token(&self) -> Result<Option<Secret>, AfError> {
        resolve_token(
            self.token_secret.as_ref(),
            self.token_secret_file.as_deref(),
        )
    }
}

impl HostArgs {
    /// The token from `--token-secret` (wins) or `--token-secret-file`.
    pub fn token(&self) -> Result<Option<Secret>, AfError> {
        self.token.token()
    }

    /// Whether neither an endpoint nor a fleet is named (fetches are local).
    pub fn is_local(&self) -> bool {
        self.endpoint_url.is_none() && self.fleet.fleet.is_none()
    }

    /// The one choice of where the host is: `--endpoint-url` (most specific), else
    /// `--fleet`, else local. [`Reach::discovered`] turns local into the managed container
    /// for the commands that need a host.
    pub fn resolve(&self) -> Result<Reach, AfError> {
        let token = self.token()?;
        // What a printed `recommended_command` must repeat to reach this host (never the
        // token itself).
        let mut replay_args = Vec::new();
        if let Some(u) = &self.endpoint_url {
            replay_args.extend(["--endpoint-url".to_string(), u.clone()]);
        }
        if let Some(f) = &self.token.token_secret_file {
            let f = crate::fsutil::absolute(f);
            replay_args.extend(["--token-secret-file".to_string(), f.display().to_string()]);
        }
        let target = if let Some(raw) = &self.endpoint_url {
            Target::Host(HostTarget {
                endpoint: Endpoint::parse(raw)?,
                token: token.clone(),
                replay_args: replay_args.clone(),
            })
        } else if let Some(fleet) = self.fleet.parsed()? {
            Target::Fleet(FleetTarget {
                fleet,
                connect_timeout: self.fleet.connect_timeout()?,
                token: token.clone(),
            })
        } else {
            Target::Local
        };
        Ok(Reach {
            target,
            token,
            replay_args,
            trace: None,
        })
    }
}

/// Where a command's host is, resolved once from its flags and the environment.
#[derive(Debug, Clone)]
pub struct Reach {
    /// Local, one host, or a fleet.
    pub target: Target,
    /// The flags' token (what a discovered host is reached with, when given).
    token: Option<Secret>,
    /// What a printed command repeats to reach the host (`--token-secret-file`).
    replay_args: Vec<String>,
    /// How the host was found, for the event's trace (discovery).
    pub trace: Option<Value>,
}

impl Reach {
    /// A local reach becomes the managed local container when one is installed (label →
    /// port, token through the engine); with `required`, finding none is "no host endpoint
    /// given", otherwise it stays local. A host or a fleet stays as it is.
    pub fn discovered(self, required: bool) -> Result<Reach, AfError> {
        if !self.target.is_local() {
            return Ok(self);
        }
        let Some(found) = discover_opt(self.token.is_none())? else {
            return if required {
                Err(no_endpoint())
            } else {
                Ok(self)
            };
        };
        let token = self.token.clone().or(found.token);
        Ok(Reach {
            target: Target::Host(HostTarget {
                endpoint: Endpoint::parse(&found.endpoint_url)?,
                token,
                replay_args: self.replay_args.clone(),
            }),
            trace: Some(found.trace),
            ..self
        })
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

/// The managed local container (label → port, token through the engine); `None` when no
/// engine answers or none is installed.
#[cfg(feature = "container")]
fn discover_opt(need_token: bool) -> Result<Option<Found>, AfError> {
    let found = super::block_on(crate::container::discover::for_driver(
        super::env(),
        need_token,
    ))??;
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
fn discover_opt(_need_token: bool) -> Result<Option<Found>, AfError> {
    Ok(None)
}

/// The token from `--token-secret` (wins) or `--token-secret-file`.
fn resolve_token(
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
