//! The host listener against a real headless Chromium and a fake host view.

use std::sync::{Arc, Mutex};
use std::time::Duration;

mod chromium;
mod local;

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

pub(crate) fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}
