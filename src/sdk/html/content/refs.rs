//! Where `content.md` and `lean.md` differ: every URL the composer writes goes through a
//! marker, and rendering the marked text picks the form. `content.md` puts the URL inline
//! (`[text](url)`, `![alt](src)`); `lean.md` refers to an entry of `links.json` instead
//! (`[text][n]`) and leaves image sources out (`![alt]`), so both files carry the same words
//! and structure from one walk.
//!
//! A marker is `NUL kind index NUL`; the composer never lets a NUL of the page through
//! ([`strip_nul`]), so a marker cannot be forged by page text.

use std::collections::HashMap;

use serde_json::{json, Value};
use url::Url;

use crate::sdk::fetch::takeover::site_of;

/// The marker delimiter (never in composed text: see [`strip_nul`]).
const MARK: char = '\0';

/// What a marker stands for, and so how each form renders it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    /// A link's close: `](url)` / `][n]`.
    Link,
    /// An image's source: `(src)` / nothing.
    Image,
    /// A frame's source, closing its note: ` src]` / `][n]`.
    Frame,
    /// A bare URL (a form's action): `url` / `[n]`.
    Bare,
    /// A folded block starts: `content.md` keeps what follows, `lean.md` skips it.
    FoldStart,
    /// The folded block ends and its fold line starts: `content.md` skips the line.
    FoldLine,
    /// Inside the fold line: `content.md lines A..B` (where the block is in `content.md`).
    FoldRange,
    /// The fold line ends.
    FoldEnd,
}

impl Mark {
    fn letter(self) -> char {
        match self {
            Mark::Link => 'L',
            Mark::Image => 'I',
            Mark::Frame => 'F',
            Mark::Bare => 'A',
            Mark::FoldStart => 'S',
            Mark::FoldLine => 'M',
            Mark::FoldRange => 'N',
            Mark::FoldEnd => 'E',
        }
    }

    fn of(letter: char) -> Option<Mark> {
        match letter {
            'L' => Some(Mark::Link),
            'I' => Some(Mark::Image),
            'F' => Some(Mark::Frame),
            'A' => Some(Mark::Bare),
            'S' => Some(Mark::FoldStart),
            'M' => Some(Mark::FoldLine),
            'N' => Some(Mark::FoldRange),
            'E' => Some(Mark::FoldEnd),
            _ => None,
        }
    }
}

/// Which text to render.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// `content.md`: URLs inline.
    Inline,
    /// `lean.md`: links by reference into `links.json`, no image sources.
    Lean,
}

/// One entry of `links.json`.
struct Target {
    url: String,
    text: String,
    kind: &'static str,
}

/// The URLs met while composing: link targets (deduplicated, in first-use order; their
/// index is the `n` of `[text][n]`) and image sources.
#[derive(Default)]
pub(crate) struct Refs {
    targets: Vec<Target>,
    by_url: HashMap<String, usize>,
    images: Vec<String>,
}

impl Refs {
    /// The marker for a target `url` of `kind` (`link`, `frame`, `form`); `text` names it in
    /// `links.json` (the first non-empty text of that URL wins).
    pub(crate) fn target(&mut self, url: String, text: &str, kind: &'static str) -> usize {
        if let Some(&i) = self.by_url.get(&url) {
            if let Some(t) = self.targets.get_mut(i) {
                if t.text.is_empty() && !text.is_empty() {
                    t.text = text.to_string();
                }
            }
            return i;
        }
        let i = self.targets.len();
        self.by_url.insert(url.clone(), i);
        self.targets.push(Target {
            url,
            text: text.to_string(),
            kind,
        });
        i
    }

    /// The marker closing a link to `url`.
    pub(crate) fn link(&mut self, url: String, text: &str) -> String {
        let i = self.target(url, text, "link");
        marker(Mark::Link, i)
    }

    /// The marker closing a frame note for `src`.
    pub(crate) fn frame(&mut self, src: String, title: &str) -> String {
        let i = self.target(src, title, "frame");
        marker(Mark::Frame, i)
    }

    /// The marker standing for a form's `action`.
    pub(crate) fn form_action(&mut self, action: String, text: &str) -> String {
        let i = self.target(action, text, "form");
        marker(Mark::Bare, i)
    }

    /// The marker for an image's `src`.
    pub(crate) fn image(&mut self, src: String) -> String {
        self.images.push(src);
        marker(Mark::Image, self.images.len() - 1)
    }

    /// Both forms of `marked`: (`content.md`, `lean.md`). `content.md` is rendered first:
    /// where each folded block landed in it is what `lean.md`'s fold line names.
    pub(crate) fn render_both(&self, marked: &str) -> (String, String) {
        let (content, ranges) = self.render(marked, Form::Inline, &[]);
        let (lean, _) = self.render(marked, Form::Lean, &ranges);
        (tidy(content), tidy(lean))
    }

    /// `marked` rendered in `form`, with the line range (0-based, end exclusive: the
    /// `offset..offset+limit` of `read_artifact` unit `lines`) of each folded block in it;
    /// `ranges` are `content.md`'s, for the fold lines of `lean.md`.
    fn render(
        &self,
        marked: &str,
        form: Form,
        ranges: &[(usize, usize)],
    ) -> (String, Vec<(usize, usize)>) {
        let mut out = String::with_capacity(marked.len());
        let mut folds = Vec::new();
        let mut fold_start = 0;
        let mut skipping = false;
        let mut rest = marked;
        while let Some(at) = rest.find(MARK) {
            if !skipping {
                push_text(&mut out, &rest[..at]);
            }
            let after = &rest[at + 1..];
            let Some(end) = after.find(MARK) else {
                // A lone delimiter cannot come from the composer; drop it.
                rest = after;
                continue;
            };
            let body = &after[..end];
            rest = &after[end + 1..];
            let mut chars = body.chars();
            let (Some(mark), Ok(i)) = (chars.next().and_then(Mark::of), chars.as_str().parse())
            else {
                continue;
            };
            match (mark, form) {
                (Mark::FoldStart, Form::Inline) => fold_start = out.len(),
                (Mark::FoldLine, Form::Inline) => {
                    folds.push(line_range(&out, fold_start, out.len()));
                    skipping = true;
                }
                (Mark::FoldEnd, Form::Inline) | (Mark::FoldLine, Form::Lean) => skipping = false,
                (Mark::FoldStart, Form::Lean) => skipping = true,
                (Mark::FoldRange, Form::Lean) => {
                    let (a, b) = ranges.get(i).copied().unwrap_or_default();
                    out.push_str(&format!("content.md lines {a}..{b}"));
                }
                (Mark::FoldRange | Mark::FoldEnd, _) => {}
                _ if skipping => {}
                _ => self.render_one(&mut out, mark, i, form),
            }
        }
        if !skipping {
            push_text(&mut out, rest);
        }
        (out, folds)
    }

    fn render_one(&self, out: &mut String, mark: Mark, i: usize, form: Form) {
        let url = || match mark {
            Mark::Image => self.images.get(i).map(String::as_str).unwrap_or(""),
            _ => self.targets.get(i).map(|t| t.url.as_str()).unwrap_or(""),
        };
        match (mark, form) {
            (Mark::Link, Form::Inline) => {
                out.push_str("](");
                out.push_str(url());
                out.push(')');
            }
            (Mark::Image, Form::Inline) => {
                out.push('(');
                out.push_str(url());
                out.push(')');
            }
            (Mark::Frame, Form::Inline) => {
                out.push(' ');
                out.push_str(url());
                out.push(']');
            }
            (Mark::Bare, Form::Inline) => out.push_str(url()),
            (Mark::Link | Mark::Frame, Form::Lean) => out.push_str(&format!("][{i}]")),
            (Mark::Bare, Form::Lean) => out.push_str(&format!("[{i}]")),
            (Mark::Image, Form::Lean) => {}
            // Handled by `render`.
            (Mark::FoldStart | Mark::FoldLine | Mark::FoldRange | Mark::FoldEnd, _) => {}
        }
    }

    /// The `links.json` document: every target `lean.md` refers to, by index, with whether
    /// it is on the page's site (its registrable domain; `localhost` and IP literals as they
    /// are).
    pub(crate) fn links_json(&self, page_url: &Url) -> Value {
        let site = site_of(page_url);
        let links: Vec<Value> = self
            .targets
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let same_site = site.is_some()
                    && Url::parse(&t.url)
                        .ok()
                        .filter(|u| matches!(u.scheme(), "http" | "https"))
                        .and_then(|u| site_of(&u))
                        == site;
                let mut v =
                    json!({"index": i, "text": t.text, "url": t.url, "same_site": same_site});
                if t.kind != "link" {
                    v["kind"] = Value::String(t.kind.to_string());
                }
                v
            })
            .collect();
        json!({
            "schema_version": 1,
            "page_url": page_url.as_str(),
            "count": links.len(),
            "links": links,
        })
    }
}

/// The markers that delimit fold `k` (see [`Mark::FoldStart`] ...): start, line, range, end.
pub(crate) fn fold_markers(k: usize) -> [String; 4] {
    [
        marker(Mark::FoldStart, k),
        marker(Mark::FoldLine, k),
        marker(Mark::FoldRange, k),
        marker(Mark::FoldEnd, k),
    ]
}

/// Append `text`, without blank lines at the very start (a fold's marker first in the text
/// can leave one).
fn push_text(out: &mut String, text: &str) {
    if out.is_empty() {
        out.push_str(text.trim_start_matches('\n'));
    } else {
        out.push_str(text);
    }
}

/// No blank lines after the last line (a fold's markers last in the text can leave one);
/// one newline at the end of a non-empty text.
fn tidy(mut s: String) -> String {
    s.truncate(s.trim_end().len());
    if !s.is_empty() {
        s.push('\n');
    }
    s
}

/// `s` (which starts outside any marker) without its fold markers: the text both forms
/// share around a fold, for the composer's blank-line decisions.
pub(crate) fn without_fold_markers(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut parts = s.split(MARK);
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    while let (Some(body), Some(text)) = (parts.next(), parts.next()) {
        if !body.starts_with(['S', 'M', 'N', 'E']) {
            out.push(MARK);
            out.push_str(body);
            out.push(MARK);
        }
        out.push_str(text);
    }
    out
}

/// The lines of `out[start..end]` (which starts at a line start), as a 0-based range of
/// `out`'s lines, without the blank lines at either end.
fn line_range(out: &str, start: usize, end: usize) -> (usize, usize) {
    let first = out[..start].matches('\n').count();
    let lines: Vec<&str> = out[start..end].split_inclusive('\n').collect();
    let blank = |l: &&&str| l.trim().trim_start_matches('>').trim().is_empty();
    let lead = lines.iter().take_while(blank).count();
    let trail = lines.iter().rev().take_while(blank).count();
    let last = (first + lines.len())
        .saturating_sub(trail)
        .max(first + lead);
    (first + lead, last)
}

fn marker(mark: Mark, i: usize) -> String {
    format!("{MARK}{}{i}{MARK}", mark.letter())
}

/// `s` without NUL characters (the marker delimiter). HTML parsing drops or replaces NUL in
/// almost every context already; this makes it certain.
pub(crate) fn strip_nul(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains(MARK) {
        std::borrow::Cow::Owned(s.replace(MARK, ""))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_marked_text_renders_both_forms() {
        let mut r = Refs::default();
        let a = r.link("https://x.test/a".into(), "A");
        let img = r.image("https://cdn.test/i.png".into());
        let again = r.link("https://x.test/a".into(), "A again");
        let f = r.frame("https://y.test/f".into(), "");
        let marked = format!("[A{a} ![logo]{img} [A{again} [iframe{f} x\0");
        let (content, lean) = r.render_both(&marked);
        assert_eq!(
            content,
            "[A](https://x.test/a) ![logo](https://cdn.test/i.png) [A](https://x.test/a) \
             [iframe https://y.test/f] x\n"
        );
        assert_eq!(lean, "[A][0] ![logo] [A][0] [iframe][1] x\n");
        let links = r.links_json(&Url::parse("https://www.x.test/page").unwrap());
        assert_eq!(links["count"], 2);
        assert_eq!(links["links"][0]["same_site"], true);
        assert_eq!(links["links"][0]["text"], "A");
        assert_eq!(links["links"][1]["same_site"], false);
        assert_eq!(links["links"][1]["kind"], "frame");
    }

    #[test]
    fn a_fold_keeps_the_block_in_content_and_names_its_lines_in_lean() {
        let mut r = Refs::default();
        let a = r.link("https://x.test/a".into(), "A");
        let b = r.link("https://x.test/b".into(), "B");
        let [s, m, n, e] = fold_markers(0);
        let marked = format!(
            "# Page\n\n{s}\n- [A{a}\n- [B{b}\n{m}\n[folded 2 links; {n}]\n{e}\nText [A{a}\n"
        );
        let (content, lean) = r.render_both(&marked);
        assert_eq!(
            content,
            "# Page\n\n\n- [A](https://x.test/a)\n- [B](https://x.test/b)\n\nText \
             [A](https://x.test/a)\n"
        );
        assert_eq!(
            lean,
            "# Page\n\n\n[folded 2 links; content.md lines 3..5]\n\nText [A][0]\n"
        );
        let lines: Vec<&str> = content.lines().collect();
        assert_eq!(
            lines[3..5],
            ["- [A](https://x.test/a)", "- [B](https://x.test/b)"]
        );
    }

    #[test]
    fn nul_never_reaches_the_marked_text() {
        assert_eq!(strip_nul("a\0Ll0\0b"), "aLl0b");
        assert!(matches!(strip_nul("plain"), std::borrow::Cow::Borrowed(_)));
    }
}
