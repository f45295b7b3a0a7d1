//! The screenshot as the model gets it: the artifact fitted to what vision models read
//! without shrinking it themselves, and to the inline byte cap, with one line that says what
//! was done. The full image stays the artifact (its `resource_link`).
//!
//! Every use of the `image` crate is here (decoding PNG, JPEG and WebP screenshots,
//! resizing, encoding PNG and JPEG), and of `png` (the top rows of a tall PNG), so their
//! releases touch one file.
//!
//! The rule (docs/mcp.md "fetch results"): the inline image has a long side of at most
//! [`MAX_SIDE`] and at most [`MAX_PIXELS`] pixels. A screenshot within both is sent as
//! taken. One that fits them whole at a width of at least [`TALL_WIDTH`] (or its own width,
//! when narrower) is scaled whole. Otherwise, a tall page, it is scaled to that width and its
//! top is kept: the first screens, readable, rather than a whole page a few dozen pixels wide.
//! PNG when that fits `--image-max-bytes`, else JPEG, smaller in steps until it fits.

use std::io::Cursor;
use std::path::Path;

use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::imageops::FilterType as Resample;
use image::{DynamicImage, ImageEncoder, ImageReader, Limits};

/// The longest side a model reads without downscaling (Anthropic's vision guide: a long
/// edge over 1568 px is scaled down before the model sees it).
pub const MAX_SIDE: u32 = 1568;
/// The most pixels a model reads without downscaling (the same guide: about 1.15 megapixels,
/// ~1,600 tokens).
pub const MAX_PIXELS: u64 = 1_150_000;
/// The width a page too tall to fit whole is scaled to before its top is kept: OpenAI's
/// high-detail mode reads a tall image at 768 px on its short side, and Claude's largest 1:2
/// image is 784 px wide; text at this scale of a 1280 px page stays legible.
pub const TALL_WIDTH: u32 = 768;
/// JPEG quality of an inline image that is too large as PNG.
const JPEG_QUALITY: u8 = 80;
/// The most memory a decode may take (a 1280 x 16384 RGBA screenshot needs 84 MB).
const MAX_DECODE_BYTES: u64 = 256 << 20;

/// How a screenshot of `width` x `height` becomes the inline image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Rows of the screenshot kept, from the top (`height` when nothing is cropped).
    pub rows: u32,
    /// The inline image's width.
    pub width: u32,
    /// The inline image's height.
    pub height: u32,
}

impl Plan {
    /// Whether the screenshot goes inline as taken.
    fn is_identity(&self, width: u32, height: u32) -> bool {
        self.rows == height && self.width == width && self.height == height
    }
}

/// The inline geometry of a `width` x `height` screenshot (see the module doc).
pub fn plan(width: u32, height: u32) -> Plan {
    let (w, h) = (width.max(1), height.max(1));
    let (wf, hf) = (f64::from(w), f64::from(h));
    let side = f64::from(MAX_SIDE);
    let whole = (side / wf)
        .min(side / hf)
        .min((MAX_PIXELS as f64 / (wf * hf)).sqrt())
        .min(1.0);
    let min_width = w.min(TALL_WIDTH);
    let scaled_width = (wf * whole).floor() as u32;
    if scaled_width >= min_width {
        let height = ((hf * whole).floor() as u32).max(1);
        return Plan {
            rows: h,
            width: scaled_width.max(1),
            height,
        };
    }
    let scale = f64::from(min_width) / wf;
    let by_pixels = (MAX_PIXELS / u64::from(min_width)).min(u64::from(MAX_SIDE)) as u32;
    let height = by_pixels.min((hf * scale).floor() as u32).max(1);
    let rows = ((f64::from(height) / scale).round() as u32).clamp(1, h);
    Plan {
        rows,
        width: min_width,
        height,
    }
}

/// The image content to send and the line for the text.
pub struct Inline {
    /// The encoded image.
    pub data: Vec<u8>,
    /// Its MIME type.
    pub mime: &'static str,
    /// `screenshot: inline ...`, ending in a newline.
    pub note: String,
}

/// The screenshot at `path` fitted for the model within `cap` bytes, or the line saying
/// why it is only linked. Blocking (decodes and encodes).
pub fn fit(path: &Path, cap: u64) -> Result<Inline, String> {
    let shown = path.display();
    let size = std::fs::metadata(path)
        .map_err(|e| not_inline(&format!("cannot read it: {e}"), &shown))?
        .len();
    if cap == 0 {
        return Err(not_inline("--image-max-bytes is 0", &shown));
    }
    let bytes = std::fs::read(path).map_err(|e| not_inline(&format!("read: {e}"), &shown))?;
    let reader = || {
        let mut r = ImageReader::new(Cursor::new(&bytes[..]));
        let mut limits = Limits::default();
        limits.max_alloc = Some(MAX_DECODE_BYTES);
        r.limits(limits);
        r.with_guessed_format()
    };
    let (width, height) = reader()
        .ok()
        .and_then(|r| r.into_dimensions().ok())
        .ok_or_else(|| not_inline("not an image this build decodes", &shown))?;
    let p = plan(width, height);
    let source = format!("{width}x{height} screenshot ({size} bytes)");
    if p.is_identity(width, height) && size <= cap {
        let mime = super::resources::mime_of(path).unwrap_or("image/png");
        return Ok(Inline {
            note: format!(
                "screenshot: inline as taken ({width}x{height} {}, {size} bytes); full image {shown}\n",
                format_name(mime)
            ),
            data: bytes,
            mime,
        });
    }
    // A tall PNG's crop: only its top rows are decoded; anything else is decoded whole.
    let top = (p.rows < height).then(|| png_top(&bytes, p.rows)).flatten();
    let decoded = match top {
        Some(image) => image,
        None => reader()
            .ok()
            .and_then(|r| r.decode().ok())
            .ok_or_else(|| not_inline(&format!("the {source} does not decode"), &shown))?,
    };
    let fitted = apply(&decoded, width, p);
    drop(decoded);
    let out = encode_within(fitted, cap).map_err(|why| {
        not_inline(
            &format!("the {source}: {why}, over the {cap}-byte cap"),
            &shown,
        )
    })?;
    Ok(Inline {
        note: format!(
            "screenshot: inline {}x{} {} ({} bytes): {} the {source}; full image {shown}\n",
            out.width,
            out.height,
            format_name(out.mime),
            out.data.len(),
            what_was_done(width, height, p, (out.width, out.height)),
        ),
        data: out.data,
        mime: out.mime,
    })
}

/// The top `rows` of a non-interlaced PNG, decoded row by row, so the rest of a tall page
/// is never held in memory; `None` when `bytes` is not such a PNG (the caller decodes it
/// whole).
fn png_top(bytes: &[u8], rows: u32) -> Option<DynamicImage> {
    let mut decoder = png::Decoder::new(Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().ok()?;
    let (width, height, interlaced) = {
        let info = reader.info();
        (info.width, info.height, info.interlaced)
    };
    if interlaced || reader.output_color_type().1 != png::BitDepth::Eight {
        return None;
    }
    let rows = rows.min(height);
    let mut buf = Vec::with_capacity(reader.output_line_size(width)? * rows as usize);
    for _ in 0..rows {
        buf.extend_from_slice(reader.next_row().ok()??.data());
    }
    match reader.output_color_type().0 {
        png::ColorType::Rgb => image::RgbImage::from_raw(width, rows, buf).map(Into::into),
        png::ColorType::Rgba => image::RgbaImage::from_raw(width, rows, buf).map(Into::into),
        png::ColorType::Grayscale => image::GrayImage::from_raw(width, rows, buf).map(Into::into),
        png::ColorType::GrayscaleAlpha => {
            image::GrayAlphaImage::from_raw(width, rows, buf).map(Into::into)
        }
        png::ColorType::Indexed => None,
    }
}

/// The plan applied: the kept rows, resized to the planned size.
fn apply(image: &DynamicImage, width: u32, p: Plan) -> DynamicImage {
    let kept = if p.rows < image.height() {
        image.crop_imm(0, 0, width, p.rows)
    } else {
        image.clone()
    };
    if kept.width() == p.width && kept.height() == p.height {
        return kept;
    }
    kept.resize_exact(p.width, p.height, Resample::CatmullRom)
}

/// An encoded inline image.
struct Encoded {
    data: Vec<u8>,
    mime: &'static str,
    width: u32,
    height: u32,
}

/// `image` as PNG when that fits `cap`, else as JPEG, scaled down in steps until it fits.
fn encode_within(mut image: DynamicImage, cap: u64) -> Result<Encoded, String> {
    let done = |data: Vec<u8>, mime, image: &DynamicImage| Encoded {
        data,
        mime,
        width: image.width(),
        height: image.height(),
    };
    let png = encode_png(&image)?;
    if png.len() as u64 <= cap {
        return Ok(done(png, "image/png", &image));
    }
    let mut last = 0usize;
    for _ in 0..6 {
        let jpeg = encode_jpeg(&image)?;
        if jpeg.len() as u64 <= cap {
            return Ok(done(jpeg, "image/jpeg", &image));
        }
        last = jpeg.len();
        // JPEG bytes grow about with the pixel count: shrink both sides to the cap's share.
        let factor = ((cap as f64 / jpeg.len() as f64).sqrt() * 0.9).min(0.9);
        let (w, h) = (
            ((f64::from(image.width()) * factor) as u32).max(1),
            ((f64::from(image.height()) * factor) as u32).max(1),
        );
        if w < 16 || h < 16 {
            break;
        }
        image = image.resize_exact(w, h, Resample::Triangle);
    }
    Err(format!(
        "even a {}x{} JPEG is {last} bytes",
        image.width(),
        image.height()
    ))
}

fn encode_png(image: &DynamicImage) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let rgb = image.to_rgb8();
    PngEncoder::new_with_quality(&mut out, CompressionType::Default, FilterType::Adaptive)
        .write_image(
            rgb.as_raw(),
            rgb.width(),
            rgb.height(),
            image::ExtendedColorType::Rgb8,
        )
        .map_err(|e| format!("PNG encoding failed: {e}"))?;
    Ok(out)
}

fn encode_jpeg(image: &DynamicImage) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let rgb = image.to_rgb8();
    JpegEncoder::new_with_quality(&mut out, JPEG_QUALITY)
        .write_image(
            rgb.as_raw(),
            rgb.width(),
            rgb.height(),
            image::ExtendedColorType::Rgb8,
        )
        .map_err(|e| format!("JPEG encoding failed: {e}"))?;
    Ok(out)
}

/// What was done, as the start of `... the WxH screenshot`.
fn what_was_done(width: u32, height: u32, p: Plan, out: (u32, u32)) -> String {
    let percent = (f64::from(out.0) * 100.0 / f64::from(width.max(1))).round();
    let scaled = out.0 != width || out.1 != p.rows;
    match (p.rows < height, scaled) {
        (true, true) => format!("the top {} px, scaled to {percent}%, of", p.rows),
        (true, false) => format!("the top {} px of", p.rows),
        (false, true) => format!("scaled to {percent}% of"),
        (false, false) => "re-encoded from".to_string(),
    }
}

fn format_name(mime: &str) -> &'static str {
    match mime {
        "image/jpeg" => "JPEG",
        "image/webp" => "WebP",
        _ => "PNG",
    }
}

fn not_inline(why: &str, shown: &impl std::fmt::Display) -> String {
    format!("screenshot: not inline ({why}); full image {shown} (its resource_link)\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fits(p: Plan) {
        assert!(p.width.max(p.height) <= MAX_SIDE, "{p:?}");
        assert!(
            u64::from(p.width) * u64::from(p.height) <= MAX_PIXELS,
            "{p:?}"
        );
    }

    #[test]
    fn a_viewport_screenshot_goes_as_taken() {
        let p = plan(1280, 800);
        assert!(p.is_identity(1280, 800));
        assert!(plan(390, 844).is_identity(390, 844));
    }

    #[test]
    fn a_somewhat_tall_page_is_scaled_whole() {
        for (w, h) in [(1280, 1200), (1280, 2000), (1920, 1080), (5000, 300)] {
            let p = plan(w, h);
            assert_eq!(p.rows, h, "{w}x{h}: {p:?}");
            assert!(p.width >= TALL_WIDTH.min(w), "{w}x{h}: {p:?}");
            fits(p);
        }
        assert_eq!(plan(1920, 1080).width, 1429);
    }

    #[test]
    fn a_tall_page_keeps_its_first_screens_at_a_readable_width() {
        let p = plan(1280, 20000);
        assert_eq!((p.width, p.height), (768, 1497), "{p:?}");
        // 1497 rows at 60% are the top 2495 px of the page.
        assert_eq!(p.rows, 2495);
        fits(p);
        let p = plan(1280, 5000);
        assert_eq!((p.width, p.height, p.rows), (768, 1497, 2495));
        // A narrow page is not enlarged: its own width, the top 1568 rows.
        let p = plan(390, 20000);
        assert_eq!((p.width, p.height, p.rows), (390, 1568, 1568));
        fits(p);
        // The two rules meet without a jump.
        let a = plan(1280, 2490);
        let b = plan(1280, 2510);
        assert!(a.rows == 2490 && b.rows < 2510, "{a:?} {b:?}");
        assert!(a.width.abs_diff(b.width) <= 2, "{a:?} {b:?}");
    }

    /// A photo-like image: noise compresses badly as PNG, far better as JPEG.
    fn noise(w: u32, h: u32) -> DynamicImage {
        let mut seed = 0x2545_f491_u32;
        let img = image::RgbImage::from_fn(w, h, |x, y| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            let v = (seed & 0x3f) as u8;
            image::Rgb([v.wrapping_add((x / 4) as u8), v, (y / 4) as u8])
        });
        DynamicImage::ImageRgb8(img)
    }

    #[test]
    fn png_when_it_fits_else_jpeg_else_smaller_until_it_fits() {
        let img = noise(400, 300);
        let png = encode_png(&img).unwrap().len() as u64;
        let out = encode_within(img.clone(), png).unwrap();
        assert_eq!((out.mime, out.width, out.height), ("image/png", 400, 300));
        let out = encode_within(img.clone(), png - 1).unwrap();
        assert_eq!((out.mime, out.width, out.height), ("image/jpeg", 400, 300));
        assert!((out.data.len() as u64) < png);
        let jpeg = out.data.len() as u64;
        let out = encode_within(img.clone(), jpeg / 3).unwrap();
        assert_eq!(out.mime, "image/jpeg");
        assert!(out.width < 400 && out.data.len() as u64 <= jpeg / 3);
        let ratio = f64::from(out.width) / f64::from(out.height);
        assert!(
            (ratio - 4.0 / 3.0).abs() < 0.05,
            "{}x{}",
            out.width,
            out.height
        );
        let why = encode_within(img, 10).err().unwrap();
        assert!(why.starts_with("even a "), "{why}");
    }

    #[test]
    fn a_png_top_decoded_row_by_row_is_the_whole_decode_cropped() {
        let tall = noise(100, 1000);
        let rgb = encode_png(&tall).unwrap();
        let mut rgba = Vec::new();
        tall.to_rgba8()
            .write_to(&mut Cursor::new(&mut rgba), image::ImageFormat::Png)
            .unwrap();
        for bytes in [rgb, rgba] {
            let whole = image::load_from_memory(&bytes).unwrap();
            let top = png_top(&bytes, 300).unwrap();
            assert_eq!((top.width(), top.height()), (100, 300));
            assert_eq!(top.as_bytes(), whole.crop_imm(0, 0, 100, 300).as_bytes());
        }
        assert!(png_top(b"not a png", 10).is_none());
        let mut jpeg = Vec::new();
        tall.write_to(&mut Cursor::new(&mut jpeg), image::ImageFormat::Jpeg)
            .unwrap();
        assert!(png_top(&jpeg, 10).is_none());
    }

    #[test]
    fn the_note_says_crop_and_scale() {
        let p = plan(1280, 5000);
        assert_eq!(
            what_was_done(1280, 5000, p, (p.width, p.height)),
            "the top 2495 px, scaled to 60%, of"
        );
        let p = plan(1280, 1200);
        assert_eq!(
            what_was_done(1280, 1200, p, (p.width, p.height)),
            "scaled to 86% of"
        );
        let p = plan(390, 5000);
        assert_eq!(
            what_was_done(390, 5000, p, (p.width, p.height)),
            "the top 1568 px of"
        );
        let p = plan(800, 600);
        assert_eq!(what_was_done(800, 600, p, (800, 600)), "re-encoded from");
    }

    #[test]
    fn degenerate_sizes_stay_positive() {
        for (w, h) in [(0, 0), (1, 100_000), (100_000, 1), (16, 16384)] {
            let p = plan(w, h);
            assert!(
                p.width >= 1 && p.height >= 1 && p.rows >= 1,
                "{w}x{h}: {p:?}"
            );
            fits(p);
        }
    }
}
