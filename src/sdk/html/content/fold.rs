//! Which blocks `lean.md` folds into one line (`[folded <nav>: 23 links, 40 words; content.md
//! lines 4..28]`), decided by mechanical rules over the visible DOM, never by scoring:
//!
//! 1. **Landmarks the author marked as not the main content**, as HTML-AAM maps elements to
//!    ARIA landmarks: `<nav>` (navigation); `<header>` and `<footer>` when not inside
//!    `article`, `aside`, `main`, `nav` or `section` (banner, contentinfo); `<aside>` when not
//!    inside `article`, `aside`, `nav` or `section` (complementary); and any block whose
//!    `role` is `navigation`, `banner`, `contentinfo`, `complementary` or `search`. Folded the
//!    same way: blocks the author hid from assistive technology (`aria-hidden="true"`) and
//!    composite widgets and windows ([`WIDGET_ROLES`]: menus, toolbars, tab lists, dialogs).
//! 2. **Blocks made only of links**: a block whose visible text is all inside links (besides
//!    separators: text without a letter, such as `|`, `·`, `,` or an ordered list's `1.`),
//!    with at least [`MIN_LINKS`] links, and nothing else a reader acts on (no form control,
//!    frame, or image with alt text outside a link); anywhere, `main` and `article` included
//!    (menus, share bars and lists of other articles sit inside them on most sites), but not
//!    when every link is to a named place on the page itself (`#id`: its outline; `#` alone
//!    or `#!/...` is a script's control, not a place).
//! 3. **A block shown again**: a block with at least [`MIN_LINKS`] links whose links and text
//!    are the same as an earlier block's (a share bar or a "follow us" box with its heading
//!    above and below the article), anywhere: its words are already in the text once.
//!
//! Never folded: `main`, `article`, `body`, preformatted text, or anything holding `<main>`
//! (or `role=main`). The composer folds only the outermost candidate, only when the folded
//! text is at least twice as long as the line replacing it, and writes adjacent folds (only
//! blank lines between, both at the top level) as one line (see `Composer`). Everything
//! folded stays in `content.md` (the line says where) and its links in `links.json`.

use std::collections::HashMap;

use ego_tree::NodeId;
use scraper::ElementRef;

use super::super::dom::{is_block, walk, Event};
use super::refs::fold_markers;
use super::{Block, Composer, OpenFold};

/// Fewest links a links-only block needs to be folded.
pub(crate) const MIN_LINKS: usize = 3;

/// Roles of composite widgets and windows (WAI-ARIA): controls the page operates, not
/// document structure, so their text is folded like a landmark's.
const WIDGET_ROLES: [&str; 6] = [
    "menu",
    "menubar",
    "toolbar",
    "tablist",
    "dialog",
    "alertdialog",
];

/// Whether `href` goes to a named place on this page (`#id`, an outline entry): not `#`
/// alone or empty (a script's control) and not `#!`/`#/` (a script's route).
fn in_page(href: &str) -> bool {
    href.trim()
        .strip_prefix('#')
        .is_some_and(|f| !f.is_empty() && !f.starts_with(['!', '/']))
}

/// A block the lean text folds, and what its line says about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fold {
    /// `<nav>`, `role=banner`, ... for a landmark; `None` for a links-only block.
    pub(crate) landmark: Option<String>,
    /// `<a href>` elements inside.
    pub(crate) links: usize,
    /// Whitespace-separated words of its visible text (link text included).
    pub(crate) words: usize,
}

impl Fold {
    /// What the fold line calls it: its landmark, or `links` for a links-only block.
    fn kind(&self) -> &str {
        self.landmark.as_deref().unwrap_or("links")
    }
}

/// The fold line of `parts` (one block, or adjacent blocks folded as one) without its
/// `content.md` range (the renderer adds it).
pub(crate) fn label(parts: &[Fold]) -> String {
    let s = |n: usize| if n == 1 { "" } else { "s" };
    let links: usize = parts.iter().map(|f| f.links).sum();
    let words: usize = parts.iter().map(|f| f.words).sum();
    let what = match parts {
        [one] => one.landmark.as_ref().map(|l| format!("{l}: ")),
        _ => {
            let mut kinds: Vec<&str> = Vec::new();
            for f in parts {
                if !kinds.contains(&f.kind()) {
                    kinds.push(f.kind());
                }
            }
            Some(format!("{} blocks ({}): ", parts.len(), kinds.join(", ")))
        }
    };
    format!(
        "[folded {}{links} link{}, {words} word{}; ",
        what.unwrap_or_default(),
        s(links),
        s(words)
    )
}

/// A fold just written at the top level: the next one may join it when only blank lines
/// come between (see `Composer::start_fold`).
pub(super) struct LastFold {
    open: OpenFold,
    /// Where its line's marker starts in `out`, and where the fold ends.
    line_at: usize,
    end: usize,
}

/// Room the fold line's `content.md lines A..B]` takes after its label, at most.
const RANGE_LEN: usize = 32;

impl Composer<'_> {
    /// Start folding `el` when the plan folds it and no fold is open (only the outermost
    /// folds), in block context (not inside a heading, link, table cell or code).
    pub(super) fn start_fold(&mut self, el: ElementRef<'_>) -> bool {
        if self.fold.is_some()
            || self.inline_only > 0
            || !self.tables.is_empty()
            || self.muted > 0
            || self.pre.is_some()
        {
            return false;
        }
        let Some(plan) = self.ctx.folds.get(&el.id()) else {
            return false;
        };
        self.flush_line();
        if let Some(mut open) = self.rejoin() {
            open.parts.push(plan.clone());
            self.fold = Some(open);
            return true;
        }
        let k = self.folds_made;
        let start = self.out.len();
        self.out.push_str(&fold_markers(k)[0]);
        let used = self
            .blocks
            .iter()
            .map(|b| matches!(b, Block::Item { used: true, .. }))
            .collect();
        self.fold = Some(OpenFold {
            k,
            start,
            used,
            parts: vec![plan.clone()],
        });
        true
    }

    /// The last fold, reopened, when only blank lines were written since it and both it and
    /// the block starting now are at the top level (not in a list or quote): adjacent
    /// folded blocks make one line, not one each.
    fn rejoin(&mut self) -> Option<OpenFold> {
        let last = self.last_fold.take()?;
        let blank = self
            .out
            .get(last.end..)
            .is_some_and(|s| s.trim().is_empty());
        if !blank || !self.blocks.is_empty() || last.line_at > self.out.len() {
            return None;
        }
        self.out.truncate(last.line_at);
        self.folds_made -= 1;
        Some(last.open)
    }

    /// End the open fold: its line after the block, or no fold at all when the block's
    /// text is shorter than twice the line (a fold must save more than it costs).
    pub(super) fn end_fold(&mut self) {
        let Some(open) = self.fold.take() else {
            return;
        };
        self.flush_line();
        let [s, m, n, e] = fold_markers(open.k);
        let folded = self.out.len() - open.start - s.len();
        let label = label(&open.parts);
        if folded < 2 * (label.len() + RANGE_LEN) {
            self.out.replace_range(open.start..open.start + s.len(), "");
            return;
        }
        let line_at = self.out.len();
        self.out.push_str(&m);
        for (b, was) in self.blocks.iter_mut().zip(&open.used) {
            if let Block::Item { used, .. } = b {
                *used = *was;
            }
        }
        self.need_blank = !self.in_item();
        self.write_line(&format!("{label}{n}]"));
        self.out.push_str(&e);
        self.need_blank = !self.in_item();
        self.folds_made += 1;
        let end = self.out.len();
        self.last_fold = self
            .blocks
            .is_empty()
            .then_some(LastFold { open, line_at, end });
    }
}

/// What the walk has seen inside one open element.
struct Acc {
    id: NodeId,
    eligible: bool,
    landmark: Option<String>,
    links: usize,
    words: usize,
    /// Text or a control outside any link.
    other: bool,
    has_main: bool,
    /// Opens a sectioning scope for header/footer (`article`, `aside`, `main`, `nav`,
    /// `section`), and whether that scope also scopes `aside` (all but `main`).
    scopes: (bool, bool),
    link: bool,
    /// A link to a place on this page (`href="#..."`), and how many such links are inside.
    in_page_link: bool,
    in_page: usize,
    /// Its links' targets and its text, to find a links-only block shown twice (`None`
    /// past [`SIG_MAX`] bytes), and the number of the first leaf (text or link) inside.
    sig: Option<String>,
    first_leaf: Option<usize>,
}

/// Longest signature kept: a longer block is never taken for a repeat.
const SIG_MAX: usize = 4096;

/// Append `more` to a signature, or give it up past [`SIG_MAX`].
fn extend(sig: &mut Option<String>, more: &str) {
    if let Some(s) = sig {
        if s.len() + more.len() > SIG_MAX {
            *sig = None;
        } else {
            s.push_str(more);
        }
    }
}

/// The blocks of `root` that rule 1 or 2 folds, by node (outermost and nested alike).
pub(crate) fn plan(root: ElementRef<'_>) -> HashMap<NodeId, Fold> {
    let mut out = HashMap::new();
    let mut stack: Vec<Acc> = Vec::new();
    // Open scopes: (header/footer scopes, aside scopes); links open.
    let (mut hf_scopes, mut aside_scopes, mut in_link) = (0usize, 0usize, 0usize);
    // Links-only blocks met, by signature: the first leaf of the first one.
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut leaves = 0usize;
    walk(root, |ev| match ev {
        Event::Open(el) => {
            let mut acc = open(el, hf_scopes, aside_scopes, in_link);
            if acc.link {
                leaves += 1;
                acc.first_leaf = Some(leaves);
                let href = el.value().attr("href").unwrap_or_default();
                extend(&mut acc.sig, &format!("\u{1}{}\u{1}", href.trim()));
            }
            hf_scopes += usize::from(acc.scopes.0);
            aside_scopes += usize::from(acc.scopes.1);
            in_link += usize::from(acc.link);
            if let Some(parent) = stack.last_mut() {
                parent.links += usize::from(acc.link);
                parent.in_page += usize::from(acc.in_page_link);
                parent.other |= acc.other;
            }
            stack.push(acc);
        }
        Event::Text(t) => {
            if let Some(top) = stack.last_mut() {
                if !t.trim().is_empty() {
                    leaves += 1;
                    top.first_leaf = top.first_leaf.or(Some(leaves));
                    let words: Vec<&str> = t.split_whitespace().collect();
                    extend(&mut top.sig, &format!(" {}", words.join(" ")));
                }
                top.words += t.split_whitespace().count();
                if in_link == 0 && t.chars().any(char::is_alphabetic) {
                    top.other = true;
                }
            }
        }
        Event::Close(_) => {
            let Some(acc) = stack.pop() else {
                return;
            };
            hf_scopes -= usize::from(acc.scopes.0);
            aside_scopes -= usize::from(acc.scopes.1);
            in_link -= usize::from(acc.link);
            if let Some(parent) = stack.last_mut() {
                parent.links += acc.links;
                parent.in_page += acc.in_page;
                parent.words += acc.words;
                parent.other |= acc.other;
                parent.has_main |= acc.has_main;
                parent.first_leaf = parent.first_leaf.or(acc.first_leaf);
                match &acc.sig {
                    Some(sig) => extend(&mut parent.sig, sig),
                    None => parent.sig = None,
                }
            }
            let links_only = !acc.other && acc.links >= MIN_LINKS && acc.in_page < acc.links;
            let repeat = match (&acc.sig, acc.first_leaf) {
                (Some(sig), Some(leaf)) if acc.links >= MIN_LINKS => {
                    *seen.entry(sig.clone()).or_insert(leaf) != leaf
                }
                _ => false,
            };
            if acc.eligible && !acc.has_main && (acc.landmark.is_some() || links_only || repeat) {
                let landmark = match (acc.landmark, repeat) {
                    (None, true) => Some("repeat".to_string()),
                    (l, _) => l,
                };
                out.insert(
                    acc.id,
                    Fold {
                        landmark,
                        links: acc.links,
                        words: acc.words,
                    },
                );
            }
        }
    });
    out
}

fn open(el: ElementRef<'_>, hf_scopes: usize, aside_scopes: usize, in_link: usize) -> Acc {
    let v = el.value();
    let name = v.name();
    let role = v
        .attr("role")
        .and_then(|r| r.split_whitespace().next())
        .map(str::to_ascii_lowercase);
    let role = role.as_deref();
    let landmark = match (role, name) {
        _ if v
            .attr("aria-hidden")
            .is_some_and(|h| h.trim().eq_ignore_ascii_case("true")) =>
        {
            Some("aria-hidden".to_string())
        }
        (Some(r @ ("navigation" | "banner" | "contentinfo" | "complementary" | "search")), _) => {
            Some(format!("role={r}"))
        }
        (Some(r), _) if WIDGET_ROLES.contains(&r) => Some(format!("role={r}")),
        (_, "nav") => Some("<nav>".to_string()),
        (_, "header" | "footer") if hf_scopes == 0 => Some(format!("<{name}>")),
        (_, "aside") if aside_scopes == 0 => Some("<aside>".to_string()),
        _ => None,
    };
    let is_main = name == "main" || role == Some("main");
    let sectioning = matches!(name, "article" | "aside" | "nav" | "section")
        || matches!(
            role,
            Some("article" | "complementary" | "navigation" | "region")
        );
    let link = name == "a"
        && v.attr("href").is_some_and(|h| {
            !h.trim_start()
                .get(..11)
                .is_some_and(|s| s.eq_ignore_ascii_case("javascript:"))
        });
    let control = match name {
        "form" | "input" | "select" | "textarea" | "button" | "iframe" | "frame" => true,
        "img" => v
            .attr("alt")
            .is_some_and(|a| a.chars().any(char::is_alphanumeric)),
        _ => false,
    };
    Acc {
        id: el.id(),
        eligible: is_block(name)
            && !matches!(
                name,
                "html" | "body" | "main" | "article" | "pre" | "listing" | "xmp" | "iframe"
            )
            && !is_main,
        landmark,
        links: 0,
        words: 0,
        other: control && in_link == 0,
        has_main: is_main,
        scopes: (sectioning || is_main, sectioning),
        link,
        in_page_link: link && v.attr("href").is_some_and(in_page),
        in_page: 0,
        sig: Some(String::new()),
        first_leaf: None,
    }
}

#[cfg(test)]
#[path = "fold_tests.rs"]
mod tests;
