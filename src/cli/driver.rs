//! Arguments shared by the driver commands (`health`, `capabilities`, `cdp`, `tabs`, `panel`):
//! endpoint and token resolution, in one place.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::env;
use crate::error::{AfError, ErrorCode};
use crate::sdk::client::Client;
use crate::sdk::endpoint::Endpoint;

/// How to reach a host.
#[derive(Debug, Args)]
pub struct DriverArgs {
    /// Host endpoint (ws://, wss://, http://, https:// or unix:/path).
    #[arg(long, value_name = "URL", env = env::ENDPOINT_URL)]
    pub endpoint_url: Option<String>,
    /// Bearer token for the host.
    #[arg(long, value_name = "STRING", env = env::TOKEN_SECRET, hide_env_values = true)]
    pub token_secret: Option<String>,
    /// File holding the bearer token.
    #[arg(long, value_name = "PATH", env = env::TOKEN_SECRET_FILE)]
    pub token_secret_file: Option<PathBuf>,
    /// Bound for the call, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    pub timeout_ms: u64,
}

impl DriverArgs {
    /// The resolved client.
    pub fn client(&self) -> Result<Client, AfError> {
        let raw = self.endpoint_url.as_deref().ok_or_else(|| {
            AfError::new(ErrorCode::InvalidEndpoint, "no host endpoint given").with_hint(
                "pass --endpoint-url or set AFHTTP_ENDPOINT_URL (start a host with `afhttp host`)",
            )
        })?;
        if self.timeout_ms == 0 || self.timeout_ms > 3_600_000 {
            return Err(AfError::invalid(
                "--timeout-ms must be between 1 and 3600000",
            ));
        }
        let token = resolve_token(
            self.token_secret.as_deref(),
            self.token_secret_file.as_deref(),
        )?;
        Ok(Client::new(Endpoint::parse(raw)?)
            .with_token(token)
            .with_timeout(Duration::from_millis(self.timeout_ms)))
    }
}

/// The token from `--token-secret` (wins) or `--token-secret-file`.
pub fn resolve_token(
    secret: Option<&str>,
    file: Option<&std::path::Path>,
) -> Result<Option<String>, AfError> {
    if let Some(s) = secret {
        return Ok(Some(s.to_string()));
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
    Ok(Some(token))
}
