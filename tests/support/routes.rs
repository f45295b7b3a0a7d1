//! The router shared by [`super::FixtureServer`] and [`super::TlsFixtureServer`].
//!
//! `/flaky` is not here: it drops connections, which a handler cannot do; see `server.rs`.

use std::convert::Infallible;
use std::path::PathBuf;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Path, RawQuery};
use axum::http::{header, HeaderMap, Method, Response, StatusCode, Uri};
use axum::routing::{any, get};
use axum::Router;
use base64::Engine as _;
use futures_util::stream::{self, StreamExt};

use super::content;

type Resp = Response<Body>;

/// The fixture routes (see the module docs of `server.rs` for the list).
pub fn router() -> Router {
    Router::new()
        .route("/", get(|| async { html(content::STATIC_HTML) }))
        .route("/static", get(|| async { html(content::STATIC_HTML) }))
        .route("/article", get(|| async { html(content::article_html()) }))
        .route("/spa", get(|| async { html(content::SPA_HTML) }))
        .route(
            "/spa.js",
            get(|| async { typed("application/javascript", content::SPA_JS) }),
        )
        .route("/api/items", get(api_items))
        .route(
            "/redirect/loop",
            get(|| async { redirect(302, "/redirect/loop") }),
        )
        .route("/redirect/abs", get(redirect_abs))
        .route("/redirect/{n}", get(redirect_n))
        .route("/cookies/set", get(cookies_set))
        .route("/cookies/set-raw", get(cookies_set_raw))
        .route("/cookies/delete", get(cookies_delete))
        .route("/cookies/echo", get(cookies_echo))
        .route("/cookies/redirect-set", get(cookies_redirect_set))
        .route("/echo", any(echo))
        .route("/status/{code}", any(status_html))
        .route("/status/{code}/json", any(status_json))
        .route("/slow", get(slow))
        .route("/slow-body", get(slow_body))
        .route("/stall", get(stall))
        .route("/drop", get(drop_body))
        .route("/gzip", get(|| async { encoded("gzip", content::gzip) }))
        .route(
            "/deflate",
            get(|| async { encoded("deflate", content::deflate) }),
        )
        .route("/brotli", get(|| async { encoded("br", content::brotli) }))
        .route("/bytes", get(bytes_route))
        .route("/big-html", get(big_html))
        .route("/big-text", get(big_text))
        .route("/challenge/{name}", get(challenge))
        .route(
            "/json",
            get(|| async { typed("application/json", JSON_BODY) }),
        )
        // Another service's control routes, where an afhttp host would have its own.
        .route(
            "/health",
            get(|| async { typed("application/json", r#"{"status":"ok"}"#) }),
        )
        .route(
            "/capabilities",
            get(|| async { html("<!doctype html><title>Service</title><p>capabilities</p>") }),
        )
        .route(
            "/text",
            get(|| async { typed("text/plain; charset=utf-8", content::PLAIN_TEXT) }),
        )
        .route(
            "/image.png",
            get(|| async { typed("image/png", content::png()) }),
        )
        .route("/download", get(download))
        .route("/headers/ua", get(headers_ua))
        .route("/basic-auth", get(basic_auth))
        .route("/charset/latin1", get(latin1))
        .route("/browser/console", get(|| async { html(BROWSER_CONSOLE) }))
        .route("/browser/storage", get(|| async { html(BROWSER_STORAGE) }))
        .route("/browser/tall", get(|| async { html(BROWSER_TALL) }))
        .route("/browser/late", get(|| async { html(BROWSER_LATE) }))
        .route(
            "/browser/composed",
            get(|| async { html(BROWSER_COMPOSED) }),
        )
        .route("/browser/pending", get(|| async { html(BROWSER_PENDING) }))
        .route(
            "/browser/stuck-storage",
            get(|| async { html(BROWSER_STUCK_STORAGE) }),
        )
        .merge(super::routes_content::router())
        .merge(super::routes_dialog::router())
        .merge(super::routes_network::router())
        .merge(super::routes_observation::router())
        .merge(super::routes_ready::router())
        .merge(super::routes_stall::router())
        .merge(super::routes_transfer::router())
        .merge(super::routes_takeover::router())
}

/// `/browser/pending`: starts a fetch of `/slow?ms=8000` that is still running at load.
const BROWSER_PENDING: &str = "<!doctype html><title>Pending</title><p>waiting page</p>\
<script>fetch('/slow?ms=8000');</script>";

/// `/browser/stuck-storage`: `indexedDB.databases()` never settles, so the storage capture
/// cannot finish; the rest of the page is ordinary.
const BROWSER_STUCK_STORAGE: &str = "<!doctype html><title>Stuck storage</title>\
<p>A page whose IndexedDB listing never answers, so that only one capture times out.</p>\
<script>indexedDB.databases=function(){return new Promise(function(){});};</script>";

/// `/browser/composed`: a table, an open shadow root, a same-origin iframe, a form, links.
const BROWSER_COMPOSED: &str = "<!doctype html><title>Composed</title>\
<h1>Composed page</h1><p>Intro with a <a href=\"/static\">relative link</a>.</p>\
<table><tr><th>Name</th><th>Qty</th></tr><tr><td>apple</td><td>3</td></tr></table>\
<div id=\"host\"></div>\
<iframe id=\"frame\" srcdoc=\"<p>inside the frame</p><button>Frame button</button>\"></iframe>\
<form action=\"/echo\" method=\"post\"><input name=\"q\" aria-label=\"Query\">\
<button type=\"submit\">Search</button></form>\
<script>document.getElementById('host').attachShadow({mode:'open'}).innerHTML=\
'<p>shadow paragraph text</p>';</script>";

/// `/browser/console`: console output of several levels and one uncaught exception.
const BROWSER_CONSOLE: &str = "<!doctype html><title>Console</title><p>console page</p>\
<script>console.log('hello-log', 42);console.error('boom-console');\
setTimeout(function(){throw new Error('boom-uncaught');},0);</script>";

/// `/browser/storage`: writes localStorage, sessionStorage and an IndexedDB database.
const BROWSER_STORAGE: &str = "<!doctype html><title>Storage</title><p>storage page</p>\
<script>localStorage.setItem('local-key','local-value');\
sessionStorage.setItem('session-key','session-value');\
indexedDB.open('afhttp-fixture-db',1);</script>";

/// `/browser/tall`: a 5000 px tall page.
const BROWSER_TALL: &str = "<!doctype html><title>Tall</title>\
<body style=\"margin:0\"><div style=\"height:5000px;background:linear-gradient(#fff,#00f)\">top</div>\
<p>bottom</p></body>";

/// `/browser/late`: `#late` exists hidden at load and is shown (with text) after 400 ms.
const BROWSER_LATE: &str = "<!doctype html><title>Late</title><p>early text</p>\
<div id=\"late\" style=\"display:none\"></div>\
<script>setTimeout(function(){var d=document.getElementById('late');\
d.textContent='late content arrived';d.style.display='block';},400);</script>";

const JSON_BODY: &str = r#"{"name":"afhttp-fixture","ok":true,"items":[1,2,3]}"#;

/// The first value of `key` in a raw query string.
pub fn query_value(raw: Option<&str>, key: &str) -> Option<String> {
    query_pairs(raw)
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
}

/// All decoded pairs of a raw query string, in order.
pub fn query_pairs(raw: Option<&str>) -> Vec<(String, String)> {
    url::form_urlencoded::parse(raw.unwrap_or("").as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn query_ms(raw: Option<&str>, default: u64) -> u64 {
    query_value(raw, "ms")
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn typed(content_type: &str, body: impl Into<Body>) -> Resp {
    Response::builder()
        .header(header::CONTENT_TYPE, content_type)
        .body(body.into())
        .unwrap()
}

fn html(body: impl Into<Body>) -> Resp {
    typed("text/html; charset=utf-8", body)
}

fn json(status: u16, value: &serde_json::Value) -> Resp {
    let mut r = typed("application/json", value.to_string());
    *r.status_mut() = StatusCode::from_u16(status).unwrap();
    r
}

fn redirect(status: u16, location: &str) -> Resp {
    Response::builder()
        .status(status)
        .header(header::LOCATION, location)
        .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
        .body(Body::from(format!("<a href=\"{location}\">redirect</a>")))
        .unwrap()
}

async fn api_items() -> Resp {
    tokio::time::sleep(Duration::from_millis(100)).await;
    typed("application/json", content::items_json())
}

async fn redirect_abs(RawQuery(q): RawQuery) -> Resp {
    match query_value(q.as_deref(), "to") {
        Some(to) => redirect(302, &to),
        None => plain(400, "missing ?to=URL\n"),
    }
}

async fn redirect_n(Path(n): Path<u32>) -> Resp {
    match n {
        0 => redirect(302, "/static"),
        1 => redirect(307, "/static"),
        2 => redirect(302, "/redirect/1"),
        3 => redirect(301, "/redirect/2"),
        n => redirect(302, &format!("/redirect/{}", n - 1)),
    }
}

fn plain(status: u16, body: &str) -> Resp {
    let mut r = typed("text/plain; charset=utf-8", body.to_owned());
    *r.status_mut() = StatusCode::from_u16(status).unwrap();
    r
}

fn with_set_cookies(mut r: Resp, cookies: &[String]) -> Resp {
    for c in cookies {
        if let Ok(v) = header::HeaderValue::from_str(c) {
            r.headers_mut().append(header::SET_COOKIE, v);
        }
    }
    r
}

async fn cookies_set(RawQuery(q): RawQuery) -> Resp {
    let pairs = query_pairs(q.as_deref());
    let cookies: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}; Path=/"))
        .collect();
    let set: serde_json::Map<String, serde_json::Value> =
        pairs.into_iter().map(|(k, v)| (k, v.into())).collect();
    with_set_cookies(json(200, &serde_json::json!({ "set": set })), &cookies)
}

async fn cookies_set_raw(RawQuery(q): RawQuery) -> Resp {
    let headers: Vec<String> = query_pairs(q.as_deref())
        .into_iter()
        .filter(|(k, _)| k == "h")
        .map(|(_, v)| v)
        .collect();
    with_set_cookies(
        json(200, &serde_json::json!({ "set_cookie": headers })),
        &headers,
    )
}

async fn cookies_delete(RawQuery(q): RawQuery) -> Resp {
    let names: Vec<String> = query_pairs(q.as_deref())
        .into_iter()
        .filter(|(k, _)| k == "name")
        .map(|(_, v)| v)
        .collect();
    let cookies: Vec<String> = names
        .iter()
        .map(|n| format!("{n}=; Max-Age=0; Path=/"))
        .collect();
    with_set_cookies(
        json(200, &serde_json::json!({ "deleted": names })),
        &cookies,
    )
}

async fn cookies_echo(headers: HeaderMap) -> Resp {
    let cookie = joined(&headers, "cookie", "; ");
    json(200, &serde_json::json!({ "cookie": cookie }))
}

async fn cookies_redirect_set() -> Resp {
    with_set_cookies(
        redirect(302, "/cookies/echo"),
        &["hop=1; Path=/".to_owned()],
    )
}

/// All values of a header joined by `sep`, or `None`.
fn joined(headers: &HeaderMap, name: &str, sep: &str) -> Option<String> {
    let values: Vec<String> = headers
        .get_all(name)
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .collect();
    (!values.is_empty()).then(|| values.join(sep))
}

async fn echo(method: Method, uri: Uri, headers: HeaderMap, body: Bytes) -> Resp {
    let mut map = serde_json::Map::new();
    for name in headers.keys() {
        let v = joined(&headers, name.as_str(), ", ").unwrap_or_default();
        map.insert(name.as_str().to_owned(), v.into());
    }
    let (text, encoding) = match std::str::from_utf8(&body) {
        Ok(s) => (s.to_owned(), "utf8"),
        Err(_) => (
            base64::engine::general_purpose::STANDARD.encode(&body),
            "base64",
        ),
    };
    json(
        200,
        &serde_json::json!({
            "method": method.as_str(),
            "path": uri.path(),
            "query": uri.query(),
            "headers": map,
            "body": text,
            "body_encoding": encoding,
            "body_bytes": body.len(),
        }),
    )
}

fn parse_status(code: &str) -> Option<StatusCode> {
    code.parse::<u16>()
        .ok()
        .filter(|c| *c >= 200)
        .and_then(|c| StatusCode::from_u16(c).ok())
}

fn no_body(status: StatusCode) -> bool {
    status == StatusCode::NO_CONTENT || status == StatusCode::NOT_MODIFIED
}

async fn status_html(Path(code): Path<String>) -> Resp {
    let Some(status) = parse_status(&code) else {
        return plain(400, "bad status code\n");
    };
    let reason = status.canonical_reason().unwrap_or("Status");
    let body = if no_body(status) {
        String::new()
    } else {
        format!(
            "<!doctype html>\n<html><head><title>{} {reason}</title></head>\
             <body><h1>{} {reason}</h1><p>Fixture status page.</p></body></html>\n",
            status.as_u16(),
            status.as_u16()
        )
    };
    let mut r = html(body);
    *r.status_mut() = status;
    r
}

async fn status_json(Path(code): Path<String>) -> Resp {
    let Some(status) = parse_status(&code) else {
        return plain(400, "bad status code\n");
    };
    let reason = status.canonical_reason().unwrap_or("Status");
    if no_body(status) {
        let mut r = typed("application/json", "");
        *r.status_mut() = status;
        return r;
    }
    json(
        status.as_u16(),
        &serde_json::json!({ "status": status.as_u16(), "reason": reason }),
    )
}

async fn slow(RawQuery(q): RawQuery) -> Resp {
    let ms = query_ms(q.as_deref(), 1000);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    html(format!(
        "<!doctype html><html><head><title>Slow</title></head><body><p>Slow after {ms} ms</p></body></html>\n"
    ))
}

async fn slow_body(RawQuery(q): RawQuery) -> Resp {
    let ms = query_ms(q.as_deref(), 1000);
    let mut page =
        String::from("<!doctype html><html><head><title>Slow body</title></head><body>\n");
    for i in 0..40 {
        page.push_str(&format!("<p>Slow body paragraph {i}.</p>\n"));
    }
    page.push_str("</body></html>\n");
    let full = Bytes::from(page);
    let half = full.len() / 2;
    let (first, second) = (full.slice(..half), full.slice(half..));
    let s =
        stream::once(async move { Ok::<_, Infallible>(first) }).chain(stream::once(async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(second)
        }));
    let mut r = html(Body::from_stream(s));
    r.headers_mut()
        .insert(header::CONTENT_LENGTH, full.len().into());
    r
}

async fn stall() -> Resp {
    let first =
        Bytes::from_static(b"<!doctype html><html><head><title>Stall</title></head><body>\n");
    let s = stream::once(async move { Ok::<_, Infallible>(first) }).chain(stream::pending());
    html(Body::from_stream(s))
}

async fn drop_body() -> Resp {
    let s =
        stream::once(async { Ok(Bytes::from_static(b"0123456789")) }).chain(stream::once(async {
            // Let hyper flush the 10 bytes before the error aborts the connection.
            tokio::time::sleep(Duration::from_millis(50)).await;
            Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                "fixture drop",
            ))
        }));
    let mut r = typed("application/octet-stream", Body::from_stream(s));
    r.headers_mut().insert(header::CONTENT_LENGTH, 1000.into());
    r
}

fn encoded(name: &str, compress: fn(&[u8]) -> Vec<u8>) -> Resp {
    let mut r = html(compress(content::encoded_page(name).as_bytes()));
    r.headers_mut().insert(
        header::CONTENT_ENCODING,
        header::HeaderValue::from_str(name).unwrap(),
    );
    r
}

/// Streams `n` bytes of `unit` repeated, one shared ~64 KiB block at a time.
fn repeated_stream(unit: &[u8], n: u64, content_type: &str) -> Resp {
    let block = content::repeated_block(unit);
    let s = stream::unfold(n, move |left| {
        let block = block.clone();
        async move {
            if left == 0 {
                return None;
            }
            let take = usize::try_from(left.min(block.len() as u64)).unwrap();
            Some((Ok::<_, Infallible>(block.slice(..take)), left - take as u64))
        }
    });
    let mut r = typed(content_type, Body::from_stream(s));
    r.headers_mut().insert(header::CONTENT_LENGTH, n.into());
    r
}

async fn bytes_route(RawQuery(q): RawQuery) -> Resp {
    let n = query_value(q.as_deref(), "n")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    repeated_stream(&content::pattern_unit(), n, "application/octet-stream")
}

async fn big_html(RawQuery(q): RawQuery) -> Resp {
    let n = query_value(q.as_deref(), "n")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    repeated_stream(
        content::BIG_HTML_UNIT.as_bytes(),
        n,
        "text/html; charset=utf-8",
    )
}

async fn big_text(RawQuery(q): RawQuery) -> Resp {
    let n = query_value(q.as_deref(), "n")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    repeated_stream(
        content::BIG_TEXT_UNIT.as_bytes(),
        n,
        "text/plain; charset=utf-8",
    )
}

/// The directory `/challenge/{name}` serves from.
pub fn challenges_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/challenges")
}

fn safe_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && !name.contains("..")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

async fn challenge(Path(name): Path<String>) -> Resp {
    if !safe_name(&name) {
        return plain(400, "refused challenge name\n");
    }
    let dir = challenges_dir();
    let Ok(body) = std::fs::read(dir.join(format!("{name}.html"))) else {
        return plain(404, "no such challenge fixture\n");
    };
    let mut r = html(body);
    let meta = std::fs::read_to_string(dir.join(format!("{name}.meta"))).unwrap_or_default();
    for line in meta.lines().map(str::trim) {
        if let Some(code) = line.strip_prefix("status:") {
            if let Some(s) = code
                .trim()
                .parse()
                .ok()
                .and_then(|c| StatusCode::from_u16(c).ok())
            {
                *r.status_mut() = s;
            }
        } else if let Some(h) = line.strip_prefix("header:") {
            if let Some((name, value)) = h.split_once(':') {
                let name = header::HeaderName::from_bytes(name.trim().as_bytes());
                let value = header::HeaderValue::from_str(value.trim());
                if let (Ok(n), Ok(v)) = (name, value) {
                    if n == header::CONTENT_TYPE {
                        r.headers_mut().insert(n, v);
                    } else {
                        r.headers_mut().append(n, v);
                    }
                }
            }
        }
    }
    r
}

async fn download() -> Resp {
    let mut r = typed("text/csv; charset=utf-8", content::DOWNLOAD_CSV);
    r.headers_mut().insert(
        header::CONTENT_DISPOSITION,
        header::HeaderValue::from_static("attachment; filename=\"report.csv\""),
    );
    r
}

async fn headers_ua(headers: HeaderMap) -> Resp {
    let ua = joined(&headers, "user-agent", ", ").unwrap_or_default();
    typed("text/plain; charset=utf-8", ua)
}

async fn basic_auth(headers: HeaderMap) -> Resp {
    let ok = headers
        .get(header::AUTHORIZATION)
        .is_some_and(|v| v.as_bytes() == b"Basic dXNlcjpwYXNz");
    if ok {
        return html("<!doctype html><html><head><title>Authenticated</title></head><body><h1>Welcome, user</h1></body></html>\n");
    }
    let mut r = plain(401, "authentication required\n");
    r.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Basic realm=\"afhttp-fixture\""),
    );
    r
}

async fn latin1() -> Resp {
    typed("text/html; charset=iso-8859-1", content::latin1_html())
}
