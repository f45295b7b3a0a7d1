//! The egress policy: which addresses a fetch may reach. Address categories,
//! `--egress-allow` exceptions, and the decision over every address a name resolves to.
//!
//! One type for every enforcer: the host's egress proxy in front of its browser
//! (`host::egress`), and the plain-HTTP step of a fetch whose request carries a policy
//! ([`crate::sdk::fetch::FetchRequest::with_egress_policy`], what `afhttp mcp` sets), which
//! checks the address it actually connects to on every redirect hop
//! ([`crate::sdk::http::guard`]).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use crate::error::{AfError, ErrorCode};

/// Why an address is special.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// A cloud metadata service (169.254.169.254, fd00:ec2::254, 100.100.100.200).
    Metadata,
    /// 169.254.0.0/16, fe80::/10.
    LinkLocal,
    /// 0.0.0.0/8, `::` (on Linux a connection to 0.0.0.0 reaches this machine).
    Unspecified,
    /// Multicast and broadcast.
    Multicast,
    /// 127.0.0.0/8, `::1`.
    Loopback,
    /// RFC 1918, fc00::/7 (unique local), fec0::/10 (site local).
    Private,
    /// 100.64.0.0/10 (carrier-grade NAT, often a cloud's internal network).
    SharedAddress,
}

impl Category {
    /// The stable name used in refusals.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Metadata => "cloud_metadata",
            Category::LinkLocal => "link_local",
            Category::Unspecified => "unspecified",
            Category::Multicast => "multicast",
            Category::Loopback => "loopback",
            Category::Private => "private",
            Category::SharedAddress => "shared_address",
        }
    }

    /// Denied under every policy (no browser has business there).
    fn always_denied(self) -> bool {
        matches!(
            self,
            Category::Metadata | Category::LinkLocal | Category::Unspecified | Category::Multicast
        )
    }
}

/// The category of `ip`, if any (`None`: an ordinary public address). IPv4-mapped and NAT64
/// IPv6 addresses are judged by the IPv4 address inside.
pub fn classify(ip: IpAddr) -> Option<Category> {
    match ip.to_canonical() {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => {
            let s = v6.segments();
            if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
                let [a, b] = s[6].to_be_bytes();
                let [c, d] = s[7].to_be_bytes();
                return classify_v4(Ipv4Addr::new(a, b, c, d));
            }
            classify_v6(v6)
        }
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<Category> {
    let [a, b, ..] = ip.octets();
    Some(
        if ip == Ipv4Addr::new(169, 254, 169, 254) || ip == Ipv4Addr::new(100, 100, 100, 200) {
            Category::Metadata
        } else if ip.is_link_local() {
            Category::LinkLocal
        } else if a == 0 {
            Category::Unspecified
        } else if ip.is_multicast() || ip.is_broadcast() {
            Category::Multicast
        } else if ip.is_loopback() {
            Category::Loopback
        } else if ip.is_private() {
            Category::Private
        } else if a == 100 && (64..128).contains(&b) {
            Category::SharedAddress
        } else {
            return None;
        },
    )
}

fn classify_v6(ip: Ipv6Addr) -> Option<Category> {
    let first = ip.segments()[0];
    Some(
        if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
            Category::Metadata
        } else if first & 0xffc0 == 0xfe80 {
            Category::LinkLocal
        } else if ip.is_unspecified() {
            Category::Unspecified
        } else if ip.is_multicast() {
            Category::Multicast
        } else if ip.is_loopback() {
            Category::Loopback
        } else if first & 0xfe00 == 0xfc00 || first & 0xffc0 == 0xfec0 {
            Category::Private
        } else {
            return None;
        },
    )
}

/// Parse `IP`, `[IPv6]` or `IP/PREFIX` into an address block (`None` when it is neither).
pub fn parse_ip_block(raw: &str) -> Option<(IpAddr, u8)> {
    let raw = raw.trim();
    let (ip, prefix) = match raw.split_once('/') {
        Some((ip, prefix)) => (ip, Some(prefix)),
        None => (raw.trim_matches(['[', ']']), None),
    };
    let ip: IpAddr = ip.parse().ok()?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    let prefix = match prefix {
        Some(p) => p.parse::<u8>().ok().filter(|p| *p <= max)?,
        None => max,
    };
    Some((ip, prefix))
}

/// Whether address block `(net, prefix)` holds `ip` (IPv4-mapped IPv6 counts as IPv4).
pub fn block_covers((net, prefix): (IpAddr, u8), ip: IpAddr) -> bool {
    match (net.to_canonical(), ip.to_canonical()) {
        (IpAddr::V4(n), IpAddr::V4(i)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            u32::from(n) & mask == u32::from(i) & mask
        }
        (IpAddr::V6(n), IpAddr::V6(i)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            u128::from(n) & mask == u128::from(i) & mask
        }
        _ => false,
    }
}

/// One `--egress-allow` entry: an address block or an exact host name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllowRule {
    /// `IP` or `IP/PREFIX`.
    Block(IpAddr, u8),
    /// A host name, matched exactly (case-insensitive, trailing dot ignored).
    Host(String),
}

impl AllowRule {
    /// Parse `10.0.0.0/8`, `192.168.1.5`, `fd00::/8` or `intranet.example`.
    pub fn parse(raw: &str) -> Result<AllowRule, AfError> {
        let raw = raw.trim();
        let bad = || {
            AfError::invalid(format!(
                "egress_allow {raw:?} is not an IP, IP/PREFIX or host name"
            ))
            .with_field("egress_allow")
        };
        if raw.contains('/') || raw.trim_matches(['[', ']']).parse::<IpAddr>().is_ok() {
            let (ip, prefix) = parse_ip_block(raw).ok_or_else(bad)?;
            return Ok(AllowRule::Block(ip, prefix));
        }
        let name = raw.trim_end_matches('.').to_ascii_lowercase();
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
        {
            return Err(bad());
        }
        Ok(AllowRule::Host(name))
    }

    fn covers_ip(&self, ip: IpAddr) -> bool {
        let AllowRule::Block(net, prefix) = self else {
            return false;
        };
        block_covers((*net, *prefix), ip)
    }

    fn covers_host(&self, host: &str) -> bool {
        matches!(self, AllowRule::Host(h) if h.eq_ignore_ascii_case(host.trim_end_matches('.')))
    }
}

/// An egress policy (the host browser's, or a fetch's).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// Also deny loopback, private and shared (CGNAT) addresses (`--deny-private-networks`).
    pub deny_private: bool,
    /// Exceptions (`--egress-allow`), which win over every category.
    pub allow: Vec<AllowRule>,
}

/// A refused target: which address and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    /// The refused address.
    pub ip: IpAddr,
    /// Its category.
    pub category: Category,
}

impl std::fmt::Display for Denial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} is {}", self.ip, self.category.as_str())
    }
}

impl Policy {
    /// Decide a connection to `host` (as the browser named it) resolved to `ips`: refused
    /// when any address is denied, so a name cannot mix a public and a private answer.
    pub fn decide(&self, host: &str, ips: &[IpAddr]) -> Result<(), Denial> {
        if self.allow.iter().any(|r| r.covers_host(host)) {
            return Ok(());
        }
        for &ip in ips {
            if self.allow.iter().any(|r| r.covers_ip(ip)) {
                continue;
            }
            if let Some(category) = classify(ip) {
                if category.always_denied() || self.deny_private {
                    return Err(Denial { ip, category });
                }
            }
        }
        Ok(())
    }

    /// The policy's name for the ready document: `deny_private` or `deny_link_local`.
    pub fn name(&self) -> &'static str {
        if self.deny_private {
            "deny_private"
        } else {
            "deny_link_local"
        }
    }
}

/// A refusal of `host:port` as the stable error (`egress_denied`, not retryable).
pub fn denied_error(host: &str, port: Option<u16>, denial: &Denial) -> AfError {
    let target = match port {
        Some(p) if host.contains(':') => format!("[{host}]:{p}"),
        Some(p) => format!("{host}:{p}"),
        None => host.to_string(),
    };
    AfError::new(
        ErrorCode::EgressDenied,
        format!("{target} refused by the egress policy: {denial}"),
    )
    .with_hint(
        "the egress policy refuses this address (link-local and cloud metadata always; \
         loopback and private ones with deny_private_networks); its operator can allow it \
         with an egress_allow exception (`afhttp fetch|mcp|host --egress-allow`)",
    )
}

/// A refusal carried through a transport's error chain (the HTTP client's resolver), so
/// the fetch reports `egress_denied` rather than a DNS or connection failure.
#[derive(Debug, Clone)]
pub struct EgressRefused {
    /// The host name as the request named it.
    pub host: String,
    /// Which address was refused and why.
    pub denial: Denial,
}

impl std::fmt::Display for EgressRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} refused by the egress policy: {}",
            self.host, self.denial
        )
    }
}

impl std::error::Error for EgressRefused {}

/// The [`EgressRefused`] anywhere in `err`'s source chain (an `io::Error` hides what it
/// wraps from `source()`, so its inner error is looked at too).
pub fn refusal_in<'a>(err: &'a (dyn std::error::Error + 'static)) -> Option<&'a EgressRefused> {
    let mut cur: Option<&'a (dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = cur {
        if let Some(r) = e.downcast_ref::<EgressRefused>() {
            return Some(r);
        }
        if let Some(inner) = e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            if let Some(r) = refusal_in(inner) {
                return Some(r);
            }
        }
        cur = e.source();
    }
    None
}

/// How long [`check_host`] waits for a name to resolve.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(15);

/// Check `host` (an IP literal, or a name resolved here) before something else connects to
/// it by name (a proxy, or a browser's proxy chain). A name that does not resolve here
/// passes: the connection then fails on its own, or resolves on a network whose own policy
/// applies (a `socks5h://` proxy).
pub async fn check_host(policy: &Policy, host: &str, port: u16) -> Result<(), AfError> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let ips: Vec<IpAddr> = match bare.parse::<IpAddr>() {
        Ok(ip) => vec![ip],
        Err(_) => {
            match tokio::time::timeout(RESOLVE_TIMEOUT, tokio::net::lookup_host((bare, port))).await
            {
                Ok(Ok(addrs)) => addrs.map(|a| a.ip()).collect(),
                _ => return Ok(()),
            }
        }
    };
    policy
        .decide(bare, &ips)
        .map_err(|d| denied_error(bare, Some(port), &d))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn categories() {
        for (addr, want) in [
            ("169.254.169.254", Some(Category::Metadata)),
            ("fd00:ec2::254", Some(Category::Metadata)),
            ("100.100.100.200", Some(Category::Metadata)),
            ("169.254.1.1", Some(Category::LinkLocal)),
            ("fe80::1", Some(Category::LinkLocal)),
            ("::ffff:169.254.169.254", Some(Category::Metadata)),
            ("64:ff9b::a9fe:a9fe", Some(Category::Metadata)),
            ("0.0.0.0", Some(Category::Unspecified)),
            ("::", Some(Category::Unspecified)),
            ("224.0.0.1", Some(Category::Multicast)),
            ("255.255.255.255", Some(Category::Multicast)),
            ("127.0.0.1", Some(Category::Loopback)),
            ("127.8.9.10", Some(Category::Loopback)),
            ("::1", Some(Category::Loopback)),
            ("::ffff:127.0.0.1", Some(Category::Loopback)),
            ("10.1.2.3", Some(Category::Private)),
            ("172.16.0.1", Some(Category::Private)),
            ("172.31.255.255", Some(Category::Private)),
            ("192.168.0.1", Some(Category::Private)),
            ("fd12::1", Some(Category::Private)),
            ("100.64.0.1", Some(Category::SharedAddress)),
            ("172.32.0.1", None),
            ("100.128.0.1", None),
            ("8.8.8.8", None),
            ("2001:4860::8888", None),
        ] {
            assert_eq!(classify(ip(addr)), want, "{addr}");
        }
    }

    #[test]
    fn default_denies_link_local_and_metadata_only() {
        let p = Policy::default();
        assert_eq!(p.name(), "deny_link_local");
        assert!(p.decide("x", &[ip("127.0.0.1"), ip("10.0.0.1")]).is_ok());
        assert!(p.decide("x", &[ip("93.184.216.34")]).is_ok());
        let d = p.decide("x", &[ip("169.254.169.254")]).unwrap_err();
        assert_eq!(d.category, Category::Metadata);
        assert_eq!(d.to_string(), "169.254.169.254 is cloud_metadata");
        assert!(p.decide("x", &[ip("fe80::1")]).is_err());
        assert!(p.decide("x", &[ip("0.0.0.0")]).is_err());
    }

    #[test]
    fn deny_private_and_exceptions() {
        let mut p = Policy {
            deny_private: true,
            allow: vec![],
        };
        for a in [
            "127.0.0.1",
            "::1",
            "10.0.0.1",
            "192.168.1.1",
            "100.64.1.1",
            "fd00::1",
        ] {
            assert!(p.decide("x", &[ip(a)]).is_err(), "{a}");
        }
        // One private answer among public ones refuses the name.
        assert!(p.decide("x", &[ip("8.8.8.8"), ip("10.0.0.1")]).is_err());
        assert!(p.decide("x", &[ip("8.8.8.8")]).is_ok());
        p.allow = [
            "10.1.0.0/16",
            "192.168.1.5",
            "intranet.example.",
            "fd00::/8",
        ]
        .iter()
        .map(|r| AllowRule::parse(r).unwrap())
        .collect();
        assert!(p.decide("x", &[ip("10.1.200.3")]).is_ok());
        assert!(p.decide("x", &[ip("10.2.0.1")]).is_err());
        assert!(p.decide("x", &[ip("192.168.1.5")]).is_ok());
        assert!(p.decide("x", &[ip("192.168.1.6")]).is_err());
        assert!(p.decide("x", &[ip("fd00::9")]).is_ok());
        assert!(p.decide("INTRANET.example", &[ip("10.9.9.9")]).is_ok());
        // An explicit exception even reaches a metadata address.
        p.allow.push(AllowRule::parse("169.254.169.254").unwrap());
        assert!(p.decide("x", &[ip("169.254.169.254")]).is_ok());
        for bad in ["", "10.0.0.0/33", "a b", "1.2.3.4/x", "::/129", "a_b"] {
            assert!(AllowRule::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            AllowRule::parse("0.0.0.0/0").unwrap(),
            AllowRule::Block(ip("0.0.0.0"), 0)
        );
        assert!(AllowRule::parse("0.0.0.0/0")
            .unwrap()
            .covers_ip(ip("1.2.3.4")));
        assert_eq!(parse_ip_block("[::1]"), Some((ip("::1"), 128)));
        assert_eq!(parse_ip_block("10.1.2.3"), Some((ip("10.1.2.3"), 32)));
        assert_eq!(parse_ip_block("intranet.example"), None);
        assert!(block_covers((ip("10.0.0.0"), 8), ip("::ffff:10.2.3.4")));
    }
}
