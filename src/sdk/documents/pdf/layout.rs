//! Glyphs to text: the PDF reader hands over every glyph a page draws (its Unicode value,
//! if the font says, and where it sits); this module turns them into lines and words and
//! counts the glyphs that have no Unicode value. Pure logic, no PDF parsing.

/// One drawn glyph, in page space (points).
#[derive(Debug, Clone, PartialEq)]
pub struct Glyph {
    /// The text it stands for; `None` when the font gives no Unicode value.
    pub text: Option<String>,
    /// Where the glyph starts (its origin on the baseline).
    pub origin: (f64, f64),
    /// Where the next glyph would start (origin plus the advance).
    pub end: (f64, f64),
    /// Unit vector of the writing direction.
    pub dir: (f64, f64),
    /// Font size along the glyph's vertical axis (points).
    pub size: f64,
}

/// A page's text and its glyph counts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PageText {
    /// Lines in drawing order; ends with a newline when not empty.
    pub text: String,
    /// Glyphs drawn.
    pub glyphs: usize,
    /// Glyphs without a usable Unicode value (none, U+FFFD, private use, control).
    pub unmapped: usize,
}

/// A gap wider than this share of the font size between two glyphs on a line is a space.
const SPACE_GAP: f64 = 0.1;
/// A line's usual gap (its median, uniform character spacing) counts up to this share of
/// the font size; a line whose words are single glyphs still gets its spaces.
const USUAL_GAP_CAP: f64 = 0.3;
/// A move off the baseline by more than this share of the font size starts a new line.
const LINE_JUMP: f64 = 0.5;
/// A move back along the line by more than this share of the font size starts a new line.
const BACK_JUMP: f64 = 1.0;

/// Whether `s` is text a reader can trust as the glyph's meaning.
pub fn is_mapped(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| {
            !(c == '\u{fffd}'
                || ('\u{e000}'..='\u{f8ff}').contains(&c)
                || (c.is_control() && !c.is_whitespace()))
        })
}

/// Lay out `glyphs` (in drawing order): a newline where the pen leaves the line, a space
/// where a gap opens on a line wider than the line's usual gap between glyphs (so uniform
/// character spacing is not read as spaces). Unmapped glyphs are counted and left out.
pub fn layout(glyphs: &[Glyph]) -> PageText {
    let mapped: Vec<(&Glyph, &str)> = glyphs
        .iter()
        .filter_map(|g| Some((g, g.text.as_deref().filter(|t| is_mapped(t))?)))
        .collect();
    let mut text = String::new();
    for line in lines(&mapped) {
        let gaps: Vec<f64> = line.windows(2).map(|w| gap(w[0].0, w[1].0)).collect();
        let usual = usual_gap(&line, &gaps);
        for (i, (g, t)) in line.iter().enumerate() {
            if i > 0 {
                let p = line[i - 1].0;
                let size = p.size.min(g.size).max(1e-3);
                if gaps[i - 1] - usual.min(USUAL_GAP_CAP * size) > SPACE_GAP * size
                    && !text.ends_with(char::is_whitespace)
                    && !t.starts_with(char::is_whitespace)
                {
                    text.push(' ');
                }
            }
            text.extend(t.chars().map(|c| if c == '\u{a0}' { ' ' } else { c }));
        }
        let trimmed = text.trim_end_matches([' ', '\t']).len();
        text.truncate(trimmed);
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
    }
    PageText {
        text,
        glyphs: glyphs.len(),
        unmapped: glyphs.len() - mapped.len(),
    }
}

/// The line's usual gap between glyphs: the median of the gaps between two letters or
/// digits (the spacing inside words; leader dots and spaced punctuation say nothing about
/// it), or of all gaps when no two letters meet.
fn usual_gap(line: &[(&Glyph, &str)], gaps: &[f64]) -> f64 {
    let word_char = |t: &str| t.chars().next().is_some_and(char::is_alphanumeric);
    let inner: Vec<f64> = line
        .windows(2)
        .zip(gaps)
        .filter(|(w, _)| word_char(w[0].1) && word_char(w[1].1))
        .map(|(_, g)| *g)
        .collect();
    median(if inner.is_empty() { gaps } else { &inner }).max(0.0)
}

/// The distance along `p`'s writing direction from where `p` ends to where `g` starts.
fn gap(p: &Glyph, g: &Glyph) -> f64 {
    (g.origin.0 - p.end.0) * p.dir.0 + (g.origin.1 - p.end.1) * p.dir.1
}

fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Split glyphs into lines: a new line where the pen moves off the baseline or back along it.
fn lines<'a>(glyphs: &[(&'a Glyph, &'a str)]) -> Vec<Vec<(&'a Glyph, &'a str)>> {
    let mut out: Vec<Vec<(&Glyph, &str)>> = Vec::new();
    for &(g, t) in glyphs {
        let breaks = out.last().and_then(|l| l.last()).is_none_or(|(p, _)| {
            let d = (g.origin.0 - p.end.0, g.origin.1 - p.end.1);
            let along = d.0 * p.dir.0 + d.1 * p.dir.1;
            let off = (d.0 * p.dir.1 - d.1 * p.dir.0).abs();
            off > LINE_JUMP * p.size.max(g.size).max(1e-3) || along < -BACK_JUMP * p.size.max(1e-3)
        });
        if breaks {
            out.push(Vec::new());
        }
        if let Some(l) = out.last_mut() {
            l.push((g, t));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(text: &str, x: f64, y: f64, w: f64) -> Glyph {
        Glyph {
            text: (!text.is_empty()).then(|| text.to_string()),
            origin: (x, y),
            end: (x + w, y),
            dir: (1.0, 0.0),
            size: 10.0,
        }
    }

    #[test]
    fn uniform_letter_spacing_is_not_a_space() {
        // Every glyph 2 pt apart (character spacing); the word gap is 6 pt.
        let mut x = 0.0;
        let mut glyphs = Vec::new();
        for (i, c) in "ABCDEFGH".chars().enumerate() {
            if i == 4 {
                x += 4.0;
            }
            glyphs.push(g(&c.to_string(), x, 50.0, 5.0));
            x += 7.0;
        }
        assert_eq!(layout(&glyphs).text, "ABCD EFGH\n");
    }

    #[test]
    fn leader_dots_do_not_hide_word_gaps() {
        // "Research question . . . . . . 12": words 2.5 pt apart, dots 1.9 pt apart.
        let mut glyphs = Vec::new();
        let mut x = 0.0;
        for (i, w) in ["Research", "question"].iter().enumerate() {
            if i > 0 {
                x += 2.5;
            }
            for c in w.chars() {
                glyphs.push(g(&c.to_string(), x, 50.0, 5.0));
                x += 5.0;
            }
        }
        for _ in 0..30 {
            x += 1.9;
            glyphs.push(g(".", x, 50.0, 2.5));
            x += 2.5;
        }
        glyphs.push(g("1", x + 2.0, 50.0, 5.0));
        let text = layout(&glyphs).text;
        assert!(text.starts_with("Research question ."), "{text}");
    }

    #[test]
    fn gaps_become_spaces_and_jumps_lines() {
        let glyphs = [
            g("H", 0.0, 100.0, 6.0),
            g("i", 6.2, 100.0, 3.0),
            // 3 pt gap at 10 pt: a space.
            g("y", 12.2, 100.0, 5.0),
            g("o", 17.2, 100.0, 5.0),
            // Next line, back at the margin.
            g("N", 0.0, 88.0, 7.0),
            g("o", 7.0, 88.0, 5.0),
            g("", 12.0, 88.0, 5.0),
            g("\u{e001}", 17.0, 88.0, 5.0),
        ];
        let p = layout(&glyphs);
        assert_eq!(p.text, "Hi yo\nNo\n");
        assert_eq!((p.glyphs, p.unmapped), (8, 2));
    }

    #[test]
    fn explicit_spaces_are_not_doubled_and_rotated_text_works() {
        let up = |t: &str, y: f64| Glyph {
            text: Some(t.to_string()),
            origin: (50.0, y),
            end: (50.0, y + 5.0),
            dir: (0.0, 1.0),
            size: 10.0,
        };
        let p = layout(&[up("a", 0.0), up(" ", 5.0), up("b", 12.0)]);
        assert_eq!(p.text, "a b\n");
        assert!(!is_mapped("\u{fffd}") && !is_mapped("\u{1}") && is_mapped("é"));
    }
}
