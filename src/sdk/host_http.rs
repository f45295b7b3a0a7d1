//! Plain HTTP to a host's control routes (`/health`, `/capabilities`, …) over TCP or a
//! unix socket, with the bearer token and stable error mapping.

use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::error::{AfError, ErrorCode};
use crate::sdk::endpoint::Endpoint;

/// A response from the host: status and JSON body.
#[derive(Debug, Clone)]
pub struct HostResponse {
    /// HTTP status.
    pub status: u16,
    /// Parsed JSON body (`Null` when empty or not JSON).
    pub body: Value,
}

/// `GET path` (or `POST` with a JSON body) on the host; non-2xx answers become errors.
pub async fn request(
    endpoint: &Endpoint,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
    timeout: Duration,
) -> Result<HostResponse, AfError> {
    let fut = async {
        match endpoint {
            Endpoint::Tcp { .. } => tcp(endpoint, method, path, token, body).await,
            Endpoint::Unix(p) => unix(p, method, path, token, body).await,
        }
    };
    let resp = tokio::time::timeout(timeout, fut).await.map_err(|_| {
        AfError::new(
            ErrorCode::HostUnreachable,
            format!(
                "the host did not answer {path} within {} ms",
                timeout.as_millis()
            ),
        )
    })??;
    check(resp, path)
}

/// A non-2xx answer as a stable error (a 404 route means the endpoint is not a host).
pub(crate) fn check(resp: HostResponse, path: &str) -> Result<HostResponse, AfError> {
    if (200..300).contains(&resp.status) {
        return Ok(resp);
    }
    let message = resp
        .body
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let code = match (resp.status, resp.body.get("code").and_then(Value::as_str)) {
        (401, _) | (_, Some("unauthorized")) => ErrorCode::Unauthorized,
        (_, Some("takeover_unavailable")) => ErrorCode::TakeoverUnavailable,
        (_, Some("host_busy")) | (429, _) => ErrorCode::HostBusy,
        (_, Some("cdp_unavailable")) | (503, _) => ErrorCode::CdpUnavailable,
        (_, Some("invalid_argument")) | (400, _) => ErrorCode::InvalidArgument,
        (404, _) => ErrorCode::InvalidEndpoint,
        _ => ErrorCode::HostUnreachable,
    };
    let mut e = AfError::new(
        code,
        format!("{path}: host answered {} {message}", resp.status),
    );
    if code == ErrorCode::Unauthorized {
        e = e.with_hint("pass --token-secret, set AFHTTP_TOKEN_SECRET, or --token-secret-file");
    }
    Err(e)
}

/// Longest response accepted from a host's control route (its JSON documents are small).
const MAX_RESPONSE_BYTES: u64 = 8 * 1024 * 1024;

/// TLS endpoints go through reqwest; plain TCP speaks HTTP/1.1 by hand, like the unix socket,
/// because building a reqwest client loads the system trust store, a cost every cold
/// `fetch` and host start would otherwise pay for a loopback request.
async fn tcp(
    endpoint: &Endpoint,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> Result<HostResponse, AfError> {
    let Endpoint::Tcp { tls, host, port } = endpoint else {
        return Err(AfError::new(
            ErrorCode::InvalidEndpoint,
            "not a TCP endpoint",
        ));
    };
    if *tls {
        return tls_request(endpoint, method, path, token, body).await;
    }
    let url = format!("{}{path}", endpoint.http_base());
    let unreachable = |e: std::io::Error| {
        AfError::new(
            ErrorCode::HostUnreachable,
            format!("cannot reach the host at {url}: {e}"),
        )
        .with_hint("check that `afhttp host` is running and the endpoint is right")
    };
    let stream = tokio::net::TcpStream::connect((host.as_str(), *port))
        .await
        .map_err(unreachable)?;
    let _ = stream.set_nodelay(true);
    let authority = endpoint
        .http_base()
        .split_once("://")
        .map_or_else(|| host.clone(), |(_, a)| a.to_string());
    exchange(stream, &authority, method, path, token, body)
        .await
        .map_err(unreachable)?
        .ok_or_else(malformed)
}

async fn tls_request(
    endpoint: &Endpoint,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> Result<HostResponse, AfError> {
    let client = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| AfError::new(ErrorCode::HostUnreachable, e.to_string()))?;
    let url = format!("{}{path}", endpoint.http_base());
    let m = reqwest::Method::from_bytes(method.as_bytes())
        .map_err(|_| AfError::invalid(format!("bad method {method}")))?;
    let mut rb = client.request(m, &url);
    if let Some(t) = token {
        rb = rb.bearer_auth(t);
    }
    if let Some(b) = body {
        rb = rb
            .header("content-type", "application/json")
            .body(b.to_string());
    }
    let resp = rb.send().await.map_err(|e| {
        AfError::new(
            ErrorCode::HostUnreachable,
            format!(
                "cannot reach the host at {url}: {}",
                crate::sdk::http::errors::source_chain(&e)
            ),
        )
        .with_hint("check that `afhttp host` is running and the endpoint is right")
    })?;
    let status = resp.status().as_u16();
    let bytes = resp
        .bytes()
        .await
        .map_err(|e| AfError::new(ErrorCode::HostUnreachable, format!("reading {url}: {e}")))?;
    Ok(HostResponse {
        status,
        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    })
}

async fn unix(
    socket: &std::path::Path,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> Result<HostResponse, AfError> {
    let stream = tokio::net::UnixStream::connect(socket).await.map_err(|e| {
        AfError::new(
            ErrorCode::HostUnreachable,
            format!("cannot connect to {}: {e}", socket.display()),
        )
        .with_hint("check that `afhttp host --listen unix:...` is running")
    })?;
    exchange(stream, "localhost", method, path, token, body)
        .await
        .map_err(|e| {
            AfError::new(
                ErrorCode::HostUnreachable,
                format!("{}: {e}", socket.display()),
            )
        })?
        .ok_or_else(malformed)
}

fn malformed() -> AfError {
    AfError::new(
        ErrorCode::HostUnreachable,
        "the host sent a malformed HTTP response",
    )
}

/// One `Connection: close` HTTP/1.1 exchange on `stream`; `None` for a malformed answer.
async fn exchange(
    mut stream: impl tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    authority: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> std::io::Result<Option<HostResponse>> {
    let payload = body.map(Value::to_string).unwrap_or_default();
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\nAccept: application/json\r\n");
    if let Some(t) = token {
        head.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    if body.is_some() {
        head.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            payload.len()
        ));
    }
    head.push_str("\r\n");
    head.push_str(&payload);
    stream.write_all(head.as_bytes()).await?;
    // Read until the response is complete rather than until close: not every server
    // (Chromium's DevTools one among them) closes promptly after `Connection: close`.
    let mut raw = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&chunk[..n]);
        if raw.len() as u64 > MAX_RESPONSE_BYTES {
            return Ok(None);
        }
        if response_complete(&raw) {
            break;
        }
    }
    Ok(parse_http_response(&raw))
}

/// Whether `raw` holds a whole response: headers plus `Content-Length` bytes, or a chunked
/// body through its last chunk. A body with neither is read until the peer closes.
fn response_complete(raw: &[u8]) -> bool {
    let Some(split) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let Ok(head) = std::str::from_utf8(&raw[..split]) else {
        return false;
    };
    let body = &raw[split + 4..];
    for line in head.split("\r\n").skip(1) {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let name = name.trim().to_ascii_lowercase();
        if name == "content-length" {
            return value
                .trim()
                .parse::<usize>()
                .is_ok_and(|len| body.len() >= len);
        }
        if name == "transfer-encoding" && value.to_ascii_lowercase().contains("chunked") {
            return body.ends_with(b"0\r\n\r\n");
        }
    }
    false
}

/// Parse a complete HTTP/1.1 response (Content-Length, chunked, or read-to-close bodies).
pub fn parse_http_response(raw: &[u8]) -> Option<HostResponse> {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..split]).ok()?;
    let mut lines = head.split("\r\n");
    let status: u16 = lines.next()?.split_whitespace().nth(1)?.parse().ok()?;
    let chunked = lines.any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    let mut body = raw[split + 4..].to_vec();
    if chunked {
        body = dechunk(&body)?;
    }
    Some(HostResponse {
        status,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}

fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n")?;
        let size_str = std::str::from_utf8(&data[..line_end]).ok()?;
        let size = usize::from_str_radix(size_str.split(';').next()?.trim(), 16).ok()?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(data.get(..size)?);
        data = data.get(size + 2..)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_plain_and_chunked() {
        let r =
            parse_http_response(b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n{\"status\":1}\n")
                .unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(r.body["status"], 1);
        let r = parse_http_response(b"HTTP/1.1 401 X\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n2\r\n1}\r\n0\r\n\r\n").unwrap();
        assert_eq!((r.status, r.body["a"].as_i64()), (401, Some(1)));
        assert!(parse_http_response(b"garbage").is_none());
    }

    #[test]
    fn completeness_follows_length_and_chunks() {
        assert!(!response_complete(b"HTTP/1.1 200 OK\r\nContent-Length: 4"));
        assert!(!response_complete(
            b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nab"
        ));
        assert!(response_complete(
            b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nabcd"
        ));
        assert!(!response_complete(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n"
        ));
        assert!(response_complete(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n"
        ));
        assert!(!response_complete(b"HTTP/1.1 200 OK\r\n\r\nuntil close"));
    }

    #[test]
    fn statuses_map_to_codes() {
        let e = check(
            HostResponse {
                status: 401,
                body: Value::Null,
            },
            "/health",
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::Unauthorized);
        let e = check(
            HostResponse {
                status: 503,
                body: serde_json::json!({"code":"cdp_unavailable"}),
            },
            "/cdp",
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::CdpUnavailable);
        assert!(e.retryable());
    }
}
