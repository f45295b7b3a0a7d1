//! `afhttp fleet status` (the `--fleet` options other commands flatten in are
//! [`super::reach::FleetOpt`]).
//!
//! A deliberate extension of the spec's 11 commands: a fleet of hosts (Swarm tasks,
//! Kubernetes pods) needs one place that shows every member's health, load, version and
//! persistent profiles.

use clap::{Args, Subcommand};

use super::reach::{FleetOpt, TokenArgs};
use crate::envelope::Event;
use crate::error::AfError;
use crate::sdk::fleet::probe;
use crate::sdk::secret::Secret;

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
        #[command(flatten)]
        token: TokenArgs,
    },
}

/// Run `afhttp fleet`.
pub fn run(args: FleetArgs) -> Event {
    match args.command {
        FleetCommand::Status { fleet, token } => match status(&fleet, &token) {
            Ok(doc) => Event::result("fleet_status", doc, None),
            Err(e) => super::error_event(e, None),
        },
    }
}

fn status(opt: &FleetOpt, token: &TokenArgs) -> Result<serde_json::Value, AfError> {
    let timeout = opt.connect_timeout()?;
    let token = token.token()?;
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
