//! The security claims of docs/security.md, each against real requests: the route table's
//! auth, DNS-rebinding and Origin checks, `X-Forwarded-Proto` trust, the browser's egress
//! policy, the token's absence from argv/environments/logs, network.json redaction, and
//! browser flags coming only from the local command line.

use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;

use afhttp::host::listener::{
    serve, BoundListener, HostStatus, HostView, ListenAddr, ListenerConfig, ListenerState,
    TakeoverUpstream, TokenSecret, Upstream,
};
use serde_json::{json, Value};

mod egress;
mod listener;
mod real_host;
mod redaction;
mod secrets;

/// The long token every host here is started with.
pub const TOKEN: &str = "security-long-token-5f1c";

/// A host view with no browser and, optionally, a takeover display whose web client is a
/// tiny local HTTP server.
struct View {
    panel: Option<TakeoverUpstream>,
}

impl HostView for View {
    fn upstream(&self) -> Option<Upstream> {
        None
    }
    fn status(&self) -> HostStatus {
        HostStatus::Ok
    }
    fn health_details(&self) -> Value {
        json!({})
    }
    fn capabilities(&self) -> Value {
        json!({})
    }
    fn takeover_provider(&self) -> Option<&'static str> {
        self.panel.as_ref().map(|_| "novnc")
    }
    fn takeover_upstream(&self) -> Option<TakeoverUpstream> {
        self.panel.clone()
    }
}

/// A listener in this process over [`View`], plus the fake web client it proxies to.
struct Listener {
    bound: BoundListener,
    _stop: tokio::sync::oneshot::Sender<()>,
    _panel: Option<std::net::TcpListener>,
}

impl Listener {
    fn port(&self) -> u16 {
        self.bound
            .local
            .rsplit(':')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    }
}

/// Serve a fake display web client on loopback: every request gets a small HTML page.
fn fake_panel() -> (std::net::TcpListener, TakeoverUpstream) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let accept = listener.try_clone().unwrap();
    std::thread::spawn(move || {
        for stream in accept.incoming() {
            let Ok(mut s) = stream else { break };
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf);
                let body = "<html>panel</html>";
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    (
        listener,
        TakeoverUpstream {
            web: addr,
            entry: "/vnc.html".into(),
        },
    )
}

/// Start a listener on `listen` with the token and (if `panel`) a takeover display.
async fn start_listener(
    listen: &str,
    panel: bool,
    tweak: impl FnOnce(&mut ListenerConfig),
) -> Listener {
    let (keep, upstream) = if panel {
        let (l, u) = fake_panel();
        (Some(l), Some(u))
    } else {
        (None, None)
    };
    let mut config = ListenerConfig {
        token: Some(TokenSecret::new(TOKEN).unwrap()),
        ..ListenerConfig::new(ListenAddr::parse(listen).unwrap())
    };
    tweak(&mut config);
    let state = Arc::new(ListenerState::new(Arc::new(View { panel: upstream }), config).unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let bound = serve(state, async move {
        let _ = rx.await;
    })
    .await
    .unwrap();
    Listener {
        bound,
        _stop: tx,
        _panel: keep,
    }
}

/// One raw HTTP/1.1 exchange with `ip:port`: (status, head, body). `headers` are sent as
/// given (a `Host` among them replaces the default one).
fn http(
    ip: &str,
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, String, String) {
    let mut s = std::net::TcpStream::connect((ip, port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\n");
    if !headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("connection"))
    {
        req.push_str("Connection: close\r\n");
    }
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("Content-Length: 0\r\n\r\n");
    s.write_all(req.as_bytes()).unwrap();
    // Read the head, then Content-Length bytes (a kept-alive upgrade refusal never closes).
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let text = String::from_utf8_lossy(&out).to_string();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let len: usize = head_value(head, "content-length")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            if body.len() >= len || head.starts_with("HTTP/1.1 101") {
                break;
            }
        }
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
    let out = String::from_utf8_lossy(&out).to_string();
    let status = out
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    (status, head.to_string(), body.to_string())
}

/// The JSON `code` of an error body ("" when none).
fn code(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v["code"].as_str().map(str::to_string))
        .unwrap_or_default()
}

/// A header's value from a raw response head.
fn head_value(head: &str, name: &str) -> Option<String> {
    head.lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim().to_string())
}

/// One of this machine's own non-loopback IPv4 addresses (from the kernel's local routing
/// table), so a test can be a non-loopback peer of a listener on 0.0.0.0.
fn own_non_loopback_ip() -> String {
    let trie = std::fs::read_to_string("/proc/net/fib_trie").unwrap();
    let lines: Vec<&str> = trie.lines().collect();
    lines
        .windows(2)
        .filter(|w| w[1].contains("/32 host LOCAL"))
        .filter_map(|w| w[0].trim().strip_prefix("|-- "))
        .find(|ip| !ip.starts_with("127."))
        .map(str::to_string)
        .expect("this machine has a non-loopback IPv4 address")
}

use crate::host_listener::rt;

/// `afhttp host` with the long token on `listen`, plus `extra` flags.
fn token_host(
    fx: &crate::support::Fixture,
    listen: &str,
    extra: &[&str],
) -> crate::support::HostProc {
    let mut all = vec!["--listen", listen, "--token-secret", TOKEN];
    all.extend_from_slice(extra);
    crate::support::HostProc::start(fx, &all, &[])
}

/// A path for a route-table pattern: parameters filled with plausible values.
fn concrete(path: &str) -> String {
    path.replace("{id}", "0123ABCD-0000-0000-0000-000000000000")
        .replace("{*rest}", "vnc.html")
}
