//! Shared DOM plumbing: an iterative visible-node walk, the CSS-default facts the
//! projections rely on (which elements are blocks, which are never rendered) and URL
//! resolution.
//!
//! The walk is iterative on purpose: a hostile 5 MB document nested a million levels deep
//! must not overflow the stack.

use ego_tree::iter::Edge;
use scraper::node::Element;
use scraper::{ElementRef, Node};
use url::Url;

/// One step of the visible walk.
pub(crate) enum Event<'a> {
    /// An element starts (its children follow unless it is [`suppresses_children`]).
    Open(ElementRef<'a>),
    /// An element ends.
    Close(ElementRef<'a>),
    /// A text node.
    Text(&'a str),
}

/// Walk `root` in document order, skipping subtrees a browser does not render.
pub(crate) fn walk<'a>(root: ElementRef<'a>, mut f: impl FnMut(Event<'a>)) {
    // While set, everything up to the close of this node is skipped.
    let mut skip: Option<ego_tree::NodeId> = None;
    for edge in root.traverse() {
        match edge {
            Edge::Open(node) => {
                if skip.is_some() {
                    continue;
                }
                match node.value() {
                    Node::Text(t) => {
                        let parent_mute = node
                            .parent()
                            .and_then(|p| p.value().as_element().map(suppresses_children))
                            .unwrap_or(false);
                        if !parent_mute {
                            f(Event::Text(t));
                        }
                    }
                    Node::Element(el) => {
                        if is_hidden(el) {
                            skip = Some(node.id());
                        } else if let Some(er) = ElementRef::wrap(node) {
                            f(Event::Open(er));
                        }
                    }
                    _ => {}
                }
            }
            Edge::Close(node) => {
                if let Some(id) = skip {
                    if id == node.id() {
                        skip = None;
                    }
                    continue;
                }
                if node.value().is_element() {
                    if let Some(er) = ElementRef::wrap(node) {
                        f(Event::Close(er));
                    }
                }
            }
        }
    }
}

/// Whether an element (and its subtree) is not rendered, from markup alone: never-rendered
/// elements, the `hidden` attribute, inline `display:none`, `<input type=hidden>`, and a
/// `<dialog>` that is not open.
pub(crate) fn is_hidden(el: &Element) -> bool {
    match el.name() {
        "script" | "style" | "noscript" | "template" | "head" | "title" | "meta" | "link"
        | "base" => return true,
        "input" if attr_eq(el, "type", "hidden") => return true,
        "dialog" if el.attr("open").is_none() => return true,
        _ => {}
    }
    if el.attr("hidden").is_some() {
        return true;
    }
    el.attr("style").is_some_and(style_display_none)
}

/// Elements whose text children are not rendered as text (replaced elements, raw text
/// fallbacks): the walk still opens and closes them.
pub(crate) fn suppresses_children(el: &Element) -> bool {
    matches!(
        el.name(),
        "iframe" | "textarea" | "select" | "video" | "audio" | "canvas" | "object" | "svg"
    )
}

fn style_display_none(style: &str) -> bool {
    let compact: String = style
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    compact
        .split(';')
        .any(|decl| decl == "display:none" || decl == "display:none!important")
}

/// Case-insensitive attribute comparison (for enumerated attributes like `type`).
pub(crate) fn attr_eq(el: &Element, name: &str, value: &str) -> bool {
    el.attr(name)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case(value))
}

/// Elements the default stylesheet lays out as blocks (a line break before and after).
pub(crate) fn is_block(name: &str) -> bool {
    matches!(
        name,
        "address"
            | "article"
            | "aside"
            | "blockquote"
            | "body"
            | "center"
            | "dd"
            | "details"
            | "dialog"
            | "dir"
            | "div"
            | "dl"
            | "dt"
            | "fieldset"
            | "figcaption"
            | "figure"
            | "footer"
            | "form"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "header"
            | "hgroup"
            | "hr"
            | "html"
            | "legend"
            | "li"
            | "listing"
            | "main"
            | "menu"
            | "nav"
            | "ol"
            | "p"
            | "pre"
            | "search"
            | "section"
            | "summary"
            | "table"
            | "caption"
            | "ul"
            | "iframe"
            // A same-origin frame's document, inlined by the browser path.
            | "afhttp-frame"
    )
}

/// The heading level of `h1`..`h6`.
pub(crate) fn heading_level(name: &str) -> Option<usize> {
    match name {
        "h1" => Some(1),
        "h2" => Some(2),
        "h3" => Some(3),
        "h4" => Some(4),
        "h5" => Some(5),
        "h6" => Some(6),
        _ => None,
    }
}

/// Resolve a link target against the document base; `None` when it cannot be resolved.
pub(crate) fn resolve(base: &Url, href: &str) -> Option<Url> {
    let href = href.trim();
    base.join(href).ok()
}

/// Shorten `data:` URLs to their media type so a 1 MB inline image does not land in JSON.
pub(crate) fn display_url(url: &Url) -> String {
    if url.scheme() == "data" {
        let s = url.as_str();
        let head = s.split([',', ';']).next().unwrap_or("data:");
        return format!("{head},…");
    }
    url.to_string()
}

/// Appends text with CSS `white-space: normal` collapsing: runs of whitespace become one
/// space, never at the start.
#[derive(Default)]
pub(crate) struct Collapsed {
    pub(crate) buf: String,
    pending_space: bool,
}

impl Collapsed {
    /// Append `s`, collapsing whitespace.
    pub(crate) fn push(&mut self, s: &str) {
        for ch in s.chars() {
            if ch.is_whitespace() {
                self.pending_space = true;
            } else {
                if self.pending_space && !self.buf.is_empty() {
                    self.buf.push(' ');
                }
                self.pending_space = false;
                self.buf.push(ch);
            }
        }
    }

    /// A separator that should read as a space (a block boundary inside inline content).
    pub(crate) fn space(&mut self) {
        self.pending_space = true;
    }

    /// The collapsed text, trimmed.
    pub(crate) fn finish(self) -> String {
        self.buf
    }
}

/// Collapse whitespace in one go.
pub(crate) fn collapse(s: &str) -> String {
    let mut c = Collapsed::default();
    c.push(s);
    c.finish()
}
