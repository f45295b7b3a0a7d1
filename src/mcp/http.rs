//! The Streamable HTTP transport a host serves at `/mcp`: rmcp's tower service, stateless.
//!
//! Stateless, because every tool call is one request and one answer (no server-initiated
//! messages, no subscriptions): no session table to expire or to lose on a restart, any
//! member behind a load balancer can answer, and the MCP `2026-07-28` revision has no
//! sessions anyway. Answers are plain JSON (`json_response`), not an SSE stream; a GET for a
//! server stream is 405, which clients treat as "no stream". Authentication, the Origin and
//! the Host checks are the listener's (its `Mcp` zone), so rmcp's own Host/Origin lists are
//! off; rmcp still caps the request body while it streams it in (413 beyond the cap).

use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use futures_util::future::BoxFuture;

use super::AfhttpMcp;

/// Largest `/mcp` request body (a tool call's arguments), in bytes.
pub const MAX_REQUEST_BODY_BYTES: usize = 1024 * 1024;

/// The `/mcp` service over `server` (cloned for every request): one request in, one
/// response out. The host's listener serves it under `/mcp`, behind its own checks.
pub fn endpoint(
    server: AfhttpMcp,
) -> impl Fn(axum::extract::Request) -> BoxFuture<'static, axum::response::Response>
       + Send
       + Sync
       + 'static {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(MAX_REQUEST_BODY_BYTES);
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    move |request: axum::extract::Request| -> BoxFuture<'static, axum::response::Response> {
        let service = service.clone();
        Box::pin(async move { service.handle(request).await.map(axum::body::Body::new) })
    }
}
