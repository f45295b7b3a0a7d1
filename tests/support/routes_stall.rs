//! Pages whose third parties stall (tests/stall.rs), all under `/stall/`. `hang=HOST` is a
//! host that accepts and never answers (`HangServer`, 127.0.0.2); `third=HOST` is a second
//! fixture server on another site (127.0.0.2) that answers `/stall/slow.js` late. Each page
//! writes marker text the test looks for in `text.txt`.
//!
//! - `/stall/head?hang=H`: a parser-blocking `<script src>` on H in `<head>`; the body
//!   (`stall-head-page`, `after-head-script`) only exists once it is past.
//! - `/stall/mid?hang=H`: `before-mid-script`, a parser-blocking script on H, then
//!   `after-mid-script`.
//! - `/stall/css?hang=H`: a stylesheet on H in `<head>`, then an inline script (which waits
//!   for the stylesheet, and so does the parser); `after-stylesheet` in the body.
//! - `/stall/iframe?hang=H`: `iframe-page`, an iframe on H, `after-iframe`.
//! - `/stall/late?third=H&ms=N`: `before-late-script`, a parser-blocking script on H that
//!   answers after N ms (it writes `late-script-ran`), then `after-late-script`.
//! - `/stall/first-slow?ms=N`: `before-slow-first-party`, the page's own parser-blocking
//!   script answering after N ms (it writes `slow-script-ran`), `after-slow-first-party`.
//! - `/stall/shell?hang=H`: a parser-blocking script on H in `<head>`; the served body has no
//!   text, a later inline script writes `shell-rendered`.
//! - `/stall/chain?hang=H&next=N`: `before-chain`, a parser-blocking script on H, then an
//!   inline script that writes a parser-blocking script on N (a chain: N is only asked for
//!   once H is past), then `after-chain`.
//! - `/stall/pair?hang=H&next=N`: a parser-blocking script on H in `<head>`; `before-pair`,
//!   an image on H (it takes the low-priority slot while the head script is pending), an
//!   async script on N, `after-pair` (both hosts named in the markup).
//! - `/stall/img?hang=H`: `img-page`, an image on H, `after-img`.
//! - `/stall/slow.js?ms=N`: a script answering after N ms.

use std::collections::HashMap;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Query;
use axum::http::{header, Response};
use axum::routing::get;
use axum::Router;

type Resp = Response<Body>;

/// The `/stall/*` routes, merged into the shared fixture router.
pub fn router() -> Router {
    Router::new()
        .route("/stall/head", get(head))
        .route("/stall/mid", get(mid))
        .route("/stall/css", get(css))
        .route("/stall/iframe", get(iframe))
        .route("/stall/late", get(late))
        .route("/stall/first-slow", get(first_slow))
        .route("/stall/shell", get(shell))
        .route("/stall/pair", get(pair))
        .route("/stall/chain", get(chain))
        .route("/stall/img", get(img))
        .route("/stall/slow.js", get(slow_js))
}

fn param(q: &HashMap<String, String>, key: &str, default: &str) -> String {
    q.get(key).cloned().unwrap_or_else(|| default.into())
}

async fn head(Query(q): Query<HashMap<String, String>>) -> Resp {
    let h = param(&q, "hang", "127.0.0.2:9");
    html(format!(
        "<!doctype html><html><head><title>Stalled head script</title>\
         <script src=\"http://{h}/head.js\"></script></head>\
         <body><p>stall-head-page</p><p>after-head-script</p></body></html>"
    ))
}

async fn mid(Query(q): Query<HashMap<String, String>>) -> Resp {
    let h = param(&q, "hang", "127.0.0.2:9");
    html(format!(
        "<!doctype html><title>Stalled mid script</title><p>before-mid-script</p>\
         <script src=\"http://{h}/mid.js\"></script><p>after-mid-script</p>"
    ))
}

async fn css(Query(q): Query<HashMap<String, String>>) -> Resp {
    let h = param(&q, "hang", "127.0.0.2:9");
    html(format!(
        "<!doctype html><html><head><title>Stalled stylesheet</title>\
         <link rel=stylesheet href=\"http://{h}/style.css\">\
         <script>document.documentElement.setAttribute('data-ran','1');</script></head>\
         <body><p>after-stylesheet</p></body></html>"
    ))
}

async fn iframe(Query(q): Query<HashMap<String, String>>) -> Resp {
    let h = param(&q, "hang", "127.0.0.2:9");
    html(format!(
        "<!doctype html><title>Stalled iframe</title><p>iframe-page</p>\
         <iframe src=\"http://{h}/frame.html\" width=300 height=100></iframe><p>after-iframe</p>"
    ))
}

async fn img(Query(q): Query<HashMap<String, String>>) -> Resp {
    let h = param(&q, "hang", "127.0.0.2:9");
    html(format!(
        "<!doctype html><title>Stalled image</title><p>img-page</p>\
         <img src=\"http://{h}/pixel.png\" width=10 height=10><p>after-img</p>"
    ))
}

async fn late(Query(q): Query<HashMap<String, String>>) -> Resp {
    let h = param(&q, "third", "127.0.0.2:9");
    let ms = param(&q, "ms", "2500");
    html(format!(
        "<!doctype html><title>Late third party</title><p>before-late-script</p>\
         <script src=\"http://{h}/stall/slow.js?ms={ms}\"></script><p>after-late-script</p>"
    ))
}

async fn first_slow(Query(q): Query<HashMap<String, String>>) -> Resp {
    let ms = param(&q, "ms", "1800");
    html(format!(
        "<!doctype html><title>Slow first party</title><p>before-slow-first-party</p>\
         <script src=\"/stall/slow.js?ms={ms}\"></script><p>after-slow-first-party</p>"
    ))
}

async fn chain(Query(q): Query<HashMap<String, String>>) -> Resp {
    let h = param(&q, "hang", "127.0.0.2:9");
    let next = param(&q, "next", "127.0.0.2:10");
    html(format!(
        "<!doctype html><title>Stalled chain</title><p>before-chain</p>\
         <script src=\"http://{h}/first.js\"></script>\
         <script>document.write('<script src=\"http://{next}/second.js\"><\\/script>')</script>\
         <p>after-chain</p>"
    ))
}

async fn pair(Query(q): Query<HashMap<String, String>>) -> Resp {
    let h = param(&q, "hang", "127.0.0.2:9");
    let next = param(&q, "next", "127.0.0.2:10");
    html(format!(
        "<!doctype html><html><head><title>Stalled pair</title>\
         <script src=\"http://{h}/first.js\"></script></head><body><p>before-pair</p>\
         <img src=\"http://{h}/pixel.gif\"><script async src=\"http://{next}/second.js\"></script><p>after-pair</p></body></html>"
    ))
}

async fn shell(Query(q): Query<HashMap<String, String>>) -> Resp {
    let h = param(&q, "hang", "127.0.0.2:9");
    html(format!(
        "<!doctype html><html><head><title></title>\
         <script src=\"http://{h}/app.js\"></script></head><body><div id=app></div>\
         <script>document.getElementById('app').textContent='shell-rendered';</script>\
         </body></html>"
    ))
}

/// A script that answers after `ms` and writes `slow-script-ran` (or `late-script-ran` when
/// served to another site's page) where it runs.
async fn slow_js(Query(q): Query<HashMap<String, String>>) -> Resp {
    let ms: u64 = param(&q, "ms", "1000").parse().unwrap_or(1000);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    Response::builder()
        .header(header::CONTENT_TYPE, "text/javascript")
        .body(Body::from(
            "document.write(location.pathname.indexOf('/stall/late')===0\
             ?'<p>late-script-ran</p>':'<p>slow-script-ran</p>');",
        ))
        .unwrap()
}

fn html(body: String) -> Resp {
    Response::builder()
        .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
        .body(Body::from(body))
        .unwrap()
}
