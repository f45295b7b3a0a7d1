//! Streaming HTTP to a host's transfer routes: bodies go to and from disk in chunks, never
//! whole in memory (the control calls of [`crate::sdk::host_http`] buffer small JSON).
//! Plain TCP and unix sockets speak HTTP/1.1 through hyper; TLS endpoints go through reqwest.

use std::path::Path;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Empty, StreamBody};
use hyper::body::Frame;
use serde_json::Value;
use tokio::io::AsyncReadExt;

use crate::error::{AfError, ErrorCode};
use crate::sdk::endpoint::Endpoint;
use crate::sdk::host_http::{self, HostResponse};

/// Bytes per chunk read from a local file.
const CHUNK: usize = 64 * 1024;
/// Longest error document read from a refusing host.
const MAX_ERROR_BYTES: usize = 64 * 1024;

type IoStream = futures_util::stream::BoxStream<'static, Result<Bytes, std::io::Error>>;

/// A response whose body is still on the wire.
enum Answer {
    Hyper(hyper::Response<hyper::body::Incoming>),
    Reqwest(reqwest::Response),
}

impl Answer {
    fn status(&self) -> u16 {
        match self {
            Answer::Hyper(r) => r.status().as_u16(),
            Answer::Reqwest(r) => r.status().as_u16(),
        }
    }

    /// The next body chunk; `None` at the end.
    async fn chunk(&mut self) -> Result<Option<Bytes>, String> {
        match self {
            Answer::Hyper(r) => loop {
                match r.body_mut().frame().await {
                    None => return Ok(None),
                    Some(Err(e)) => return Err(e.to_string()),
                    Some(Ok(f)) => {
                        if let Ok(data) = f.into_data() {
                            return Ok(Some(data));
                        }
                    }
                }
            },
            Answer::Reqwest(r) => r.chunk().await.map_err(|e| e.to_string()),
        }
    }

    /// A non-2xx answer as the stable error `host_http` gives the control routes.
    async fn into_error(mut self, path: &str) -> AfError {
        let status = self.status();
        let mut raw = Vec::new();
        while let Ok(Some(c)) = self.chunk().await {
            raw.extend_from_slice(&c);
            if raw.len() > MAX_ERROR_BYTES {
                break;
            }
        }
        let body = serde_json::from_slice(&raw).unwrap_or(Value::Null);
        match host_http::check(HostResponse { status, body }, path) {
            Err(e) => e,
            Ok(_) => AfError::new(ErrorCode::HostUnreachable, format!("{path}: no answer")),
        }
    }
}

fn unreachable(what: &str, e: impl std::fmt::Display) -> AfError {
    AfError::new(
        ErrorCode::HostUnreachable,
        format!("cannot reach the host for {what}: {e}"),
    )
    .with_hint("check that `afhttp host` is running and the endpoint is right")
}

/// Send one request; `body` is `None` for a GET, or a stream of `len` bytes.
async fn send(
    endpoint: &Endpoint,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<(IoStream, u64)>,
) -> Result<Answer, AfError> {
    if let Endpoint::Tcp { tls: true, .. } = endpoint {
        return send_tls(endpoint, method, path, token, body).await;
    }
    let authority = match endpoint {
        Endpoint::Tcp { .. } => endpoint
            .http_base()
            .split_once("://")
            .map(|(_, a)| a.to_string())
            .unwrap_or_default(),
        Endpoint::Unix(_) => "localhost".to_string(),
    };
    let mut rb = hyper::Request::builder()
        .method(method)
        .uri(path)
        .header(hyper::header::HOST, authority);
    if let Some(t) = token {
        rb = rb.header(hyper::header::AUTHORIZATION, format!("Bearer {t}"));
    }
    let boxed: UnsyncBoxBody<Bytes, std::io::Error> = match body {
        None => Empty::<Bytes>::new()
            .map_err(|never| match never {})
            .boxed_unsync(),
        Some((stream, len)) => {
            rb = rb
                .header(hyper::header::CONTENT_LENGTH, len)
                .header(hyper::header::CONTENT_TYPE, "application/octet-stream");
            let frames = futures_util::StreamExt::map(stream, |r| r.map(Frame::data));
            BodyExt::boxed_unsync(StreamBody::new(frames))
        }
    };
    let req = rb
        .body(boxed)
        .map_err(|e| AfError::invalid(format!("cannot build the request: {e}")))?;
    let resp = match endpoint {
        Endpoint::Tcp { host, port, .. } => {
            let s = tokio::net::TcpStream::connect((host.as_str(), *port))
                .await
                .map_err(|e| unreachable(path, e))?;
            let _ = s.set_nodelay(true);
            exchange(s, req).await
        }
        Endpoint::Unix(socket) => {
            let s = tokio::net::UnixStream::connect(socket)
                .await
                .map_err(|e| unreachable(path, format!("{}: {e}", socket.display())))?;
            exchange(s, req).await
        }
    };
    resp.map(Answer::Hyper).map_err(|e| unreachable(path, e))
}

async fn exchange<S>(
    stream: S,
    req: hyper::Request<UnsyncBoxBody<Bytes, std::io::Error>>,
) -> Result<hyper::Response<hyper::body::Incoming>, hyper::Error>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
    // The connection task ends with the exchange (the request is the only one on it).
    tokio::spawn(async move {
        let _ = conn.await;
    });
    sender.send_request(req).await
}

async fn send_tls(
    endpoint: &Endpoint,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<(IoStream, u64)>,
) -> Result<Answer, AfError> {
    let client = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| unreachable(path, e))?;
    let m = reqwest::Method::from_bytes(method.as_bytes())
        .map_err(|_| AfError::invalid(format!("bad method {method}")))?;
    let mut rb = client.request(m, format!("{}{path}", endpoint.http_base()));
    if let Some(t) = token {
        rb = rb.bearer_auth(t);
    }
    if let Some((stream, len)) = body {
        rb = rb
            .header(reqwest::header::CONTENT_LENGTH, len)
            .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
            .body(reqwest::Body::wrap_stream(stream));
    }
    let resp = rb
        .send()
        .await
        .map_err(|e| unreachable(path, crate::sdk::http::errors::source_chain(&e)))?;
    Ok(Answer::Reqwest(resp))
}

/// What [`get_to`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received {
    /// The whole body, this many bytes.
    Complete(u64),
    /// The body passed `max_bytes`; the sink got only part of it and must be discarded.
    TooLarge,
}

/// `GET path` and hand the body to `sink` chunk by chunk (at most `max_bytes`, 0 = no
/// bound), all within `timeout`. A non-2xx answer is the host's stable error.
pub async fn get_to(
    endpoint: &Endpoint,
    path: &str,
    token: Option<&str>,
    timeout: Duration,
    max_bytes: u64,
    mut sink: impl FnMut(&[u8]) -> Result<(), AfError>,
) -> Result<Received, AfError> {
    let run = async {
        let mut answer = send(endpoint, "GET", path, token, None).await?;
        if !(200..300).contains(&answer.status()) {
            return Err(answer.into_error(path).await);
        }
        let mut total = 0u64;
        while let Some(chunk) = answer
            .chunk()
            .await
            .map_err(|e| AfError::new(ErrorCode::HostUnreachable, format!("{path}: {e}")))?
        {
            total += chunk.len() as u64;
            if max_bytes > 0 && total > max_bytes {
                return Ok(Received::TooLarge);
            }
            sink(&chunk)?;
        }
        Ok(Received::Complete(total))
    };
    tokio::time::timeout(timeout, run)
        .await
        .map_err(|_| timed_out(path, timeout))?
}

/// `POST path` with the `len` bytes of `file` as the body, within `timeout`; the host's
/// JSON answer, or its stable error.
pub async fn post_file(
    endpoint: &Endpoint,
    path: &str,
    token: Option<&str>,
    timeout: Duration,
    file: &Path,
    len: u64,
) -> Result<Value, AfError> {
    let f = tokio::fs::File::open(file)
        .await
        .map_err(|e| AfError::invalid(format!("--file {}: {e}", file.display())))?;
    // Exactly `len` bytes, as Content-Length says, even if the file grows meanwhile.
    let reader = f.take(len);
    let stream = futures_util::stream::unfold(Some(reader), |reader| async move {
        let mut reader = reader?;
        let mut buf = vec![0u8; CHUNK];
        match reader.read(&mut buf).await {
            Ok(0) => None,
            Ok(n) => {
                buf.truncate(n);
                Some((Ok(Bytes::from(buf)), Some(reader)))
            }
            Err(e) => Some((Err(e), None)),
        }
    });
    let run = async {
        let mut answer = send(
            endpoint,
            "POST",
            path,
            token,
            Some((Box::pin(stream) as IoStream, len)),
        )
        .await?;
        if !(200..300).contains(&answer.status()) {
            return Err(answer.into_error(path).await);
        }
        let mut raw = Vec::new();
        while let Some(c) = answer
            .chunk()
            .await
            .map_err(|e| AfError::new(ErrorCode::HostUnreachable, format!("{path}: {e}")))?
        {
            raw.extend_from_slice(&c);
            if raw.len() > MAX_ERROR_BYTES {
                break;
            }
        }
        serde_json::from_slice(&raw).map_err(|_| {
            AfError::new(
                ErrorCode::HostUnreachable,
                format!("{path}: the host's answer is not JSON"),
            )
        })
    };
    tokio::time::timeout(timeout, run)
        .await
        .map_err(|_| timed_out(path, timeout))?
}

fn timed_out(path: &str, timeout: Duration) -> AfError {
    AfError::new(
        ErrorCode::HostUnreachable,
        format!(
            "the transfer {path} did not finish within {} ms",
            timeout.as_millis()
        ),
    )
    .with_hint("raise --timeout-ms for large files")
}
