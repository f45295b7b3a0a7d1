//! Arguments shared by the driver commands (`health`, `capabilities`, `cdp`, `tabs`, `panel`):
//! where the host is ([`HostArgs`]), the call's bound and the fleet member, resolved into a
//! client.

use std::time::Duration;

use clap::Args;
use serde_json::Value;

use super::reach::{HostArgs, Reach};
use crate::error::AfError;
use crate::sdk::client::Client;
use crate::sdk::secret::Secret;
use crate::sdk::target::Target;

/// How to reach a host, and the call's bound.
#[derive(Debug, Clone, Args)]
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
        self.check()?;
        self.client_on(self.host.resolve()?)
    }

    /// The flags' own checks: the call's bound, and `--member`/`--profile` only with a fleet.
    pub fn check(&self) -> Result<(), AfError> {
        if self.timeout_ms == 0 || self.timeout_ms > 3_600_000 {
            return Err(AfError::invalid(
                "--timeout-ms must be between 1 and 3600000",
            ));
        }
        if self.host.is_local() && (self.member.is_some() || self.profile.is_some()) {
            return Err(AfError::invalid(
                "--member and --profile pick a member of a --fleet; no fleet was given",
            ));
        }
        Ok(())
    }

    /// A client for the host `reach` names (resolved once by the front end, from these
    /// flags): a local reach becomes the managed container, a fleet its member (by
    /// `--member`, `--profile`, or load) now.
    pub fn client_on(&self, reach: Reach) -> Result<(Client, Option<Value>), AfError> {
        let reach = reach.discovered(true)?;
        let (endpoint, token, trace) = match reach.target {
            Target::Host(h) => (h.endpoint, h.token, reach.trace),
            Target::Fleet(f) => {
                let (member, decision) = super::block_on(crate::sdk::fleet::route::for_command(
                    &f.fleet,
                    self.member.as_deref(),
                    self.profile.as_deref(),
                    f.token.as_ref().map(Secret::expose),
                    f.connect_timeout,
                ))??;
                let trace = serde_json::json!({ "fleet": decision });
                (member.endpoint, f.token, Some(trace))
            }
            Target::Local => return Err(super::reach::no_endpoint()),
        };
        let client = Client::new(endpoint)
            .with_token(token)
            .with_timeout(Duration::from_millis(self.timeout_ms));
        Ok((client, trace))
    }
}
