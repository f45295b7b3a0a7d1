//! A fleet: many `afhttp host`s (Swarm tasks, Kubernetes pods) that one driver routes
//! between. The engines place, restart and store; afhttp only routes.
//!
//! - [`Fleet::parse`] reads `--fleet` / `AFHTTP_FLEET`: a comma list, a file (`@PATH`), and
//!   `dns:HOST:PORT` names that resolve to several stateless hosts.
//! - [`placement`] places a new persistent profile by rendezvous hashing on member names.
//! - [`probe`] asks every member for its health, load, version and profiles.
//! - [`route`] picks the member for a fetch (profile affinity, or least-loaded with failover)
//!   and for the thin commands (`tabs`, `panel`, `cdp`, `upload`).

pub mod placement;
pub mod probe;
pub mod route;

use std::net::IpAddr;

use crate::error::AfError;
use crate::sdk::endpoint::Endpoint;

/// Default bound for reaching one member (its `/health` and `/capabilities`).
pub const DEFAULT_CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// One host of a fleet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Stable name (slot, ordinal or DNS name; never an IP for a member that may hold
    /// profiles): what placement hashes on.
    pub name: String,
    /// The endpoint URL as given.
    pub url: String,
    /// The parsed endpoint.
    pub endpoint: Endpoint,
    /// Only ephemeral fetches go here (a stateless host: never a persistent profile).
    pub ephemeral_only: bool,
}

/// The members of a fleet, in the order given (names unique).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fleet {
    /// Every member, `dns:` names expanded.
    pub members: Vec<Member>,
    /// The spec as given (for a printed command that must reach the same fleet).
    pub spec: String,
}

/// One entry before DNS expansion.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    Member(Member),
    /// `dns:HOST:PORT`: every address HOST resolves to is an ephemeral-only member.
    Dns {
        host: String,
        port: u16,
    },
}

fn bad(why: impl std::fmt::Display) -> AfError {
    AfError::invalid(format!("fleet: {why}"))
        .with_field("fleet")
        .with_hint(
            "list members as NAME=URL or URL (comma-separated or one per line in @FILE); \
         prefix ephemeral: for stateless hosts; dns:HOST:PORT for a name resolving to several",
        )
}

impl Fleet {
    /// Parse a fleet spec and resolve its `dns:` entries.
    pub async fn parse(spec: &str) -> Result<Fleet, AfError> {
        let entries = parse_entries(spec)?;
        let mut members = Vec::new();
        for e in entries {
            match e {
                Entry::Member(m) => members.push(m),
                Entry::Dns { host, port } => members.extend(resolve_dns(&host, port).await?),
            }
        }
        if members.is_empty() {
            return Err(bad("no member"));
        }
        let mut seen = std::collections::HashSet::new();
        for m in &members {
            if !seen.insert(m.name.clone()) {
                return Err(bad(format!("member name {:?} appears twice", m.name)));
            }
        }
        Ok(Fleet {
            members,
            spec: spec.to_string(),
        })
    }

    /// The member named `name`.
    pub fn member(&self, name: &str) -> Result<&Member, AfError> {
        self.members.iter().find(|m| m.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.members.iter().map(|m| m.name.as_str()).collect();
            AfError::invalid(format!(
                "member {name:?} is not in the fleet ({})",
                names.join(", ")
            ))
        })
    }

    /// Members that may hold persistent profiles.
    pub fn persistent_members(&self) -> impl Iterator<Item = &Member> {
        self.members.iter().filter(|m| !m.ephemeral_only)
    }
}

/// The entries of `spec`: a comma list, or `@FILE` (also a bare path to an existing file),
/// one entry per line or comma, `#` comments.
fn parse_entries(spec: &str) -> Result<Vec<Entry>, AfError> {
    let spec = spec.trim();
    let text = if let Some(path) = spec.strip_prefix('@') {
        read_file(path)?
    } else if !spec.contains(',') && !spec.contains("://") && looks_like_path(spec) {
        read_file(spec)?
    } else {
        spec.to_string()
    };
    text.lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .flat_map(|l| l.split(','))
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(parse_entry)
        .collect()
}

fn looks_like_path(s: &str) -> bool {
    (s.starts_with('/') || s.starts_with("./") || s.starts_with("../"))
        && std::path::Path::new(s).is_file()
}

fn read_file(path: &str) -> Result<String, AfError> {
    std::fs::read_to_string(path).map_err(|e| bad(format!("cannot read {path}: {e}")))
}

fn parse_entry(raw: &str) -> Result<Entry, AfError> {
    if let Some(rest) = raw.strip_prefix("dns:") {
        let (host, port) = rest
            .rsplit_once(':')
            .and_then(|(h, p)| Some((h, p.parse::<u16>().ok()?)))
            .filter(|(h, _)| !h.is_empty())
            .ok_or_else(|| bad(format!("{raw:?}: write dns:HOST:PORT")))?;
        return Ok(Entry::Dns {
            host: host.to_string(),
            port,
        });
    }
    let (ephemeral_only, rest) = match raw.strip_prefix("ephemeral:") {
        Some(rest) => (true, rest),
        None => (false, raw),
    };
    // `NAME=URL`; a URL never has `=` before its scheme separator.
    let (name, url) = match rest.split_once('=') {
        Some((n, u)) if !n.contains("://") && !n.contains(':') => (Some(n.trim()), u.trim()),
        _ => (None, rest),
    };
    let url = if url.contains("://") || url.starts_with("unix:") {
        url.to_string()
    } else {
        format!("ws://{url}")
    };
    let endpoint = Endpoint::parse(&url).map_err(|e| bad(format!("{raw:?}: {}", e.message)))?;
    let name = match name {
        Some(n) => valid_name(n)?,
        None => derived_name(&endpoint, ephemeral_only)
            .ok_or_else(|| bad(format!("{raw:?}: name it (NAME=URL): placement hashes on stable names, never on an IP or a socket path")))?,
    };
    Ok(Entry::Member(Member {
        name,
        url,
        endpoint,
        ephemeral_only,
    }))
}

fn valid_name(n: &str) -> Result<String, AfError> {
    let ok = !n.is_empty()
        && n.len() <= 253
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'/'));
    if ok {
        Ok(n.to_string())
    } else {
        Err(bad(format!(
            "member name {n:?}: letters, digits, - _ . / only"
        )))
    }
}

/// A member's default name: its DNS host name (with the port when several members could
/// share it); IP literals and sockets only for ephemeral-only members, which hold nothing.
fn derived_name(endpoint: &Endpoint, ephemeral_only: bool) -> Option<String> {
    match endpoint {
        Endpoint::Tcp { host, port, .. } => {
            let is_ip = host.parse::<IpAddr>().is_ok();
            if is_ip && !ephemeral_only {
                return None;
            }
            Some(if is_ip {
                format!("{host}:{port}")
            } else {
                host.clone()
            })
        }
        Endpoint::Unix(p) => ephemeral_only.then(|| p.display().to_string()),
    }
}

/// Every address of `host` as an ephemeral-only member named `host/ADDRESS`.
async fn resolve_dns(host: &str, port: u16) -> Result<Vec<Member>, AfError> {
    let addrs = tokio::net::lookup_host((host, port)).await.map_err(|e| {
        AfError::new(
            crate::error::ErrorCode::DnsResolutionFailed,
            format!("fleet dns:{host}:{port}: {e}"),
        )
    })?;
    let mut ips: Vec<IpAddr> = addrs.map(|a| a.ip()).collect();
    ips.sort();
    ips.dedup();
    Ok(ips
        .into_iter()
        .map(|ip| {
            let authority = match ip {
                IpAddr::V6(v6) => format!("[{v6}]:{port}"),
                IpAddr::V4(v4) => format!("{v4}:{port}"),
            };
            Member {
                name: format!("{host}/{ip}"),
                url: format!("ws://{authority}"),
                endpoint: Endpoint::Tcp {
                    tls: false,
                    host: ip.to_string(),
                    port,
                },
                ephemeral_only: true,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(spec: &str) -> Vec<Member> {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(Fleet::parse(spec))
            .unwrap()
            .members
    }

    #[test]
    fn comma_lists_names_and_roles() {
        let m = members(
            "afhttp-0.afhttp:9222, b=ws://127.0.0.1:1, ephemeral:ws://127.0.0.1:2,https://h.example:443",
        );
        let names: Vec<&str> = m.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["afhttp-0.afhttp", "b", "127.0.0.1:2", "h.example"]);
        assert_eq!(m[0].url, "ws://afhttp-0.afhttp:9222");
        assert!(!m[1].ephemeral_only && m[2].ephemeral_only);
    }

    #[test]
    fn files_with_comments() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("fleet");
        std::fs::write(
            &p,
            "# the fleet\na=ws://127.0.0.1:1\n\nb=ws://127.0.0.1:2 # two\n",
        )
        .unwrap();
        assert_eq!(members(&format!("@{}", p.display())).len(), 2);
        assert_eq!(members(&p.display().to_string()).len(), 2);
    }

    #[test]
    fn dns_names_expand_to_ephemeral_members() {
        let m = members("dns:localhost:9");
        assert!(!m.is_empty());
        assert!(m
            .iter()
            .all(|m| m.ephemeral_only && m.name.starts_with("localhost/")));
    }

    #[test]
    fn refusals() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        for spec in [
            "",
            " , ",
            "ws://127.0.0.1:1",
            "a=ws://127.0.0.1:1,a=ws://127.0.0.1:2",
            "bad name=ws://h:1",
            "dns:nohost",
            "a=ftp://h:1",
        ] {
            let e = rt.block_on(Fleet::parse(spec)).unwrap_err();
            assert_eq!(
                e.code,
                crate::error::ErrorCode::InvalidArgument,
                "{spec}: {e:?}"
            );
        }
    }
}
