//! The route table (as data) and the router factory: one sub-router per auth zone.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, MethodRouter};
use axum::{Extension, Json, Router};
use serde_json::{json, Map, Value};

use super::auth::{self, header_str, Access, ApiError, AuthZone};
use super::proxy;
use super::state::{HostStatus, ListenerState};
use super::takeover;
use super::transfer;
use crate::sdk::endpoint::Endpoint;
use crate::sdk::host_http;

/// How long the browser gets to answer a DevTools `/json/*` request.
const DEVTOOLS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// One route and the zone that protects it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteSpec {
    /// The axum path (`{id}` for a parameter).
    pub path: &'static str,
    /// Its authentication zone.
    pub auth: AuthZone,
}

/// Every route the listener serves (`/health` only while health is on).
pub const ROUTES: &[RouteSpec] = &[
    RouteSpec {
        path: "/health",
        auth: AuthZone::Health,
    },
    RouteSpec {
        path: "/capabilities",
        auth: AuthZone::Control,
    },
    RouteSpec {
        path: "/json/version",
        auth: AuthZone::Control,
    },
    RouteSpec {
        path: "/json/version/",
        auth: AuthZone::Control,
    },
    RouteSpec {
        path: "/json/list",
        auth: AuthZone::Control,
    },
    RouteSpec {
        path: "/json/list/",
        auth: AuthZone::Control,
    },
    RouteSpec {
        path: "/json",
        auth: AuthZone::Control,
    },
    RouteSpec {
        path: "/recent-requests",
        auth: AuthZone::Control,
    },
    RouteSpec {
        path: "/downloads/{id}",
        auth: AuthZone::Control,
    },
    RouteSpec {
        path: "/uploads",
        auth: AuthZone::Control,
    },
    RouteSpec {
        path: "/cdp",
        auth: AuthZone::Cdp,
    },
    RouteSpec {
        path: "/cdp/page/{id}",
        auth: AuthZone::Cdp,
    },
    RouteSpec {
        path: "/takeover/handoff",
        auth: AuthZone::Takeover,
    },
    RouteSpec {
        path: "/takeover/panel",
        auth: AuthZone::Takeover,
    },
    RouteSpec {
        path: "/takeover/panel/",
        auth: AuthZone::Takeover,
    },
    RouteSpec {
        path: "/takeover/panel/{*rest}",
        auth: AuthZone::Takeover,
    },
];

type Shared = Arc<ListenerState>;

/// Build the listener's router over `state`.
pub fn router(state: Arc<ListenerState>) -> Router {
    let mut app: Router<Shared> = Router::new();
    for zone in [
        AuthZone::Health,
        AuthZone::Control,
        AuthZone::Cdp,
        AuthZone::Takeover,
    ] {
        let mut sub: Router<Shared> = Router::new();
        let mut any = false;
        for spec in ROUTES.iter().filter(|r| r.auth == zone) {
            if spec.path == "/health" && !state.config.health {
                continue;
            }
            sub = sub.route(spec.path, handler(spec.path));
            any = true;
        }
        if any {
            let layer = axum::middleware::from_fn_with_state(
                state.clone(),
                move |s: State<Shared>,
                      req: axum::extract::Request,
                      next: axum::middleware::Next| {
                    auth::enforce(zone, s, req, next)
                },
            );
            app = app.merge(sub.route_layer(layer));
        }
    }
    app.fallback(|| async { ApiError::NOT_FOUND })
        .with_state(state)
}

fn handler(path: &str) -> MethodRouter<Shared> {
    match path {
        "/health" => get(health),
        "/capabilities" => get(capabilities),
        "/recent-requests" => get(recent_requests),
        "/json/version" | "/json/version/" => get(json_version),
        "/json/list" | "/json/list/" | "/json" => get(json_list),
        "/downloads/{id}" => get(transfer::download),
        "/uploads" => any(transfer::upload),
        "/cdp" => get(proxy::cdp_browser),
        "/cdp/page/{id}" => get(proxy::cdp_page),
        "/takeover/handoff" => any(takeover::mint),
        "/takeover/panel" | "/takeover/panel/" | "/takeover/panel/{*rest}" => any(takeover::panel),
        _ => get(|| async { ApiError::NOT_FOUND }),
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

/// The status `/health` reports: no upstream means still starting (unless degraded).
fn current_status(state: &ListenerState) -> HostStatus {
    let status = state.view.status();
    if status == HostStatus::Ok && state.view.upstream().is_none() {
        HostStatus::Starting
    } else {
        status
    }
}

async fn health(State(state): State<Shared>, Extension(access): Extension<Access>) -> Response {
    let status = current_status(&state);
    if access == Access::Anonymous {
        return Json(json!({ "status": status })).into_response();
    }
    let mut doc = Map::new();
    doc.insert("code".into(), json!("health"));
    doc.insert("status".into(), json!(status));
    doc.insert("version".into(), json!(crate::VERSION));
    doc.insert("uptime_s".into(), json!(state.uptime_s()));
    if let Value::Object(details) = state.view.health_details() {
        for (key, value) in details {
            doc.entry(key).or_insert(value);
        }
    }
    if let Some(tabs) = super::caps::open_pages(&state).await {
        doc.insert("tabs_active".into(), json!(tabs));
    }
    doc.insert("capabilities_url".into(), json!("/capabilities"));
    Json(Value::Object(doc)).into_response()
}

async fn capabilities(State(state): State<Shared>) -> Response {
    let mut doc = Map::new();
    doc.insert("code".into(), json!("capabilities"));
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
        limits.insert("clients_in_use".into(), json!(state.slots.in_use()));
    }
    Json(Value::Object(doc)).into_response()
}

async fn json_version(State(state): State<Shared>, headers: HeaderMap) -> Response {
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
            json!(format!("{}/cdp", ws_base(&headers))),
        );
        strip_frontend(map);
    }
    Json(doc).into_response()
}

async fn json_list(State(state): State<Shared>, headers: HeaderMap) -> Response {
    let Some(upstream) = state.view.upstream() else {
        return ApiError::CDP_UNAVAILABLE.into_response();
    };
    let mut doc = match fetch_json(&upstream.http_base, "/json/list").await {
        Ok(doc) => doc,
        Err(refusal) => return refusal.into_response(),
    };
    let base = ws_base(&headers);
    if let Value::Array(targets) = &mut doc {
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

/// `ws://<Host>` as the client addressed us (TLS termination is not handled here).
fn ws_base(headers: &HeaderMap) -> String {
    let host = header_str(headers, header::HOST).unwrap_or("localhost");
    format!("ws://{host}")
}

fn strip_frontend(map: &mut Map<String, Value>) {
    map.remove("devtoolsFrontendUrl");
    map.remove("devtoolsFrontendUrlCompat");
}

/// GET a DevTools JSON document from the browser; any failure is `cdp_unavailable`.
pub(super) async fn fetch_json(http_base: &str, path: &str) -> Result<Value, ApiError> {
    let endpoint = Endpoint::parse(http_base).map_err(|_| ApiError::CDP_UNAVAILABLE)?;
    host_http::request(&endpoint, "GET", path, None, None, DEVTOOLS_TIMEOUT)
        .await
        .ok()
        .map(|r| r.body)
        .filter(|body| !body.is_null())
        .ok_or(ApiError::CDP_UNAVAILABLE)
}
