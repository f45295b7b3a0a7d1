//! The listener's refusals: one type ([`ApiError`]) with its HTTP status, a stable `code`
//! and a short message, written as the JSON body `{"code", "message"}` every driver decodes
//! the same way. A refusal that carries a stable error code gets its status from the one
//! mapping, [`status_of`]; the access refusals (Host, Origin, token, route) are constants.

use std::borrow::Cow;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::error::ErrorCode;

/// A refused or failed request: HTTP status plus a stable JSON `code` and a short message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Stable snake_case code.
    pub code: &'static str,
    /// Human text; never contains tokens, paths or upstream internals.
    pub message: Cow<'static, str>,
    /// One more fact for the body (a download's `state`).
    pub detail: Option<(&'static str, Cow<'static, str>)>,
}

/// The HTTP status of a refusal that carries the stable error `code`: the one mapping.
pub fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
        ErrorCode::InvalidArgument | ErrorCode::ProfileInvalidName => StatusCode::BAD_REQUEST,
        ErrorCode::ProfileLocked | ErrorCode::ProfileMismatch => StatusCode::CONFLICT,
        ErrorCode::BackendUnsupported => StatusCode::NOT_IMPLEMENTED,
        ErrorCode::ProfileNotFound => StatusCode::NOT_FOUND,
        ErrorCode::IoError => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::SERVICE_UNAVAILABLE,
    }
}

impl ApiError {
    /// An access refusal with its own status (the constants below).
    pub const fn access(status: StatusCode, code: &'static str, message: &'static str) -> ApiError {
        ApiError {
            status,
            code,
            message: Cow::Borrowed(message),
            detail: None,
        }
    }

    /// A refusal carrying the stable error `code`, with [`status_of`]'s status.
    pub fn error(code: ErrorCode, message: impl Into<Cow<'static, str>>) -> ApiError {
        ApiError {
            status: status_of(code),
            code: code.as_str(),
            message: message.into(),
            detail: None,
        }
    }

    /// The same refusal under HTTP's own status for it (405 for a method, 413 for a size).
    pub fn with_http_status(mut self, status: StatusCode) -> ApiError {
        self.status = status;
        self
    }

    /// Add one more fact to the body.
    pub fn with_detail(
        mut self,
        key: &'static str,
        value: impl Into<Cow<'static, str>>,
    ) -> ApiError {
        self.detail = Some((key, value.into()));
        self
    }

    /// 401: the token is missing or wrong.
    pub const UNAUTHORIZED: ApiError = ApiError::access(
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "a valid token is required (Authorization: Bearer <token>)",
    );
    /// 403: the Host header is not an IP, `localhost` or an allowed host.
    pub const FORBIDDEN_HOST: ApiError = ApiError::access(
        StatusCode::FORBIDDEN,
        "forbidden_host",
        "requests without a bearer token must use an IP, localhost or an allowed Host",
    );
    /// 401: `/mcp` on a host started without a token.
    pub const MCP_NEEDS_TOKEN: ApiError = ApiError::access(
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "/mcp is served only by a host with a token (--token-secret or \
                  --token-secret-file), to a caller sending Authorization: Bearer <token>",
    );
    /// 401: a token in the query of an `/mcp` request (it would end up in logs).
    pub const QUERY_TOKEN_REFUSED: ApiError = ApiError::access(
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "a token in the query is never accepted here; send Authorization: Bearer <token>",
    );
    /// 403: an `/mcp` request from a page of another origin.
    pub const FORBIDDEN_MCP_ORIGIN: ApiError = ApiError::access(
        StatusCode::FORBIDDEN,
        "forbidden_origin",
        "requests from another Origin are refused",
    );
    /// 403: an `/mcp` request whose Host is not one of this listener's names.
    pub const FORBIDDEN_MCP_HOST: ApiError = ApiError::access(
        StatusCode::FORBIDDEN,
        "forbidden_host",
        "the Host must be an IP, localhost, this machine's hostname or an --allowed-host",
    );
    /// 403: a WebSocket upgrade from a cross-site page.
    pub const FORBIDDEN_ORIGIN: ApiError = ApiError::access(
        StatusCode::FORBIDDEN,
        "forbidden_origin",
        "cross-origin WebSocket upgrades are refused",
    );
    /// 503: the browser is not up (starting, restarting, or unreachable).
    pub const CDP_UNAVAILABLE: ApiError = ApiError::access(
        StatusCode::SERVICE_UNAVAILABLE,
        "cdp_unavailable",
        "the browser is not available yet; retry shortly",
    );
    /// 503: a concurrency cap (`--max-clients`) is full; retryable.
    pub const HOST_BUSY: ApiError = ApiError::access(
        StatusCode::SERVICE_UNAVAILABLE,
        "host_busy",
        "the host is at its client cap (--max-clients); retry after a backoff",
    );
    /// 400: a malformed request (e.g. a bad target id).
    pub const BAD_REQUEST: ApiError = ApiError::access(
        StatusCode::BAD_REQUEST,
        "invalid_argument",
        "malformed request",
    );
    /// 404: no download with this id (unknown to the current browser, or its file is gone).
    pub const DOWNLOAD_NOT_FOUND: ApiError =
        ApiError::access(StatusCode::NOT_FOUND, "not_found", "no such download");
    /// 404: this host serves no MCP (`--no-mcp`, or a build or host without it).
    pub const MCP_OFF: ApiError = ApiError::access(
        StatusCode::NOT_FOUND,
        "not_found",
        "this host does not serve /mcp",
    );
    /// 404: no such route.
    pub const NOT_FOUND: ApiError =
        ApiError::access(StatusCode::NOT_FOUND, "not_found", "no such route");
}

/// The JSON body of a refusal.
#[derive(Serialize)]
struct Body<'a> {
    code: &'a str,
    message: &'a str,
    #[serde(flatten)]
    detail: Option<std::collections::BTreeMap<&'a str, &'a str>>,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = Body {
            code: self.code,
            message: &self.message,
            detail: self
                .detail
                .as_ref()
                .map(|(k, v)| std::iter::once((*k, v.as_ref())).collect()),
        };
        (self.status, axum::Json(body)).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_with_a_stable_code_take_its_one_status() {
        let e = ApiError::error(ErrorCode::ProfileLocked, "in use");
        assert_eq!((e.status, e.code), (StatusCode::CONFLICT, "profile_locked"));
        assert_eq!(
            ApiError::error(ErrorCode::InvalidArgument, "x").status,
            StatusCode::BAD_REQUEST
        );
        assert_eq!(
            ApiError::error(ErrorCode::HostBusy, "x").status,
            StatusCode::SERVICE_UNAVAILABLE
        );
    }
}
