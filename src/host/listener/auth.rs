//! Authentication zones, Host/Origin (DNS-rebinding) checks and typed HTTP errors.

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::config::ListenerConfig;
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
}

impl AuthZone {
    /// Whether `?token_secret=` is accepted in this zone.
    pub fn accepts_query_token(self) -> bool {
        !matches!(self, AuthZone::Takeover)
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

/// A refused or failed request: HTTP status plus a stable JSON `code` and a short message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Stable snake_case code.
    pub code: &'static str,
    /// Human text; never contains tokens, paths or upstream internals.
    pub message: &'static str,
}

impl ApiError {
    /// 401: the token is missing or wrong.
    pub const UNAUTHORIZED: ApiError = ApiError {
        status: StatusCode::UNAUTHORIZED,
        code: "unauthorized",
        message: "a valid token is required (Authorization: Bearer <token>)",
    };
    /// 403: the Host header is not an IP, `localhost` or an allowed host.
    pub const FORBIDDEN_HOST: ApiError = ApiError {
        status: StatusCode::FORBIDDEN,
        code: "forbidden_host",
        message: "requests without a bearer token must use an IP, localhost or an allowed Host",
    };
    /// 403: a WebSocket upgrade from a cross-site page.
    pub const FORBIDDEN_ORIGIN: ApiError = ApiError {
        status: StatusCode::FORBIDDEN,
        code: "forbidden_origin",
        message: "cross-origin WebSocket upgrades are refused",
    };
    /// 503: the browser is not up (starting, restarting, or unreachable).
    pub const CDP_UNAVAILABLE: ApiError = ApiError {
        status: StatusCode::SERVICE_UNAVAILABLE,
        code: "cdp_unavailable",
        message: "the browser is not available yet; retry shortly",
    };
    /// 503: a concurrency cap (`--max-clients`) is full; retryable.
    pub const HOST_BUSY: ApiError = ApiError {
        status: StatusCode::SERVICE_UNAVAILABLE,
        code: "host_busy",
        message: "the host is at its client cap (--max-clients); retry after a backoff",
    };
    /// 400: a malformed request (e.g. a bad target id).
    pub const BAD_REQUEST: ApiError = ApiError {
        status: StatusCode::BAD_REQUEST,
        code: "invalid_argument",
        message: "malformed request",
    };
    /// 404: no download with this id (unknown to the current browser, or its file is gone).
    pub const DOWNLOAD_NOT_FOUND: ApiError = ApiError {
        status: StatusCode::NOT_FOUND,
        code: "not_found",
        message: "no such download",
    };
    /// 404: no such route.
    pub const NOT_FOUND: ApiError = ApiError {
        status: StatusCode::NOT_FOUND,
        code: "not_found",
        message: "no such route",
    };
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "code": self.code, "message": self.message });
        (self.status, axum::Json(body)).into_response()
    }
}

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

/// Whether a WebSocket upgrade's `Origin` is acceptable: absent, the same authority as
/// Host, or naming an allowed host.
pub fn origin_acceptable(config: &ListenerConfig, headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    let Some((_, authority)) = origin.split_once("://") else {
        return false; // "null" and garbage
    };
    let authority = authority.trim_end_matches('/');
    let host = header_str(headers, header::HOST);
    host.is_some_and(|h| h.eq_ignore_ascii_case(authority))
        || config.host_allowed(host_name(authority))
}

/// Decide one request. `query` is the raw query string.
pub fn authorize(
    zone: AuthZone,
    config: &ListenerConfig,
    headers: &HeaderMap,
    query: Option<&str>,
) -> Result<Access, ApiError> {
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

/// The middleware enforcing `zone`; it stores the [`Access`] in the request's extensions.
pub async fn enforce(
    zone: AuthZone,
    State(state): State<Arc<ListenerState>>,
    mut request: Request,
    next: Next,
) -> Response {
    if zone == AuthZone::Takeover {
        return super::takeover::enforce(State(state), request, next).await;
    }
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

/// A header as a string, when present and valid.
pub(crate) fn header_str(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::host::listener::config::{ListenAddr, TokenSecret};

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
}
