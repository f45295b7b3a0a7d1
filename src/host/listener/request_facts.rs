//! What a request says about where it came from and how: its Host and Origin (the
//! DNS-rebinding checks read them), whether the client used https, and whether its peer may
//! speak for it through forwarding headers.

use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, Request};
use axum::http::{header, HeaderMap};

use super::config::{ListenAddr, ListenerConfig};

/// The name part of a Host/authority value (`[::1]:80` → `::1`, `a.b:80` → `a.b`).
pub fn host_name(authority: &str) -> &str {
    let authority = authority.trim();
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match authority.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => authority,
    }
}

/// Whether a request without a bearer header may use this Host (DNS-rebinding guard).
/// A missing Host cannot come from a browser, so it passes.
pub fn host_acceptable(config: &ListenerConfig, host: Option<&str>) -> bool {
    let Some(host) = host else { return true };
    let name = host_name(host);
    name.parse::<IpAddr>().is_ok()
        || name.eq_ignore_ascii_case("localhost")
        || config.host_allowed(name)
}

/// Whether a browser-sent `Origin` is acceptable: absent, the same origin as the Host the
/// request was sent to (scheme default ports filled in), or naming an allowed host. `null`
/// and malformed values are refused.
pub fn origin_acceptable(config: &ListenerConfig, headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    let Some((scheme, authority)) = origin.trim().split_once("://") else {
        return false; // "null" and garbage
    };
    let authority = authority.trim_end_matches('/');
    let origin_port = port_of(authority).or(match scheme.to_ascii_lowercase().as_str() {
        "http" | "ws" => Some(80),
        "https" | "wss" => Some(443),
        _ => None,
    });
    let same = header_str(headers, header::HOST).is_some_and(|host| {
        let host_port = port_of(host);
        host_name(host).eq_ignore_ascii_case(host_name(authority))
            && match (host_port, origin_port) {
                (Some(h), Some(o)) => h == o,
                // The Host names no port: the client used the scheme's default, which behind
                // a TLS-terminating proxy may be either.
                (None, Some(o)) => o == 80 || o == 443,
                _ => false,
            }
    });
    same || config.host_allowed(host_name(authority))
}

/// The explicit port of an authority (`a:80` → 80, `[::1]:9` → 9, `a` → `None`).
fn port_of(authority: &str) -> Option<u16> {
    let authority = authority.trim();
    let rest = match authority.strip_prefix('[') {
        Some(v6) => v6.split_once(']').map(|(_, r)| r)?,
        None => authority,
    };
    let (_, port) = rest.rsplit_once(':')?;
    port.parse().ok()
}

/// Whether the client reached the listener over https: the request URI says so, or
/// `X-Forwarded-Proto: https` came from a peer we trust to say it, i.e. a loopback TCP peer
/// (a reverse proxy on this machine) or any peer of a unix-socket listener. From anyone else
/// the header is ignored: a remote client could otherwise claim https it does not have.
pub fn client_https(config: &ListenerConfig, request: &Request) -> bool {
    if request.uri().scheme_str() == Some("https") {
        return true;
    }
    let forwarded = header_str(
        request.headers(),
        header::HeaderName::from_static("x-forwarded-proto"),
    )
    .and_then(|v| v.split(',').next())
    .is_some_and(|p| p.trim().eq_ignore_ascii_case("https"));
    forwarded && proxy_trusted(config, peer(request))
}

/// The TCP peer of a request, when the listener recorded it.
pub fn peer(request: &Request) -> Option<SocketAddr> {
    request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0)
}

/// Whether forwarding headers from `peer` are believed: loopback TCP peers, peers inside a
/// `--trusted-proxy` block, and unix-socket listeners (only local processes can connect). A
/// TCP listener that did not record the peer trusts no one.
pub fn proxy_trusted(config: &ListenerConfig, peer: Option<SocketAddr>) -> bool {
    match peer {
        Some(addr) => {
            let ip = addr.ip().to_canonical();
            ip.is_loopback()
                || config
                    .trusted_proxies
                    .iter()
                    .any(|b| crate::host::egress::policy::block_covers(*b, ip))
        }
        None => matches!(config.listen, ListenAddr::Unix(_)),
    }
}

/// A header as a string, when present and valid.
pub(crate) fn header_str(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

#[cfg(test)]
mod tests {
    use super::port_of;

    #[test]
    fn an_authoritys_explicit_port() {
        assert_eq!(port_of("a:80"), Some(80));
        assert_eq!(port_of("[::1]:9"), Some(9));
        assert_eq!(port_of("[::1]"), None);
        assert_eq!(port_of("a"), None);
    }
}
