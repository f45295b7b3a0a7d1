//! Through a real headless Chromium: tokens, /json rewriting, CDP round trips, shutdown.

use super::*;

/// A headless Chromium with DevTools on a random loopback port; killed on drop.
struct Chromium {
    upstream: Upstream,
    _browser: crate::support::chromium::Headless,
}

impl Chromium {
    fn launch() -> Chromium {
        let browser = crate::support::chromium::Headless::launch(&[]);
        let upstream = Upstream {
            http_base: format!("http://127.0.0.1:{}", browser.port),
            browser_ws_url: browser.ws_url.clone(),
        };
        Chromium {
            upstream,
            _browser: browser,
        }
    }
}

#[test]
fn proxies_a_real_chromium_with_token_checks() {
    let chromium = Chromium::launch();
    rt().block_on(async {
        let (bound, stop) = start(
            FakeView::browser(chromium.upstream.clone()),
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
        assert_eq!(error_code(&body), "forbidden_origin");

        // A rebinding attempt with the query token (no bearer) is refused on its Host.
        let (status, body) = raw_tcp(
            port,
            "GET /json/version?token_secret=tok HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
        )
        .await;
        assert_eq!(status, 403, "{body}");
        assert_eq!(error_code(&body), "forbidden_host");

        // Shutdown closes the proxied sockets and the listener.
        stop.send(()).unwrap();
        tokio::time::timeout(T, bound.join).await.unwrap().unwrap();
        let closed = a.send(None, "Browser.getVersion", json!({}), T).await;
        assert!(closed.is_err());
        assert!(tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err());
    });
}
