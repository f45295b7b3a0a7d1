//! Ask every member, at once and each within the connect timeout, for its health, load,
//! version and persistent profiles (`/health` and `/capabilities`, both authenticated).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{Fleet, Member};
use crate::error::{AfError, ErrorCode};
use crate::sdk::client::Client;

/// What one member said (or why it said nothing).
#[derive(Debug, Clone)]
pub struct Report {
    /// The member.
    pub member: Member,
    /// `/health`'s `status` (`ok`, `starting`, `degraded`) when it answered.
    pub status: Option<String>,
    /// The host's afhttp version.
    pub version: Option<String>,
    /// Proxied CDP clients open now (`/capabilities` `limits.clients_in_use`).
    pub clients_in_use: u64,
    /// Open page targets (`/health` `tabs_active`).
    pub tabs_active: u64,
    /// Persistent profiles on its disk, for its backend.
    pub profiles: Vec<String>,
    /// The profile its browser runs on now (`None`: ephemeral).
    pub active_profile: Option<String>,
    /// The role the host itself reports (`ephemeral` for `--ephemeral-only`), when it
    /// answered; older hosts report none.
    pub host_role: Option<String>,
    /// Why it could not be asked (host_unreachable, unauthorized, …).
    pub error: Option<AfError>,
    /// How long asking took.
    pub elapsed: Duration,
}

impl Report {
    /// It answered both questions.
    pub fn reachable(&self) -> bool {
        self.error.is_none()
    }

    /// It answered and says it is ready.
    pub fn healthy(&self) -> bool {
        self.reachable() && self.status.as_deref() == Some("ok")
    }

    /// Whether its disk (or its running browser) holds persistent profile `name`.
    pub fn holds(&self, name: &str) -> bool {
        self.profiles.iter().any(|p| p == name) || self.active_profile.as_deref() == Some(name)
    }

    /// As `fleet status` prints it.
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "name": self.member.name,
            "endpoint_url": self.member.url,
            "role": if self.member.ephemeral_only { "ephemeral" } else { "persistent" },
            "reachable": self.reachable(),
            "healthy": self.healthy(),
            "status": self.status,
            "version": self.version,
            "load": {"clients_in_use": self.clients_in_use, "tabs_active": self.tabs_active},
            "profiles": self.profiles,
            "active_profile": self.active_profile,
            "probe_ms": crate::sdk::fetch::outcome::round1(self.elapsed.as_secs_f64() * 1000.0),
        });
        if let Some(role) = &self.host_role {
            v["host_role"] = json!(role);
            // Placement follows the list (stable whoever is up), so an ephemeral-only host
            // listed as persistent refuses the profiles placed on it: say so here.
            if role == "ephemeral" && !self.member.ephemeral_only {
                v["role_mismatch"] = json!(
                    "the host is ephemeral-only (`afhttp host --ephemeral-only`) but listed \
                     as persistent: profiles placed on it are refused; mark it `ephemeral:` in \
                     the fleet"
                );
            }
        }
        if let Some(e) = &self.error {
            v["error"] = json!({"code": e.code.as_str(), "message": e.message});
        }
        v
    }
}

/// Ask `member` within `timeout`.
pub async fn probe(member: &Member, token: Option<&str>, timeout: Duration) -> Report {
    let started = Instant::now();
    let client = Client::new(member.endpoint.clone())
        .with_token(token.map(crate::sdk::secret::Secret::new))
        .with_timeout(timeout);
    let asked = tokio::time::timeout(timeout, async {
        tokio::try_join!(client.health(), client.capabilities())
    })
    .await
    .unwrap_or_else(|_| {
        Err(AfError::new(
            ErrorCode::HostUnreachable,
            format!("did not answer within {} ms", timeout.as_millis()),
        ))
    });
    let mut report = Report {
        member: member.clone(),
        status: None,
        version: None,
        clients_in_use: 0,
        tabs_active: 0,
        profiles: Vec::new(),
        active_profile: None,
        host_role: None,
        error: None,
        elapsed: Duration::ZERO,
    };
    match asked {
        Ok((health, caps)) => {
            let s = |v: &Value, p: &str| v.pointer(p).and_then(Value::as_str).map(String::from);
            report.status = s(&health, "/status");
            report.version = s(&health, "/version");
            report.tabs_active = health["tabs_active"].as_u64().unwrap_or(0);
            report.clients_in_use = caps
                .pointer("/limits/clients_in_use")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            report.profiles = caps
                .pointer("/profiles/persistent")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default();
            report.active_profile = s(&caps, "/profiles/active");
            report.host_role = s(&caps, "/role");
        }
        Err(e) => {
            report.error = Some(AfError::new(
                e.code,
                format!("member {} ({}): {}", member.name, member.url, e.message),
            ));
        }
    }
    report.elapsed = started.elapsed();
    report
}

/// Ask every member of `fleet` at once.
pub async fn probe_all(fleet: &Fleet, token: Option<&str>, timeout: Duration) -> Vec<Report> {
    futures_util::future::join_all(fleet.members.iter().map(|m| probe(m, token, timeout))).await
}

/// `afhttp fleet status`: every member, and where each persistent profile lives.
pub fn status_document(reports: &[Report]) -> Value {
    let mut profiles = serde_json::Map::new();
    for r in reports {
        for p in &r.profiles {
            let entry = profiles.entry(p.clone()).or_insert_with(|| json!([]));
            if let Value::Array(a) = entry {
                a.push(json!(r.member.name));
            }
        }
    }
    json!({
        "members": reports.iter().map(Report::to_json).collect::<Vec<_>>(),
        "profiles": profiles,
        "members_total": reports.len(),
        "members_healthy": reports.iter().filter(|r| r.healthy()).count(),
        "members_unreachable": reports.iter().filter(|r| !r.reachable()).count(),
    })
}
