//! The one way the driver talks HTTP to a host's control routes (`/health`, `/capabilities`,
//! `/takeover/handoff`, `/recent-requests`, `/uploads`, `/downloads/{id}`), and the host to
//! its browser's DevTools routes (`/json/version`, `/json/list`): hyper's HTTP/1.1 client
//! over TCP, a unix socket, or rustls for `https://` and `wss://` endpoints, with the bearer
//! token, one bound on the whole exchange, and one status check.
//!
//! JSON calls buffer their (small) answer; transfers stream between disk and the wire
//! ([`download_to`], [`upload_file`]).

mod connect;
pub mod shape;
mod status;
mod stream;
mod tls;

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{self, HeaderMap, HeaderValue};
use serde_json::Value;

use crate::error::{AfError, ErrorCode};
use crate::sdk::endpoint::Endpoint;

pub(crate) use connect::open;
pub(crate) use status::{check, refusal};
pub use stream::{download_to, upload_file, Received};

/// A response from the host: status, headers and JSON body.
#[derive(Debug, Clone)]
pub struct HostResponse {
    /// HTTP status.
    pub status: u16,
    /// Response headers.
    pub headers: HeaderMap,
    /// Parsed JSON body (`Null` when empty or not JSON).
    pub body: Value,
}

/// Longest answer accepted from a JSON control route (its documents are small).
const MAX_JSON_BYTES: usize = 8 * 1024 * 1024;

/// `method path` on the host (with `body` as JSON when given), all within `timeout`;
/// non-2xx answers become the stable errors of [`check`].
pub async fn request(
    endpoint: &Endpoint,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
    timeout: Duration,
) -> Result<HostResponse, AfError> {
    let exchange = async {
        let payload = body.map(|b| {
            let bytes = Bytes::from(b.to_string());
            let len = bytes.len() as u64;
            let full = Full::new(bytes).map_err(|never| match never {});
            ("application/json", len, full.boxed_unsync())
        });
        let req = build(endpoint, method, path, token, payload)?;
        let resp = connect::send(endpoint, req).await?;
        let status = resp.status().as_u16();
        let (parts, incoming) = resp.into_parts();
        let raw = stream::read_capped(incoming, MAX_JSON_BYTES, path).await?;
        Ok::<_, AfError>(HostResponse {
            status,
            headers: parts.headers,
            body: serde_json::from_slice(&raw).unwrap_or(Value::Null),
        })
    };
    let resp = tokio::time::timeout(timeout, exchange)
        .await
        .map_err(|_| {
            AfError::new(
                ErrorCode::HostUnreachable,
                format!(
                    "the host did not answer {path} within {} ms",
                    timeout.as_millis()
                ),
            )
        })??;
    check(resp.status, &resp.body, path)?;
    Ok(resp)
}

/// A request for `path` with the host's authority, the bearer token and, when given, a
/// body of `len` bytes of `content_type`.
fn build(
    endpoint: &Endpoint,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<(&str, u64, connect::Body)>,
) -> Result<hyper::Request<connect::Body>, AfError> {
    let method = hyper::Method::from_bytes(method.as_bytes())
        .map_err(|_| AfError::invalid(format!("bad method {method}")))?;
    let mut rb = hyper::Request::builder()
        .method(method)
        .uri(path)
        .header(header::HOST, authority(endpoint))
        .header(header::ACCEPT, "application/json");
    if let Some(t) = token {
        let mut value = HeaderValue::from_str(&format!("Bearer {t}"))
            .map_err(|_| AfError::invalid("the token is not a valid header value"))?;
        value.set_sensitive(true);
        rb = rb.header(header::AUTHORIZATION, value);
    }
    let boxed = match body {
        None => http_body_util::Empty::<Bytes>::new()
            .map_err(|never| match never {})
            .boxed_unsync(),
        Some((content_type, len, b)) => {
            rb = rb
                .header(header::CONTENT_TYPE, content_type)
                .header(header::CONTENT_LENGTH, len);
            b
        }
    };
    rb.body(boxed)
        .map_err(|e| AfError::invalid(format!("cannot build the request for {path}: {e}")))
}

/// The `Host` header: `host:port` (IPv6 in brackets) over TCP, `localhost` on a socket.
fn authority(endpoint: &Endpoint) -> String {
    match endpoint {
        Endpoint::Tcp { .. } => endpoint
            .http_base()
            .split_once("://")
            .map(|(_, a)| a.to_string())
            .unwrap_or_default(),
        Endpoint::Unix(_) => "localhost".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authority_brackets_ipv6() {
        let tcp = |host: &str| Endpoint::Tcp {
            tls: false,
            host: host.into(),
            port: 9,
        };
        assert_eq!(authority(&tcp("::1")), "[::1]:9");
        assert_eq!(authority(&tcp("h")), "h:9");
        assert_eq!(authority(&Endpoint::Unix("/s".into())), "localhost");
    }
}
