//! The forward proxy: every request names its target (absolute-form, or CONNECT's
//! authority); the target is resolved here, checked against the policy, and connected to at
//! the checked address (or through the upstream proxy).

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};

use super::upstream::{Dest, ProxyStream, Upstream};
use super::{EGRESS_DETAIL_HEADER, EGRESS_HEADER, REMOTE_ADDRESS_HEADER};
use crate::host::log::{log, Level};
use crate::sdk::egress::Policy;

/// How long resolving a name and connecting to a target may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

type Body = BoxBody<Bytes, hyper::Error>;

/// What every connection of the proxy shares.
pub(super) struct Shared {
    pub(super) policy: Policy,
    pub(super) upstream: Option<Upstream>,
}

/// Headers that belong to one hop, plus the proxy's own.
const HOP_HEADERS: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
    "trailer",
    "upgrade",
];

/// Accept connections until the task is aborted.
pub(super) async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(_) => {
                // Out of descriptors or similar: back off rather than spin.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        // Small request/response heads: no Nagle delay on either side of the proxy.
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let shared = shared.clone();
                async move { Ok::<_, Infallible>(handle(&shared, req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades()
                .await;
        });
    }
}

/// A checked target.
struct Target {
    host: String,
    port: u16,
    /// The addresses that passed the policy; empty when this host could not resolve the name
    /// and the upstream proxy will.
    addrs: Vec<SocketAddr>,
}

async fn handle(shared: &Shared, req: Request<Incoming>) -> Response<Body> {
    let Some((host, port)) = target_of(&req) else {
        return refusal(
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            "bad",
            "not a proxy request",
        );
    };
    let target = match check(shared, host, port).await {
        Ok(t) => t,
        Err(r) => return r,
    };
    if req.method() == Method::CONNECT {
        let stream = match connect(shared, &target).await {
            Ok((s, _)) => s,
            Err(e) => return unreachable(&target, &e),
        };
        tokio::spawn(async move {
            if let Ok(upgraded) = hyper::upgrade::on(req).await {
                let mut client = TokioIo::new(upgraded);
                let mut server = stream;
                let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
            }
        });
        return Response::new(empty());
    }
    forward(shared, &target, req).await
}

/// `host` and `port` of a CONNECT authority or an absolute-form `http://` URI.
fn target_of(req: &Request<Incoming>) -> Option<(String, u16)> {
    let uri = req.uri();
    let (host, default_port) = if req.method() == Method::CONNECT {
        (uri.authority()?.host(), 443)
    } else {
        if uri.scheme_str() != Some("http") {
            return None;
        }
        (uri.host()?, 80)
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return None;
    }
    Some((host.to_string(), uri.port_u16().unwrap_or(default_port)))
}

/// Resolve `host` here and apply the policy to every address.
async fn check(shared: &Shared, host: String, port: u16) -> Result<Target, Response<Body>> {
    let ips: Vec<IpAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![ip],
        Err(_) => {
            let lookup = tokio::net::lookup_host((host.as_str(), port));
            match tokio::time::timeout(CONNECT_TIMEOUT, lookup).await {
                Ok(Ok(addrs)) => addrs.map(|a| a.ip()).collect(),
                _ => Vec::new(),
            }
        }
    };
    if ips.is_empty() {
        if shared
            .upstream
            .as_ref()
            .is_some_and(Upstream::resolves_names)
        {
            // Only the upstream's network knows this name; its own policy applies there.
            return Ok(Target {
                host,
                port,
                addrs: Vec::new(),
            });
        }
        let mut r = refusal(
            StatusCode::BAD_GATEWAY,
            "dns_resolution_failed",
            "dns",
            &format!("{host} did not resolve"),
        );
        // RFC 9209: lets a browser that reads it report a name error.
        r.headers_mut().insert(
            "proxy-status",
            HeaderValue::from_static("afhttp-egress; error=dns_error"),
        );
        return Err(r);
    }
    if let Err(denial) = shared.policy.decide(&host, &ips) {
        log(
            Level::Info,
            "egress denied",
            json!({"host": host, "port": port, "ip": denial.ip.to_string(),
                   "category": denial.category.as_str()}),
        );
        return Err(refusal(
            StatusCode::FORBIDDEN,
            "egress_denied",
            "denied",
            &format!("{host}:{port} refused by the host's egress policy: {denial}"),
        ));
    }
    Ok(Target {
        host,
        port,
        addrs: ips
            .into_iter()
            .map(|ip| SocketAddr::new(ip, port))
            .collect(),
    })
}

/// A byte stream to the target: directly at a checked address (whose `ip:port` comes
/// with it), or through the upstream.
async fn connect(
    shared: &Shared,
    target: &Target,
) -> std::io::Result<(ProxyStream, Option<SocketAddr>)> {
    match &shared.upstream {
        None => {
            let direct = TcpStream::connect(target.addrs.as_slice());
            let stream = tokio::time::timeout(CONNECT_TIMEOUT, direct)
                .await
                .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))??;
            let _ = stream.set_nodelay(true);
            let server = stream.peer_addr().ok();
            Ok((Box::new(stream), server))
        }
        Some(up) => Ok((up.tunnel(&dest(target)).await?, None)),
    }
}

fn dest(target: &Target) -> Dest<'_> {
    match target.addrs.first() {
        Some(a) => Dest::Addr(*a),
        None => Dest::Name(&target.host, target.port),
    }
}

/// One plain-HTTP exchange with the target on a fresh connection (so every request of a
/// kept-alive browser connection is checked on its own).
async fn forward(shared: &Shared, target: &Target, req: Request<Incoming>) -> Response<Body> {
    let (mut parts, body) = req.into_parts();
    strip_hop_headers(&mut parts.headers);
    let via_http_proxy = matches!(shared.upstream, Some(Upstream::Http { .. }));
    let stream = if via_http_proxy {
        // The HTTP upstream gets the absolute-form request and connects by name itself.
        if let Some(auth) = shared.upstream.as_ref().and_then(Upstream::http_auth) {
            if let Ok(v) = HeaderValue::from_str(auth) {
                parts.headers.insert(header::PROXY_AUTHORIZATION, v);
            }
        }
        match &shared.upstream {
            Some(up) => up.connect_proxy().await.map(|s| (s, None)),
            None => Err(std::io::Error::from(std::io::ErrorKind::NotConnected)),
        }
    } else {
        let origin_form = parts
            .uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .parse();
        match origin_form {
            Ok(uri) => parts.uri = uri,
            Err(_) => {
                return refusal(
                    StatusCode::BAD_REQUEST,
                    "invalid_argument",
                    "bad",
                    "bad request target",
                )
            }
        }
        connect(shared, target).await
    };
    // Connected directly, the proxy knows the server's address, which the browser (seeing
    // only the proxy) cannot report; it is passed on for network.json's `remote_address`.
    let (stream, server) = match stream {
        Ok(s) => s,
        Err(e) => return unreachable(target, &e),
    };
    let exchange = async {
        let (mut sender, conn) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(conn);
        sender.send_request(Request::from_parts(parts, body)).await
    };
    match exchange.await {
        Ok(response) => {
            let (mut parts, incoming) = response.into_parts();
            strip_hop_headers(&mut parts.headers);
            if let Some(v) = server.and_then(|a| HeaderValue::from_str(&a.to_string()).ok()) {
                parts.headers.insert(REMOTE_ADDRESS_HEADER, v);
            }
            Response::from_parts(parts, incoming.boxed())
        }
        Err(e) => unreachable(target, &std::io::Error::other(e.to_string())),
    }
}

fn strip_hop_headers(headers: &mut hyper::HeaderMap) {
    let named: Vec<String> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|v| v.trim().to_ascii_lowercase())
        .filter(|v| !v.is_empty())
        .collect();
    for name in HOP_HEADERS
        .iter()
        .copied()
        .chain(named.iter().map(String::as_str))
    {
        headers.remove(name);
    }
}

fn unreachable(target: &Target, e: &std::io::Error) -> Response<Body> {
    refusal(
        StatusCode::BAD_GATEWAY,
        "target_unreachable",
        "unreachable",
        &format!("cannot connect to {}:{}: {e}", target.host, target.port),
    )
}

fn empty() -> Body {
    Full::new(Bytes::new())
        .map_err(|never| match never {})
        .boxed()
}

/// The proxy's own answer: a JSON body with a stable code, and the egress headers the driver
/// reads.
fn refusal(status: StatusCode, code: &str, kind: &'static str, message: &str) -> Response<Body> {
    let body = json!({"code": code, "message": message}).to_string();
    let mut r = Response::new(
        Full::new(Bytes::from(body))
            .map_err(|never| match never {})
            .boxed(),
    );
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(EGRESS_HEADER, HeaderValue::from_static(kind));
    if let Ok(v) = HeaderValue::from_str(message) {
        h.insert(EGRESS_DETAIL_HEADER, v);
    }
    r
}
