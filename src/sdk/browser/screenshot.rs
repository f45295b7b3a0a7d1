//! The screenshot artifact: one `Page.captureScreenshot` of the page (full page unless it
//! fits the viewport), taken while the driver finishes the other artifacts.

use base64::Engine as _;
use serde_json::{json, Value};

use super::capture::{failed, failed_by, write, Captured, Ctx, MAX_SCREENSHOT_HEIGHT};
use crate::error::{AfError, ErrorCode, Warning};
use crate::sdk::fetch::outdir::OutDir;
use crate::sdk::fetch::BrowserOptions;
use crate::sdk::request::Artifact;

/// A screenshot the browser returned, not yet written.
pub(super) struct Shot {
    bytes: Vec<u8>,
    facts: Value,
    warning: Option<Warning>,
}

/// Take the screenshot the page's layout `metrics` call for; a failure is the artifact's
/// warning.
pub(super) async fn take(
    cx: &Ctx<'_>,
    opts: &BrowserOptions,
    metrics: Result<Value, AfError>,
) -> Result<Shot, Warning> {
    let a = Artifact::Screenshot;
    let s = Some(cx.session);
    let m = metrics.map_err(|e| failed_by(a, &e))?;
    let size = if m["cssContentSize"].is_object() {
        &m["cssContentSize"]
    } else {
        &m["contentSize"]
    };
    let width = size["width"].as_f64().unwrap_or(0.0).ceil().max(1.0);
    let height = size["height"].as_f64().unwrap_or(0.0).ceil().max(1.0);
    let limit = opts
        .screenshot_max_height
        .map_or(MAX_SCREENSHOT_HEIGHT, |h| {
            f64::from(h).min(MAX_SCREENSHOT_HEIGHT)
        });
    let clipped = height > limit;
    let captured_height = height.min(limit);
    // A page that fits the viewport is captured as it is on screen: capturing beyond the
    // viewport makes the browser resize, lay out and paint the page again for the same pixels.
    let viewport = &m["cssLayoutViewport"];
    let fits = viewport["clientWidth"]
        .as_f64()
        .zip(viewport["clientHeight"].as_f64())
        .is_some_and(|(w, h)| width <= w && captured_height <= h);
    // `optimizeForSpeed` picks faster (still lossless) PNG compression: the same pixels in a
    // somewhat larger file, for much less of the renderer's CPU, which parallel fetches share.
    let format = opts.screenshot_format;
    let mut params = json!({
        "format": format,
        "optimizeForSpeed": true,
        "captureBeyondViewport": !fits,
        "clip": {"x": 0, "y": 0, "width": width, "height": captured_height, "scale": 1},
    });
    if let Some(q) = opts.screenshot_quality {
        params["quality"] = json!(q);
    }
    let r = cx
        .conn
        .send(s, "Page.captureScreenshot", params, cx.t())
        .await
        .map_err(|e| failed_by(a, &e))?;
    // Decoding a tall page's image is CPU work: off the runtime's threads.
    let data = r["data"].as_str().unwrap_or_default().to_string();
    let decoded =
        tokio::task::spawn_blocking(move || base64::engine::general_purpose::STANDARD.decode(data))
            .await
            .map_err(|e| failed(a, e.to_string()))?;
    let bytes = match decoded {
        Ok(b) if !b.is_empty() => b,
        Ok(_) => return Err(failed(a, "the browser returned an empty image")),
        Err(e) => return Err(failed(a, format!("undecodable image: {e}"))),
    };
    let facts = json!({
        "format": format,
        "width": width,
        "height": height,
        "captured_height": captured_height,
        "clipped": clipped,
        "bytes": bytes.len(),
    });
    // Clipping the user asked for is a fact in the result, not a failure.
    let asked = opts
        .screenshot_max_height
        .is_some_and(|h| f64::from(h) < MAX_SCREENSHOT_HEIGHT);
    let warning = (clipped && !asked).then(|| {
        Warning::artifact(
            a.as_str(),
            ErrorCode::ArtifactCaptureFailed,
            format!("partial: the page is {height} px tall; the screenshot stops at {MAX_SCREENSHOT_HEIGHT} px"),
        )
    });
    Ok(Shot {
        bytes,
        facts,
        warning,
    })
}

/// Write a taken screenshot (`page.png`, `page.jpg`, `page.webp`) and record its facts.
pub(super) fn write_shot(
    out: &mut OutDir,
    c: &mut Captured,
    opts: &BrowserOptions,
    shot: Result<Shot, Warning>,
) -> Result<Option<Warning>, AfError> {
    let a = Artifact::Screenshot;
    let shot = match shot {
        Ok(s) => s,
        Err(w) => return Ok(Some(w)),
    };
    write(
        out,
        c,
        a,
        &a.file_name_for(Some(opts.screenshot_format), None),
        &shot.bytes,
    )?;
    c.screenshot = Some(shot.facts);
    Ok(shot.warning)
}
