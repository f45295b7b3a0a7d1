//! The host listener against a real headless Chromium and a fake host view.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use afhttp::host::listener::{
    serve, BoundListener, HostStatus, HostView, ListenAddr, ListenerConfig, ListenerState,
    TokenSecret, Upstream, ROUTES,
};
use afhttp::sdk::cdp::CdpConnection;
use afhttp::sdk::endpoint::Endpoint;
use afhttp::ErrorCode;
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

const T: Duration = Duration::from_secs(20);

/// A headless Chromium with DevTools on a random loopback port; killed on drop.
struct Chromium {
    child: Child,
    upstream: Upstream,
    _dir: tempfile::TempDir,
}

impl Chromium {
    fn launch() -> Chromium {
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new("/usr/bin/chromium")
            .args([
                "--headless=new",
                "--no-sandbox",
                "--remote-debugging-port=0",
                "--remote-debugging-address=127.0.0.1",
                &format!("--user-data-dir={}", dir.path().display()),
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "about:blank",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    if let Some(tx) = tx.take() {
                        let _ = tx.send(url.trim().to_string());
                    }
                }
            }
        });
        let ws = rx.recv_timeout(Duration::from_secs(30)).unwrap();
        let authority = ws.strip_prefix("ws://").unwrap().split('/').next().unwrap();
        let upstream = Upstream {
            http_base: format!("http://{authority}"),
            browser_ws_url: ws.clone(),
        };
        Chromium {
            child,
            upstream,
            _dir: dir,
        }
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct FakeView {
    upstream: Mutex<Option<Upstream>>,
}

impl HostView for FakeView {
    fn upstream(&self) -> Option<Upstream> {
        self.upstream.lock().unwrap().clone()
    }
    fn status(&self) -> HostStatus {
        HostStatus::Ok
    }
    fn health_details(&self) -> Value {
        json!({"backend": {"family": "chromium", "connected": true},
               "profile": {"kind": "ephemeral"}})
    }
    fn capabilities(&self) -> Value {
        json!({"wait_modes": ["auto", "load"]})
    }
}

fn config(listen: &str, token: Option<&str>) -> ListenerConfig {
    ListenerConfig {
        token: token.map(|t| TokenSecret::new(t).unwrap()),
        ..ListenerConfig::new(ListenAddr::parse(listen).unwrap())
    }
}

async fn start(
    upstream: Option<Upstream>,
    config: ListenerConfig,
) -> (BoundListener, tokio::sync::oneshot::Sender<()>) {
    let view = Arc::new(FakeView {
        upstream: Mutex::new(upstream),
    });
    let state = Arc::new(ListenerState::new(view, config).unwrap());
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let bound = serve(state, async move {
        let _ = stop_rx.await;
    })
    .await
    .unwrap();
    (bound, stop_tx)
}

fn port(bound: &BoundListener) -> u16 {
    bound.local.rsplit(':').next().unwrap().parse().unwrap()
}

fn endpoint(port: u16) -> Endpoint {
    Endpoint::Tcp {
        tls: false,
        host: "127.0.0.1".into(),
        port,
    }
}

/// One raw HTTP/1.1 exchange: (status, body).
async fn raw<S: AsyncRead + AsyncWrite + Unpin>(mut stream: S, request: &str) -> (u16, String) {
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    let _ = tokio::time::timeout(T, stream.read_to_end(&mut buf)).await;
    let text = String::from_utf8_lossy(&buf).to_string();
    let status = text.split(' ').nth(1).unwrap().parse().unwrap();
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
    (status, body.to_string())
}

async fn raw_tcp(port: u16, request: &str) -> (u16, String) {
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    raw(stream, request).await
}

async fn json_of(r: reqwest::Response) -> Value {
    serde_json::from_slice(&r.bytes().await.unwrap()).unwrap()
}

fn code_of(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap();
    v["code"].as_str().unwrap().to_string()
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn proxies_a_real_chromium_with_token_checks() {
    let chromium = Chromium::launch();
    rt().block_on(async {
        let (bound, stop) = start(
            Some(chromium.upstream.clone()),
            config("tcp:127.0.0.1:0", Some("tok")),
        )
        .await;
        let port = port(&bound);
        let base = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::builder().no_proxy().build().unwrap();

        // Control routes: missing/wrong token refused, bearer and query accepted.
        let r = http.get(format!("{base}/capabilities")).send().await.unwrap();
        assert_eq!(r.status(), 401);
        assert_eq!(json_of(r).await["code"], "unauthorized");
        let r = http
            .get(format!("{base}/capabilities"))
            .bearer_auth("nope")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401);
        let caps = json_of(http
            .get(format!("{base}/capabilities"))
            .bearer_auth("tok")
            .send()
            .await
            .unwrap()).await;
        assert_eq!(caps["code"], "capabilities");
        assert_eq!(caps["wait_modes"][0], "auto");
        let r = http
            .get(format!("{base}/capabilities?token_secret=tok"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);

        // Full health with the token.
        let health = json_of(http
            .get(format!("{base}/health"))
            .bearer_auth("tok")
            .send()
            .await
            .unwrap()).await;
        assert_eq!(health["code"], "health");
        assert_eq!(health["status"], "ok");
        assert_eq!(health["version"], afhttp::VERSION);
        assert_eq!(health["backend"]["family"], "chromium");
        assert_eq!(health["capabilities_url"], "/capabilities");
        assert!(health["tabs_active"].as_u64().unwrap() >= 1, "{health}");
        assert!(health["uptime_s"].is_u64());
        let r = http.get(format!("{base}/health")).send().await.unwrap();
        assert_eq!(r.status(), 401);

        // /json/version and /json/list lead back through the listener.
        let version = json_of(http
            .get(format!("{base}/json/version/"))
            .bearer_auth("tok")
            .send()
            .await
            .unwrap()).await;
        assert_eq!(
            version["webSocketDebuggerUrl"],
            format!("ws://127.0.0.1:{port}/cdp")
        );
        assert!(version.get("Browser").is_some());
        let list = json_of(http
            .get(format!("{base}/json/list"))
            .bearer_auth("tok")
            .send()
            .await
            .unwrap()).await;
        let page = list
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["type"] == "page")
            .unwrap()
            .clone();
        let page_id = page["id"].as_str().unwrap();
        assert_eq!(
            page["webSocketDebuggerUrl"],
            format!("ws://127.0.0.1:{port}/cdp/page/{page_id}")
        );
        assert!(page.get("devtoolsFrontendUrl").is_none());

        // CDP round trips: bearer, query token, two clients at once, a page socket.
        let ep = endpoint(port);
        let a = CdpConnection::connect(&ep, "/cdp", Some("tok"), T).await.unwrap();
        let b = CdpConnection::connect(&ep, "/cdp?token_secret=tok", None, T)
            .await
            .unwrap();
        let (va, vb) = tokio::join!(
            a.send(None, "Browser.getVersion", json!({}), T),
            b.send(None, "Browser.getVersion", json!({}), T)
        );
        let va = va.unwrap();
        assert!(va["product"].as_str().unwrap().contains("Chrome"), "{va}");
        assert_eq!(va, vb.unwrap());
        let targets = b
            .send(None, "Target.getTargets", json!({}), T)
            .await
            .unwrap();
        assert!(!targets["targetInfos"].as_array().unwrap().is_empty());
        let p = CdpConnection::connect(&ep, &format!("/cdp/page/{page_id}"), Some("tok"), T)
            .await
            .unwrap();
        let two = p
            .send(
                None,
                "Runtime.evaluate",
                json!({"expression": "1+1", "returnByValue": true}),
                T,
            )
            .await
            .unwrap();
        assert_eq!(two["result"]["value"], 2);
        // A large message both ways (beyond default 16 MiB frame limits).
        let big = p
            .send(
                None,
                "Runtime.evaluate",
                json!({"expression": "'x'.repeat(20*1024*1024).length", "returnByValue": true}),
                T,
            )
            .await
            .unwrap();
        assert_eq!(big["result"]["value"], 20 * 1024 * 1024);

        for (path, bearer) in [
            ("/cdp", None),
            ("/cdp", Some("nope")),
            ("/cdp?token_secret=nope", None),
        ] {
            let err = CdpConnection::connect(&ep, path, bearer, T).await.unwrap_err();
            assert_ne!(err.code, ErrorCode::InvalidEndpoint, "{path}");
        }

        // A cross-origin WebSocket upgrade is refused even with the token.
        let (status, body) = raw_tcp(
            port,
            &format!(
                "GET /cdp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer tok\r\n\
                 Origin: http://evil.example\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
                 Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
            ),
        )
        .await;
        assert_eq!(status, 403, "{body}");
        assert_eq!(code_of(&body), "forbidden_origin");

        // A rebinding attempt with the query token (no bearer) is refused on its Host.
        let (status, body) = raw_tcp(
            port,
            "GET /json/version?token_secret=tok HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
        )
        .await;
        assert_eq!(status, 403, "{body}");
        assert_eq!(code_of(&body), "forbidden_host");

        // Shutdown closes the proxied sockets and the listener.
        stop.send(()).unwrap();
        tokio::time::timeout(T, bound.join).await.unwrap().unwrap();
        let closed = a.send(None, "Browser.getVersion", json!({}), T).await;
        assert!(closed.is_err());
        assert!(tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err());
    });
}

#[test]
fn tokenless_loopback_refuses_rebinding_hosts() {
    rt().block_on(async {
        let mut cfg = config("tcp:127.0.0.1:0", None);
        cfg.allowed_hosts = vec!["mesh.internal".into()];
        let (bound, _stop) = start(None, cfg).await;
        let port = port(&bound);
        for (host, want) in [
            ("evil.example", 403),
            ("127.0.0.1", 200),
            ("localhost:1", 200),
            ("mesh.internal:9222", 200),
        ] {
            let (status, body) = raw_tcp(
                port,
                &format!("GET /health HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
            )
            .await;
            assert_eq!(status, want, "{host}: {body}");
            if want == 200 {
                let v: Value = serde_json::from_str(&body).unwrap();
                // No upstream yet: the host is still starting, /cdp and /json are 503.
                assert_eq!(v["status"], "starting");
            }
        }
        let (status, body) = raw_tcp(
            port,
            "GET /json/version HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        )
        .await;
        assert_eq!((status, code_of(&body).as_str()), (503, "cdp_unavailable"));
    });
}

#[test]
fn public_minimal_health_and_route_table() {
    rt().block_on(async {
        let mut cfg = config("tcp:127.0.0.1:0", Some("tok"));
        cfg.health_public_minimal = true;
        let (bound, _stop) = start(None, cfg).await;
        let port = port(&bound);
        let (status, body) = raw_tcp(
            port,
            "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        )
        .await;
        assert_eq!(status, 200);
        assert_eq!(
            serde_json::from_str::<Value>(&body).unwrap(),
            json!({"status": "starting"})
        );
        let (status, body) = raw_tcp(
            port,
            "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer tok\r\nConnection: close\r\n\r\n",
        )
        .await;
        assert_eq!(status, 200);
        assert_eq!(code_of(&body), "health");

        // Every route but the public health needs the token.
        let (bound, _stop2) = start(None, config("tcp:127.0.0.1:0", Some("tok"))).await;
        let port = self::port(&bound);
        for route in ROUTES {
            let path = route.path.replace("{id}", "ABC");
            let (status, body) = raw_tcp(
                port,
                &format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"),
            )
            .await;
            assert_eq!(status, 401, "{path} ({:?}): {body}", route.auth);
            assert_eq!(code_of(&body), "unauthorized");
        }

        // --no-health removes /health only.
        let mut cfg = config("tcp:127.0.0.1:0", None);
        cfg.health = false;
        let (bound, _stop3) = start(None, cfg).await;
        let (status, _) = raw_tcp(
            self::port(&bound),
            "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        )
        .await;
        assert_eq!(status, 404);
    });
}

#[test]
fn serves_over_a_unix_socket() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("host.sock");
        // A stale socket file is replaced.
        drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
        let listen = format!("unix:{}", path.display());
        let (bound, stop) = start(None, config(&listen, None)).await;
        assert_eq!(bound.local, listen);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let stream = tokio::net::UnixStream::connect(&path).await.unwrap();
        let (status, body) = raw(
            stream,
            "GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
        )
        .await;
        assert_eq!(status, 200);
        assert_eq!(code_of(&body), "health");
        // A second host on the same live socket is refused.
        let view = Arc::new(FakeView {
            upstream: Mutex::new(None),
        });
        let state = Arc::new(ListenerState::new(view, config(&listen, None)).unwrap());
        let err = serve(state, std::future::pending()).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::IoError);
        stop.send(()).unwrap();
        tokio::time::timeout(T, bound.join).await.unwrap().unwrap();
        assert!(!path.exists());
    });
}

#[test]
fn refuses_unsafe_or_busy_listeners() {
    let cfg = config("tcp:0.0.0.0:0", None);
    let err = cfg.validate().unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgument);
    assert!(err.hint.is_some());
    rt().block_on(async {
        let taken = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = taken.local_addr().unwrap();
        let view = Arc::new(FakeView {
            upstream: Mutex::new(None),
        });
        let state =
            Arc::new(ListenerState::new(view, config(&format!("tcp:{addr}"), None)).unwrap());
        let err = serve(state, std::future::pending()).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::IoError);
        assert!(err.message.contains("already in use"), "{}", err.message);
    });
}
