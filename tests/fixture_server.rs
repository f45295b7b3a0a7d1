//! The fixture servers themselves, exercised directly with reqwest.

use std::time::Duration;

use futures_util::StreamExt;
use reqwest::redirect::Policy;
use reqwest::{Client, StatusCode};

use crate::support::content::{big_html_bytes, pattern_byte, pattern_bytes};
use crate::support::{FixtureServer, HttpProxy, Socks5Proxy, TlsFixtureServer};

fn run<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// A direct client: no ambient proxy, no redirects followed, fresh connections.
fn client() -> Client {
    Client::builder()
        .no_proxy()
        .redirect(Policy::none())
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

async fn json(r: reqwest::Response) -> serde_json::Value {
    serde_json::from_slice(&r.bytes().await.unwrap()).unwrap()
}

async fn get(url: &str) -> reqwest::Response {
    client().get(url).send().await.unwrap()
}

#[test]
fn starts_and_serves_pages() {
    let s = FixtureServer::start();
    run(async {
        for path in ["/", "/static"] {
            let r = get(&s.url(path)).await;
            assert_eq!(r.status(), 200);
            let ct = r.headers()["content-type"].to_str().unwrap().to_owned();
            assert!(ct.starts_with("text/html"), "{ct}");
            let body = r.text().await.unwrap();
            assert!(body.contains("<title>Fixture Static Page</title>"));
            assert!(body.contains("<table>") && body.contains("<a href="));
        }
        let article = get(&s.url("/article")).await.text().await.unwrap();
        assert!(
            (40_000..60_000).contains(&article.len()),
            "{}",
            article.len()
        );
        assert_eq!(article.matches("<a href=").count(), 50);
        assert!(article.contains("alt=\"Figure 1: a diagram\"") && !article.contains("<script"));
        let spa = get(&s.url("/spa")).await.text().await.unwrap();
        assert!(spa.contains("<div id=\"root\"></div>") && spa.contains("/spa.js"));
        let items = json(get(&s.url("/api/items")).await).await;
        assert_eq!(items["items"].as_array().unwrap().len(), 50);
    });
    assert_eq!(s.hits("/"), 1);
    assert_eq!(s.hits("/static"), 1);
    assert_eq!(s.hits("/nope"), 0);
}

#[test]
fn small_typed_routes() {
    let s = FixtureServer::start();
    run(async {
        let r = get(&s.url("/json")).await;
        assert_eq!(r.headers()["content-type"], "application/json");
        let v = json(r).await;
        assert_eq!(v["ok"], true);
        let r = get(&s.url("/text")).await;
        assert!(r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain"));
        let png = get(&s.url("/image.png")).await.bytes().await.unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let r = get(&s.url("/download")).await;
        assert_eq!(
            r.headers()["content-disposition"],
            "attachment; filename=\"report.csv\""
        );
        assert!(r.text().await.unwrap().starts_with("id,name,amount\n"));
        let ua = client()
            .get(s.url("/headers/ua"))
            .header("user-agent", "fixture-test/1")
            .send()
            .await
            .unwrap();
        assert_eq!(ua.text().await.unwrap(), "fixture-test/1");
        let r = get(&s.url("/basic-auth")).await;
        assert_eq!(r.status(), 401);
        assert!(r.headers().contains_key("www-authenticate"));
        let r = client()
            .get(s.url("/basic-auth"))
            .basic_auth("user", Some("pass"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let r = get(&s.url("/charset/latin1")).await;
        assert_eq!(r.headers()["content-type"], "text/html; charset=iso-8859-1");
        let raw = r.bytes().await.unwrap();
        assert!(raw.windows(4).any(|w| w == b"caf\xe9"));
    });
}

#[test]
fn redirects() {
    let s = FixtureServer::start();
    run(async {
        let mut url = s.url("/redirect/3");
        let mut statuses = Vec::new();
        loop {
            let r = get(&url).await;
            statuses.push(r.status().as_u16());
            let Some(loc) = r.headers().get("location") else {
                break;
            };
            url = s.url(loc.to_str().unwrap());
        }
        assert_eq!(statuses, [301, 302, 307, 200]);
        assert_eq!(url, s.url("/static"));
        let r = get(&s.url("/redirect/loop")).await;
        assert_eq!(r.headers()["location"], "/redirect/loop");
        let to = s.url("/json");
        let abs = format!("{}?to={}", s.url("/redirect/abs"), urlencode(&to));
        assert_eq!(get(&abs).await.headers()["location"], to.as_str());
    });
}

fn urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

fn set_cookies(r: &reqwest::Response) -> Vec<String> {
    r.headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect()
}

#[test]
fn cookies() {
    let s = FixtureServer::start();
    run(async {
        let r = get(&s.url("/cookies/set?a=1&b=two")).await;
        assert_eq!(set_cookies(&r), ["a=1; Path=/", "b=two; Path=/"]);
        let raw1 = "sid=xyz; HttpOnly; Secure; SameSite=Lax";
        let url = format!(
            "{}?h={}&h={}",
            s.url("/cookies/set-raw"),
            urlencode(raw1),
            urlencode("t=1; Max-Age=60")
        );
        assert_eq!(set_cookies(&get(&url).await), [raw1, "t=1; Max-Age=60"]);
        let r = get(&s.url("/cookies/delete?name=a")).await;
        assert_eq!(set_cookies(&r), ["a=; Max-Age=0; Path=/"]);
        let v = json(get(&s.url("/cookies/echo")).await).await;
        assert_eq!(v["cookie"], serde_json::Value::Null);
        let r = client()
            .get(s.url("/cookies/echo"))
            .header("cookie", "a=1; b=two")
            .send()
            .await
            .unwrap();
        let v = json(r).await;
        assert_eq!(v["cookie"], "a=1; b=two");
        let r = get(&s.url("/cookies/redirect-set")).await;
        assert_eq!(r.status(), 302);
        assert_eq!(r.headers()["location"], "/cookies/echo");
        assert_eq!(set_cookies(&r), ["hop=1; Path=/"]);
    });
    let last = s.last_request("/cookies/echo").unwrap();
    assert_eq!(last.header("Cookie"), Some("a=1; b=two"));
}

#[test]
fn echo_and_recording() {
    let s = FixtureServer::start();
    run(async {
        let r = client()
            .post(s.url("/echo?x=1"))
            .header("x-test", "yes")
            .body("hello")
            .send()
            .await
            .unwrap();
        let v = json(r).await;
        assert_eq!(v["method"], "POST");
        assert_eq!(v["path"], "/echo");
        assert_eq!(v["query"], "x=1");
        assert_eq!(v["headers"]["x-test"], "yes");
        assert_eq!(v["body"], "hello");
        assert_eq!(v["body_bytes"], 5);
        let r = client()
            .put(s.url("/echo"))
            .body(vec![0xff, 0xfe, 0x00])
            .send()
            .await
            .unwrap();
        let v = json(r).await;
        assert_eq!(v["body"], "//4A");
        assert_eq!(v["body_encoding"], "base64");
    });
    assert_eq!(s.hits("/echo"), 2);
    let first = &s.requests()[0];
    assert_eq!(first.method, "POST");
    assert_eq!(first.path_and_query, "/echo?x=1");
    assert_eq!(first.body, b"hello");
    assert_eq!(s.last_request("/echo").unwrap().method, "PUT");
}

#[test]
fn statuses() {
    let s = FixtureServer::start();
    run(async {
        let r = get(&s.url("/status/404")).await;
        assert_eq!(r.status(), 404);
        assert!(r.text().await.unwrap().contains("404 Not Found"));
        let r = get(&s.url("/status/503/json")).await;
        assert_eq!(r.status(), 503);
        let v = json(r).await;
        assert_eq!(v["status"], 503);
        assert_eq!(get(&s.url("/status/204")).await.status(), 204);
    });
}

#[test]
fn compression() {
    let s = FixtureServer::start();
    run(async {
        let decoding = Client::builder().no_proxy().build().unwrap();
        let plain = Client::builder()
            .no_proxy()
            .no_gzip()
            .no_brotli()
            .no_deflate()
            .build()
            .unwrap();
        for (path, enc) in [
            ("/gzip", "gzip"),
            ("/deflate", "deflate"),
            ("/brotli", "br"),
        ] {
            let r = plain.get(s.url(path)).send().await.unwrap();
            assert_eq!(r.headers()["content-encoding"], enc);
            let text = decoding.get(s.url(path)).send().await.unwrap().text().await;
            assert!(
                text.unwrap().contains(&format!("Compressed with {enc}")),
                "{path}"
            );
        }
    });
}

#[test]
fn bytes_stream_50mb() {
    let s = FixtureServer::start();
    run(async {
        let small = get(&s.url("/bytes?n=1000")).await.bytes().await.unwrap();
        assert_eq!(small.as_ref(), pattern_bytes(1000).as_slice());
        let html = get(&s.url("/big-html?n=777")).await;
        assert!(html.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html"));
        assert_eq!(
            html.bytes().await.unwrap().as_ref(),
            big_html_bytes(777).as_slice()
        );
        let n: u64 = 50 * 1024 * 1024;
        let r = get(&s.url(&format!("/bytes?n={n}"))).await;
        assert_eq!(r.content_length(), Some(n));
        let mut stream = r.bytes_stream();
        let mut seen: u64 = 0;
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.unwrap();
            assert_eq!(chunk[0], pattern_byte(seen));
            seen += chunk.len() as u64;
        }
        assert_eq!(seen, n);
    });
}

#[test]
fn slow_stall_drop() {
    let s = FixtureServer::start();
    run(async {
        assert_eq!(get(&s.url("/slow?ms=150")).await.status(), 200);
        let r = get(&s.url("/slow-body?ms=400")).await;
        assert!(r.text().await.unwrap().ends_with("</html>\n"));
        let r = get(&s.url("/stall")).await;
        assert_eq!(r.status(), 200);
        let body = tokio::time::timeout(Duration::from_millis(300), r.bytes()).await;
        assert!(body.is_err(), "stall must not finish");
        let r = get(&s.url("/drop")).await;
        assert_eq!(r.content_length(), Some(1000));
        assert!(r.bytes().await.is_err(), "drop must cut the body");
    });
}

#[test]
fn flaky_fails_then_succeeds() {
    let s = FixtureServer::start();
    run(async {
        let url = s.url("/flaky?fail=2&key=t1");
        for _ in 0..2 {
            let err = client().get(&url).send().await.unwrap_err();
            assert!(!err.is_status() && err.status().is_none(), "{err:?}");
        }
        let r = get(&url).await;
        assert_eq!(r.status(), 200);
        let v = json(r).await;
        assert_eq!(v["attempt"], 3);
        // Another key has its own counter.
        let err = client().get(s.url("/flaky?fail=1&key=t2")).send().await;
        assert!(err.is_err());
    });
    assert_eq!(s.hits("/flaky"), 4);
}

#[test]
fn challenge_files() {
    let s = FixtureServer::start();
    run(async {
        let r = get(&s.url("/challenge/_support_selftest")).await;
        assert_eq!(r.status(), 403);
        assert_eq!(r.headers()["cf-mitigated"], "challenge");
        assert_eq!(r.headers()["x-fixture-selftest"], "yes");
        assert!(r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html"));
        assert!(r.text().await.unwrap().contains("Checking your browser"));
        let r = get(&s.url("/challenge/does-not-exist")).await;
        assert_eq!(r.status(), 404);
        let r = get(&s.url("/challenge/..%2F..%2FCargo.toml")).await;
        assert_eq!(r.status(), 400);
    });
}

fn tls_client(ca: Option<&std::path::Path>) -> Client {
    let mut b = Client::builder().no_proxy().tls_built_in_root_certs(false);
    if let Some(path) = ca {
        let pem = std::fs::read(path).unwrap();
        b = b.add_root_certificate(reqwest::Certificate::from_pem(&pem).unwrap());
    }
    b.build().unwrap()
}

#[test]
fn tls_trusted_only_with_ca() {
    let s = TlsFixtureServer::start();
    run(async {
        let ok = tls_client(Some(s.ca_pem_path()));
        let body = ok
            .get(s.url("/"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(body.contains("Fixture Static Page"));
        let r = ok
            .post(s.localhost_url("/echo"))
            .body("x")
            .send()
            .await
            .unwrap();
        let v = json(r).await;
        assert_eq!(v["body"], "x");
        assert!(tls_client(None).get(s.url("/")).send().await.is_err());
        let default = Client::builder().no_proxy().build().unwrap();
        assert!(default.get(s.url("/")).send().await.is_err());
    });
    assert_eq!(s.hits("/"), 1);
    assert_eq!(s.hits("/echo"), 1);
}

#[test]
fn http_proxy_forwards_and_tunnels() {
    let s = FixtureServer::start();
    let tls = TlsFixtureServer::start();
    let p = HttpProxy::start();
    run(async {
        let via = Client::builder()
            .proxy(reqwest::Proxy::all(p.url()).unwrap())
            .add_root_certificate(reqwest::Certificate::from_pem(tls.ca_pem().as_bytes()).unwrap())
            .build()
            .unwrap();
        let r = via.get(s.url("/json?via=proxy")).send().await.unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.headers()["content-type"], "application/json");
        let r = via.get(tls.url("/")).send().await.unwrap();
        assert!(r.text().await.unwrap().contains("Fixture Static Page"));
        let r = via.get("http://example.invalid/").send().await.unwrap();
        assert_eq!(r.status(), StatusCode::FORBIDDEN);
    });
    assert_eq!(s.hits("/json"), 1);
    assert_eq!(tls.hits("/"), 1);
    assert_eq!(p.requests(), 3);
    let targets = p.seen_targets();
    assert_eq!(targets[0], s.url("/json?via=proxy"));
    assert_eq!(targets[1], format!("127.0.0.1:{}", tls.port()));
    assert_eq!(targets[2], "http://example.invalid/");
}

#[test]
fn http_proxy_auth() {
    let s = FixtureServer::start();
    let p = HttpProxy::start_with_auth("pu", "pp");
    run(async {
        let anon = Client::builder()
            .proxy(reqwest::Proxy::http(p.url()).unwrap())
            .build()
            .unwrap();
        let r = anon.get(s.url("/")).send().await.unwrap();
        assert_eq!(r.status(), 407);
        let authed = Client::builder()
            .proxy(
                reqwest::Proxy::http(p.url())
                    .unwrap()
                    .basic_auth("pu", "pp"),
            )
            .build()
            .unwrap();
        assert_eq!(authed.get(s.url("/")).send().await.unwrap().status(), 200);
        let last = s.last_request("/").unwrap();
        assert_eq!(last.header("proxy-authorization"), None);
    });
    assert_eq!(s.hits("/"), 1);
}

#[test]
fn socks5_forwards_loopback_only() {
    let s = FixtureServer::start();
    let p = Socks5Proxy::start();
    run(async {
        let via = Client::builder()
            .proxy(reqwest::Proxy::all(p.url()).unwrap())
            .build()
            .unwrap();
        let r = via.get(s.url("/text")).send().await.unwrap();
        assert!(r.text().await.unwrap().starts_with("Plain text fixture."));
        let remote = Client::builder()
            .proxy(reqwest::Proxy::all(p.url_remote_dns()).unwrap())
            .build()
            .unwrap();
        let url = format!("http://localhost:{}/json", s.port());
        assert_eq!(remote.get(&url).send().await.unwrap().status(), 200);
        assert!(remote.get("http://example.com/").send().await.is_err());
    });
    assert_eq!(p.connections(), 3);
    let targets = p.seen_targets();
    assert_eq!(targets[0], format!("127.0.0.1:{}", s.port()));
    assert_eq!(targets[1], format!("localhost:{}", s.port()));
    assert_eq!(targets[2], "example.com:80");
    assert_eq!(s.hits("/text") + s.hits("/json"), 2);
}

#[test]
fn http_proxy_refuses_connect_elsewhere() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let p = HttpProxy::start();
    run(async {
        let mut c = tokio::net::TcpStream::connect(("127.0.0.1", p.port()))
            .await
            .unwrap();
        c.write_all(b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
            .await
            .unwrap();
        let mut buf = [0u8; 12];
        c.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"HTTP/1.1 403");
    });
    assert_eq!(p.seen_targets(), ["example.com:443"]);
}
