//! The device hayro's interpreter draws a page into: it keeps each glyph's text and place
//! ([`Glyph`]) and counts images; paths are ignored.
//!
//! Two things poppler does and hayro leaves to its caller are done here: a glyph without a
//! Unicode value in a TrueType font is looked up in the font's own `cmap` table (reversed:
//! glyph id to character), and text drawn twice over itself (fill then stroke, fake bold)
//! is kept once.

use std::collections::HashMap;

use hayro_interpret::font::{Glyph as HGlyph, GlyphRun, OutlineGlyph};
use hayro_interpret::hayro_cmap::BfString;
use hayro_interpret::{
    BlendMode, ClipPath, Device, DrawMode, DrawProps, Image, ImageDrawProps, SoftMask,
};
use kurbo::{Affine, BezPath, Point};
use skrifa::MetadataProvider as _;

use super::layout::Glyph;

/// Glyph ids to characters, from a font program's Unicode `cmap` (empty when it has none).
type Reverse = HashMap<u32, char>;

/// Collects a page's glyphs.
#[derive(Default)]
pub struct Collect {
    /// Glyphs in drawing order.
    pub glyphs: Vec<Glyph>,
    /// Images drawn.
    pub images: usize,
    /// Where the last run started in `glyphs`, and how many glyphs it had.
    last_run: Option<(usize, usize)>,
    /// Reversed `cmap`s by font program.
    reverse: HashMap<u128, Reverse>,
}

impl Collect {
    /// The text of a glyph: its Unicode value, else (TrueType) the reversed `cmap`.
    fn text_of(&mut self, g: &HGlyph<'_>) -> Option<String> {
        if let Some(u) = g.as_unicode() {
            return Some(match u {
                BfString::Char(c) => c.to_string(),
                BfString::String(s) => s,
            });
        }
        let HGlyph::Outline(o) = g else {
            return None;
        };
        self.by_cmap(o).map(String::from)
    }

    fn by_cmap(&mut self, o: &OutlineGlyph) -> Option<char> {
        let data = o.font_data()?;
        let map = self
            .reverse
            .entry(data.cache_key)
            .or_insert_with(|| reverse_cmap((*data.data).as_ref()));
        map.get(&o.glyph_id().to_u32()).copied()
    }

    /// Whether `run` repeats the previous run in place (the stroke pass of fill-and-stroke
    /// text, or fake bold drawn twice).
    fn repeats_last(&self, texts: &[Option<String>], first: Point, size: f64) -> bool {
        let Some((start, len)) = self.last_run else {
            return false;
        };
        if len != texts.len() || len == 0 {
            return false;
        }
        let prev = &self.glyphs[start..start + len];
        let near = (prev[0].origin.0 - first.x).hypot(prev[0].origin.1 - first.y) < 0.3 * size;
        near && prev.iter().zip(texts).all(|(p, t)| p.text == *t)
    }
}

fn median(xs: &[f64]) -> f64 {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(1.0)
}

/// Glyph id to character from a font's Unicode `cmap` subtable; the first (lowest)
/// character wins for a glyph several map to.
fn reverse_cmap(font: &[u8]) -> Reverse {
    let mut out = Reverse::new();
    let Ok(f) = skrifa::FontRef::new(font) else {
        return out;
    };
    for (cp, gid) in f.charmap().mappings() {
        let Some(c) = char::from_u32(cp) else {
            continue;
        };
        // A symbol font's private-use codes (U+F020..) mean nothing to a reader.
        if ('\u{e000}'..='\u{f8ff}').contains(&c) {
            continue;
        }
        out.entry(gid.to_u32()).or_insert(c);
    }
    out
}

impl Device<'_> for Collect {
    fn draw_path(&mut self, _: &BezPath, _: DrawProps<'_>, _: &DrawMode) {}
    fn push_clip_path(&mut self, _: &ClipPath) {}
    fn push_transparency_group(&mut self, _: f32, _: Option<SoftMask<'_>>, _: BlendMode) {}
    fn draw_glyph_run(&mut self, run: &GlyphRun<'_, '_>, props: DrawProps<'_>, _: &DrawMode) {
        let glyphs = run.glyphs();
        let texts: Vec<Option<String>> = glyphs.iter().map(|g| self.text_of(g)).collect();
        // Width over height of each glyph's frame: the horizontal scaling (Tz), times, for a
        // font the reader substitutes, a per-glyph stretch to the widths the PDF gives. The
        // advance is already that width, so the run's median ratio (the stretch varies
        // around 1 from glyph to glyph, Tz does not) places where a glyph ends.
        let frames: Vec<(Affine, Point, f64)> = glyphs
            .iter()
            .map(|g| {
                let t: Affine = props.transform * g.transform();
                let origin = t * Point::ZERO;
                let size = (t * Point::new(0.0, 1000.0) - origin).hypot();
                (t, origin, size)
            })
            .collect();
        let ratios: Vec<f64> = frames
            .iter()
            .map(|(t, o, size)| (*t * Point::new(1000.0, 0.0) - *o).hypot() / size.max(1e-9))
            .collect();
        let run_ratio = median(&ratios);
        let mut placed = Vec::with_capacity(glyphs.len());
        for ((g, text), (t, origin, size)) in glyphs.iter().zip(&texts).zip(frames) {
            // Glyph space is 1/1000 of the font size.
            let advance = match &**g {
                HGlyph::Outline(o) => o.advance_width(),
                HGlyph::Type3(t3) => t3.advance_width(),
            }
            .filter(|a| a.is_finite() && *a > 0.0)
            .map_or(500.0, f64::from);
            let right = t * Point::new(1000.0, 0.0) - origin;
            let len = right.hypot();
            let dir = if len > 1e-9 {
                (right.x / len, right.y / len)
            } else {
                (1.0, 0.0)
            };
            let reach = advance / 1000.0 * size * run_ratio;
            placed.push(Glyph {
                text: text.clone(),
                origin: (origin.x, origin.y),
                end: (origin.x + dir.0 * reach, origin.y + dir.1 * reach),
                dir,
                size,
            });
        }
        let Some(first) = placed.first() else {
            return;
        };
        let at = Point::new(first.origin.0, first.origin.1);
        if self.repeats_last(&texts, at, first.size) {
            return;
        }
        self.last_run = Some((self.glyphs.len(), placed.len()));
        self.glyphs.extend(placed);
    }
    fn draw_image(&mut self, _: Image<'_, '_>, _: ImageDrawProps<'_>) {
        self.images += 1;
    }
    fn pop_clip(&mut self) {}
    fn pop_transparency_group(&mut self) {}
}
