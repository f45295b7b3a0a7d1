//! Fixture pages for `observation.json` (tests/observation.rs), all under `/obs/`.
//!
//! `/obs/many` (200 buttons), `/obs/scan` (2,500 plain elements, then a button),
//! `/obs/secrets` (password and other values, prefilled and set by script), `/obs/shadow`
//! (controls in an open shadow root), `/obs/frame` and `/obs/frame-inner` (a same-origin
//! iframe at a known offset), `/obs/cross?port=P` (an iframe from `127.0.0.1:P`, another
//! origin), `/obs/form` (form, states, pointer div, focus), `/obs/names` (accessible names on
//! a sign-in-like page), `/obs/weird` (hostile markup and replaced builtins), `/obs/plain` (a title, no controls), `/obs/blank` (no title, no controls).

use axum::body::Body;
use axum::extract::RawQuery;
use axum::http::{header, Response};
use axum::routing::get;
use axum::Router;

use super::routes::query_value;

/// The prefilled password (the `value` attribute of `/obs/secrets`).
pub const PREFILLED_SECRET: &str = "Prefilled-Pw-7Q2x";
/// The value a script types into a field of `/obs/secrets` at load.
pub const TYPED_SECRET: &str = "Typed-Secret-K9m4";
/// The default content of the textarea of `/obs/secrets`.
pub const TEXTAREA_SECRET: &str = "Textarea-Secret-P3v8";
/// What a script writes into the contenteditable region of `/obs/secrets`.
pub const EDITABLE_SECRET: &str = "Editable-Secret-W5n1";

/// `/obs/editable`: an unlabelled contenteditable region with text, and a labelled one.
pub const EDITABLE: &str = "<!doctype html><title>Editable</title>\
<div id=\"draft\" contenteditable=\"true\">Draft of the <b>weekly</b> note</div>\
<div id=\"labelled\" contenteditable=\"true\" aria-label=\"Body\">kept out of the name</div>";

/// The `/obs/*` routes, merged into the shared fixture router.
pub fn router() -> Router {
    Router::new()
        .route("/obs/many", get(|| async { html(many()) }))
        .route("/obs/editable", get(|| async { html(EDITABLE) }))
        .route("/obs/scan", get(|| async { html(scan()) }))
        .route("/obs/secrets", get(|| async { html(secrets()) }))
        .route("/obs/shadow", get(|| async { html(SHADOW) }))
        .route("/obs/frame", get(|| async { html(FRAME) }))
        .route("/obs/frame-inner", get(|| async { html(FRAME_INNER) }))
        .route("/obs/cross", get(cross))
        .route("/obs/form", get(|| async { html(FORM) }))
        .route("/obs/names", get(|| async { html(NAMES) }))
        .route("/obs/weird", get(|| async { html(WEIRD) }))
        .route(
            "/obs/plain",
            get(|| async { html("<!doctype html><title>Plain</title><p>Only prose.</p>") }),
        )
        .route(
            "/obs/blank",
            get(|| async { html("<!doctype html><p>Only prose.</p>") }),
        )
}

fn html(body: impl Into<Body>) -> Response<Body> {
    Response::builder()
        .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
        .body(body.into())
        .unwrap()
}

fn many() -> String {
    let buttons: String = (1..=200)
        .map(|i| format!("<button id=\"b{i}\">Button {i}</button>\n"))
        .collect();
    format!("<!doctype html><title>Many</title><body>{buttons}</body>")
}

fn scan() -> String {
    let spans = "<span>x</span>".repeat(2500);
    format!("<!doctype html><title>Scan</title><body><div>{spans}</div><button id=\"late\">Late</button></body>")
}

fn secrets() -> String {
    format!(
        "<!doctype html><title>Secrets</title>\
<form action=\"/echo\" method=\"post\">\
<label for=\"pw\">Password</label><input id=\"pw\" name=\"pw\" type=\"password\" value=\"{PREFILLED_SECRET}\">\
<label>Typed <input id=\"typed\" type=\"password\"></label>\
<textarea id=\"note\" aria-label=\"Note\">{TEXTAREA_SECRET}</textarea>\
<div id=\"ed\" contenteditable=\"true\" aria-label=\"Editor\"></div>\
<input id=\"empty\" type=\"text\" aria-label=\"Empty\">\
<button type=\"submit\">Send</button></form>\
<script>document.getElementById('typed').value='{TYPED_SECRET}';\
document.getElementById('ed').textContent='{EDITABLE_SECRET}';</script>"
    )
}

/// A shadow host `#widget` holding a button and a field, and two hosts without ids whose roots
/// hold a nested and a top-level button (the top one has no selector unique in its root).
const SHADOW: &str = "<!doctype html><title>Shadow</title>\
<div id=\"widget\"></div><div class=\"twin\"></div><div class=\"twin\"></div>\
<script>\
document.getElementById('widget').attachShadow({mode:'open'}).innerHTML=\
'<button id=\"inner-go\">Shadow go</button><input placeholder=\"Shadow field\">';\
document.querySelectorAll('.twin').forEach(function(h){\
h.attachShadow({mode:'open'}).innerHTML='<div><button>Nested</button></div><button>Twin</button>';});\
</script>";

/// The iframe's content box starts at (70, 130): left 60 + border 4 + padding 6, and so on.
const FRAME: &str = "<!doctype html><title>Framed</title><body style=\"margin:0\">\
<button id=\"outside\">Outside</button>\
<iframe id=\"child\" src=\"/obs/frame-inner\" title=\"Child frame\" style=\"position:absolute;\
left:60px;top:120px;width:400px;height:200px;border:4px solid #000;padding:6px\"></iframe>\
</body>";

/// The button sits at (10, 20) inside its frame.
const FRAME_INNER: &str = "<!doctype html><title>Inner</title><body style=\"margin:0\">\
<button id=\"inner-btn\" style=\"position:absolute;left:10px;top:20px;width:80px;height:30px\">\
Inner button</button><a href=\"/static\">Inner link</a></body>";

async fn cross(RawQuery(q): RawQuery) -> Response<Body> {
    let port = query_value(q.as_deref(), "port").unwrap_or_default();
    html(format!(
        "<!doctype html><title>Cross</title><body style=\"margin:0\">\
<button>Top button</button>\
<iframe id=\"other\" src=\"http://127.0.0.1:{port}/obs/frame-inner\" title=\"Other origin\" \
style=\"position:absolute;left:30px;top:80px;width:300px;height:150px;border:0\"></iframe></body>"
    ))
}

/// A form with owned controls (one outside it via `form=`), states, a pointer div, focus.
const FORM: &str = "<!doctype html><title>Form</title><body>\
<form id=\"order\" action=\"/echo?x=1\" method=\"post\">\
<input id=\"q\" name=\"q\" aria-label=\"Query\">\
<input id=\"agree\" type=\"checkbox\" checked aria-label=\"Agree\">\
<input id=\"news\" type=\"checkbox\" aria-label=\"News\">\
<select id=\"size\" aria-label=\"Size\"><option>Small</option><option selected>Medium</option>\
<option>Large</option></select>\
<button id=\"go\" type=\"submit\">Order</button>\
<button id=\"off\" type=\"button\" disabled>Unavailable</button>\
</form>\
<input id=\"outside\" form=\"order\" name=\"extra\" aria-label=\"Extra\">\
<form id=\"second\"><input aria-label=\"Second field\"></form>\
<div id=\"card\" style=\"cursor:pointer\"><span>Card title</span> <span>inherits</span></div>\
<div>not clickable</div>\
<a href=\"/static\">Static link</a>\
<details><summary>More</summary><p>hidden detail</p></details>\
<script>document.getElementById('q').focus();</script></body>";

/// A page that looks like a sign-in screen: names come from the markup, nothing is inferred.
const NAMES: &str = "<!doctype html><title>Welcome back</title><body>\
<h1>Sign in to continue</h1>\
<form action=\"/echo\" method=\"post\">\
<span id=\"user-caption\">Your handle</span>\
<input id=\"user\" name=\"user\" aria-labelledby=\"user-caption\" aria-label=\"ignored\">\
<label>Secret phrase <input id=\"phrase\" type=\"password\" placeholder=\"ignored too\"></label>\
<input id=\"ph\" placeholder=\"Placeholder only\">\
<input id=\"ti\" title=\"Title only\">\
<label><input id=\"human\" type=\"checkbox\"> Verify you are human</label>\
<button type=\"submit\" class=\"primary\">Sign in</button>\
</form>\
<a href=\"/static\"><img src=\"/image.png\" alt=\"Logo alt\"></a>\
<input type=\"submit\" value=\"Value label\">\
<a href=\"/forgot\">Forgot your password?</a>\
</body>";

/// Controls that shadow form properties, ids that need escaping, an SVG link, builtins the
/// page replaced, and one button whose geometry throws.
const WEIRD: &str = "<!doctype html><title>Weird</title><body>\
<form id=\"w\" action=\"/echo\" method=\"post\"><input name=\"action\" aria-label=\"Action field\">\
<input name=\"method\" aria-label=\"Method field\"><input name=\"id\" aria-label=\"Id field\"></form>\
<img name=\"title\" src=\"/image.png\" alt=\"\">\
<button id=\"1st\">Digit id</button><button id='quote\"d x'>Quoted id</button>\
<svg width=\"100\" height=\"30\"><a href=\"/static\"><text x=\"0\" y=\"20\">SVG link</text></a></svg>\
<script>\
var b=document.createElement('button');b.textContent='Throws';\
b.getBoundingClientRect=function(){throw new Error('no geometry');};document.body.appendChild(b);\
['map','forEach','slice','concat','indexOf','filter'].forEach(function(m){\
Array.prototype[m]=function(){throw new Error('replaced '+m);};});\
window.CSS=null;window.Map=function(){throw new Error('no Map');};\
</script></body>";
