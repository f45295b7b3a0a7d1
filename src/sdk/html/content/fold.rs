//! Which blocks `lean.md` folds into one line (`[folded <nav>: 23 links, 40 words; content.md
//! lines 4..28]`), decided by two mechanical rules over the visible DOM, never by scoring:
//!
//! 1. **Landmarks the author marked as not the main content**, as HTML-AAM maps elements to
//!    ARIA landmarks: `<nav>` (navigation); `<header>` and `<footer>` when not inside
//!    `article`, `aside`, `main`, `nav` or `section` (banner, contentinfo); `<aside>` when not
//!    inside `article`, `aside`, `nav` or `section` (complementary); and any block whose
//!    `role` is `navigation`, `banner`, `contentinfo` or `complementary`.
//! 2. **Blocks made only of links**: a block whose visible text is all inside links (besides
//!    separators such as `|`, `·` or `,`), with at least [`MIN_LINKS`] links, and nothing
//!    else a reader acts on (no form control, frame, or image with alt text outside a link);
//!    not inside `main` or `article` (or their roles), where the author put them among the
//!    content, and not when every link is to a place on the page itself (`#...`: its outline).
//!
//! Never folded: `main`, `article`, `body`, preformatted text, or anything holding `<main>`
//! (or `role=main`). The composer folds only the outermost candidate, and only when the
//! folded text is at least twice as long as the line replacing it (see `Composer`).
//! Everything folded stays in `content.md` (the line says where) and its links in
//! `links.json`.

use std::collections::HashMap;

use ego_tree::NodeId;
use scraper::ElementRef;

use super::super::dom::{is_block, walk, Event};
use super::refs::fold_markers;
use super::{Block, Composer, OpenFold};

/// Fewest links a links-only block needs to be folded.
pub(crate) const MIN_LINKS: usize = 3;

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
    /// The fold line without its `content.md` range (the renderer adds it).
    pub(crate) fn label(&self) -> String {
        let what = match &self.landmark {
            Some(l) => format!("{l}: "),
            None => String::new(),
        };
        let s = |n: usize| if n == 1 { "" } else { "s" };
        format!(
            "[folded {what}{} link{}, {} word{}; ",
            self.links,
            s(self.links),
            self.words,
            s(self.words)
        )
    }
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
            label: plan.label(),
        });
        true
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
        if folded < 2 * (open.label.len() + RANGE_LEN) {
            self.out.replace_range(open.start..open.start + s.len(), "");
            return;
        }
        self.out.push_str(&m);
        for (b, was) in self.blocks.iter_mut().zip(open.used) {
            if let Block::Item { used, .. } = b {
                *used = was;
            }
        }
        self.need_blank = !self.in_item();
        self.write_line(&format!("{}{n}]", open.label));
        self.out.push_str(&e);
        self.need_blank = !self.in_item();
        self.folds_made += 1;
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
    /// `main`, `article` (or their roles).
    main_like: bool,
    /// Inside one of those.
    in_main: bool,
}

/// The blocks of `root` that rule 1 or 2 folds, by node (outermost and nested alike).
pub(crate) fn plan(root: ElementRef<'_>) -> HashMap<NodeId, Fold> {
    let mut out = HashMap::new();
    let mut stack: Vec<Acc> = Vec::new();
    // Open scopes: (header/footer scopes, aside scopes); links open.
    let (mut hf_scopes, mut aside_scopes, mut in_link) = (0usize, 0usize, 0usize);
    // Open `main`/`article` elements: their links-only blocks are not folded.
    let mut in_main = 0usize;
    walk(root, |ev| match ev {
        Event::Open(el) => {
            let mut acc = open(el, hf_scopes, aside_scopes, in_link);
            acc.in_main = in_main > 0;
            in_main += usize::from(acc.main_like);
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
                top.words += t.split_whitespace().count();
                if in_link == 0 && t.chars().any(char::is_alphanumeric) {
                    top.other = true;
                }
            }
        }
        Event::Close(_) => {
            let Some(acc) = stack.pop() else {
                return;
            };
            in_main -= usize::from(acc.main_like);
            hf_scopes -= usize::from(acc.scopes.0);
            aside_scopes -= usize::from(acc.scopes.1);
            in_link -= usize::from(acc.link);
            if let Some(parent) = stack.last_mut() {
                parent.links += acc.links;
                parent.in_page += acc.in_page;
                parent.words += acc.words;
                parent.other |= acc.other;
                parent.has_main |= acc.has_main;
            }
            let links_only =
                !acc.other && acc.links >= MIN_LINKS && acc.in_page < acc.links && !acc.in_main;
            if acc.eligible && !acc.has_main && (acc.landmark.is_some() || links_only) {
                out.insert(
                    acc.id,
                    Fold {
                        landmark: acc.landmark,
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
        (Some(r @ ("navigation" | "banner" | "contentinfo" | "complementary")), _) => {
            Some(format!("role={r}"))
        }
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
        in_page_link: link
            && v.attr("href")
                .is_some_and(|h| h.trim_start().starts_with('#')),
        in_page: 0,
        main_like: is_main || name == "article" || role == Some("article"),
        in_main: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scraper::Html;

    fn folds(html: &str) -> Vec<(String, Fold)> {
        let doc = Html::parse_document(html);
        let plan = plan(doc.root_element());
        let mut v: Vec<(String, Fold)> = doc
            .tree
            .nodes()
            .filter_map(|n| {
                let f = plan.get(&n.id())?;
                let el = ElementRef::wrap(n)?;
                let id = el.value().attr("id").unwrap_or(el.value().name());
                Some((id.to_string(), f.clone()))
            })
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    #[test]
    fn landmarks_by_html_aam_scoping() {
        let got = folds(
            "<header id=h><a href=/>Home</a></header>\
             <main><article><header id=ah>Title</header><footer id=af>By me</footer>\
             <aside id=pull>A quote</aside></article><aside id=side>Related</aside></main>\
             <div role=contentinfo id=ci>c</div><nav id=n>x</nav><footer id=f>© 2024</footer>",
        );
        let ids: Vec<&str> = got.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, ["ci", "f", "h", "n", "side"]);
        let f = &got[1].1;
        assert_eq!(f.landmark.as_deref(), Some("<footer>"));
        assert_eq!((f.links, f.words), (0, 2));
        assert_eq!(got[0].1.landmark.as_deref(), Some("role=contentinfo"));
    }

    #[test]
    fn links_only_blocks_need_three_links_and_nothing_else() {
        let got = folds(
            "<ul id=menu><li><a href=/a>A</a> | <li><a href=/b>B b</a><li><a href=/c>C</a></ul>\
             <p id=two><a href=/a>A</a> <a href=/b>B</a></p>\
             <p id=prose><a href=/a>A</a> and <a href=/b>B</a>, <a href=/c>C</a></p>\
             <div id=form><a href=/a>A</a><a href=/b>B</a><a href=/c>C</a><input name=q></div>\
             <div id=js><a href=/a>A</a><a href=/b>B</a><a href='javascript:x()'>C</a></div>\
             <div id=imgs><a href=/a><img alt=Logo></a><a href=/b>B</a><a href=/c>C</a></div>",
        );
        let ids: Vec<&str> = got.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, ["imgs", "menu"]);
        assert_eq!(got[1].1.landmark, None);
        assert_eq!((got[1].1.links, got[1].1.words), (3, 5));
    }

    #[test]
    fn never_main_or_what_holds_it() {
        let got = folds(
            "<div role=navigation id=wrap><main><a href=/a>A</a><a href=/b>B</a>\
             <a href=/c>C</a></main></div><pre id=p><a href=/a>A</a><a href=/b>B</a>\
             <a href=/c>C</a></pre>",
        );
        assert!(got.is_empty(), "{got:?}");
    }

    #[test]
    fn label_says_what_it_folds() {
        let f = Fold {
            landmark: Some("<nav>".into()),
            links: 1,
            words: 3,
        };
        assert_eq!(f.label(), "[folded <nav>: 1 link, 3 words; ");
        let f = Fold {
            landmark: None,
            links: 4,
            words: 1,
        };
        assert_eq!(f.label(), "[folded 4 links, 1 word; ");
    }
}
