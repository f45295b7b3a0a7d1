//! Against the built `afhttp host` and real Chromium: the route table walked without or with
//! a wrong token, a bearer CDP session through a host reached by name while rebinding and
//! cross-origin attempts fail, `X-Forwarded-Proto` in `/json/version`, and browser flags or
//! environment that a remote request tries to smuggle in.

use std::time::Duration;

use afhttp::host::listener::{AuthZone, ROUTES};
use serde_json::Value;
use tokio_tungstenite::tungstenite::{self, client::IntoClientRequest, Message};

use super::{concrete, http, own_non_loopback_ip, TOKEN};
use crate::support::error_code;
use crate::support::{descendants, port_of, Fixture};

const BEARER: &str = "Bearer security-long-token-5f1c";

/// A WebSocket handshake to `path` with these headers; the session or the refusal status.
fn ws(
    port: u16,
    path: &str,
    headers: &[(&'static str, &str)],
) -> Result<tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<std::net::TcpStream>>, u16> {
    let mut req = format!("ws://127.0.0.1:{port}{path}")
        .into_client_request()
        .unwrap();
    for (k, v) in headers {
        req.headers_mut().insert(*k, v.parse().unwrap());
    }
    match tungstenite::connect(req) {
        Ok((socket, _)) => Ok(socket),
        Err(tungstenite::Error::Http(r)) => Err(r.status().as_u16()),
        Err(e) => panic!("{path}: {e}"),
    }
}

/// Send one CDP command and wait for its answer.
fn cdp_call(
    socket: &mut tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<std::net::TcpStream>>,
    method: &str,
) -> Value {
    socket
        .send(Message::text(
            serde_json::json!({"id": 1, "method": method}).to_string(),
        ))
        .unwrap();
    loop {
        if let Message::Text(t) = socket.read().unwrap() {
            let v: Value = serde_json::from_str(&t).unwrap();
            if v["id"] == 1 {
                return v;
            }
        }
    }
}

#[test]
fn the_real_host_refuses_every_route_without_the_token() {
    let fx = Fixture::new();
    let h = super::token_host(&fx, "tcp:127.0.0.1:0", &[]);
    let port = port_of(&h.endpoint);
    for spec in ROUTES {
        let path = concrete(spec.path);
        let methods = if spec.methods.is_empty() {
            vec!["GET", "POST"]
        } else {
            spec.methods.to_vec()
        };
        for method in methods {
            for headers in [
                vec![],
                vec![("Authorization", "Bearer wrong")],
                vec![("Cookie", "afhttp_takeover=forged")],
            ] {
                let (status, _, body) = http("127.0.0.1", port, method, &path, &headers);
                assert_eq!(status, 401, "{method} {path} {headers:?}: {body}");
                assert_eq!(error_code(&body), "unauthorized");
            }
            if spec.auth != AuthZone::Takeover {
                let q = format!("{path}?token_secret=wrong");
                assert_eq!(http("127.0.0.1", port, method, &q, &[]).0, 401, "{q}");
            }
        }
    }
    // With the token every route answers (no 401/403).
    for path in ["/health", "/capabilities", "/json/version", "/json/list"] {
        let (status, _, body) = http("127.0.0.1", port, "GET", path, &[("Authorization", BEARER)]);
        assert_eq!(status, 200, "{path}: {body}");
    }
}

#[test]
fn bearer_cdp_by_name_works_rebinding_and_cross_origin_do_not() {
    let fx = Fixture::new();
    let h = super::token_host(&fx, "tcp:0.0.0.0:0", &[]);
    let port = port_of(&h.endpoint);
    let named = format!("afhttp-host.example:{port}");
    // An agent reaching the host by a DNS name with the bearer header: a live CDP session.
    let mut s = ws(port, "/cdp", &[("Host", &named), ("Authorization", BEARER)]).unwrap();
    let v = cdp_call(&mut s, "Browser.getVersion");
    assert!(
        v["result"]["product"].as_str().unwrap().contains("Chrome"),
        "{v}"
    );
    drop(s);
    // A page that rebound its name to the host cannot attach the header; with the token in
    // the URL it is refused on the Host, and its Origin is refused even with a bearer.
    let q = format!("/cdp?token_secret={TOKEN}");
    assert_eq!(ws(port, &q, &[("Host", &named)]).err(), Some(403));
    assert_eq!(
        ws(
            port,
            "/cdp",
            &[("Authorization", BEARER), ("Origin", "http://evil.example")]
        )
        .err(),
        Some(403)
    );
    assert_eq!(
        ws(
            port,
            &q,
            &[("Origin", &format!("http://127.0.0.1:{}", port + 1))]
        )
        .err(),
        Some(403)
    );
    // Same origin with the query token: attached.
    let mut s = ws(port, &q, &[("Origin", &format!("http://127.0.0.1:{port}"))]).unwrap();
    assert!(cdp_call(&mut s, "Browser.getVersion")["result"].is_object());
    drop(s);

    // X-Forwarded-Proto from a loopback proxy turns the advertised socket into wss://; from
    // another machine it is ignored.
    let remote = own_non_loopback_ip();
    let xfp = [
        ("Authorization", BEARER),
        ("X-Forwarded-Proto", "https"),
        ("Host", "afhttp.example"),
    ];
    for (ip, scheme) in [("127.0.0.1", "wss"), (remote.as_str(), "ws")] {
        let (status, _, body) = http(ip, port, "GET", "/json/version", &xfp);
        assert_eq!(status, 200, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            v["webSocketDebuggerUrl"],
            format!("{scheme}://afhttp.example/cdp"),
            "from {ip}"
        );
    }
}

#[test]
fn browser_flags_and_environment_never_come_from_a_remote_request() {
    let fx = Fixture::new();
    let h = super::token_host(&fx, "tcp:127.0.0.1:0", &[]);
    let port = port_of(&h.endpoint);
    let host_pid = h.child.id();
    let canary = "remote-canary-31337";
    let smuggled = [
        format!("browser_arg=--user-agent%3D{canary}"),
        format!("browser-arg=--user-agent%3D{canary}"),
        format!("engine_env=AFHTTP_CANARY%3D{canary}"),
        format!("engine-env=AFHTTP_CANARY%3D{canary}"),
        format!("proxy_url=http://{canary}:1"),
        format!("env=AFHTTP_CANARY%3D{canary}"),
    ]
    .join("&");
    // Every remote input: the /cdp handshake (with a profile switch, which relaunches the
    // browser on a remote request), control routes' queries, upload bodies and names, and
    // headers.
    let path = format!("/cdp?profile=remote-switch&{smuggled}");
    let mut s = ws(
        port,
        &path,
        &[("Authorization", BEARER), ("X-Afhttp-Browser-Arg", canary)],
    )
    .unwrap();
    let v = cdp_call(&mut s, "Browser.getVersion");
    assert!(
        !v["result"]["userAgent"].as_str().unwrap().contains(canary),
        "{v}"
    );
    drop(s);
    for (method, path) in [
        ("GET", format!("/json/version?{smuggled}")),
        ("GET", format!("/capabilities?{smuggled}")),
        ("POST", format!("/uploads?name=args.txt&{smuggled}")),
        ("POST", format!("/takeover/handoff?{smuggled}")),
    ] {
        let (status, _, body) = http(
            "127.0.0.1",
            port,
            method,
            &path,
            &[("Authorization", BEARER)],
        );
        assert!(status < 500 || status == 503, "{path}: {status} {body}");
    }
    // A fetch's request body goes to the target, never to the host's configuration.
    let srv = crate::support::FixtureServer::start();
    let body =
        format!("{{\"browser_arg\": \"--user-agent={canary}\", \"engine_env\": \"X={canary}\"}}");
    let fetch = fx
        .cmd()
        .args(["fetch", &srv.url("/echo"), "--endpoint-url", &h.endpoint])
        .args(["--render", "always", "--method", "POST", "--data", &body])
        .env("AFHTTP_TOKEN_SECRET", TOKEN)
        .run();
    assert_eq!(fetch.fetch().status, 200, "{}", fetch.context);
    let seen = srv.last_request("/echo").unwrap();
    assert!(!seen.header("user-agent").unwrap_or("").contains(canary));
    // The switch relaunches the browser: wait until it runs again.
    crate::support::wait_until(Duration::from_secs(10), || {
        descendants(host_pid).iter().any(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains("chromium"))
        })
    });
    let kids = descendants(host_pid);
    assert!(!kids.is_empty());
    let mut browsers = 0;
    for pid in kids {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline);
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        let environ = String::from_utf8_lossy(&environ);
        if cmdline.contains("chromium") {
            browsers += 1;
        }
        assert!(!cmdline.contains(canary), "{pid}: {cmdline}");
        assert!(!environ.contains(canary), "{pid} environment");
    }
    assert!(browsers >= 1, "the relaunched browser was inspected");
    // The switch did happen: the browser now runs on the remotely named profile.
    let (_, _, body) = http(
        "127.0.0.1",
        port,
        "GET",
        "/health",
        &[("Authorization", BEARER)],
    );
    assert!(body.contains("remote-switch"), "{body}");
}
