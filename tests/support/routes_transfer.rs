//! Fixture pages for tests/transfer.rs, all under `/transfer/`.
//!
//! `/transfer/file?size=N&name=X` (an attachment of N deterministic bytes, see
//! [`file_bytes`]), `/transfer/input` (a file input that writes `name|size|sum` of the chosen
//! file into `#shown`, plus a text input), `/transfer/shadow` (the same input inside an open
//! shadow root of `#host`), `/transfer/frame` (a same-origin iframe `#f` holding
//! `/transfer/input`).

use axum::body::Body;
use axum::extract::RawQuery;
use axum::http::{header, Response};
use axum::routing::get;
use axum::Router;

use super::routes::query_value;

/// The bytes `/transfer/file?size=N` serves: a pattern that covers every byte value.
pub fn file_bytes(size: usize) -> Vec<u8> {
    (0..size)
        .map(|i| ((i * 31 + i / 251) % 256) as u8)
        .collect()
}

/// What the input pages show for a file: `name|size|sum of bytes mod 2^32`.
pub fn shown(name: &str, bytes: &[u8]) -> String {
    let sum = bytes
        .iter()
        .fold(0u32, |acc, b| acc.wrapping_add(u32::from(*b)));
    format!("{name}|{}|{sum}", bytes.len())
}

/// The `/transfer/*` routes, merged into the shared fixture router.
pub fn router() -> Router {
    Router::new()
        .route("/transfer/file", get(file))
        .route("/transfer/input", get(|| async { html(INPUT) }))
        .route("/transfer/shadow", get(|| async { html(SHADOW) }))
        .route("/transfer/frame", get(|| async { html(FRAME) }))
}

fn html(body: &'static str) -> Response<Body> {
    Response::builder()
        .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
        .body(Body::from(body))
        .unwrap()
}

async fn file(RawQuery(q): RawQuery) -> Response<Body> {
    let size = query_value(q.as_deref(), "size")
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    let name = query_value(q.as_deref(), "name").unwrap_or_else(|| "report.bin".into());
    Response::builder()
        .header(header::CONTENT_TYPE, "application/octet-stream")
        .header(
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{name}\""),
        )
        .body(Body::from(file_bytes(size)))
        .unwrap()
}

/// The script every input page uses: on change, show `name|size|sum` of the first file.
macro_rules! watch_script {
    () => {
        r#"<script>
function watch(input, out) {
  input.addEventListener('change', function () {
    var f = input.files[0];
    if (!f) { out.textContent = 'none'; return; }
    f.arrayBuffer().then(function (buf) {
      var bytes = new Uint8Array(buf), sum = 0;
      for (var i = 0; i < bytes.length; i++) { sum = (sum + bytes[i]) >>> 0; }
      out.textContent = f.name + '|' + f.size + '|' + sum;
    }, function (e) { out.textContent = 'error: ' + e; });
  });
}
</script>"#
    };
}

const INPUT: &str = concat!(
    "<!doctype html><title>Upload</title>",
    watch_script!(),
    r#"<form><input type="file" id="up" name="up"><input type="text" id="text"></form>
<output id="shown">empty</output>
<script>watch(document.getElementById('up'), document.getElementById('shown'));</script>"#
);

const SHADOW: &str = concat!(
    "<!doctype html><title>Upload in shadow</title>",
    watch_script!(),
    r#"<div id="host"></div><output id="shown">empty</output>
<script>
var root = document.getElementById('host').attachShadow({mode: 'open'});
root.innerHTML = '<label>Attach <input type="file" name="doc"></label>';
watch(root.querySelector('input'), document.getElementById('shown'));
</script>"#
);

const FRAME: &str = r#"<!doctype html><title>Upload in a frame</title>
<p>Outer page</p><iframe id="f" src="/transfer/input" width="400" height="200"></iframe>"#;
