//! A forward HTTP proxy on 127.0.0.1 that only ever connects to 127.0.0.1.
//!
//! Absolute-form requests (`GET http://127.0.0.1:P/x`) are forwarded and the upstream response
//! is returned as is; `CONNECT host:port` is tunnelled. Targets other than `127.0.0.1` or
//! `localhost` (which is mapped to 127.0.0.1) get 403, so tests never send traffic elsewhere.
//! [`HttpProxy::start_tls`] is the same proxy behind TLS (an `https://` proxy).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{header, HeaderValue, Method, Request, Response, StatusCode, Uri};
use base64::Engine as _;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::server::Background;

#[derive(Default)]
struct ProxyState {
    requests: AtomicUsize,
    targets: Mutex<Vec<String>>,
    /// The exact `Proxy-Authorization` value required, if any.
    auth: Option<String>,
}

/// A forward HTTP proxy (absolute-form forwarding and CONNECT) on `127.0.0.1:PORT`.
pub struct HttpProxy {
    bg: Background,
    state: Arc<ProxyState>,
    /// For an `https://` proxy: the temp dir holding its CA's PEM file, and that file.
    tls: Option<(tempfile::TempDir, std::path::PathBuf)>,
}

impl HttpProxy {
    /// Starts an open proxy on an ephemeral port; it stops when dropped.
    pub fn start() -> HttpProxy {
        Self::spawn(ProxyState::default())
    }

    /// Starts a proxy requiring `Proxy-Authorization: Basic base64(user:pass)` (407 otherwise).
    pub fn start_with_auth(user: &str, pass: &str) -> HttpProxy {
        let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}"));
        Self::spawn(ProxyState {
            auth: Some(format!("Basic {token}")),
            ..ProxyState::default()
        })
    }

    /// Starts an open `https://` proxy: TLS with a fresh test CA ([`Self::ca_pem_path`]),
    /// then the same forwarding and CONNECT inside.
    pub fn start_tls() -> HttpProxy {
        Self::start_tls_state(ProxyState::default())
    }

    /// [`Self::start_tls`], requiring credentials like [`Self::start_with_auth`].
    pub fn start_tls_with_auth(user: &str, pass: &str) -> HttpProxy {
        let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}"));
        Self::start_tls_state(ProxyState {
            auth: Some(format!("Basic {token}")),
            ..ProxyState::default()
        })
    }

    fn start_tls_state(state: ProxyState) -> HttpProxy {
        let pki = super::tls::generate_pki();
        let dir = tempfile::tempdir().unwrap();
        let ca_path = dir.path().join("proxy-ca.pem");
        std::fs::write(&ca_path, &pki.ca_pem).unwrap();
        let mut proxy = Self::spawn_with(state, Some(super::tls::acceptor(&pki)));
        proxy.tls = Some((dir, ca_path));
        proxy
    }

    fn spawn(state: ProxyState) -> HttpProxy {
        Self::spawn_with(state, None)
    }

    fn spawn_with(state: ProxyState, tls: Option<tokio_rustls::TlsAcceptor>) -> HttpProxy {
        let state = Arc::new(state);
        let serve_state = state.clone();
        let bg = Background::spawn("proxy", move |listener| async move {
            while let Ok((stream, _)) = listener.accept().await {
                let state = serve_state.clone();
                let tls = tls.clone();
                tokio::spawn(async move {
                    match tls {
                        // Clients that refuse the certificate just end the handshake.
                        Some(acceptor) => {
                            if let Ok(stream) = acceptor.accept(stream).await {
                                serve(stream, state).await;
                            }
                        }
                        None => serve(stream, state).await,
                    }
                });
            }
        });
        HttpProxy {
            bg,
            state,
            tls: None,
        }
    }

    /// `http://127.0.0.1:PORT` (`https://` for [`Self::start_tls`]).
    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}", self.bg.port())
    }

    /// The PEM file of an `https://` proxy's CA.
    pub fn ca_pem_path(&self) -> &std::path::Path {
        &self.tls.as_ref().expect("not an https:// proxy").1
    }

    /// `http://user:pass@127.0.0.1:PORT`, for clients that take credentials in the URL.
    pub fn url_with_credentials(&self, user: &str, pass: &str) -> String {
        format!("http://{user}:{pass}@127.0.0.1:{}", self.bg.port())
    }

    /// The port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.bg.port()
    }

    /// How many requests (forwards, CONNECTs, refusals) the proxy received.
    pub fn requests(&self) -> usize {
        self.state.requests.load(Ordering::SeqCst)
    }

    /// Each request's target: the absolute URL, or `host:port` for CONNECT.
    pub fn seen_targets(&self) -> Vec<String> {
        self.state.targets.lock().unwrap().clone()
    }
}

/// Serve one client connection (plain or TLS) as the proxy.
async fn serve<S>(stream: S, state: Arc<ProxyState>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let svc = service_fn(move |req| proxy(req, state.clone()));
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(stream), svc)
        .with_upgrades()
        .await;
}

fn reply(status: StatusCode, text: &str) -> Response<Body> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .body(Body::from(text.to_owned()))
        .unwrap()
}

/// The loopback port to reach for `host:port`, or `None` if the host is not loopback.
fn loopback_target(host: &str, port: u16) -> Option<(&'static str, u16)> {
    let host = host.to_ascii_lowercase();
    (host == "127.0.0.1" || host == "localhost").then_some(("127.0.0.1", port))
}

async fn proxy(
    req: Request<Incoming>,
    state: Arc<ProxyState>,
) -> Result<Response<Body>, std::convert::Infallible> {
    state.requests.fetch_add(1, Ordering::SeqCst);
    let target = if req.method() == Method::CONNECT {
        req.uri()
            .authority()
            .map_or_else(|| req.uri().to_string(), |a| a.to_string())
    } else {
        req.uri().to_string()
    };
    state.targets.lock().unwrap().push(target);
    if let Some(expected) = &state.auth {
        let got = req.headers().get(header::PROXY_AUTHORIZATION);
        if got.is_none_or(|v| v.as_bytes() != expected.as_bytes()) {
            let mut r = reply(
                StatusCode::PROXY_AUTHENTICATION_REQUIRED,
                "proxy auth required\n",
            );
            r.headers_mut().insert(
                header::PROXY_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"afhttp-fixture-proxy\""),
            );
            return Ok(r);
        }
    }
    if req.method() == Method::CONNECT {
        Ok(connect(req).await)
    } else {
        Ok(forward(req).await)
    }
}

async fn connect(req: Request<Incoming>) -> Response<Body> {
    let Some(authority) = req.uri().authority().cloned() else {
        return reply(StatusCode::BAD_REQUEST, "CONNECT needs host:port\n");
    };
    let Some(port) = authority.port_u16() else {
        return reply(StatusCode::BAD_REQUEST, "CONNECT needs a port\n");
    };
    let Some(addr) = loopback_target(authority.host(), port) else {
        return reply(
            StatusCode::FORBIDDEN,
            "fixture proxy only reaches 127.0.0.1\n",
        );
    };
    let Ok(mut upstream) = TcpStream::connect(addr).await else {
        return reply(StatusCode::BAD_GATEWAY, "upstream refused\n");
    };
    tokio::spawn(async move {
        if let Ok(upgraded) = hyper::upgrade::on(req).await {
            let mut client = TokioIo::new(upgraded);
            let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
        }
    });
    Response::new(Body::empty())
}

const HOP_BY_HOP: [&str; 7] = [
    "proxy-authorization",
    "proxy-connection",
    "connection",
    "keep-alive",
    "te",
    "trailer",
    "upgrade",
];

async fn forward(req: Request<Incoming>) -> Response<Body> {
    let uri = req.uri().clone();
    if uri.scheme_str() != Some("http") {
        return reply(
            StatusCode::BAD_REQUEST,
            "fixture proxy forwards http:// URLs only\n",
        );
    }
    let host = uri.host().unwrap_or_default();
    let Some(addr) = loopback_target(host, uri.port_u16().unwrap_or(80)) else {
        return reply(
            StatusCode::FORBIDDEN,
            "fixture proxy only reaches 127.0.0.1\n",
        );
    };
    let Ok(stream) = TcpStream::connect(addr).await else {
        return reply(StatusCode::BAD_GATEWAY, "upstream refused\n");
    };
    let Ok((mut sender, conn)) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await
    else {
        return reply(StatusCode::BAD_GATEWAY, "upstream handshake failed\n");
    };
    tokio::spawn(conn);
    let (mut parts, body) = req.into_parts();
    let origin = uri.path_and_query().map_or("/", |pq| pq.as_str());
    parts.uri = origin.parse::<Uri>().unwrap();
    for h in HOP_BY_HOP {
        parts.headers.remove(h);
    }
    if !parts.headers.contains_key(header::HOST) {
        if let Some(a) = uri.authority() {
            parts
                .headers
                .insert(header::HOST, HeaderValue::from_str(a.as_str()).unwrap());
        }
    }
    match sender.send_request(Request::from_parts(parts, body)).await {
        Ok(resp) => resp.map(Body::new),
        Err(_) => reply(StatusCode::BAD_GATEWAY, "upstream failed\n"),
    }
}
