//! Where a request runs: locally, on one host, or on a fleet of hosts. A front end (the CLI's
//! resolve step, an MCP server, an SDK caller) chooses it once and puts it on the request;
//! [`crate::sdk::fetch::fetch`] routes by it (a fleet picks its member per fetch).

use std::time::Duration;

use crate::sdk::endpoint::Endpoint;
use crate::sdk::fleet::Fleet;
use crate::sdk::secret::Secret;

/// Where a request runs.
#[derive(Debug, Clone, Default)]
pub enum Target {
    /// Plain HTTP, and a throwaway browser from the request's launcher when one is needed.
    #[default]
    Local,
    /// One host.
    Host(HostTarget),
    /// A fleet: persistent profiles go to their owner, ephemeral fetches to the least-loaded
    /// healthy member ([`crate::sdk::fleet::route`]).
    Fleet(FleetTarget),
}

/// One host and how to reach it.
#[derive(Debug, Clone)]
pub struct HostTarget {
    /// Its listener.
    pub endpoint: Endpoint,
    /// Its bearer token.
    pub token: Option<Secret>,
    /// What a printed `recommended_command` must repeat to reach this host again (such as
    /// `--endpoint-url URL`); never a secret.
    pub replay_args: Vec<String>,
}

/// A fleet and how to reach its members.
#[derive(Debug, Clone)]
pub struct FleetTarget {
    /// The members.
    pub fleet: Fleet,
    /// Bound for reaching one member (health, load, profiles).
    pub connect_timeout: Duration,
    /// The members' bearer token.
    pub token: Option<Secret>,
}

impl Target {
    /// Whether requests run locally (no host, no fleet).
    pub fn is_local(&self) -> bool {
        matches!(self, Target::Local)
    }

    /// The host or fleet token, if any.
    pub fn token(&self) -> Option<&Secret> {
        match self {
            Target::Local => None,
            Target::Host(h) => h.token.as_ref(),
            Target::Fleet(f) => f.token.as_ref(),
        }
    }
}
