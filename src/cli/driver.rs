//! Arguments shared by the driver commands (`health`, `capabilities`, `cdp`, `tabs`, `panel`):
//! where the host is ([`HostArgs`]), the call's bound and the fleet member, resolved into a
//! client.

use std::time::Duration;

use clap::Args;
use serde_json::Value;

use super::reach::{discover, HostArgs};
use crate::error::AfError;
use crate::sdk::client::Client;
use crate::sdk::endpoint::Endpoint;
use crate::sdk::secret::Secret;

/// How to reach a host, and the call's bound.
#[derive(Debug, Args)]
pub struct DriverArgs {
    #[command(flatten)]
    pub host: HostArgs,
    /// Bound for the call, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = crate::sdk::defaults::TIMEOUT_MS)]
    pub timeout_ms: u64,
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
        let mut token = self.host.token()?;
        if self.host.is_local() && (self.member.is_some() || self.profile.is_some()) {
            return Err(AfError::invalid(
                "--member and --profile pick a member of a --fleet; no fleet was given",
            ));
        }
        let (raw, trace) = match (&self.host.endpoint_url, self.host.routing_fleet()?) {
            (Some(raw), _) => (raw.clone(), None),
            (None, Some((fleet, connect))) => {
                let (member, decision) = super::block_on(crate::sdk::fleet::route::for_command(
                    &fleet,
                    self.member.as_deref(),
                    self.profile.as_deref(),
                    token.as_ref().map(Secret::expose),
                    connect,
                ))??;
                (member.url, Some(serde_json::json!({ "fleet": decision })))
            }
            (None, None) => {
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
