//! Fixture routes for the browser `network.json` tests (`tests/network_capture.rs`), all
//! under `/net/`:
//!
//! - `/net/redirect/a` → 301 `/net/redirect/b` → 302 `/net/redirect/final` (200 HTML).
//! - `/net/xhr`: a page that sets cookie `sid=cookie-secret-1` and fires 20 requests: 17
//!   `fetch` GETs of `/net/api/item?n=N`, one XHR to `/net/api/xhr` with `Authorization` and
//!   `X-Api-Token` headers (its response sets cookie `srv`), one GraphQL POST to
//!   `/net/graphql` (`operationName` `AddItem`, a `mutation`) and one fetch of `/drop` (the
//!   connection drops mid-body). The body reads `all settled` when every request is done.
//! - `/net/cached-page`: fetches `/net/cached` (`Cache-Control: max-age=3600`) twice, in turn.
//! - `/net/sw-page`: registers `/net/sw.js`, waits until it controls the page, then fetches
//!   `/net/sw-data` (answered by the worker itself) and `/net/api/item?n=sw` (passed through).
//! - `/net/ws-page`: opens `/net/ws` (echoes each text frame as `echo:<frame>`) and sends two.
//! - `/net/sse-page`: listens to `/net/sse` (three `tick-N` messages, then stays open).
//! - `/net/big-page`: one XHR of `/net/big-bin`, 15 MB of non-UTF-8 bytes.
//! - `/net/conc/N`: logs `page N` to the console, then after 150 ms fetches
//!   `/net/conc/N/data` (answered after 100 ms) and writes `data N` into the body; for the
//!   concurrency test, where each page's requests carry its own N.

use std::convert::Infallible;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::RawQuery;
use axum::http::{header, Response};
use axum::response::sse::{Event, Sse};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Router;
use futures_util::stream::{self, StreamExt};

type Resp = Response<Body>;

/// Size of `/net/big-bin`.
pub const BIG_BIN_BYTES: usize = 15 * 1000 * 1000;

/// The `/net/*` routes, merged into the shared fixture router.
pub fn router() -> Router {
    Router::new()
        .route(
            "/net/redirect/a",
            get(|| async { redirect(301, "/net/redirect/b") }),
        )
        .route(
            "/net/redirect/b",
            get(|| async { redirect(302, "/net/redirect/final") }),
        )
        .route(
            "/net/redirect/final",
            get(|| async { html(REDIRECT_FINAL) }),
        )
        .route("/net/xhr", get(|| async { html(XHR_PAGE) }))
        .route("/net/api/item", get(item))
        .route("/net/conc/{n}", get(conc_page))
        .route("/net/conc/{n}/data", get(conc_data))
        .route("/net/api/xhr", get(xhr_api))
        .route("/net/graphql", post(graphql))
        .route("/net/cached-page", get(|| async { html(CACHED_PAGE) }))
        .route("/net/cached", get(cached))
        .route("/net/sw-page", get(|| async { html(SW_PAGE) }))
        .route(
            "/net/sw.js",
            get(|| async { typed("text/javascript", SW_JS) }),
        )
        .route("/net/ws-page", get(|| async { html(WS_PAGE) }))
        .route("/net/ws", get(ws))
        .route("/net/sse-page", get(|| async { html(SSE_PAGE) }))
        .route("/net/sse", get(sse))
        .route("/net/big-page", get(|| async { html(BIG_PAGE) }))
        .route("/net/big-bin", get(big_bin))
}

fn typed(content_type: &str, body: impl Into<Body>) -> Resp {
    let mut r = Response::new(body.into());
    if let Ok(v) = content_type.parse() {
        r.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    r
}

fn html(body: &'static str) -> Resp {
    typed("text/html; charset=utf-8", body)
}

fn redirect(status: u16, location: &str) -> Resp {
    Response::builder()
        .status(status)
        .header(header::LOCATION, location)
        .body(Body::empty())
        .unwrap()
}

const REDIRECT_FINAL: &str =
    "<!doctype html><title>Redirect final</title><p>the end of the redirect chain</p>";

const XHR_PAGE: &str = r#"<!doctype html><title>XHR</title><p id="s">loading</p><script>
document.cookie = "sid=cookie-secret-1; path=/";
const jobs = [];
for (let i = 0; i < 17; i++) jobs.push(fetch('/net/api/item?n=' + i).then(r => r.json()));
jobs.push(new Promise(done => {
  const x = new XMLHttpRequest();
  x.open('GET', '/net/api/xhr');
  x.setRequestHeader('Authorization', 'Bearer auth-secret-2');
  x.setRequestHeader('X-Api-Token', 'token-secret-3');
  x.onloadend = done;
  x.send();
}));
jobs.push(fetch('/net/graphql', {method: 'POST', headers: {'content-type': 'application/json'},
  body: JSON.stringify({operationName: 'AddItem',
    query: 'mutation AddItem($name: String!) { addItem(name: $name) { id } }',
    variables: {name: 'apple'}})}).then(r => r.json()));
jobs.push(fetch('/drop').then(r => r.arrayBuffer()));
Promise.allSettled(jobs).then(() => { document.getElementById('s').textContent = 'all settled'; });
</script>"#;

async fn item(RawQuery(q): RawQuery) -> Resp {
    let n = super::routes::query_value(q.as_deref(), "n").unwrap_or_default();
    typed(
        "application/json",
        serde_json::json!({"item": n}).to_string(),
    )
}

async fn xhr_api() -> Resp {
    let mut r = typed("application/json", r#"{"xhr":true}"#);
    r.headers_mut().insert(
        header::SET_COOKIE,
        header::HeaderValue::from_static("srv=set-cookie-secret-4; Path=/"),
    );
    r
}

async fn graphql() -> Resp {
    typed("application/json", r#"{"data":{"addItem":{"id":"7"}}}"#)
}

const CACHED_PAGE: &str = r#"<!doctype html><title>Cached</title><p id="s">loading</p><script>
fetch('/net/cached').then(r => r.text()).then(() => fetch('/net/cached')).then(r => r.text())
  .then(() => { document.getElementById('s').textContent = 'fetched twice'; });
</script>"#;

async fn cached() -> Resp {
    let mut r = typed("text/plain", "cacheable body");
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("public, max-age=3600"),
    );
    r
}

const SW_PAGE: &str = r#"<!doctype html><title>SW</title><p id="s">loading</p><script>
(async () => {
  await navigator.serviceWorker.register('/net/sw.js', {scope: '/net/'});
  await navigator.serviceWorker.ready;
  if (!navigator.serviceWorker.controller) {
    await new Promise(r => navigator.serviceWorker.addEventListener('controllerchange', r));
  }
  const a = await (await fetch('/net/sw-data')).json();
  await (await fetch('/net/api/item?n=sw')).json();
  document.getElementById('s').textContent = 'sw says ' + a.from;
})().catch(e => { document.getElementById('s').textContent = 'sw failed ' + e; });
</script>"#;

const SW_JS: &str = r#"
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', e => e.waitUntil(self.clients.claim()));
self.addEventListener('fetch', e => {
  if (new URL(e.request.url).pathname === '/net/sw-data') {
    e.respondWith(new Response('{"from":"worker"}', {headers: {'content-type': 'application/json'}}));
  } else {
    e.respondWith(fetch(e.request));
  }
});
"#;

const WS_PAGE: &str = r#"<!doctype html><title>WS</title><p id="s">connecting</p><script>
const ws = new WebSocket('ws://' + location.host + '/net/ws');
let got = 0;
ws.onopen = () => { ws.send('hello-1'); ws.send('hello-2'); };
ws.onmessage = m => { if (++got === 2) document.getElementById('s').textContent = 'echoed ' + m.data; };
</script>"#;

async fn ws(up: WebSocketUpgrade) -> impl IntoResponse {
    up.on_upgrade(echo)
}

async fn echo(mut socket: WebSocket) {
    while let Some(Ok(msg)) = socket.recv().await {
        if let Message::Text(t) = msg {
            let reply = format!("echo:{}", t.as_str());
            if socket.send(Message::Text(reply.into())).await.is_err() {
                return;
            }
        }
    }
}

const SSE_PAGE: &str = r#"<!doctype html><title>SSE</title><p id="s">waiting</p><script>
const es = new EventSource('/net/sse');
let n = 0;
es.onmessage = m => { if (++n === 3) document.getElementById('s').textContent = 'got ' + m.data; };
</script>"#;

async fn sse() -> impl IntoResponse {
    let ticks = stream::iter(1..=3).then(|i| async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        Ok::<_, Infallible>(Event::default().id(i.to_string()).data(format!("tick-{i}")))
    });
    // Stay open, as real event streams do.
    Sse::new(ticks.chain(stream::pending()))
}

const BIG_PAGE: &str = r#"<!doctype html><title>Big</title><p id="s">loading</p><script>
const x = new XMLHttpRequest();
x.open('GET', '/net/big-bin');
x.responseType = 'arraybuffer';
x.onload = () => { document.getElementById('s').textContent = 'loaded ' + x.response.byteLength; };
x.send();
</script>"#;

async fn big_bin() -> Resp {
    // 0xff never occurs in UTF-8, so the body cannot be mistaken for text.
    let chunk = Bytes::from(vec![0xff_u8; 1000 * 1000]);
    let s = stream::iter(
        (0..BIG_BIN_BYTES / chunk.len()).map(move |_| Ok::<_, Infallible>(chunk.clone())),
    );
    let mut r = typed("application/octet-stream", Body::from_stream(s));
    r.headers_mut()
        .insert(header::CONTENT_LENGTH, BIG_BIN_BYTES.into());
    r
}

async fn conc_page(axum::extract::Path(n): axum::extract::Path<u32>) -> Resp {
    typed(
        "text/html; charset=utf-8",
        format!(
            "<!doctype html><title>conc {n}</title><p id=s>loading</p><script>\
         console.log('page {n}');\
         setTimeout(() => fetch('/net/conc/{n}/data').then(r => r.text())\
           .then(t => {{ document.getElementById('s').textContent = t; }}), 150);\
         </script>"
        ),
    )
}

async fn conc_data(axum::extract::Path(n): axum::extract::Path<u32>) -> Resp {
    tokio::time::sleep(Duration::from_millis(100)).await;
    typed("text/plain", format!("data {n}"))
}
