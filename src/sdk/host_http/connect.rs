//! One connection per call: TCP (with TLS when the endpoint says so) or a unix socket, an
//! HTTP/1.1 handshake, one request. Control calls are rare and mostly on loopback, so a
//! pool would only add state that a restarted host would leave stale.

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::error::{AfError, ErrorCode};
use crate::sdk::endpoint::Endpoint;

/// The request body every call sends (empty, JSON, or a file streamed from disk).
pub(super) type Body = UnsyncBoxBody<Bytes, std::io::Error>;

/// A byte stream to a host: what control calls and the `/cdp` WebSocket both run over.
pub(crate) trait HostStream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> HostStream for T {}

/// Open a connection to `endpoint` for a request to `path` (named in errors): a unix
/// socket, or TCP with TLS when the endpoint says so (the one TLS configuration, see
/// [`super::tls`]).
pub(crate) async fn open(endpoint: &Endpoint, path: &str) -> Result<Box<dyn HostStream>, AfError> {
    match endpoint {
        Endpoint::Unix(socket) => {
            let s = tokio::net::UnixStream::connect(socket)
                .await
                .map_err(|e| unreachable(endpoint, path, &e))?;
            Ok(Box::new(s))
        }
        Endpoint::Tcp { tls, host, port } => {
            let s = tokio::net::TcpStream::connect((host.as_str(), *port))
                .await
                .map_err(|e| unreachable(endpoint, path, &e))?;
            let _ = s.set_nodelay(true);
            if !*tls {
                return Ok(Box::new(s));
            }
            let s = super::tls::handshake(host, s)
                .await
                .map_err(|e| tls_failed(endpoint, path, e))?;
            Ok(Box::new(s))
        }
    }
}

/// Connect to `endpoint` and send `req`, the only request on that connection.
pub(super) async fn send(
    endpoint: &Endpoint,
    req: hyper::Request<Body>,
) -> Result<hyper::Response<Incoming>, AfError> {
    let path = req.uri().path().to_string();
    let stream = open(endpoint, &path).await?;
    exchange(stream, req)
        .await
        .map_err(|e| unreachable(endpoint, &path, &crate::sdk::http::errors::source_chain(&e)))
}

async fn exchange<S>(
    stream: S,
    req: hyper::Request<Body>,
) -> Result<hyper::Response<Incoming>, hyper::Error>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    // The connection task ends once the response is read and `sender` is dropped.
    tokio::spawn(async move {
        let _ = conn.await;
    });
    sender.send_request(req).await
}

/// Where the call went, for messages: the URL over TCP, the socket's path otherwise.
fn target(endpoint: &Endpoint, path: &str) -> String {
    match endpoint {
        Endpoint::Tcp { .. } => format!("{}{path}", endpoint.http_base()),
        Endpoint::Unix(socket) => format!("{} ({path})", socket.display()),
    }
}

fn unreachable(endpoint: &Endpoint, path: &str, e: &dyn std::fmt::Display) -> AfError {
    let hint = match endpoint {
        Endpoint::Tcp { .. } => "check that `afhttp host` is running and the endpoint is right",
        Endpoint::Unix(_) => "check that `afhttp host --listen unix:...` is running",
    };
    AfError::new(
        ErrorCode::HostUnreachable,
        format!("cannot reach the host at {}: {e}", target(endpoint, path)),
    )
    .with_hint(hint)
}

/// A failed TLS handshake: `tls_error` when rustls refused (certificate, protocol, a peer
/// that does not speak TLS), otherwise the connection itself failed.
fn tls_failed(endpoint: &Endpoint, path: &str, e: std::io::Error) -> AfError {
    let Some(refusal) = super::tls::rustls_error(&e) else {
        return unreachable(endpoint, path, &e);
    };
    AfError::new(
        ErrorCode::TlsError,
        format!(
            "TLS with the host at {} failed: {refusal}",
            target(endpoint, path)
        ),
    )
    .with_hint(
        "the host's certificate must chain to a trusted root (the system store, or SSL_CERT_FILE); \
         use http:// or ws:// for a listener without TLS",
    )
}
