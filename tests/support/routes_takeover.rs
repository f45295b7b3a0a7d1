//! Fixture page for the takeover panel test (tests/takeover.rs): `/takeover-fixture/page`, a
//! solid colour block over a large text input, so a screenshot of the noVNC panel can be
//! checked by pixel and a click in the lower part of the screen lands in the input.

use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

/// The block's colour, `(r, g, b)`.
pub const BLOCK_RGB: (u8, u8, u8) = (255, 0, 170);

/// The `/takeover-fixture/*` routes, merged into the shared fixture router.
pub fn router() -> Router {
    Router::new().route("/takeover-fixture/page", get(page))
}

async fn page() -> impl IntoResponse {
    let (r, g, b) = BLOCK_RGB;
    let html = format!(
        r#"<!doctype html><html><head><title>takeover fixture</title><style>
html, body {{ margin: 0; padding: 0; overflow: hidden; }}
#block {{ height: 45vh; background: rgb({r}, {g}, {b}); }}
#field {{ box-sizing: border-box; display: block; width: 100%; height: 55vh;
          font-size: 48px; border: 0; background: #fff; }}
</style></head><body><div id="block"></div><input id="field" type="text" autocomplete="off"></body></html>"#
    );
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html)
}
