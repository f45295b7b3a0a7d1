//! The screenshot as the model gets it: a tall page's full-page screenshot goes inline as its
//! first screens at a readable width, within the long-side and pixel limits of vision models
//! and the byte cap; the text says what was done; the full image stays the artifact.

use base64::Engine;
use serde_json::{json, Value};

use super::run_steps;
use crate::support::{Fixture, FixtureServer};

/// The long side and pixel count vision models read without shrinking (docs/mcp.md).
const MAX_SIDE: u32 = 1568;
const MAX_PIXELS: u32 = 1_150_000;

/// The base64 data of the one inline image of a fetch step.
pub fn image_b64(step: &Value) -> &str {
    let images: Vec<&Value> = step["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "image")
        .collect();
    assert_eq!(images.len(), 1, "{step}");
    images[0]["data"].as_str().unwrap()
}

/// The one inline image of a fetch step, decoded, with its MIME type and byte count.
pub fn inline_image(step: &Value) -> (image::DynamicImage, String, usize) {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(image_b64(step))
        .unwrap();
    let block = step["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "image")
        .unwrap();
    assert_eq!(bytes.len() as u64, block["data_bytes"].as_u64().unwrap());
    let decoded = image::load_from_memory(&bytes).unwrap();
    let mime = block["mime_type"].as_str().unwrap().to_string();
    (decoded, mime, bytes.len())
}

/// Check an inline screenshot (`data_b64`) against its artifact `shot`: within the limits,
/// and the `screenshot: inline` line of `text` says exactly what was sent and what was done.
/// The inline image, decoded.
pub fn assert_fitted(data_b64: &str, text: &str, shot: &str) -> image::DynamicImage {
    let data = base64::engine::general_purpose::STANDARD
        .decode(data_b64)
        .unwrap();
    let sent = image::load_from_memory(&data).unwrap();
    let (sw, sh) = (sent.width(), sent.height());
    assert!(sw.max(sh) <= MAX_SIDE && sw * sh <= MAX_PIXELS, "{sw}x{sh}");
    let file = std::fs::read(shot).unwrap();
    let (w, h) = image::image_dimensions(shot).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("screenshot: inline"))
        .unwrap_or_else(|| panic!("no screenshot line in:\n{text}"));
    let full = format!("; full image {shot}");
    if data == file {
        assert_eq!(
            line,
            format!(
                "screenshot: inline as taken ({w}x{h} PNG, {} bytes){full}",
                data.len()
            )
        );
        return sent;
    }
    let format = match image::guess_format(&data).unwrap() {
        image::ImageFormat::Png => "PNG",
        _ => "JPEG",
    };
    let head = format!(
        "screenshot: inline {sw}x{sh} {format} ({} bytes): ",
        data.len()
    );
    let tail = format!("the {w}x{h} screenshot ({} bytes){full}", file.len());
    assert!(
        line.starts_with(&head) && line.ends_with(&tail),
        "{line}\n{head}\n{tail}"
    );
    let done = &line[head.len()..line.len() - tail.len()];
    let percent = (f64::from(sw) * 100.0 / f64::from(w)).round();
    if let Some(rows) = done.strip_prefix("the top ") {
        // Cropped: the kept rows at the inline width are the inline height.
        let rows: f64 = rows.split(' ').next().unwrap().parse().unwrap();
        assert!(rows < f64::from(h), "{line}");
        assert!(
            (rows * f64::from(sw) / f64::from(w) - f64::from(sh)).abs() <= 2.0,
            "{line}"
        );
    } else {
        // Scaled whole: the same shape.
        assert_eq!(done, format!("scaled to {percent}% of "), "{line}");
        let (a, b) = (f64::from(sw) / f64::from(sh), f64::from(w) / f64::from(h));
        assert!((a - b).abs() < 0.01, "{line}");
    }
    sent
}

/// Mean (red, blue) of row `y`.
fn row_colour(img: &image::RgbImage, y: u32) -> (f64, f64) {
    let n = f64::from(img.width());
    let (r, b) = (0..img.width()).fold((0.0, 0.0), |(r, b), x| {
        let p = img.get_pixel(x, y);
        (r + f64::from(p[0]), b + f64::from(p[2]))
    });
    (r / n, b / n)
}

#[test]
fn a_tall_page_goes_inline_as_its_first_screens_and_the_text_says_so() {
    let _one = crate::support::chromium::lock();
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    // 5000 px of a white-to-blue gradient: the top is white, the bottom blue.
    let fetch = json!([{"call": "fetch",
        "args": {"url": srv.url("/browser/tall"), "render": "always"}}]);
    let r = run_steps(&fx, &["mcp", "--image-max-bytes", "400000"], fetch.clone());
    let step = &r["steps"][0];
    let shot = &step["structured"]["result"]["screenshot"];
    let (width, height) = (
        shot["width"].as_f64().unwrap() as u32,
        shot["height"].as_f64().unwrap() as u32,
    );
    assert!(height >= 5000, "{shot}");
    let full = image::open(
        step["structured"]["result"]["screenshot_file"]
            .as_str()
            .unwrap(),
    )
    .unwrap()
    .to_rgb8();
    assert_eq!((full.width(), full.height()), (width, height), "{shot}");

    let (inline, mime, bytes) = inline_image(step);
    let (w, h) = (inline.width(), inline.height());
    assert!(w.max(h) <= MAX_SIDE && w * h <= MAX_PIXELS, "{w}x{h}");
    assert!(bytes <= 400_000, "{bytes} bytes");
    // Cropped, not squeezed: 768 px wide (the page is 1280 or so), as tall as the limits allow.
    assert_eq!(w, 768.min(width), "{w}x{h}");
    assert!(h >= 1400, "{w}x{h}");
    let kept = (f64::from(h) * f64::from(width) / f64::from(w)).round() as u32;
    assert!(kept < height / 2, "kept {kept} of {height} rows");

    // The top of the page is white in both; the inline image's last row is the page's row
    // `kept`, far less blue than the gradient's end.
    let small = inline.to_rgb8();
    let (top_r, _) = row_colour(&small, 0);
    assert!(top_r > 240.0, "top row red {top_r}");
    let (last_r, _) = row_colour(&small, h - 1);
    let (page_r, _) = row_colour(&full, kept.min(height - 1));
    // The gradient ends at 5000 px (a white paragraph follows it).
    let (bottom_r, _) = row_colour(&full, 4990);
    assert!(
        (last_r - page_r).abs() < 12.0,
        "inline last row {last_r} vs page row {kept} {page_r}"
    );
    assert!(bottom_r + 60.0 < last_r, "{bottom_r} vs {last_r}");

    // The text says what was sent, what it came from, and where the full image is.
    let text = step["text"].as_str().unwrap();
    let shot_file = step["structured"]["result"]["screenshot_file"]
        .as_str()
        .unwrap();
    let b64 = image_b64(step);
    assert_fitted(b64, text, shot_file);
    let format = if mime == "image/png" { "PNG" } else { "JPEG" };
    let said = format!(
        "screenshot: inline {w}x{h} {format} ({bytes} bytes): the top {kept} px, scaled to "
    );
    assert!(text.contains(&said), "{said:?} not in:\n{text}");

    // A cap just under that PNG: the same pixels as JPEG, or fewer, within the cap.
    assert_eq!(mime, "image/png", "the gradient fits 400,000 bytes as PNG");
    let cap = (bytes - 1).to_string();
    let r = run_steps(&fx, &["mcp", "--image-max-bytes", &cap], fetch.clone());
    let step = &r["steps"][0];
    let (jpeg, mime, jpeg_bytes) = inline_image(step);
    assert_eq!(mime, "image/jpeg", "{}", step["text"]);
    assert!(jpeg_bytes < bytes, "{jpeg_bytes} bytes");
    assert!(jpeg.width() <= w && jpeg.height() <= h);
    let b64 = image_b64(step);
    let shot_file = step["structured"]["result"]["screenshot_file"]
        .as_str()
        .unwrap();
    assert_fitted(b64, step["text"].as_str().unwrap(), shot_file);

    // Too small a cap for any useful image: only linked, and the text says why.
    let r = run_steps(&fx, &["mcp", "--image-max-bytes", "100"], fetch);
    let step = &r["steps"][0];
    assert!(
        !step["content"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["type"] == "image"),
        "{step}"
    );
    let text = step["text"].as_str().unwrap();
    assert!(
        text.contains("screenshot: not inline (the ") && text.contains("over the 100-byte cap"),
        "{text}"
    );
}
