//! The browser's own DevTools HTTP documents (`/json/version`, `/json/list`), read by the
//! routes that rewrite them and by the tab cap.

use serde_json::Value;

use super::auth::ApiError;
use crate::sdk::endpoint::Endpoint;
use crate::sdk::host_http;

/// How long the browser gets to answer a DevTools `/json/*` request.
const DEVTOOLS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

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
