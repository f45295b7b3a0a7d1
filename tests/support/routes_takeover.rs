//! Fixture page for the takeover panel test (tests/takeover.rs): `/takeover-fixture/page`, a
//! solid colour block over a large text input, so a screenshot of the noVNC panel can be
//! checked by pixel and a click in the lower part of the screen lands in the input; and
//! `/takeover-fixture/gate`, the same page behind a captcha wall (403, a `g-recaptcha`
//! widget) that a human clears by typing the pass phrase into the field, which sets a cookie.

use axum::http::{header, HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

/// The block's colour, `(r, g, b)`.
pub const BLOCK_RGB: (u8, u8, u8) = (255, 0, 170);

/// The `/takeover-fixture/*` routes, merged into the shared fixture router.
pub fn router() -> Router {
    Router::new()
        .route("/takeover-fixture/page", get(page))
        .route("/takeover-fixture/gate", get(gate))
}

/// What the human types into the gate's field to pass it.
pub const GATE_PHRASE: &str = "open sesame";
/// A sentence only the page behind the gate has.
pub const GATE_CONTENT: &str = "The protected answer is 42.";

async fn page() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        block_page("", ""),
    )
}

async fn gate(headers: HeaderMap) -> impl IntoResponse {
    let passed = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.split(';').any(|c| c.trim() == "gate_passed=1"));
    let html_type = [(header::CONTENT_TYPE, "text/html; charset=utf-8")];
    if passed {
        let body = format!(
            "<!doctype html><html><head><title>behind the gate</title></head>\
             <body><h1>Welcome back</h1><p>{GATE_CONTENT}</p></body></html>"
        );
        return (StatusCode::OK, html_type, body);
    }
    let script = format!(
        "<script>document.getElementById('field').addEventListener('input', e => {{\
         if (e.target.value === '{GATE_PHRASE}') document.cookie = 'gate_passed=1; path=/'; }});</script>"
    );
    let body = block_page(
        r#"<p>Verify you are human to continue.</p><div class="g-recaptcha" data-sitekey="fixture"></div>"#,
        &script,
    );
    (StatusCode::FORBIDDEN, html_type, body)
}

/// The colour block (holding `widget`) over the text field, then `script`.
fn block_page(widget: &str, script: &str) -> String {
    let (r, g, b) = BLOCK_RGB;
    format!(
        r#"<!doctype html><html><head><title>takeover fixture</title><style>
html, body {{ margin: 0; padding: 0; overflow: hidden; }}
#block {{ height: 45vh; background: rgb({r}, {g}, {b}); }}
#field {{ box-sizing: border-box; display: block; width: 100%; height: 55vh;
          font-size: 48px; border: 0; background: #fff; }}
</style></head><body><div id="block">{widget}</div><input id="field" type="text" autocomplete="off">{script}</body></html>"#
    )
}
