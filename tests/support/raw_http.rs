//! A raw HTTP/1.1 client for loopback: one exchange per connection, the request written
//! exactly as given, so a test can send what a real client would fix up (a refused `Host`, a
//! forged `Origin`, a token in the query, an upgrade). Sync over any stream, and async over a
//! tokio one (TCP or a Unix socket).

use std::io::{Read, Write};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// How long a read may wait for the next bytes of a response.
pub const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// One response as it came.
#[derive(Debug, Clone, Default)]
pub struct Response {
    /// The status code; 0 when nothing answered (nothing listens, or no status line).
    pub status: u16,
    /// The status line and headers, without the blank line.
    pub head: String,
    /// The body, as sent (chunked bodies are not decoded).
    pub body: Vec<u8>,
}

impl Response {
    /// The body as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON; Null when it is not JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The value of header `name` (case-insensitive), trimmed.
    pub fn header(&self, name: &str) -> Option<String> {
        header_of(&self.head, name)
    }

    /// The head, a blank line and the body as text: the whole response, for messages.
    pub fn raw(&self) -> String {
        format!("{}\r\n\r\n{}", self.head, self.text())
    }
}

/// `method path` to `127.0.0.1:port` with `headers` and `body`, as [`request`] writes it;
/// status 0 when nothing listens.
pub fn send(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    send_to("127.0.0.1", port, method, path, headers, body)
}

/// [`send`] to `ip:port`.
pub fn send_to(
    ip: &str,
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    match std::net::TcpStream::connect((ip, port)) {
        Ok(s) => exchange_tcp(s, &request(method, path, port, headers, body)),
        Err(_) => Response::default(),
    }
}

/// `GET path` on `127.0.0.1:port`, with `token` as bearer when given.
pub fn get(port: u16, path: &str, token: Option<&str>) -> Response {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = bearer
        .as_deref()
        .map(|b| ("Authorization", b))
        .into_iter()
        .collect();
    send(port, "GET", path, &headers, b"")
}

/// A request: the request line, `Host: 127.0.0.1:port` and `Connection: close` unless
/// `headers` carry their own, `headers` as given, `Content-Length` and the body.
pub fn request(
    method: &str,
    path: &str,
    port: u16,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Vec<u8> {
    let given = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    if !given("host") {
        head.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    if !given("connection") {
        head.push_str("Connection: close\r\n");
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut out = head.into_bytes();
    out.extend_from_slice(body);
    out
}

/// Write `request` (head and body, exactly) on `stream` and read one response: its head,
/// then `Content-Length` bytes, or up to the close (nothing after a `101`'s head).
pub fn exchange<S: Read + Write>(mut stream: S, request: &[u8]) -> Response {
    let _ = stream.write_all(request);
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    while !complete(&raw) {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
        }
    }
    parse(&raw)
}

/// [`exchange`] with a read timeout on a TCP stream.
pub fn exchange_tcp(stream: std::net::TcpStream, request: &[u8]) -> Response {
    let _ = stream.set_read_timeout(Some(READ_TIMEOUT));
    exchange(stream, request)
}

/// [`exchange`] on a tokio stream, each read bounded by [`READ_TIMEOUT`].
pub async fn exchange_async<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    request: &[u8],
) -> Response {
    let _ = stream.write_all(request).await;
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    while !complete(&raw) {
        match tokio::time::timeout(READ_TIMEOUT, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => break,
            Ok(Ok(n)) => raw.extend_from_slice(&buf[..n]),
        }
    }
    parse(&raw)
}

fn head_end(raw: &[u8]) -> Option<usize> {
    raw.windows(4).position(|w| w == b"\r\n\r\n")
}

/// Whether `raw` holds a whole response that says how long it is (else: read to the close).
fn complete(raw: &[u8]) -> bool {
    let Some(end) = head_end(raw) else {
        return false;
    };
    let head = String::from_utf8_lossy(&raw[..end]);
    if head.split_whitespace().nth(1) == Some("101") {
        return true;
    }
    header_of(&head, "content-length")
        .and_then(|l| l.parse::<usize>().ok())
        .is_some_and(|len| raw.len() - end - 4 >= len)
}

fn parse(raw: &[u8]) -> Response {
    let (head, body) = match head_end(raw) {
        Some(end) => (&raw[..end], raw[end + 4..].to_vec()),
        None => (raw, Vec::new()),
    };
    let head = String::from_utf8_lossy(head).into_owned();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    Response { status, head, body }
}

/// The value of header `name` (case-insensitive, trimmed) in a response head.
pub fn header_of(head: &str, name: &str) -> Option<String> {
    head.lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim().to_string())
}
