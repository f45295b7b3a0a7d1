//! The security claims of docs/security.md, each against real requests: the route table's
//! auth, DNS-rebinding and Origin checks, `X-Forwarded-Proto` trust, the browser's egress
//! policy, the token's absence from argv/environments/logs, network.json redaction, and
//! browser flags coming only from the local command line.

use std::io::{Read, Write};

use afhttp::host::listener::{BoundListener, ListenerConfig, TakeoverUpstream};
use serde_json::{json, Value};

use crate::support::listener::FakeView;

mod egress;
mod listener;
mod real_host;
mod redaction;
mod secrets;

/// The long token every host here is started with.
pub const TOKEN: &str = "security-long-token-5f1c";

/// A listener in this process over a [`FakeView`] with no browser, plus the fake web client
/// it proxies to.
struct Listener {
    bound: BoundListener,
    _stop: tokio::sync::oneshot::Sender<()>,
    _panel: Option<std::net::TcpListener>,
}

impl Listener {
    fn port(&self) -> u16 {
        crate::support::listener::port(&self.bound)
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
    let mut config = crate::support::listener::config(listen, Some(TOKEN));
    tweak(&mut config);
    let view = FakeView {
        upstream: None,
        panel: upstream,
    };
    let (bound, tx) = crate::support::listener::start(view, config).await;
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
    let r = crate::support::raw_http::send_to(ip, port, method, path, headers, b"");
    (r.status, r.head.clone(), r.text())
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
