//! The route table (as data) and the router factory: one sub-router per auth zone.

use std::sync::Arc;

use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, on, MethodFilter, MethodRouter};
use axum::{Extension, Json, Router};
use serde_json::{json, Map, Value};

use super::auth::{self, header_str, Access, ApiError, AuthZone, ClientScheme};
use super::devtools::fetch_json;
use super::proxy;
use super::state::{HostStatus, ListenerState};
use super::takeover;
use super::transfer;
use crate::sdk::host_http::shape;

/// What serves a route; the router maps each to its handler with an exhaustive `match`, so
/// a new handler cannot be served without a [`RouteSpec`] (and so without an auth zone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handler {
    /// `/health`.
    Health,
    /// `/capabilities`.
    Capabilities,
    /// `/json/version`.
    JsonVersion,
    /// `/json/list` and `/json`.
    JsonList,
    /// `/recent-requests`.
    RecentRequests,
    /// `/stalled-hosts` (GET: the list; POST: report hosts).
    StalledHosts,
    /// `/downloads/{id}`.
    Download,
    /// `/uploads`.
    Upload,
    /// `/cdp` (WebSocket).
    CdpBrowser,
    /// `/cdp/page/{id}` (WebSocket).
    CdpPage,
    /// `/takeover/handoff`.
    TakeoverMint,
    /// `/takeover/panel` and below.
    TakeoverPanel,
    /// `/mcp` (Streamable HTTP MCP).
    Mcp,
    /// Below `/mcp/`: nothing is served there (404 once authorized).
    McpOther,
}

/// One route: its path, the methods it serves and the zone that protects it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteSpec {
    /// The axum path (`{id}` for a parameter).
    pub path: &'static str,
    /// The HTTP methods served; empty means every method (the panel's reverse proxy). Other
    /// methods are 405 once authorized (unauthorized callers get 401 first).
    pub methods: &'static [&'static str],
    /// Its authentication zone.
    pub auth: AuthZone,
    /// What serves it.
    pub handler: Handler,
}

const fn route(
    path: &'static str,
    methods: &'static [&'static str],
    auth: AuthZone,
    handler: Handler,
) -> RouteSpec {
    RouteSpec {
        path,
        methods,
        auth,
        handler,
    }
}

const GET: &[&str] = &["GET"];
const POST: &[&str] = &["POST"];
const GET_POST: &[&str] = &["GET", "POST"];
/// What stateless Streamable HTTP uses: POST for messages, and GET for a server stream
/// (the transport answers 405: there is none). No sessions, so no DELETE to end one.
const MCP_METHODS: &[&str] = &["GET", "POST"];
const ANY: &[&str] = &[];

/// Every route the listener serves (`/health` only while health is on). The router is built
/// from this table alone; the auth tests walk it, so a route cannot be added without them.
pub const ROUTES: &[RouteSpec] = &[
    route("/health", GET, AuthZone::Health, Handler::Health),
    route(
        "/capabilities",
        GET,
        AuthZone::Control,
        Handler::Capabilities,
    ),
    route(
        "/json/version",
        GET,
        AuthZone::Control,
        Handler::JsonVersion,
    ),
    route(
        "/json/version/",
        GET,
        AuthZone::Control,
        Handler::JsonVersion,
    ),
    route("/json/list", GET, AuthZone::Control, Handler::JsonList),
    route("/json/list/", GET, AuthZone::Control, Handler::JsonList),
    route("/json", GET, AuthZone::Control, Handler::JsonList),
    route(
        "/recent-requests",
        GET,
        AuthZone::Control,
        Handler::RecentRequests,
    ),
    route(
        "/stalled-hosts",
        GET_POST,
        AuthZone::Control,
        Handler::StalledHosts,
    ),
    route("/downloads/{id}", GET, AuthZone::Control, Handler::Download),
    route("/uploads", POST, AuthZone::Control, Handler::Upload),
    route("/cdp", GET, AuthZone::Cdp, Handler::CdpBrowser),
    route("/cdp/page/{id}", GET, AuthZone::Cdp, Handler::CdpPage),
    route(
        "/takeover/handoff",
        POST,
        AuthZone::Takeover,
        Handler::TakeoverMint,
    ),
    route(
        "/takeover/panel",
        ANY,
        AuthZone::Takeover,
        Handler::TakeoverPanel,
    ),
    route(
        "/takeover/panel/",
        ANY,
        AuthZone::Takeover,
        Handler::TakeoverPanel,
    ),
    route(
        "/takeover/panel/{*rest}",
        ANY,
        AuthZone::Takeover,
        Handler::TakeoverPanel,
    ),
    route("/mcp", MCP_METHODS, AuthZone::Mcp, Handler::Mcp),
    route("/mcp/{*rest}", ANY, AuthZone::Mcp, Handler::McpOther),
];

type Shared = Arc<ListenerState>;

/// Build the listener's router over `state`: one sub-router per auth zone, each behind that
/// zone's middleware, from [`ROUTES`] only.
pub fn router(state: Arc<ListenerState>) -> Router {
    let mut app: Router<Shared> = Router::new();
    for zone in [
        AuthZone::Health,
        AuthZone::Control,
        AuthZone::Cdp,
        AuthZone::Takeover,
        AuthZone::Mcp,
    ] {
        let mut sub: Router<Shared> = Router::new();
        let mut any = false;
        for spec in ROUTES.iter().filter(|r| r.auth == zone) {
            if spec.handler == Handler::Health && !state.config.health {
                continue;
            }
            sub = sub.route(spec.path, method_router(spec));
            any = true;
        }
        if any {
            let layer = axum::middleware::from_fn_with_state(
                state.clone(),
                move |s: State<Shared>,
                      req: axum::extract::Request,
                      next: axum::middleware::Next| { gate(zone, s, req, next) },
            );
            // `route_layer` wraps each route's whole method router (its 405 fallback
            // included), so an unauthorized caller gets 401 whatever the method.
            app = app.merge(sub.route_layer(layer));
        }
    }
    app.fallback(|| async { ApiError::NOT_FOUND })
        .with_state(state)
}

/// The methods of `spec` as one filter (`None`: every method).
fn method_filter(spec: &RouteSpec) -> Option<MethodFilter> {
    spec.methods
        .iter()
        .filter_map(|m| Method::from_bytes(m.as_bytes()).ok())
        .filter_map(|m| MethodFilter::try_from(m).ok())
        .reduce(MethodFilter::or)
}

fn serve_with<H, T>(filter: Option<MethodFilter>, h: H) -> MethodRouter<Shared>
where
    H: axum::handler::Handler<T, Shared>,
    T: 'static,
{
    match filter {
        Some(f) => on(f, h),
        None => any(h),
    }
}

fn method_router(spec: &RouteSpec) -> MethodRouter<Shared> {
    let f = method_filter(spec);
    match spec.handler {
        Handler::Health => serve_with(f, health),
        Handler::Capabilities => serve_with(f, capabilities),
        Handler::RecentRequests => serve_with(f, recent_requests),
        Handler::StalledHosts => serve_with(f, stalled_hosts),
        Handler::JsonVersion => serve_with(f, json_version),
        Handler::JsonList => serve_with(f, json_list),
        Handler::Download => serve_with(f, transfer::download),
        Handler::Upload => serve_with(f, transfer::upload),
        Handler::CdpBrowser => serve_with(f, proxy::cdp_browser),
        Handler::CdpPage => serve_with(f, proxy::cdp_page),
        Handler::TakeoverMint => serve_with(f, takeover::mint),
        Handler::TakeoverPanel => serve_with(f, takeover::panel),
        Handler::Mcp => serve_with(f, mcp),
        Handler::McpOther => serve_with(f, || async { ApiError::NOT_FOUND }),
    }
}

/// The middleware of `zone`: note the client's scheme, then the takeover zone's own rules
/// or [`auth::enforce`].
async fn gate(
    zone: AuthZone,
    State(state): State<Shared>,
    mut request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    auth::note_scheme(&state.config, &mut request);
    match zone {
        AuthZone::Takeover => takeover::enforce(State(state), request, next).await,
        zone => auth::enforce(zone, State(state), request, next).await,
    }
}

/// `/mcp`: the host's MCP server, when it serves one.
async fn mcp(State(state): State<Shared>, request: axum::extract::Request) -> Response {
    match &state.mcp {
        Some(serve) => serve(request).await,
        None => ApiError::MCP_OFF.into_response(),
    }
}

/// `GET /recent-requests`: the host's last request records (`enabled: false` when
/// `--recent-requests-cap` is 0).
async fn recent_requests(State(state): State<Shared>) -> Response {
    let mut doc = Map::new();
    doc.insert("code".into(), json!("recent_requests"));
    if let Value::Object(fields) = state.view.recent_requests() {
        doc.extend(fields);
    }
    Json(doc).into_response()
}

/// `/stalled-hosts`: GET lists the third-party hosts that stalled (`hosts`) and answered
/// (`answered`) in recent fetches; POST `{"hosts": [...], "answered": [...]}` (each a
/// `host[:port]`) reports more (answered with the lists).
async fn stalled_hosts(
    State(state): State<Shared>,
    method: Method,
    body: axum::body::Bytes,
) -> Response {
    let mut doc = Map::new();
    doc.insert("code".into(), json!("stalled_hosts"));
    if method == Method::POST {
        let report = serde_json::from_slice::<Value>(&body).ok();
        let list = |key: &str| -> Vec<String> {
            report
                .as_ref()
                .and_then(|v| serde_json::from_value(v.get(key)?.clone()).ok())
                .unwrap_or_default()
        };
        let taken =
            state.stalls.note_answered(&list("answered")) + state.stalls.note(&list("hosts"));
        doc.insert("taken".into(), json!(taken));
    }
    if let Value::Object(fields) = state.stalls.to_json() {
        doc.extend(fields);
    }
    Json(doc).into_response()
}

/// The status `/health` reports: no upstream means still starting (unless degraded).
fn current_status(state: &ListenerState) -> HostStatus {
    let status = state.view.status();
    if status == HostStatus::Ok && state.view.upstream().is_none() {
        HostStatus::Starting
    } else {
        status
    }
}

/// Whether the query asks for the readiness form (`/health?ready`, `?ready=1`, `?ready=true`).
fn wants_readiness(query: Option<&str>) -> bool {
    url::form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .any(|(k, v)| k == "ready" && (v.is_empty() || crate::env::is_truthy(&v)))
}

/// `GET /health`: 200 with the status whatever it is, so a supervisor can tell starting from
/// dead. The readiness form (`?ready`) answers 503 with the same document unless the status is
/// `ok`, for probes that must only pass once the host serves (Kubernetes, Swarm, HEALTHCHECK).
async fn health(
    State(state): State<Shared>,
    Extension(access): Extension<Access>,
    RawQuery(query): RawQuery,
) -> Response {
    let status = current_status(&state);
    let code = if wants_readiness(query.as_deref()) && status != HostStatus::Ok {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    };
    let doc = health_doc(&state, access, status).await;
    if access == Access::Anonymous {
        // The marker says an afhttp host sent this bare `{"status": ...}`.
        let marker = [(shape::MINIMAL_HEALTH_HEADER, shape::MINIMAL_HEALTH_VALUE)];
        return (code, marker, doc).into_response();
    }
    (code, doc).into_response()
}

async fn health_doc(state: &ListenerState, access: Access, status: HostStatus) -> Json<Value> {
    if access == Access::Anonymous {
        return Json(json!({ "status": status }));
    }
    let mut doc = Map::new();
    doc.insert("code".into(), json!("health"));
    doc.insert("status".into(), json!(status));
    doc.insert("version".into(), json!(crate::VERSION));
    doc.insert("uptime_s".into(), json!(state.uptime_s()));
    doc.insert("role".into(), json!(state.config.role()));
    if let Value::Object(details) = state.view.health_details() {
        for (key, value) in details {
            doc.entry(key).or_insert(value);
        }
    }
    if let Some(tabs) = super::caps::open_pages(state).await {
        doc.insert("tabs_active".into(), json!(tabs));
    }
    doc.insert("tabs_ready".into(), json!(state.pool.len()));
    doc.insert(
        "tabs_ready_isolated".into(),
        json!(state.pool.isolated_len()),
    );
    doc.insert("capabilities_url".into(), json!("/capabilities"));
    Json(Value::Object(doc))
}

async fn capabilities(State(state): State<Shared>) -> Response {
    let mut doc = Map::new();
    doc.insert("code".into(), json!("capabilities"));
    doc.insert("role".into(), json!(state.config.role()));
    if let Value::Object(caps) = state.view.capabilities() {
        for (key, value) in caps {
            doc.entry(key).or_insert(value);
        }
    }
    // The caps live in the listener, so it reports them (and how full they are).
    let limits = doc.entry("limits").or_insert_with(|| json!({}));
    if let Value::Object(limits) = limits {
        limits.insert("max_clients".into(), json!(state.config.max_clients));
        limits.insert("max_tabs".into(), json!(state.config.max_tabs));
        limits.insert(
            "upload_max_bytes".into(),
            json!(state.config.upload_max_bytes),
        );
        limits.insert("clients_in_use".into(), json!(state.slots.in_use()));
    }
    Json(Value::Object(doc)).into_response()
}

async fn json_version(
    State(state): State<Shared>,
    scheme: Option<Extension<ClientScheme>>,
    headers: HeaderMap,
) -> Response {
    let Some(upstream) = state.view.upstream() else {
        return ApiError::CDP_UNAVAILABLE.into_response();
    };
    let mut doc = match fetch_json(&upstream.http_base, "/json/version").await {
        Ok(doc) => doc,
        Err(refusal) => return refusal.into_response(),
    };
    if let Value::Object(map) = &mut doc {
        map.insert(
            "webSocketDebuggerUrl".into(),
            json!(format!("{}/cdp", ws_base(&headers, scheme))),
        );
        strip_frontend(map);
    }
    Json(doc).into_response()
}

async fn json_list(
    State(state): State<Shared>,
    scheme: Option<Extension<ClientScheme>>,
    headers: HeaderMap,
) -> Response {
    let Some(upstream) = state.view.upstream() else {
        return ApiError::CDP_UNAVAILABLE.into_response();
    };
    let mut doc = match fetch_json(&upstream.http_base, "/json/list").await {
        Ok(doc) => doc,
        Err(refusal) => return refusal.into_response(),
    };
    let base = ws_base(&headers, scheme);
    if let Value::Array(targets) = &mut doc {
        super::pool_frames::without_hidden(targets, &state.pool.hidden().await, "id");
        for target in targets.iter_mut().filter_map(Value::as_object_mut) {
            let id = target.get("id").and_then(Value::as_str).map(str::to_string);
            match id {
                Some(id) if target.contains_key("webSocketDebuggerUrl") => {
                    target.insert(
                        "webSocketDebuggerUrl".into(),
                        json!(format!("{base}/cdp/page/{id}")),
                    );
                }
                _ => {
                    target.remove("webSocketDebuggerUrl");
                }
            }
            strip_frontend(target);
        }
    }
    Json(doc).into_response()
}

/// `ws://<Host>` as the client addressed us; `wss://` when it used https (through a
/// trusted TLS-terminating proxy, see [`auth::client_https`]).
fn ws_base(headers: &HeaderMap, scheme: Option<Extension<ClientScheme>>) -> String {
    let host = header_str(headers, header::HOST).unwrap_or("localhost");
    let ws = if scheme.is_some_and(|s| s.https) {
        "wss"
    } else {
        "ws"
    };
    format!("{ws}://{host}")
}

fn strip_frontend(map: &mut Map<String, Value>) {
    map.remove("devtoolsFrontendUrl");
    map.remove("devtoolsFrontendUrlCompat");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readiness_query_forms() {
        for q in ["ready", "ready=", "ready=1", "ready=true", "x=1&ready"] {
            assert!(wants_readiness(Some(q)), "{q}");
        }
        for q in ["", "ready=0", "ready=no", "readyz", "token_secret=ready"] {
            assert!(!wants_readiness(Some(q)), "{q}");
        }
        assert!(!wants_readiness(None));
    }

    #[test]
    fn the_route_table_is_well_formed() {
        let mut seen = std::collections::HashSet::new();
        for spec in ROUTES {
            assert!(seen.insert(spec.path), "{} twice", spec.path);
            assert!(spec.path.starts_with('/'), "{}", spec.path);
            // Every listed method is one axum can filter on (else the filter would silently
            // widen to every method).
            assert_eq!(
                method_filter(spec).is_some(),
                !spec.methods.is_empty(),
                "{}",
                spec.path
            );
            let expected = if spec.path.starts_with("/takeover/") {
                AuthZone::Takeover
            } else if spec.path == "/mcp" || spec.path.starts_with("/mcp/") {
                AuthZone::Mcp
            } else if spec.path.starts_with("/cdp") {
                AuthZone::Cdp
            } else if spec.path == "/health" {
                AuthZone::Health
            } else {
                AuthZone::Control
            };
            assert_eq!(spec.auth, expected, "{}", spec.path);
        }
    }
}
