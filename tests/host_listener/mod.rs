//! The host listener against a real headless Chromium and a fake host view.

use std::time::Duration;

mod chromium;
mod local;

use afhttp::host::listener::{serve, Upstream, ROUTES};
use afhttp::sdk::cdp::CdpConnection;
use afhttp::sdk::endpoint::Endpoint;
use afhttp::ErrorCode;
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::support::error_code;
use crate::support::listener::{config, port, start, state, FakeView};

const T: Duration = Duration::from_secs(20);

fn endpoint(port: u16) -> Endpoint {
    Endpoint::Tcp {
        tls: false,
        host: "127.0.0.1".into(),
        port,
    }
}

/// One raw HTTP/1.1 exchange, the request as written: (status, body).
async fn raw<S: AsyncRead + AsyncWrite + Unpin>(stream: S, request: &str) -> (u16, String) {
    let r = crate::support::raw_http::exchange_async(stream, request.as_bytes()).await;
    (r.status, r.text())
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

pub(crate) fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}
