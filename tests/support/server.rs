//! The plain-HTTP fixture server, and the background-thread machinery every fixture shares.
//!
//! Every fixture binds `127.0.0.1:0`, serves on its own thread with its own current-thread
//! tokio runtime, and stops (its thread joined, its port closed) when the handle is dropped.
//!
//! Routes (all deterministic; see `routes.rs`):
//! `/`, `/static`, `/article`, `/spa`, `/spa.js`, `/api/items`, `/redirect/{n}`,
//! `/redirect/loop`, `/redirect/abs?to=URL`, `/cookies/{set,set-raw,delete,echo,redirect-set}`,
//! `/echo`, `/status/{code}`, `/status/{code}/json`, `/slow?ms=N`, `/slow-body?ms=N`, `/stall`,
//! `/drop`, `/gzip`, `/deflate`, `/brotli`, `/bytes?n=N`, `/big-html?n=N`,
//! `/challenge/{name}`, `/json`, `/text`, `/image.png`, `/download`, `/headers/ua`,
//! `/basic-auth`, `/charset/latin1`, `/health` (another service's `{"status":"ok"}`),
//! `/capabilities` (an HTML page), and `/flaky?fail=N&key=K` (handled here).
//!
//! `/flaky?fail=N&key=K`: the first N requests carrying key K (default `default`) have their
//! connection closed before any response byte; later ones get 200 JSON
//! `{"attempt": <1-based attempt>, "failures": N, "key": K}`. Counters are per server.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use axum::body::Body;
use axum::http::{Request, Response};
use axum::Router;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::oneshot;

use super::routes;

/// A request as the fixture received it.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    /// The method, e.g. `GET`.
    pub method: String,
    /// The request target as received: path plus `?query` if any.
    pub path_and_query: String,
    /// Headers in arrival order, names lower-case.
    pub headers: Vec<(String, String)>,
    /// The whole request body.
    pub body: Vec<u8>,
}

impl RecordedRequest {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What a serving fixture remembers: hits and the last request per path, flaky counters.
#[derive(Default)]
pub(crate) struct Recorder {
    hits: Mutex<HashMap<String, usize>>,
    last: Mutex<HashMap<String, RecordedRequest>>,
    log: Mutex<Vec<RecordedRequest>>,
    flaky: Mutex<HashMap<String, usize>>,
}

impl Recorder {
    fn record(&self, path: &str, req: RecordedRequest) {
        *self
            .hits
            .lock()
            .unwrap()
            .entry(path.to_owned())
            .or_default() += 1;
        self.last
            .lock()
            .unwrap()
            .insert(path.to_owned(), req.clone());
        self.log.lock().unwrap().push(req);
    }

    pub(crate) fn hits(&self, path: &str) -> usize {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }

    pub(crate) fn last_request(&self, path: &str) -> Option<RecordedRequest> {
        self.last.lock().unwrap().get(path).cloned()
    }

    pub(crate) fn requests(&self) -> Vec<RecordedRequest> {
        self.log.lock().unwrap().clone()
    }

    /// The 0-based attempt number for flaky key `key`, counting this one.
    fn flaky_attempt(&self, key: &str) -> usize {
        let mut map = self.flaky.lock().unwrap();
        let n = map.entry(key.to_owned()).or_default();
        *n += 1;
        *n - 1
    }
}

/// A fixture's background thread; dropping it stops the server and joins the thread.
pub(crate) struct Background {
    port: u16,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Background {
    /// Binds `127.0.0.1:0` and runs `serve(listener)` on a new thread until dropped.
    pub(crate) fn spawn<F, Fut>(name: &str, serve: F) -> Background
    where
        F: FnOnce(tokio::net::TcpListener) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        Background::spawn_on("127.0.0.1", name, serve)
    }

    /// Binds `ip:0` (e.g. the Docker bridge gateway, for a container to reach).
    pub(crate) fn spawn_on<F, Fut>(ip: &str, name: &str, serve: F) -> Background
    where
        F: FnOnce(tokio::net::TcpListener) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        let std_listener = std::net::TcpListener::bind((ip, 0)).unwrap();
        std_listener.set_nonblocking(true).unwrap();
        let port = std_listener.local_addr().unwrap().port();
        let (tx, rx) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(format!("fixture-{name}"))
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                rt.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(std_listener).unwrap();
                    tokio::select! {
                        () = serve(listener) => {}
                        _ = rx => {}
                    }
                });
                // Dropping the runtime cancels every connection task (stalled bodies too).
            })
            .unwrap();
        Background {
            port,
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }

    /// The bound port on 127.0.0.1.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The error a fixture service returns to make hyper close the connection unanswered.
#[derive(Debug)]
pub(crate) struct DropConnection;

impl std::fmt::Display for DropConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("fixture dropped the connection")
    }
}

impl std::error::Error for DropConnection {}

/// Serves HTTP/1.1 on `io` with the fixture router, recording into `rec`.
pub(crate) fn serve_fixture_conn<I>(io: I, router: Router, rec: Arc<Recorder>)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let svc = service_fn(move |req| handle(req, router.clone(), rec.clone()));
        let _ = hyper::server::conn::http1::Builder::new()
            .serve_connection(TokioIo::new(io), svc)
            .with_upgrades()
            .await;
    });
}

async fn handle(
    req: Request<Incoming>,
    router: Router,
    rec: Arc<Recorder>,
) -> Result<Response<Body>, DropConnection> {
    let (parts, body) = req.into_parts();
    let body = axum::body::to_bytes(Body::new(body), usize::MAX)
        .await
        .unwrap_or_default();
    let path = parts.uri.path().to_owned();
    let path_and_query = parts
        .uri
        .path_and_query()
        .map_or_else(|| path.clone(), |pq| pq.as_str().to_owned());
    let headers = parts
        .headers
        .iter()
        .map(|(k, v)| {
            let v = String::from_utf8_lossy(v.as_bytes()).into_owned();
            (k.as_str().to_owned(), v)
        })
        .collect();
    rec.record(
        &path,
        RecordedRequest {
            method: parts.method.to_string(),
            path_and_query,
            headers,
            body: body.to_vec(),
        },
    );
    if path == "/flaky" {
        let q = parts.uri.query();
        let fail: usize = routes::query_value(q, "fail")
            .and_then(|v| v.parse().ok())
            .unwrap_or(1);
        let key = routes::query_value(q, "key").unwrap_or_else(|| "default".to_owned());
        let attempt = rec.flaky_attempt(&key);
        if attempt < fail {
            return Err(DropConnection);
        }
        let json = serde_json::json!({"attempt": attempt + 1, "failures": fail, "key": key});
        return Ok(Response::builder()
            .header("content-type", "application/json")
            .body(Body::from(json.to_string()))
            .unwrap());
    }
    let req = Request::from_parts(parts, Body::from(body));
    let svc = TowerToHyperService::new(router);
    match hyper::service::Service::call(&svc, req).await {
        Ok(r) => Ok(r),
        Err(never) => match never {},
    }
}

/// The plain-HTTP fixture server on `127.0.0.1:PORT` (routes in the module docs).
pub struct FixtureServer {
    bg: Background,
    rec: Arc<Recorder>,
    ip: String,
}

impl FixtureServer {
    /// Starts the server on an ephemeral port; it stops when dropped.
    pub fn start() -> FixtureServer {
        FixtureServer::start_on("127.0.0.1")
    }

    /// Starts the server on `ip` (one of this machine's own addresses).
    pub fn start_on(ip: &str) -> FixtureServer {
        let rec = Arc::new(Recorder::default());
        let serve_rec = rec.clone();
        let bg = Background::spawn_on(ip, "http", move |listener| async move {
            let router = routes::router();
            while let Ok((stream, _)) = listener.accept().await {
                serve_fixture_conn(stream, router.clone(), serve_rec.clone());
            }
        });
        FixtureServer {
            bg,
            rec,
            ip: ip.to_string(),
        }
    }

    /// `http://IP:PORT/path` (a missing leading `/` is added).
    pub fn url(&self, path: &str) -> String {
        let slash = if path.starts_with('/') { "" } else { "/" };
        format!("http://{}:{}{slash}{path}", self.ip, self.bg.port())
    }

    /// The port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.bg.port()
    }

    /// How many requests reached `path` (the path without its query).
    pub fn hits(&self, path: &str) -> usize {
        self.rec.hits(path)
    }

    /// The last request that reached `path` (the path without its query).
    pub fn last_request(&self, path: &str) -> Option<RecordedRequest> {
        self.rec.last_request(path)
    }

    /// Every request received, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.rec.requests()
    }
}
