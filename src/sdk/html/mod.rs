//! Mechanical HTML projection: visible text, `content.md` and `content.json`, with no
//! readability heuristics. The one projection for both paths: an HTTP body, or the rendered
//! DOM the browser path flattens (`assets/js/flatten.js`: open shadow roots as declarative
//! roots, same-origin iframe documents inlined in `<afhttp-frame>`). Spec §2: a projection,
//! not an extraction. Also the cheap facts the `--render auto` decision needs ([`ShellFacts`]).
//!
//! Parse once with [`ParsedHtml::parse`] when both the projection and the shell facts are
//! needed; the visible text is computed once and shared.

mod content;
mod content_json;
mod dom;
mod forms;
mod shadow;
mod shell;
mod subresources;
mod table;
mod text;

#[cfg(test)]
mod tests;

use std::cell::OnceCell;
use std::collections::HashSet;

use ego_tree::iter::Edge;
use scraper::{ElementRef, Html, Node};
use url::Url;

pub use content_json::MAX_ITEMS;
pub use shell::ShellFacts;

/// The text artifacts projected from one document.
#[derive(Debug, Clone, Default)]
pub struct Projection {
    /// Visible text, in document order (`text.txt`).
    pub text: String,
    /// Composed markdown view (`content.md`).
    pub content_md: String,
    /// Structured form of the content (`content.json`).
    pub content_json: serde_json::Value,
    /// The same view with links by reference (`lean.md`, `links.json`); `None` for a
    /// projection that is not from HTML (a document's), whose lean form is derived by
    /// [`Projection::lean`].
    pub lean: Option<Lean>,
}

/// `lean.md` and `links.json`: `content.md` with every link as `[text][n]`, `n` an entry of
/// the link table, and image sources left out (alt text stays).
#[derive(Debug, Clone, Default)]
pub struct Lean {
    /// The lean markdown (`lean.md`).
    pub md: String,
    /// The link table (`links.json`).
    pub links: serde_json::Value,
}

impl Projection {
    /// The lean form: the HTML projection's own, or for a document `content.md` as it is with
    /// the links `content.json` lists (a document's markdown keeps its inline links).
    pub fn lean(&self, page_url: &Url) -> Lean {
        if let Some(l) = &self.lean {
            return l.clone();
        }
        let mut refs = content::Refs::default();
        if let Some(links) = self.content_json["links"].as_array() {
            for l in links {
                if let Some(href) = l["href"].as_str() {
                    refs.target(href.to_string(), l["text"].as_str().unwrap_or(""), "link");
                }
            }
        }
        Lean {
            md: self.content_md.clone(),
            links: refs.links_json(page_url),
        }
    }
}

/// An HTML document parsed once (html5ever, scripting-enabled rules like a browser).
///
/// Not `Send`: parse, project and drop it on one thread (e.g. inside `spawn_blocking`).
pub struct ParsedHtml {
    doc: Html,
    text: OnceCell<String>,
}

impl std::fmt::Debug for ParsedHtml {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParsedHtml").finish_non_exhaustive()
    }
}

impl ParsedHtml {
    /// Parse `html` (already decoded to a string). Never fails: HTML parsing recovers.
    pub fn parse(html: &str) -> Self {
        let mut doc = Html::parse_document(html);
        shadow::compose(&mut doc);
        ParsedHtml {
            doc,
            text: OnceCell::new(),
        }
    }

    /// Visible text approximating `innerText` (the `text.txt` artifact).
    pub fn text(&self) -> &str {
        self.text
            .get_or_init(|| text::visible_text(self.doc.root_element()))
    }

    /// `document.title`: the first HTML `<title>`, whitespace collapsed.
    pub fn title(&self) -> Option<String> {
        self.doc
            .tree
            .nodes()
            .filter_map(ElementRef::wrap)
            .find(|e| e.value().name() == "title" && !inside_svg(*e))
            .map(|e| dom::collapse(&e.text().collect::<String>()))
    }

    /// The root element's `lang` attribute.
    pub fn lang(&self) -> Option<String> {
        self.doc
            .root_element()
            .value()
            .attr("lang")
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
    }

    /// The URL links resolve against: `<base href>` (itself resolved) or `doc_url`.
    pub fn base_url(&self, doc_url: &Url) -> Url {
        self.doc
            .tree
            .nodes()
            .filter_map(ElementRef::wrap)
            .filter(|e| e.value().name() == "base")
            .find_map(|e| e.value().attr("href"))
            .and_then(|h| dom::resolve(doc_url, h))
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .unwrap_or_else(|| doc_url.clone())
    }

    /// Project the document fetched from `doc_url` into the three artifacts.
    pub fn project(&self, doc_url: &Url) -> Projection {
        let text = self.text().to_string();
        let title = self.title();
        let ctx = content::DocContext {
            doc_url,
            base: self.base_url(doc_url),
            title: title.clone(),
            layout_tables: self.layout_tables(),
            folds: content::fold::plan(self.doc.root_element()),
        };
        let (marked, items, refs) = content::compose(self.doc.root_element(), &ctx);
        let (content_md, lean_md) = refs.render_both(&marked);
        let lean = Lean {
            md: lean_md,
            links: refs.links_json(doc_url),
        };
        let lang = self.lang();
        let content_json = items.into_json(
            doc_url.as_str(),
            title.as_deref(),
            lang.as_deref(),
            text.len(),
        );
        Projection {
            text,
            content_md,
            content_json,
            lean: Some(lean),
        }
    }

    /// Mechanical facts about whether this is an empty application shell.
    pub fn shell_facts(&self) -> ShellFacts {
        shell::facts(&self.doc, self.text())
    }

    /// Visible controls a person types into or picks from (text-like inputs, `select`,
    /// `textarea`), not counting captcha response fields. Used to tell a captcha wall from
    /// a login form that embeds a captcha.
    pub fn user_input_count(&self) -> usize {
        shell::user_input_count(&self.doc)
    }

    /// Tables that contain another table, found in one pass with a stack of open tables.
    fn layout_tables(&self) -> HashSet<ego_tree::NodeId> {
        let mut set = HashSet::new();
        let mut open: Vec<ego_tree::NodeId> = Vec::new();
        for edge in self.doc.tree.root().traverse() {
            match edge {
                Edge::Open(n) if is_table(n.value()) => {
                    if let Some(outer) = open.last() {
                        set.insert(*outer);
                    }
                    open.push(n.id());
                }
                Edge::Close(n) if is_table(n.value()) => {
                    open.pop();
                }
                _ => {}
            }
        }
        set
    }
}

fn is_table(n: &Node) -> bool {
    n.as_element().is_some_and(|e| e.name() == "table")
}

fn inside_svg(e: ElementRef<'_>) -> bool {
    e.ancestors()
        .filter_map(ElementRef::wrap)
        .any(|a| a.value().name() == "svg")
}

/// Project `html` (already decoded to a string) fetched from `base`.
pub fn project(html: &str, base: &Url) -> Projection {
    ParsedHtml::parse(html).project(base)
}

/// Shell facts for `html`, parsing it (use [`ParsedHtml`] to share one parse).
pub fn shell_facts(html: &str) -> ShellFacts {
    ParsedHtml::parse(html).shell_facts()
}
