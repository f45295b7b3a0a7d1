//! Arguments shared by the driver commands (`health`, `capabilities`, `cdp`, `tabs`, `panel`):
//! endpoint and token resolution, in one place.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use serde_json::Value;

use crate::env;
use crate::error::{AfError, ErrorCode};
use crate::sdk::client::Client;
use crate::sdk::endpoint::Endpoint;
use crate::sdk::secret::Secret;

/// How to reach a host.
#[derive(Debug, Args)]
pub struct DriverArgs {
    /// Host endpoint (ws://, wss://, http://, https:// or unix:/path).
    #[arg(long, value_name = "URL", env = env::ENDPOINT_URL)]
    pub endpoint_url: Option<String>,
    /// Bearer token for the host.
    #[arg(long, value_name = "STRING", env = env::TOKEN_SECRET, hide_env_values = true)]
    pub token_secret: Option<Secret>,
    /// File holding the bearer token.
    #[arg(long, value_name = "PATH", env = env::TOKEN_SECRET_FILE)]
    pub token_secret_file: Option<PathBuf>,
    /// Bound for the call, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    pub timeout_ms: u64,
    #[command(flatten)]
    pub fleet: super::fleet::FleetOpt,
    /// With --fleet: the member to talk to, by name.
    #[arg(long, value_name = "NAME")]
    pub member: Option<String>,
    /// With --fleet: talk to the member that holds this persistent profile (routing only; the
    /// member's browser is not switched).
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
}

impl DriverArgs {
    /// The resolved client.
    pub fn client(&self) -> Result<Client, AfError> {
        self.resolve().map(|(client, _)| client)
    }

    /// The resolved client and, when the host was discovered, a trace saying which.
    pub fn resolve(&self) -> Result<(Client, Option<Value>), AfError> {
        if self.timeout_ms == 0 || self.timeout_ms > 3_600_000 {
            return Err(AfError::invalid(
                "--timeout-ms must be between 1 and 3600000",
            ));
        }
        let mut token = resolve_token(
            self.token_secret.as_ref(),
            self.token_secret_file.as_deref(),
        )?;
        if self.endpoint_url.is_none()
            && self.fleet.fleet.is_none()
            && (self.member.is_some() || self.profile.is_some())
        {
            return Err(AfError::invalid(
                "--member and --profile pick a member of a --fleet; no fleet was given",
            ));
        }
        let (raw, trace) = match self.endpoint_url.as_deref() {
            Some(raw) => (raw.to_string(), None),
            None if self.fleet.fleet.is_some() => {
                let connect = self.fleet.connect_timeout()?;
                let fleet = self.fleet.parsed()?.ok_or_else(no_endpoint)?;
                let (member, decision) = super::block_on(crate::sdk::fleet::route::for_command(
                    &fleet,
                    self.member.as_deref(),
                    self.profile.as_deref(),
                    token.as_ref().map(Secret::expose),
                    connect,
                ))??;
                (member.url, Some(serde_json::json!({ "fleet": decision })))
            }
            None => {
                let found = discover(token.is_none())?;
                if token.is_none() {
                    token = found.token;
                }
                (found.endpoint_url, Some(found.trace))
            }
        };
        let client = Client::new(Endpoint::parse(&raw)?)
            .with_token(token)
            .with_timeout(Duration::from_millis(self.timeout_ms));
        Ok((client, trace))
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
fn no_endpoint() -> AfError {
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
