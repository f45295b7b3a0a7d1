//! A raw-JSON CDP client: one WebSocket, one router task, typed errors.
//!
//! Chrome's protocol drifts, so only the envelope (`id`, `method`, `sessionId`, `result`,
//! `error`) is interpreted; params and results stay `serde_json::Value`.

pub mod network;
pub mod router;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

use crate::error::{AfError, ErrorCode};
use crate::sdk::endpoint::Endpoint;

/// An event from the browser.
#[derive(Debug, Clone)]
pub struct CdpEvent {
    /// Method name, e.g. `Network.responseReceived`.
    pub method: String,
    /// Raw params.
    pub params: Value,
    /// The flattened session it belongs to (`None`: browser target).
    pub session_id: Option<String>,
}

/// The method a host renames a refused `Target.createTarget` to (its tab cap is full): the
/// browser answers it with an "unknown method" error under the caller's id, which
/// [`CallError::into_af`] reads as `host_busy`.
pub const HOST_BUSY_METHOD: &str = "Afhttp.hostBusy";

/// Why one CDP call failed.
#[derive(Debug, Clone)]
pub enum CallError {
    /// The browser answered with a protocol error.
    Protocol {
        /// JSON-RPC error code.
        code: i64,
        /// Browser's message.
        message: String,
    },
    /// The connection closed before the answer.
    Closed(String),
    /// The browser's answer to this call could not be decoded.
    Malformed(String),
    /// No answer in time.
    Timeout(String),
}

impl CallError {
    /// As a stable error: protocol errors on bad input are `invalid_argument`.
    pub fn into_af(self, method: &str) -> AfError {
        match self {
            CallError::Protocol { message, .. } if message.contains(HOST_BUSY_METHOD) => {
                AfError::new(
                    ErrorCode::HostBusy,
                    format!("{method}: the host is at its tab cap (`afhttp host --max-tabs`)"),
                )
                .with_hint("retry after a backoff, or close tabs you no longer need")
            }
            CallError::Protocol { code, message } => {
                let code_af = if (-32602..=-32600).contains(&code) {
                    ErrorCode::InvalidArgument
                } else {
                    ErrorCode::ArtifactCaptureFailed
                };
                AfError::new(code_af, format!("{method}: {message} ({code})"))
            }
            CallError::Closed(why) => AfError::new(
                ErrorCode::CdpUnavailable,
                format!("{method}: the CDP connection closed ({why})"),
            ),
            CallError::Timeout(why) => {
                AfError::new(ErrorCode::CdpTimeout, format!("{method}: {why}"))
            }
            CallError::Malformed(why) => AfError::new(
                ErrorCode::ArtifactCaptureFailed,
                format!("{method}: the browser's answer could not be read ({why})"),
            ),
        }
    }
}

/// Max WebSocket message: full-page screenshots arrive base64 in one frame.
const MAX_MESSAGE: usize = 512 * 1024 * 1024;

/// One CDP WebSocket connection (to `/cdp` on a host, or a browser's own endpoint).
pub struct CdpConnection {
    control: mpsc::UnboundedSender<router::Control>,
    next_id: AtomicU64,
}

impl std::fmt::Debug for CdpConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CdpConnection").finish_non_exhaustive()
    }
}

impl CdpConnection {
    /// Connect to a browser's own DevTools socket, `ws://127.0.0.1:PORT/devtools/browser/…`
    /// (what a host says to the browser it launched; no token, plain loopback).
    pub async fn connect_devtools(
        ws_url: &str,
        timeout: Duration,
    ) -> Result<Arc<CdpConnection>, AfError> {
        let url = url::Url::parse(ws_url)
            .map_err(|e| AfError::invalid(format!("browser socket URL {ws_url:?}: {e}")))?;
        let (Some(host), Some(port)) = (url.host_str(), url.port()) else {
            return Err(AfError::invalid(format!(
                "browser socket URL {ws_url:?} has no host and port"
            )));
        };
        let endpoint = Endpoint::Tcp {
            tls: false,
            host: host.to_string(),
            port,
        };
        CdpConnection::connect(&endpoint, url.path(), None, timeout).await
    }

    /// Connect to `endpoint` (path `/cdp`, or a full ws URL given in `ws_url`).
    pub async fn connect(
        endpoint: &Endpoint,
        ws_path: &str,
        bearer: Option<&str>,
        timeout: Duration,
    ) -> Result<Arc<CdpConnection>, AfError> {
        let unreachable = |why: String| {
            AfError::new(
                ErrorCode::HostUnreachable,
                format!("cannot open the CDP WebSocket: {why}"),
            )
        };
        let (scheme, authority) = match endpoint {
            Endpoint::Tcp { tls, .. } => {
                let base = endpoint.http_base();
                let authority = base.split("://").nth(1).unwrap_or("").to_string();
                (if *tls { "wss" } else { "ws" }, authority)
            }
            Endpoint::Unix(_) => ("ws", "localhost".to_string()),
        };
        let url = format!("{scheme}://{authority}{ws_path}");
        let mut request = url
            .as_str()
            .into_client_request()
            .map_err(|e| AfError::new(ErrorCode::InvalidEndpoint, format!("{url}: {e}")))?;
        if let Some(token) = bearer {
            let value = format!("Bearer {token}")
                .parse()
                .map_err(|_| AfError::invalid("the token is not a valid header value"))?;
            request.headers_mut().insert("authorization", value);
        }
        let config = WebSocketConfig::default()
            .max_message_size(Some(MAX_MESSAGE))
            .max_frame_size(Some(MAX_MESSAGE));
        // The same connection and TLS stack as the control calls.
        let connecting = async {
            let stream = crate::sdk::host_http::open(endpoint, ws_path).await?;
            let (ws, _) =
                tokio_tungstenite::client_async_with_config(request, stream, Some(config))
                    .await
                    .map_err(|e| handshake_error(e, &url))?;
            Ok::<_, AfError>(ws)
        };
        let ws = tokio::time::timeout(timeout, connecting)
            .await
            .map_err(|_| {
                unreachable(format!(
                    "no answer from {url} within {} ms",
                    timeout.as_millis()
                ))
            })??;
        Ok(CdpConnection::start(ws))
    }

    /// Run the router over an open WebSocket.
    fn start<S>(ws: S) -> Arc<CdpConnection>
    where
        S: futures_util::Stream<Item = Result<Message, WsError>>
            + futures_util::Sink<Message, Error = WsError>
            + Unpin
            + Send
            + 'static,
    {
        let (control, rx) = mpsc::unbounded_channel();
        tokio::spawn(router::run(ws, rx));
        Arc::new(CdpConnection {
            control,
            next_id: AtomicU64::new(1),
        })
    }

    /// Send `method` (to `session`, or the browser target) and wait for its result.
    pub async fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, CallError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut frame = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            frame["sessionId"] = json!(s);
        }
        let (reply, rx) = oneshot::channel();
        self.control
            .send(router::Control::Send(router::Outgoing {
                frame: frame.to_string(),
                id,
                reply,
            }))
            .map_err(|_| CallError::Closed("the connection is closed".into()))?;
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(r)) => r,
            Ok(Err(_)) => Err(CallError::Closed("the connection is closed".into())),
            Err(_) => {
                // A late answer has nobody to go to: the call leaves the pending map now.
                let _ = self.control.send(router::Control::Forget(id));
                Err(CallError::Timeout(format!(
                    "no answer within {} ms",
                    timeout.as_millis()
                )))
            }
        }
    }

    /// Send `method` and wait for nothing: its answer, when it comes, is dropped. The frame
    /// still goes out before anything queued after it (a [`CdpConnection::close`]).
    pub fn post(&self, session: Option<&str>, method: &str, params: Value) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut frame = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            frame["sessionId"] = json!(s);
        }
        let (reply, _) = oneshot::channel();
        let _ = self.control.send(router::Control::Send(router::Outgoing {
            frame: frame.to_string(),
            id,
            reply,
        }));
    }

    /// Like [`CdpConnection::call`], mapping failures to stable errors.
    pub async fn send(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, AfError> {
        self.call(session, method, params, timeout)
            .await
            .map_err(|e| e.into_af(method))
    }

    /// Receive every event of `session` (`None`: browser-level events) from now on.
    pub fn subscribe(&self, session: Option<&str>) -> mpsc::UnboundedReceiver<CdpEvent> {
        let (tx, rx) = mpsc::unbounded_channel();
        let _ = self
            .control
            .send(router::Control::Subscribe(session.map(String::from), tx));
        rx
    }

    /// Receive every event of every session from now on (e.g. a browser-wide recorder).
    pub fn subscribe_all(&self) -> mpsc::UnboundedReceiver<CdpEvent> {
        let (tx, rx) = mpsc::unbounded_channel();
        let _ = self.control.send(router::Control::SubscribeAll(tx));
        rx
    }

    /// Whether the router is gone.
    pub fn is_closed(&self) -> bool {
        self.control.is_closed()
    }

    /// Close the socket.
    pub fn close(&self) {
        let _ = self.control.send(router::Control::Close);
    }

    /// Close the socket and wait (at most `bound`) until what was queued before, the close
    /// frame included, has been written: a process about to exit loses none of it.
    pub async fn close_written(&self, bound: Duration) {
        self.close();
        let _ = tokio::time::timeout(bound, self.control.closed()).await;
    }
}

/// A failed WebSocket handshake: the host's refusal decoded like a control call's
/// ([`crate::sdk::host_http::refusal`]), anything else an unreachable host.
fn handshake_error(e: WsError, url: &str) -> AfError {
    match e {
        WsError::Http(resp) => {
            let body = resp
                .body()
                .as_deref()
                .and_then(|b| serde_json::from_slice(b).ok())
                .unwrap_or(Value::Null);
            crate::sdk::host_http::refusal(resp.status().as_u16(), &body, strip_query(url))
        }
        other => AfError::new(
            ErrorCode::HostUnreachable,
            format!("cannot open {url}: {other}"),
        ),
    }
}

/// `url` without its query (a request id is noise in a message the host already worded).
fn strip_query(url: &str) -> &str {
    url.split_once('?').map_or(url, |(base, _)| base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_renamed_create_target_reads_as_host_busy() {
        let refused = CallError::Protocol {
            code: -32601,
            message: format!("'{HOST_BUSY_METHOD}' wasn't found"),
        };
        let e = refused.into_af("Target.createTarget");
        assert_eq!(e.code, ErrorCode::HostBusy);
        assert!(e.retryable());
        let unknown = CallError::Protocol {
            code: -32601,
            message: "'Nope.nope' wasn't found".into(),
        };
        assert_eq!(
            unknown.into_af("Nope.nope").code,
            ErrorCode::InvalidArgument
        );
    }

    fn refused(status: u16, body: &[u8]) -> AfError {
        let resp = tokio_tungstenite::tungstenite::http::Response::builder()
            .status(status)
            .body(Some(body.to_vec()))
            .unwrap();
        handshake_error(
            tokio_tungstenite::tungstenite::Error::Http(resp.into()),
            "ws://h:1/cdp?request_id=r",
        )
    }

    /// A refused handshake reads as the same control-call refusal would.
    #[test]
    fn refused_handshakes_are_decoded_like_control_calls() {
        let busy = refused(503, br#"{"code":"host_busy","message":"full"}"#);
        assert_eq!(busy.code, ErrorCode::HostBusy);
        assert!(busy.message.contains("full") && busy.hint.is_some());
        let locked = refused(409, br#"{"code":"profile_locked","message":"in use"}"#);
        assert_eq!(locked.code, ErrorCode::ProfileLocked);
        assert!(!locked.message.contains("request_id"), "{}", locked.message);
        let host = refused(403, br#"{"code":"forbidden_host","message":"use an IP"}"#);
        assert_eq!(host.code, ErrorCode::Unauthorized);
        assert_eq!(refused(401, b"").code, ErrorCode::Unauthorized);
        assert_eq!(refused(404, b"<html>").code, ErrorCode::InvalidEndpoint);
        assert_eq!(
            refused(500, br#"{"code":"made_up"}"#).code,
            ErrorCode::HostUnreachable
        );
        assert_eq!(strip_query("ws://h:1/cdp?profile=a"), "ws://h:1/cdp");
    }

    /// A call that timed out leaves the router's pending map (it used to stay there until
    /// the connection closed, one entry per timed-out call).
    #[tokio::test]
    async fn a_timed_out_call_leaves_the_pending_map() {
        let (client_io, server_io) = tokio::io::duplex(64 * 1024);
        let server = tokio::spawn(async move {
            let mut ws = tokio_tungstenite::accept_async(server_io).await.unwrap();
            // Read and never answer.
            use futures_util::StreamExt;
            while let Some(Ok(_)) = ws.next().await {}
        });
        let (ws, _) = tokio_tungstenite::client_async("ws://afhttp.invalid/cdp", client_io)
            .await
            .unwrap();
        let conn = CdpConnection::start(ws);
        let err = conn
            .call(
                None,
                "Browser.getVersion",
                json!({}),
                Duration::from_millis(20),
            )
            .await
            .unwrap_err();
        assert!(matches!(err, CallError::Timeout(_)), "{err:?}");
        let (tx, rx) = oneshot::channel();
        conn.control.send(router::Control::Pending(tx)).unwrap();
        assert_eq!(rx.await.unwrap(), 0);
        conn.close();
        server.abort();
    }

    /// A posted command is written before the close that follows it, and `close_written`
    /// returns once both are out (a process may exit then without losing the command).
    #[tokio::test]
    async fn a_posted_command_goes_out_before_the_close() {
        let (client_io, server_io) = tokio::io::duplex(64 * 1024);
        let server = tokio::spawn(async move {
            let mut ws = tokio_tungstenite::accept_async(server_io).await.unwrap();
            use futures_util::StreamExt;
            let mut seen = Vec::new();
            while let Some(Ok(m)) = ws.next().await {
                seen.push(m.to_string());
            }
            seen
        });
        let (ws, _) = tokio_tungstenite::client_async("ws://afhttp.invalid/cdp", client_io)
            .await
            .unwrap();
        let conn = CdpConnection::start(ws);
        conn.post(None, "Target.closeTarget", json!({"targetId": "T"}));
        conn.close_written(Duration::from_secs(5)).await;
        assert!(conn.is_closed());
        let seen = server.await.unwrap();
        assert!(seen[0].contains("Target.closeTarget"), "{seen:?}");
    }
}
