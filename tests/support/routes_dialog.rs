//! Fixture pages that open JavaScript dialogs (tests/dialogs.rs), all under `/dialog/`.
//!
//! `/dialog/alert-load` (an `alert` in an inline script, during load: the load event waits
//! on it), `/dialog/confirm` and `/dialog/prompt` (after load, from a timer; each writes what
//! the dialog returned into the page), `/dialog/alert-late` (an `alert` from a 300 ms timer).

use axum::body::Body;
use axum::http::{header, Response};
use axum::routing::get;
use axum::Router;

/// `/dialog/alert-load`: the parser stops at the alert; the text after it only exists once
/// the alert was answered.
const ALERT_LOAD: &str = "<!doctype html><title>Alert at load</title><p>before the alert</p>\
<script>alert('alert-during-load');</script><p>after the alert</p>";

/// `/dialog/confirm`: confirm() from a timer after load; the answer goes into `#answer`.
const CONFIRM: &str = "<!doctype html><title>Confirm</title><p id=\"answer\">unanswered</p>\
<script>setTimeout(function(){var r=confirm('confirm-question');\
document.getElementById('answer').textContent='confirm returned '+r;},50);</script>";

/// `/dialog/prompt`: prompt() with a default; the answer goes into `#answer`.
const PROMPT: &str = "<!doctype html><title>Prompt</title><p id=\"answer\">unanswered</p>\
<script>setTimeout(function(){var r=prompt('prompt-question','prompt-default');\
document.getElementById('answer').textContent='prompt returned '+r;},50);</script>";

/// `/dialog/alert-late`: an alert 300 ms after the script runs.
const ALERT_LATE: &str = "<!doctype html><title>Late alert</title><p id=\"answer\">waiting</p>\
<script>setTimeout(function(){alert('late-alert');\
document.getElementById('answer').textContent='alert answered';},300);</script>";

/// The `/dialog/*` routes, merged into the shared fixture router.
pub fn router() -> Router {
    Router::new()
        .route("/dialog/alert-load", get(|| async { html(ALERT_LOAD) }))
        .route("/dialog/confirm", get(|| async { html(CONFIRM) }))
        .route("/dialog/prompt", get(|| async { html(PROMPT) }))
        .route("/dialog/alert-late", get(|| async { html(ALERT_LATE) }))
}

fn html(body: &'static str) -> Response<Body> {
    Response::builder()
        .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
        .body(Body::from(body))
        .unwrap()
}
