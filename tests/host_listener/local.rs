//! Without a browser: Host checks, public health, the route table, unix sockets, refusals.

use super::*;

#[test]
fn tokenless_loopback_refuses_rebinding_hosts() {
    rt().block_on(async {
        let mut cfg = config("tcp:127.0.0.1:0", None);
        cfg.allowed_hosts = vec!["mesh.internal".into()];
        let (bound, _stop) = start(FakeView::default(), cfg).await;
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
        assert_eq!(
            (status, error_code(&body).as_str()),
            (503, "cdp_unavailable")
        );
        // `afhttp health --ready` on a starting host is one retryable error; without
        // --ready the same host is a result saying `starting`.
        let ep = format!("ws://127.0.0.1:{port}");
        let (ready, plain) = tokio::task::spawn_blocking(move || {
            let fx = crate::support::Fixture::new();
            let ready = fx
                .cmd()
                .args(["health", "--ready", "--endpoint-url", &ep])
                .run();
            let plain = fx.cmd().args(["health", "--endpoint-url", &ep]).run();
            (ready, plain)
        })
        .await
        .unwrap();
        let err = ready.failure("cdp_unavailable", 1);
        assert!(err.retryable, "{}", ready.context);
        assert_eq!(plain.result()["status"], "starting", "{}", plain.context);
    });
}

#[test]
fn public_minimal_health_and_route_table() {
    rt().block_on(async {
        let mut cfg = config("tcp:127.0.0.1:0", Some("tok"));
        cfg.health_public_minimal = true;
        let (bound, _stop) = start(FakeView::default(), cfg).await;
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
        // The readiness form: the same minimal document, 503 until the host is ok.
        let (status, body) = raw_tcp(
            port,
            "GET /health?ready HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        )
        .await;
        assert_eq!(status, 503, "{body}");
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
        assert_eq!(error_code(&body), "health");

        // The CLI takes the anonymous answer for what it is (the host marks it), and gets
        // the whole document with the token.
        let ep = format!("http://127.0.0.1:{port}");
        let (anonymous, full) = tokio::task::spawn_blocking(move || {
            let fx = crate::support::Fixture::new();
            let health = |extra: &[&str]| {
                fx.cmd()
                    .args(["health", "--endpoint-url", &ep, "--timeout-ms", "10000"])
                    .args(extra)
                    .run()
            };
            (health(&[]), health(&["--token-secret", "tok"]))
        })
        .await
        .unwrap();
        let r = anonymous.result();
        assert_eq!(r["status"], "starting", "{}", anonymous.context);
        assert!(r.get("version").is_none(), "{}", anonymous.context);
        let r = full.result();
        assert_eq!(r["status"], "starting", "{}", full.context);
        assert_eq!(r["backend"]["family"], "chromium", "{}", full.context);
        assert!(r["version"].is_string(), "{}", full.context);

        // Every route but the public health needs the token.
        let (bound, _stop2) = start(FakeView::default(), config("tcp:127.0.0.1:0", Some("tok"))).await;
        let port = self::port(&bound);
        for route in ROUTES {
            let path = route.path.replace("{id}", "ABC");
            let (status, body) = raw_tcp(
                port,
                &format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"),
            )
            .await;
            assert_eq!(status, 401, "{path} ({:?}): {body}", route.auth);
            assert_eq!(error_code(&body), "unauthorized");
        }

        // --no-health removes /health only.
        let mut cfg = config("tcp:127.0.0.1:0", None);
        cfg.health = false;
        let (bound, _stop3) = start(FakeView::default(), cfg).await;
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
        let (bound, stop) = start(FakeView::default(), config(&listen, None)).await;
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
        assert_eq!(error_code(&body), "health");
        // A second host on the same live socket is refused.
        let state = state(FakeView::default(), config(&listen, None));
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
        let state = state(FakeView::default(), config(&format!("tcp:{addr}"), None));
        let err = serve(state, std::future::pending()).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::IoError);
        assert!(err.message.contains("already in use"), "{}", err.message);
    });
}
