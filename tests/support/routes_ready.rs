//! Readiness fixture pages (tests/readiness.rs), all under `/ready/`. Each writes marker
//! text the test looks for in `text.txt`.
//!
//! - `/ready/timers`: `timer-50`, `timer-300`, `timer-900` appear after 50, 300, 900 ms.
//! - `/ready/xhr-chain`: three chained XHRs (`/ready/api/step/{n}`, 80 ms each), then
//!   `chain-done-3`.
//! - `/ready/raf-fetch`: a fetch started inside `requestAnimationFrame`, then `raf-fetch-done`.
//! - `/ready/lazy-image`: `lazy-image-page` over a tall spacer and a lazy image below the fold.
//! - `/ready/poll`: a fetch every 2 s forever; `poll-count-N` after each.
//! - `/ready/animation`: a CSS animation and a `requestAnimationFrame` loop that moves an
//!   element (style only) forever; `animated-page`.
//! - `/ready/websocket`: a WebSocket to `/net/ws` that stays open; `ws-echo:hello` once the
//!   echo came back.
//! - `/ready/never-idle`: the text changes every 100 ms forever (`never-idle-page`,
//!   `tick-N`).
//! - `/ready/sliced`: after a fetch, eight 10 ms slices of work handed on through a
//!   MessageChannel (a scheduler like React's), with no DOM change until the last writes
//!   `sliced-render-done`.
//! - `/ready/ws-slow`: a WebSocket to `/ready/ws-slow-echo`, whose handshake is answered after
//!   300 ms and whose echo comes 300 ms after the message; `ws-slow:hi` once it arrives.
//! - `/ready/third-party?hang=HOST`: third-party image, async script and beacon on HOST
//!   (which never answers); `third-party-page`.
//! - `/ready/blocking?hang=HOST`: the same plus a parser-blocking `<script src>` on HOST:
//!   `before-blocking-script` is parsed, `after-blocking-script` never is.
//! - `/ready/identity`: `identity {json}` with navigator.userAgent, webdriver and client hints.
//! - `/ready/stuck-image?hang=HOST`: one third-party image that never loads, so the load event
//!   never fires; `stuck-image-page`.
//! - `/ready/workers`: a dedicated worker, a shared worker and a service worker each fetch
//!   `/ready/ua/{worker,shared-worker,service-worker}` (the test reads the User-Agent the
//!   server received); `workers-done` once all three answered.

use std::collections::HashMap;
use std::time::Duration;

use axum::body::Body;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, Query};
use axum::http::{header, Response};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

type Resp = Response<Body>;

const TIMERS: &str = "<!doctype html><title>Timers</title><p>timers-page</p><div id=t></div>\
<script>[50,300,900].forEach(function(ms){setTimeout(function(){var p=document.createElement('p');\
p.textContent='timer-'+ms;document.getElementById('t').appendChild(p);},ms);});</script>";

const XHR_CHAIN: &str = "<!doctype html><title>XHR chain</title><p id=s>chain-start</p><script>\
function step(n){var x=new XMLHttpRequest();x.open('GET','/ready/api/step/'+n);\
x.onload=function(){var d=JSON.parse(x.responseText);\
if(d.n<3){step(d.n+1);}else{document.getElementById('s').textContent='chain-done-'+d.n;}};x.send();}\
step(1);</script>";

const RAF_FETCH: &str = "<!doctype html><title>rAF fetch</title><p id=s>raf-waiting</p><script>\
requestAnimationFrame(function(){fetch('/ready/api/step/1').then(function(r){return r.json();})\
.then(function(d){document.getElementById('s').textContent='raf-fetch-done';});});</script>";

const LAZY_IMAGE: &str = "<!doctype html><title>Lazy image</title><p>lazy-image-page</p>\
<div style=\"height:5000px\"></div><img loading=lazy src=\"/image.png\" width=10 height=10 alt=lazy>";

const POLL: &str = "<!doctype html><title>Poll</title><p id=s>poll-waiting</p><script>\
var n=0;function poll(){fetch('/ready/api/step/1').then(function(r){return r.json();})\
.then(function(){n++;document.getElementById('s').textContent='poll-count-'+n;});}\
poll();setInterval(poll,2000);</script>";

const ANIMATION: &str = "<!doctype html><title>Animation</title><style>\
@keyframes spin{from{transform:rotate(0)}to{transform:rotate(360deg)}}\
#a{width:40px;height:40px;background:#c33;animation:spin 1s linear infinite}</style>\
<p>animated-page</p><div id=a></div><div id=b style=\"position:relative\">moving</div><script>\
var x=0;function frame(){x=(x+1)%200;document.getElementById('b').style.left=x+'px';\
requestAnimationFrame(frame);}requestAnimationFrame(frame);</script>";

const WEBSOCKET: &str = "<!doctype html><title>WebSocket</title><p id=s>ws-waiting</p><script>\
var ws=new WebSocket('ws://'+location.host+'/net/ws');ws.onopen=function(){ws.send('hello');};\
ws.onmessage=function(m){document.getElementById('s').textContent='ws-'+m.data;};</script>";

const NEVER_IDLE: &str = "<!doctype html><title>Never idle</title><p>never-idle-page</p>\
<p id=s>tick-0</p><script>var n=0;(function tick(){n++;\
document.getElementById('s').textContent='tick-'+n;setTimeout(tick,100);})();</script>";

const SLICED: &str = "<!doctype html><title>Sliced render</title><p>sliced-page</p>\
<p id=s>sliced-waiting</p><script>fetch('/ready/api/step/1').then(function(r){return r.json();})\
.then(function(){var ch=new MessageChannel(),left=8;ch.port1.onmessage=function(){\
var t=performance.now();while(performance.now()-t<10){}\
if(--left>0){ch.port2.postMessage(0);}else{document.getElementById('s').textContent='sliced-render-done';}};\
ch.port2.postMessage(0);});</script>";

const WS_SLOW: &str = "<!doctype html><title>Slow WebSocket</title><p>ws-slow-page</p>\
<p id=s>ws-slow-waiting</p><script>\
var ws=new WebSocket('ws://'+location.host+'/ready/ws-slow-echo');ws.onopen=function(){ws.send('hi');};\
ws.onmessage=function(m){document.getElementById('s').textContent='ws-slow:'+m.data;};</script>";

/// The handshake answered after 300 ms, each text frame echoed 300 ms later.
async fn ws_slow_echo(up: WebSocketUpgrade) -> Resp {
    tokio::time::sleep(Duration::from_millis(300)).await;
    up.on_upgrade(|mut socket: WebSocket| async move {
        while let Some(Ok(msg)) = socket.recv().await {
            if let Message::Text(t) = msg {
                tokio::time::sleep(Duration::from_millis(300)).await;
                if socket.send(Message::Text(t)).await.is_err() {
                    return;
                }
            }
        }
    })
    .into_response()
}

/// `/ready/identity`: the page writes `identity {json}` with what it sees of itself.
const IDENTITY: &str = "<!doctype html><title>Identity</title><p id=s>identity-waiting</p><script>\
(async function(){var d=navigator.userAgentData;var he=null;\
if(d){he=await d.getHighEntropyValues(['fullVersionList','platform']);}\
document.getElementById('s').textContent='identity '+JSON.stringify({ua:navigator.userAgent,\
webdriver:navigator.webdriver,brands:d?d.brands:null,full:he?he.fullVersionList:null,\
platform:he?he.platform:null});})();</script>";

const WORKERS: &str = "<!doctype html><title>Workers</title><p id=s>workers:</p><script>\
var seen={};function got(w){if(seen[w])return;seen[w]=1;var s=document.getElementById('s');\
s.textContent+=' '+w;if(Object.keys(seen).length==3){var d=document.createElement('p');\
d.id='done';d.textContent='workers-done';document.body.appendChild(d);}}\
new Worker('/ready/worker.js').onmessage=function(){got('worker');};\
var sh=new SharedWorker('/ready/shared-worker.js');sh.port.onmessage=function(){got('shared-worker');};\
sh.port.start();navigator.serviceWorker.onmessage=function(){got('service-worker');};\
navigator.serviceWorker.register('/ready/sw.js');</script>";

const WORKER_JS: &str = "fetch('/ready/ua/worker').then(function(){postMessage('ok');});";

const SHARED_WORKER_JS: &str = "onconnect=function(e){var p=e.ports[0];\
fetch('/ready/ua/shared-worker').then(function(){p.postMessage('ok');});};";

const SERVICE_WORKER_JS: &str = "self.addEventListener('install',function(){self.skipWaiting();});\
self.addEventListener('activate',function(e){e.waitUntil(self.clients.claim()\
.then(function(){return fetch('/ready/ua/service-worker');})\
.then(function(){return self.clients.matchAll();})\
.then(function(cs){cs.forEach(function(c){c.postMessage('ok');});}));});";

/// The `/ready/*` routes, merged into the shared fixture router.
pub fn router() -> Router {
    Router::new()
        .route("/ready/timers", get(|| async { html(TIMERS.into()) }))
        .route("/ready/xhr-chain", get(|| async { html(XHR_CHAIN.into()) }))
        .route("/ready/raf-fetch", get(|| async { html(RAF_FETCH.into()) }))
        .route(
            "/ready/lazy-image",
            get(|| async { html(LAZY_IMAGE.into()) }),
        )
        .route("/ready/poll", get(|| async { html(POLL.into()) }))
        .route("/ready/animation", get(|| async { html(ANIMATION.into()) }))
        .route("/ready/websocket", get(|| async { html(WEBSOCKET.into()) }))
        .route(
            "/ready/never-idle",
            get(|| async { html(NEVER_IDLE.into()) }),
        )
        .route("/ready/sliced", get(|| async { html(SLICED.into()) }))
        .route("/ready/ws-slow", get(|| async { html(WS_SLOW.into()) }))
        .route("/ready/ws-slow-echo", get(ws_slow_echo))
        .route("/ready/third-party", get(third_party))
        .route("/ready/blocking", get(blocking))
        .route("/ready/stuck-image", get(stuck_image))
        .route("/ready/identity", get(|| async { html(IDENTITY.into()) }))
        .route("/ready/api/step/{n}", get(step))
        .route("/ready/workers", get(|| async { html(WORKERS.into()) }))
        .route("/ready/worker.js", get(|| async { js(WORKER_JS) }))
        .route(
            "/ready/shared-worker.js",
            get(|| async { js(SHARED_WORKER_JS) }),
        )
        .route("/ready/sw.js", get(|| async { js(SERVICE_WORKER_JS) }))
        .route("/ready/ua/{who}", get(|| async { js("ok") }))
}

fn hang(q: &HashMap<String, String>) -> String {
    q.get("hang")
        .cloned()
        .unwrap_or_else(|| "127.0.0.2:9".into())
}

/// Third-party image, async script and beacon, all on the hanging host.
fn third_party_tags(h: &str) -> String {
    format!(
        "<img src=\"http://{h}/pixel.png\" width=1 height=1 alt=\"\">\
         <script async src=\"http://{h}/tag.js\"></script>\
         <script>navigator.sendBeacon('http://{h}/beacon','x');</script>"
    )
}

async fn third_party(Query(q): Query<HashMap<String, String>>) -> Resp {
    let h = hang(&q);
    html(format!(
        "<!doctype html><title>Third parties</title><p>third-party-page</p>{}",
        third_party_tags(&h)
    ))
}

async fn blocking(Query(q): Query<HashMap<String, String>>) -> Resp {
    let h = hang(&q);
    html(format!(
        "<!doctype html><title>Blocked parser</title><p>before-blocking-script</p>{}\
         <script src=\"http://{h}/blocking.js\"></script><p>after-blocking-script</p>",
        third_party_tags(&h)
    ))
}

async fn stuck_image(Query(q): Query<HashMap<String, String>>) -> Resp {
    let h = hang(&q);
    html(format!(
        "<!doctype html><title>Stuck image</title><p>stuck-image-page</p>\
         <img src=\"http://{h}/big.png\" width=1 height=1 alt=\"\">"
    ))
}

/// `{"n": N}` after 80 ms (a request the page waits on).
async fn step(Path(n): Path<u32>) -> Resp {
    tokio::time::sleep(Duration::from_millis(80)).await;
    Response::builder()
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(format!("{{\"n\":{n}}}")))
        .unwrap()
}

fn html(body: String) -> Resp {
    Response::builder()
        .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
        .body(Body::from(body))
        .unwrap()
}

fn js(body: &'static str) -> Resp {
    Response::builder()
        .header(header::CONTENT_TYPE, "text/javascript")
        .body(Body::from(body))
        .unwrap()
}
