//! Authentication zones, Host/Origin (DNS-rebinding) checks and typed HTTP errors.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::config::ListenerConfig;
pub use super::refusal::ApiError;
pub(crate) use super::request_facts::header_str;
pub use super::request_facts::{
    client_https, host_acceptable, host_name, origin_acceptable, peer, proxy_trusted,
};
use super::state::ListenerState;

/// The query parameter that may carry the token on non-takeover control routes and `/cdp`.
pub const TOKEN_QUERY: &str = "token_secret";

/// How a route is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthZone {
    /// `/health`: token required, unless `--health-public minimal` (then anonymous callers
    /// get only the status).
    Health,
    /// Control routes (`/capabilities`, `/json/*`): bearer header or `?token_secret=`.
    Control,
    /// The CDP WebSocket handshake: bearer header or `?token_secret=`, plus the Origin check.
    Cdp,
    /// `/takeover/*`: the bearer header, or (below `/takeover/panel`) a handoff id traded
    /// for a session cookie; the query token is never accepted here.
    Takeover,
    /// `/mcp` (Streamable HTTP MCP): the bearer header only, on a host that has a token. A
    /// token in the query is refused even beside a valid header; a present foreign `Origin`
    /// and a Host that is not this listener's (an IP, `localhost`, the machine's hostname or
    /// an `--allowed-host`) are refused even with a valid token.
    Mcp,
}

impl AuthZone {
    /// Whether `?token_secret=` is accepted in this zone.
    pub fn accepts_query_token(self) -> bool {
        !matches!(self, AuthZone::Takeover | AuthZone::Mcp)
    }
}

/// What an authorized request may see; stored in the request's extensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Authenticated (or no token configured).
    Full,
    /// Unauthenticated, allowed only to the minimal public health.
    Anonymous,
}

/// How the client reached the listener, as far as it may be believed (see [`client_https`]);
/// stored in every authorized request's extensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientScheme {
    /// The client used https (directly or through a trusted local proxy).
    pub https: bool,
}

/// Decide one request. `query` is the raw query string.
pub fn authorize(
    zone: AuthZone,
    config: &ListenerConfig,
    headers: &HeaderMap,
    query: Option<&str>,
) -> Result<Access, ApiError> {
    if zone == AuthZone::Mcp {
        return authorize_mcp(config, headers, query);
    }
    let is_upgrade =
        header_str(headers, header::UPGRADE).is_some_and(|u| u.eq_ignore_ascii_case("websocket"));
    if is_upgrade && !origin_acceptable(config, headers) {
        return Err(ApiError::FORBIDDEN_ORIGIN);
    }
    let bearer = header_str(headers, header::AUTHORIZATION).map(|v| {
        v.strip_prefix("Bearer ")
            .or_else(|| v.strip_prefix("bearer "))
            .unwrap_or("")
            .trim()
    });
    let Some(token) = &config.token else {
        // Tokenless (loopback/unix only): open, but the Host must be local.
        return host_check(config, headers).map(|()| Access::Full);
    };
    if let Some(candidate) = bearer {
        // A valid bearer header is accepted whatever the Host.
        return if token.matches(candidate) {
            Ok(Access::Full)
        } else {
            Err(ApiError::UNAUTHORIZED)
        };
    }
    let from_query = if zone.accepts_query_token() {
        query_token(query)
    } else {
        None
    };
    match from_query {
        Some(candidate) if token.matches(&candidate) => {
            host_check(config, headers).map(|()| Access::Full)
        }
        Some(_) => Err(ApiError::UNAUTHORIZED),
        None if zone == AuthZone::Health && config.health_public_minimal => {
            host_check(config, headers).map(|()| Access::Anonymous)
        }
        None => Err(ApiError::UNAUTHORIZED),
    }
}

/// Store how the client reached the listener ([`ClientScheme`]) in `request`'s extensions
/// (before any zone's checks, the takeover zone's included).
pub fn note_scheme(config: &ListenerConfig, request: &mut Request) {
    let https = client_https(config, request);
    request.extensions_mut().insert(ClientScheme { https });
}

/// The middleware enforcing `zone` (every zone but the takeover one, whose rules are
/// `takeover::enforce`); it stores the [`Access`] in the request's extensions.
pub async fn enforce(
    zone: AuthZone,
    State(state): State<Arc<ListenerState>>,
    mut request: Request,
    next: Next,
) -> Response {
    match authorize(
        zone,
        &state.config,
        request.headers(),
        request.uri().query(),
    ) {
        Ok(access) => {
            request.extensions_mut().insert(access);
            next.run(request).await
        }
        Err(refusal) => refusal.into_response(),
    }
}

/// The `/mcp` rules, in order: a token must exist, none may ride in the query, the bearer
/// header must match, then the Origin (when present) and the Host must be this listener's.
fn authorize_mcp(
    config: &ListenerConfig,
    headers: &HeaderMap,
    query: Option<&str>,
) -> Result<Access, ApiError> {
    let Some(token) = &config.token else {
        return Err(ApiError::MCP_NEEDS_TOKEN);
    };
    if query_carries_token(query, token) {
        return Err(ApiError::QUERY_TOKEN_REFUSED);
    }
    let bearer = header_str(headers, header::AUTHORIZATION)
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim);
    if !bearer.is_some_and(|candidate| token.matches(candidate)) {
        return Err(ApiError::UNAUTHORIZED);
    }
    if !origin_acceptable(config, headers) {
        return Err(ApiError::FORBIDDEN_MCP_ORIGIN);
    }
    let host = header_str(headers, header::HOST);
    let own_name = host.is_some_and(|h| {
        let name = host_name(h).trim_end_matches('.');
        !config.machine_hostname.is_empty() && name.eq_ignore_ascii_case(&config.machine_hostname)
    });
    if !(own_name || host_acceptable(config, host)) {
        return Err(ApiError::FORBIDDEN_MCP_HOST);
    }
    Ok(Access::Full)
}

/// Query parameter names that carry a credential by convention.
const TOKEN_PARAMS: [&str; 5] = [
    TOKEN_QUERY,
    "token",
    "access_token",
    "auth",
    "authorization",
];

/// Whether a query names a token parameter or carries the token itself as any value.
fn query_carries_token(query: Option<&str>, token: &super::config::TokenSecret) -> bool {
    let Some(query) = query else { return false };
    url::form_urlencoded::parse(query.as_bytes())
        .any(|(k, v)| TOKEN_PARAMS.iter().any(|p| k.eq_ignore_ascii_case(p)) || token.matches(&v))
}

fn host_check(config: &ListenerConfig, headers: &HeaderMap) -> Result<(), ApiError> {
    if host_acceptable(config, header_str(headers, header::HOST)) {
        Ok(())
    } else {
        Err(ApiError::FORBIDDEN_HOST)
    }
}

fn query_token(query: Option<&str>) -> Option<String> {
    url::form_urlencoded::parse(query?.as_bytes())
        .find(|(k, _)| k == TOKEN_QUERY)
        .map(|(_, v)| v.into_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::host::listener::config::{ListenAddr, TokenSecret};
    use axum::extract::ConnectInfo;
    use std::net::SocketAddr;

    fn cfg(token: Option<&str>) -> ListenerConfig {
        ListenerConfig {
            token: token.map(|t| TokenSecret::new(t).unwrap()),
            allowed_hosts: vec!["mesh.internal".into()],
            ..ListenerConfig::new(ListenAddr::parse("").unwrap())
        }
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn host_names() {
        assert_eq!(host_name("[::1]:9222"), "::1");
        assert_eq!(host_name("a.b:80"), "a.b");
        assert_eq!(host_name("localhost"), "localhost");
        let c = cfg(None);
        assert!(host_acceptable(&c, Some("127.0.0.1:9222")));
        assert!(host_acceptable(&c, Some("[::1]:1")));
        assert!(host_acceptable(&c, Some("LOCALHOST:1")));
        assert!(host_acceptable(&c, Some("mesh.internal:9222")));
        assert!(!host_acceptable(&c, Some("evil.example:9222")));
    }

    #[test]
    fn query_token_never_under_takeover() {
        let c = cfg(Some("tok"));
        let h = headers(&[("host", "127.0.0.1:1")]);
        let q = Some("token_secret=tok");
        assert_eq!(authorize(AuthZone::Control, &c, &h, q), Ok(Access::Full));
        assert_eq!(authorize(AuthZone::Cdp, &c, &h, q), Ok(Access::Full));
        assert_eq!(
            authorize(AuthZone::Takeover, &c, &h, q),
            Err(ApiError::UNAUTHORIZED)
        );
        assert_eq!(
            authorize(AuthZone::Control, &c, &h, Some("token_secret=bad")),
            Err(ApiError::UNAUTHORIZED)
        );
    }

    #[test]
    fn bearer_beats_host_check_but_query_does_not() {
        let c = cfg(Some("tok"));
        let evil = headers(&[("host", "evil.example"), ("authorization", "Bearer tok")]);
        assert_eq!(
            authorize(AuthZone::Takeover, &c, &evil, None),
            Ok(Access::Full)
        );
        let evil = headers(&[("host", "evil.example")]);
        assert_eq!(
            authorize(AuthZone::Control, &c, &evil, Some("token_secret=tok")),
            Err(ApiError::FORBIDDEN_HOST)
        );
        let wrong = headers(&[("authorization", "Bearer nope")]);
        assert_eq!(
            authorize(AuthZone::Control, &c, &wrong, Some("token_secret=tok")),
            Err(ApiError::UNAUTHORIZED)
        );
    }

    #[test]
    fn mcp_takes_the_bearer_header_only_and_checks_origin_and_host_with_it() {
        let c = cfg(Some("tok"));
        let with = |pairs: &[(&'static str, &str)], q: Option<&str>| {
            authorize(AuthZone::Mcp, &c, &headers(pairs), q)
        };
        let ok = ("authorization", "Bearer tok");
        assert_eq!(with(&[ok, ("host", "127.0.0.1:9")], None), Ok(Access::Full));
        assert_eq!(
            with(&[ok, ("host", "mesh.internal")], None),
            Ok(Access::Full)
        );
        assert_eq!(
            with(&[("host", "127.0.0.1:9")], Some("token_secret=tok")),
            Err(ApiError::QUERY_TOKEN_REFUSED)
        );
        assert_eq!(
            with(&[ok], Some("q=tok")),
            Err(ApiError::QUERY_TOKEN_REFUSED)
        );
        assert_eq!(
            with(&[ok, ("host", "evil.example")], None),
            Err(ApiError::FORBIDDEN_MCP_HOST)
        );
        assert_eq!(
            with(
                &[
                    ok,
                    ("host", "localhost:9"),
                    ("origin", "https://evil.example")
                ],
                None
            ),
            Err(ApiError::FORBIDDEN_MCP_ORIGIN)
        );
        assert_eq!(
            with(&[("authorization", "Bearer nope")], None),
            Err(ApiError::UNAUTHORIZED)
        );
        assert_eq!(
            authorize(AuthZone::Mcp, &cfg(None), &headers(&[]), None),
            Err(ApiError::MCP_NEEDS_TOKEN)
        );
    }

    #[test]
    fn health_minimal_and_origin() {
        let mut c = cfg(Some("tok"));
        let h = headers(&[("host", "localhost:9")]);
        assert_eq!(
            authorize(AuthZone::Health, &c, &h, None),
            Err(ApiError::UNAUTHORIZED)
        );
        c.health_public_minimal = true;
        assert_eq!(
            authorize(AuthZone::Health, &c, &h, None),
            Ok(Access::Anonymous)
        );
        let up = headers(&[
            ("host", "localhost:9"),
            ("upgrade", "websocket"),
            ("authorization", "Bearer tok"),
            ("origin", "https://evil.example"),
        ]);
        assert_eq!(
            authorize(AuthZone::Cdp, &c, &up, None),
            Err(ApiError::FORBIDDEN_ORIGIN)
        );
        let same = headers(&[
            ("host", "localhost:9"),
            ("upgrade", "websocket"),
            ("origin", "http://localhost:9"),
        ]);
        assert_eq!(
            authorize(AuthZone::Cdp, &cfg(None), &same, None),
            Ok(Access::Full)
        );
    }

    #[test]
    fn origin_must_be_the_same_origin_as_the_host() {
        let c = cfg(None);
        let with = |host: &str, origin: &str| {
            let h = headers(&[("host", host), ("origin", origin)]);
            origin_acceptable(&c, &h)
        };
        assert!(with("localhost:9222", "http://localhost:9222"));
        assert!(with("LOCALHOST:9222", "http://localhost:9222/"));
        assert!(with("afhttp.example", "https://afhttp.example"));
        assert!(with("afhttp.example:443", "https://afhttp.example"));
        assert!(with("[::1]:9", "http://[::1]:9"));
        // Another port on the same name is another origin.
        assert!(!with("localhost:9222", "http://localhost:8080"));
        assert!(!with("localhost:9222", "http://localhost"));
        assert!(!with("127.0.0.1:9222", "http://evil.example:9222"));
        assert!(!with("127.0.0.1:9222", "null"));
        assert!(!with("127.0.0.1:9222", "file://"));
        // An allowed host may be the origin (a proxy that rewrites Host).
        assert!(with("127.0.0.1:9222", "https://mesh.internal"));
        assert!(
            origin_acceptable(&c, &headers(&[("host", "x")])),
            "no Origin"
        );
    }

    #[test]
    fn forwarded_proto_is_believed_from_loopback_only() {
        let tcp = cfg(None);
        let unix = ListenerConfig::new(ListenAddr::parse("unix:/tmp/x.sock").unwrap());
        let request = |peer: Option<&str>, proto: Option<&str>| {
            let mut r = Request::builder().uri("/takeover/panel");
            if let Some(p) = proto {
                r = r.header("x-forwarded-proto", p);
            }
            let mut r = r.body(axum::body::Body::empty()).unwrap();
            if let Some(p) = peer {
                r.extensions_mut()
                    .insert(ConnectInfo::<SocketAddr>(p.parse().unwrap()));
            }
            r
        };
        assert!(client_https(
            &tcp,
            &request(Some("127.0.0.1:5"), Some("https"))
        ));
        assert!(client_https(&tcp, &request(Some("[::1]:5"), Some("HTTPS"))));
        assert!(client_https(
            &tcp,
            &request(Some("[::ffff:127.0.0.1]:5"), Some("https, http"))
        ));
        assert!(!client_https(
            &tcp,
            &request(Some("192.0.2.9:5"), Some("https"))
        ));
        assert!(!client_https(
            &tcp,
            &request(Some("127.0.0.1:5"), Some("http"))
        ));
        assert!(!client_https(&tcp, &request(Some("127.0.0.1:5"), None)));
        assert!(
            !client_https(&tcp, &request(None, Some("https"))),
            "peer unknown"
        );
        assert!(client_https(&unix, &request(None, Some("https"))));
        // An ingress in another pod, named by --trusted-proxy: believed; its neighbours not.
        let ingress = ListenerConfig {
            trusted_proxies: vec![
                crate::host::egress::policy::parse_ip_block("10.42.0.0/16").unwrap()
            ],
            ..cfg(None)
        };
        assert!(client_https(
            &ingress,
            &request(Some("10.42.7.1:5"), Some("https"))
        ));
        assert!(!client_https(
            &ingress,
            &request(Some("10.43.0.1:5"), Some("https"))
        ));
    }
}
