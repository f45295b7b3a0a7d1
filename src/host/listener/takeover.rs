//! `/takeover/*`: minting handoffs, trading them for the session cookie, and the
//! `/takeover/panel` reverse proxy (HTTP and WebSocket) to the display's loopback web client.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use super::auth::{self, header_str, ApiError, AuthZone, TOKEN_QUERY};
use super::handoff::{self, COOKIE};
use super::state::{ListenerState, TakeoverUpstream};

/// Where the panel lives; everything below it is the display's web client.
pub const PANEL: &str = "/takeover/panel";
/// The mint route.
pub const HANDOFF: &str = "/takeover/handoff";
/// What a handoff grants.
pub const SCOPE: &str = "/takeover/*";
/// How long connecting to, and the head of a response from, the web client may take.
const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(10);

type Shared = Arc<ListenerState>;

/// 503: the host has a provider but its display is down (restarting).
const DISPLAY_DOWN: ApiError = ApiError::access(
    StatusCode::SERVICE_UNAVAILABLE,
    "takeover_unavailable",
    "the takeover display is restarting; retry shortly",
);
/// 404: the host runs without a display provider.
const NO_PROVIDER: ApiError = ApiError::access(
    StatusCode::NOT_FOUND,
    "takeover_unavailable",
    "this host has no takeover display (start it with --takeover-provider)",
);

/// The `/takeover/*` auth middleware.
///
/// The long token is never taken from a URL here (a `token_secret` query is refused
/// outright). `/takeover/handoff` needs the bearer header. Below the panel, a `handoff`
/// query is spent for the session cookie (303 to the same page without it); otherwise a
/// bearer header or a live session cookie is required. Cookie-authenticated requests must
/// pass the Host and Origin checks like any request without a bearer header.
pub async fn enforce(State(state): State<Shared>, request: Request, next: Next) -> Response {
    let query = request.uri().query().map(str::to_string);
    if query_param(query.as_deref(), TOKEN_QUERY).is_some() {
        return ApiError::UNAUTHORIZED.into_response();
    }
    let headers = request.headers();
    let has_bearer = headers.contains_key(header::AUTHORIZATION);
    let strict = auth::authorize(AuthZone::Takeover, &state.config, headers, None);
    if request.uri().path() == HANDOFF || has_bearer {
        return match strict {
            Ok(_) => next.run(request).await,
            Err(refusal) => refusal.into_response(),
        };
    }
    if let Err(refusal) = cookie_request_checks(&state, headers) {
        return refusal.into_response();
    }
    if let Some(id) = query_param(query.as_deref(), handoff::QUERY) {
        return spend(&state, &request, &id);
    }
    let session = cookie(headers, COOKIE);
    if session.is_some_and(|s| state.handoffs.session_valid(&s)) || strict.is_ok() {
        // A live session, or a tokenless loopback host (open to local callers anyway).
        next.run(request).await
    } else {
        ApiError::UNAUTHORIZED.into_response()
    }
}

/// Host (DNS rebinding) and Origin checks for a request without a bearer header: the Host
/// must be an IP, `localhost` or an allowed name, and an `Origin` (browsers send one on
/// WebSocket upgrades and on non-GET requests) must be the same origin. The session cookie is
/// `SameSite=Strict` as well; this holds even for a browser that ignores SameSite.
fn cookie_request_checks(state: &ListenerState, headers: &HeaderMap) -> Result<(), ApiError> {
    if !auth::host_acceptable(&state.config, header_str(headers, header::HOST)) {
        return Err(ApiError::FORBIDDEN_HOST);
    }
    if !auth::origin_acceptable(&state.config, headers) {
        return Err(ApiError::FORBIDDEN_ORIGIN);
    }
    Ok(())
}

/// Trade a handoff id for the session cookie and send the browser on without the id (so it
/// stays out of history and Referer); a spent, expired or unknown id is 401.
fn spend(state: &ListenerState, request: &Request, id: &str) -> Response {
    if state.view.takeover_provider().is_none() {
        return ApiError::UNAUTHORIZED.into_response();
    }
    let Some(session) = state.handoffs.exchange(id) else {
        return ApiError::UNAUTHORIZED.into_response();
    };
    // `Secure` when the client used https: directly, or per `X-Forwarded-Proto` from a
    // trusted (loopback) reverse proxy only.
    let secure = request
        .extensions()
        .get::<auth::ClientScheme>()
        .is_some_and(|s| s.https);
    let cookie = format!(
        "{COOKIE}={}; Path=/takeover; Max-Age={}; HttpOnly; SameSite=Strict{}",
        session.id,
        state.handoffs.seconds_until(session.expires_at),
        if secure { "; Secure" } else { "" }
    );
    let rest: Vec<(String, String)> = request
        .uri()
        .query()
        .map(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .filter(|(k, _)| k != handoff::QUERY)
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect()
        })
        .unwrap_or_default();
    let mut location = request.uri().path().to_string();
    if !rest.is_empty() {
        let q = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(rest)
            .finish();
        location = format!("{location}?{q}");
    }
    let mut response = redirect(&location);
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, v);
    }
    response
}

/// `POST /takeover/handoff` with an optional JSON body `{ttl_s}`: mint a handoff.
pub async fn mint(State(state): State<Shared>, method: Method, body: Bytes) -> Response {
    if method != Method::POST {
        return (StatusCode::METHOD_NOT_ALLOWED, [(header::ALLOW, "POST")]).into_response();
    }
    let Some(provider) = state.view.takeover_provider() else {
        return NO_PROVIDER.into_response();
    };
    let requested = if body.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        match serde_json::from_slice::<Value>(&body) {
            Ok(Value::Object(map)) => match map.get("ttl_s") {
                None | Some(Value::Null) => None,
                Some(v) => match v.as_u64() {
                    Some(n) => Some(n),
                    None => return invalid("ttl_s must be a whole number of seconds"),
                },
            },
            _ => return invalid("the body must be a JSON object like {\"ttl_s\": 900}"),
        }
    };
    let ttl = match handoff::ttl(requested) {
        Ok(t) => t,
        Err(message) => return invalid(&message),
    };
    let minted = state.handoffs.mint(ttl);
    let expires = time::OffsetDateTime::from(minted.expires_at)
        .replace_nanosecond(0)
        .unwrap_or_else(|_| time::OffsetDateTime::from(minted.expires_at))
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    axum::Json(json!({
        "code": "takeover_handoff",
        "takeover_path": format!("{PANEL}?{}={}", handoff::QUERY, minted.id),
        "expires_at_rfc3339": expires,
        "ttl_s": ttl.as_secs(),
        "scope": SCOPE,
        "provider": provider,
    }))
    .into_response()
}

fn invalid(message: &str) -> Response {
    ApiError::error(
        crate::error::ErrorCode::InvalidArgument,
        message.to_string(),
    )
    .into_response()
}

/// `/takeover/panel` and below: the panel page itself redirects to the provider's entry
/// page; everything else is proxied to the web client (WebSocket upgrades included).
pub async fn panel(State(state): State<Shared>, request: Request) -> Response {
    if state.view.takeover_provider().is_none() {
        return NO_PROVIDER.into_response();
    }
    let Some(upstream) = state.view.takeover_upstream() else {
        return DISPLAY_DOWN.into_response();
    };
    let path = request.uri().path();
    let rest = path.strip_prefix(PANEL).unwrap_or(path);
    if rest.is_empty() || rest == "/" {
        return redirect(&format!("{PANEL}/{}", upstream.entry));
    }
    let target = match request.uri().query() {
        Some(q) => format!("{rest}?{q}"),
        None => rest.to_string(),
    };
    let (mut parts, body) = request.into_parts();
    if header_str(&parts.headers, header::UPGRADE).is_some() {
        return match WebSocketUpgrade::from_request_parts(&mut parts, &state).await {
            Ok(upgrade) => websocket(&state, upgrade, &parts.headers, &upstream, &target).await,
            Err(rejection) => rejection.into_response(),
        };
    }
    forward(&upstream, parts, body, &target)
        .await
        .unwrap_or_else(|| DISPLAY_DOWN.into_response())
}

/// Headers that belong to one hop (RFC 9110 §7.6.1) plus our own credentials, which the
/// web client has no business seeing.
const DROPPED_REQUEST_HEADERS: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "authorization",
    "cookie",
];
const DROPPED_RESPONSE_HEADERS: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "set-cookie",
];

/// One HTTP exchange with the web client over hyper's HTTP/1 client; `None` when it cannot
/// be reached.
async fn forward(
    upstream: &TakeoverUpstream,
    parts: axum::http::request::Parts,
    body: Body,
    target: &str,
) -> Option<Response> {
    let exchange = async {
        let stream = tokio::net::TcpStream::connect(upstream.web).await.ok()?;
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .ok()?;
        tokio::spawn(conn);
        let mut builder = axum::http::Request::builder()
            .method(parts.method)
            .uri(target);
        for (name, value) in &parts.headers {
            if !DROPPED_REQUEST_HEADERS.contains(&name.as_str()) {
                builder = builder.header(name, value);
            }
        }
        let request = builder
            .header(header::HOST, upstream.web.to_string())
            .body(body)
            .ok()?;
        sender.send_request(request).await.ok()
    };
    let response = tokio::time::timeout(UPSTREAM_TIMEOUT, exchange)
        .await
        .ok()??;
    let (mut parts, incoming) = response.into_parts();
    for name in DROPPED_RESPONSE_HEADERS {
        parts.headers.remove(*name);
    }
    // The web client redirects with absolute paths (`/app` → `/app/`); keep them under
    // the panel.
    if let Some(location) = header_str(&parts.headers, header::LOCATION) {
        if location.starts_with('/') && !location.starts_with("//") {
            if let Ok(v) = HeaderValue::from_str(&format!("{PANEL}{location}")) {
                parts.headers.insert(header::LOCATION, v);
            }
        }
    }
    let html = header_str(&parts.headers, header::CONTENT_TYPE)
        .is_some_and(|t| t.starts_with("text/html"));
    harden(&mut parts.headers, html);
    Some(Response::from_parts(parts, Body::new(incoming)))
}

/// The panel is a remote control for a logged-in browser: never framed or leaked through
/// Referer, and its pages (not the client's static scripts and images, which the browser may
/// cache) never stored.
fn harden(headers: &mut HeaderMap, page: bool) {
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    if page {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
}

/// Connect to the web client's WebSocket first (a dead display is a 503, not a dropped
/// socket), offering the client's subprotocols, then upgrade and splice.
async fn websocket(
    state: &ListenerState,
    upgrade: WebSocketUpgrade,
    headers: &HeaderMap,
    upstream: &TakeoverUpstream,
    target: &str,
) -> Response {
    let url = format!("ws://{}{target}", upstream.web);
    let Ok(mut request) = url.into_client_request() else {
        return ApiError::BAD_REQUEST.into_response();
    };
    if let Some(protocols) = headers.get(header::SEC_WEBSOCKET_PROTOCOL) {
        request
            .headers_mut()
            .insert(header::SEC_WEBSOCKET_PROTOCOL, protocols.clone());
    }
    let config = WebSocketConfig::default()
        .max_message_size(Some(super::proxy::MAX_MESSAGE))
        .max_frame_size(Some(super::proxy::MAX_MESSAGE));
    let connecting = tokio_tungstenite::connect_async_with_config(request, Some(config), true);
    let (socket, response) = match tokio::time::timeout(UPSTREAM_TIMEOUT, connecting).await {
        Ok(Ok(pair)) => pair,
        _ => return DISPLAY_DOWN.into_response(),
    };
    let chosen = header_str(response.headers(), header::SEC_WEBSOCKET_PROTOCOL).map(str::to_string);
    let upgrade = match chosen {
        Some(p) => upgrade.protocols([p]),
        None => upgrade,
    };
    let disconnected = state.disconnected();
    let guard = state.client_opened();
    upgrade
        .max_message_size(super::proxy::MAX_MESSAGE)
        .on_upgrade(move |client| async move {
            super::proxy::splice(client, socket, disconnected).await;
            drop(guard);
        })
}

fn redirect(location: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(location) {
        response.headers_mut().insert(header::LOCATION, v);
    }
    harden(response.headers_mut(), true);
    response
}

/// A query parameter's decoded value.
fn query_param(query: Option<&str>, name: &str) -> Option<String> {
    url::form_urlencoded::parse(query?.as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// A cookie's value from the `Cookie` headers.
fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn cookies_and_queries_parse() {
        let mut h = HeaderMap::new();
        h.append(header::COOKIE, "a=1; afhttp_takeover=abc".parse().unwrap());
        assert_eq!(cookie(&h, COOKIE).as_deref(), Some("abc"));
        assert_eq!(cookie(&h, "b"), None);
        assert_eq!(
            query_param(Some("x=1&handoff=zz"), "handoff").as_deref(),
            Some("zz")
        );
        assert_eq!(query_param(None, "handoff"), None);
    }
}
