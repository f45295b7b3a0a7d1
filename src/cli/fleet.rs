//! `afhttp fleet status`, and the `--fleet` options other commands flatten in.
//!
//! A deliberate extension of the spec's 11 commands: a fleet of hosts (Swarm tasks,
//! Kubernetes pods) needs one place that shows every member's health, load, version and
//! persistent profiles.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};

use crate::env;
use crate::envelope::Event;
use crate::error::AfError;
use crate::sdk::fleet::{probe, Fleet};
use crate::sdk::secret::Secret;

/// `--fleet` and its connect bound (flattened into `fetch` and the driver commands).
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

/// Arguments of `afhttp fleet`.
#[derive(Debug, Args)]
pub struct FleetArgs {
    #[command(subcommand)]
    command: FleetCommand,
}

#[derive(Debug, Subcommand)]
enum FleetCommand {
    /// Every member's health, load, version and persistent profiles, and where each profile
    /// lives.
    Status {
        #[command(flatten)]
        fleet: FleetOpt,
        /// Bearer token of the fleet's hosts.
        #[arg(long, value_name = "STRING", env = env::TOKEN_SECRET, hide_env_values = true)]
        token_secret: Option<Secret>,
        /// File holding the bearer token.
        #[arg(long, value_name = "PATH", env = env::TOKEN_SECRET_FILE)]
        token_secret_file: Option<PathBuf>,
    },
}

/// Run `afhttp fleet`.
pub fn run(args: FleetArgs) -> Event {
    match args.command {
        FleetCommand::Status {
            fleet,
            token_secret,
            token_secret_file,
        } => match status(&fleet, token_secret.as_ref(), token_secret_file.as_deref()) {
            Ok(doc) => Event::result("fleet_status", doc, None),
            Err(e) => Event::error(&e, None),
        },
    }
}

fn status(
    opt: &FleetOpt,
    token: Option<&Secret>,
    token_file: Option<&std::path::Path>,
) -> Result<serde_json::Value, AfError> {
    let timeout = opt.connect_timeout()?;
    let token = super::driver::resolve_token(token, token_file)?;
    let fleet = opt.parsed()?.ok_or_else(|| {
        AfError::invalid("fleet status needs --fleet (or AFHTTP_FLEET)")
            .with_hint("--fleet afhttp-1=ws://HOST:PORT,afhttp-2=ws://HOST:PORT")
    })?;
    let reports = super::block_on(probe::probe_all(
        &fleet,
        token.as_ref().map(Secret::expose),
        timeout,
    ))?;
    Ok(probe::status_document(&reports))
}
