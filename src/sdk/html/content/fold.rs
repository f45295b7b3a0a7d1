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
        let nav = Fold {
            landmark: Some("<nav>".into()),
            links: 1,
            words: 3,
        };
        assert_eq!(
            label(std::slice::from_ref(&nav)),
            "[folded <nav>: 1 link, 3 words; "
        );
        let links = Fold {
            landmark: None,
            links: 4,
            words: 1,
        };
        assert_eq!(
            label(std::slice::from_ref(&links)),
            "[folded 4 links, 1 word; "
        );
        assert_eq!(
            label(&[nav.clone(), links.clone(), nav]),
            "[folded 3 blocks (<nav>, links): 6 links, 7 words; "
        );
    }

    #[test]
    fn hidden_from_assistive_technology_and_widgets_fold_like_landmarks() {
        let got = folds(
            "<div aria-hidden=true id=ah><p>Play Mute Current Time</p></div>\
             <div aria-hidden=false id=shown><p>Text</p></div>\
             <ul role=menubar id=mb><li>File<li>Edit</ul><div role=dialog id=d>Cookies?</div>\
             <main><div role=toolbar id=tb><button>Bold</button></div><p>Body</p></main>",
        );
        let got: Vec<(&str, Option<&str>)> = got
            .iter()
            .map(|(id, f)| (id.as_str(), f.landmark.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("ah", Some("aria-hidden")),
                ("d", Some("role=dialog")),
                ("mb", Some("role=menubar")),
                ("tb", Some("role=toolbar"))
            ]
        );
    }

    #[test]
    fn script_controls_are_not_an_outline() {
        // `#` alone and `#!/route` go nowhere on the page: such a block is links-only;
        // `#id` links are an outline, kept.
        let got = folds(
            "<ul id=menu><li><a href=#>Edit</a><li><a href=#>Delete</a><li><a href='#!/x'>Flag</a></ul>\
             <ul id=toc><li><a href=#a>A</a><li><a href=#b>B</a><li><a href=#c>C</a></ul>",
        );
        let ids: Vec<&str> = got.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, ["menu"]);
        assert!(in_page("#intro") && !in_page("#") && !in_page(" #!/r") && !in_page("/a#b"));
    }

    /// `lean.md` and `content.md` of a page (through the public projection).
    fn both(html: &str) -> (String, String) {
        let url = url::Url::parse("https://site.test/page").unwrap();
        let p = crate::sdk::html::project(html, &url);
        (p.lean.unwrap().md, p.content_md)
    }

    #[test]
    fn adjacent_folds_make_one_line_and_a_shown_again_link_bar_folds() {
        let links = |n: usize, what: &str| {
            (0..n)
                .map(|i| format!("<li><a href=/{what}{i}>{what} number {i} of the site</a>"))
                .collect::<String>()
        };
        let bar = format!(
            "<div class=share><h4>Share this story</h4><ul>{}</ul></div>",
            links(5, "share")
        );
        let html = format!(
            "<header><ul>{}</ul></header><nav><ul>{}</ul></nav>\
             <main><h1>Title</h1>{bar}<p>The article text.</p>{bar}\
             <iframe src=/px width=0 height=0></iframe><iframe src=/v title=Video></iframe></main>",
            links(4, "section"),
            links(3, "topic")
        );
        let (lean, content) = both(&html);
        let folds: Vec<&str> = lean.lines().filter(|l| l.contains("[folded ")).collect();
        assert_eq!(
            folds,
            [
                "[folded 2 blocks (<header>, <nav>): 7 links, 42 words; content.md lines 0..8]",
                "[folded 5 links, 30 words; content.md lines 13..18]",
                "[folded repeat: 5 links, 33 words; content.md lines 21..28]"
            ],
            "{lean}\n---\n{content}"
        );
        // The first bar's list folds (links only, `main` included), its heading stays; the
        // second bar, heading and all, is a repeat. The article stays.
        assert!(lean.contains("#### Share this story") && lean.contains("article text"));
        assert_eq!(lean.matches("Share this story").count(), 1, "{lean}");
        let lines: Vec<&str> = content.lines().collect();
        assert!(lines[0].contains("section number 0"), "{content}");
        assert!(lines[7].contains("topic number 2"), "{content}");
        assert!(
            lines[13..18].iter().all(|l| l.contains("share number")),
            "{content}"
        );
        assert!(lines[21].contains("Share this story"), "{content}");
        assert!(lines[27].contains("share number 4"), "{content}");
        // A frame 0 px wide shows nothing: no line; a real one keeps its note.
        assert!(!content.contains("/px") && lean.contains("[iframe \"Video\"]["));
    }

    #[test]
    fn repeats_are_found_by_links_and_text_not_by_wrappers() {
        // Outlines (`#id` links) are kept, so only the repeat rule can fold these.
        let got = folds(
            "<main><div id=w1><ul id=a><li><a href=#x>X</a><li><a href=#y>Y</a><li><a href=#z>Z</a></ul></div>\
             <p>text</p><div id=w2><ul id=b><li><a href=#x>X</a><li><a href=#y>Y</a><li><a href=#z>Z</a></ul></div>\
             <ul id=c><li><a href=#x>X</a><li><a href=#y>Y</a><li><a href=#q>Z</a></ul></main>",
        );
        let ids: Vec<&str> = got.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, ["b", "w2"], "{got:?}");
        assert_eq!(got[0].1.landmark.as_deref(), Some("repeat"));
    }

    #[test]
    fn a_block_with_text_and_links_shown_again_is_a_repeat() {
        // A "follow us" box (a heading and three links) above and below the article: the
        // second is a repeat; a box with the same links but other text is not.
        let boxed = |id: &str, head: &str, tail: &str| {
            format!(
                "<div id={id}><h3>{head}</h3><p><a href=/fb>Facebook</a> \
                 <a href=/tw>Twitter</a> <a href=/ig>Instagram</a> {tail}</p></div>"
            )
        };
        let got = folds(&format!(
            "<article>{}<p>Body text.</p>{}{}</article>",
            boxed("one", "Follow us", "and more"),
            boxed("two", "Follow us", "and more"),
            boxed("three", "Follow them", "too")
        ));
        let got: Vec<(&str, Option<&str>)> = got
            .iter()
            .map(|(id, f)| (id.as_str(), f.landmark.as_deref()))
            .collect();
        // The second box's paragraph is a repeat too; only the outermost block folds.
        assert_eq!(got, [("p", Some("repeat")), ("two", Some("repeat"))]);
    }

    #[test]
    fn links_only_blocks_fold_inside_main_and_numbers_are_separators() {
        // A menu inside `<main>` and a numbered list of topics (`1.` is no word) fold; a
        // list with words outside its links stays.
        let got = folds(
            "<main><ul id=menu><li><a href=/a>Apps</a><li><a href=/b>Books</a>\
             <li><a href=/c>Cars</a></ul><ol id=top><li>1. <a href=/s>Snoring</a>\
             <li>2. <a href=/f>Flakka</a><li>3. <a href=/t>Testosterone</a></ol>\
             <ul id=prose><li>See <a href=/a>Apps</a><li>or <a href=/b>Books</a>\
             <li>or <a href=/c>Cars</a></ul></main>",
        );
        let ids: Vec<&str> = got.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, ["menu", "top"], "{got:?}");
    }
}
