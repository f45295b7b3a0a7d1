//! `content.md`, `lean.md` and `links.json` (and the lists behind `content.json`): one walk
//! over the visible DOM that maps each element to its markdown form, with every URL as a
//! marker that `refs` renders inline or by reference. Nothing is dropped for looking like
//! navigation; this is a projection, not an extraction.

use std::collections::{HashMap, HashSet};

use scraper::ElementRef;
use url::Url;

use super::content_json::Collected;
use super::dom::{heading_level, is_block, resolve, walk, Collapsed, Event};
use super::forms::{label_attr, summarize};
use super::table::TableState;
use elements::code_lang;
pub(crate) use refs::Refs;

/// Deepest quote/list nesting rendered as prefixes; deeper levels render flat so prefix
/// length (and output size) stays linear in the input.
const MAX_BLOCK_DEPTH: usize = 32;
/// Deepest nesting of simultaneous text captures (links inside headings inside cells...).
const MAX_CAPTURES: usize = 8;

/// What the composer needs to know about the document besides its body.
pub(crate) struct DocContext<'a> {
    pub(crate) doc_url: &'a Url,
    /// The document URL after `<base href>`.
    pub(crate) base: Url,
    pub(crate) title: Option<String>,
    /// Tables containing another table (rendered as blocks, not markdown tables).
    pub(crate) layout_tables: HashSet<ego_tree::NodeId>,
    /// The blocks `lean.md` may fold ([`fold::plan`]).
    pub(crate) folds: HashMap<ego_tree::NodeId, fold::Fold>,
}

enum Block {
    Quote,
    Item { marker: String, used: bool },
}

enum Kind {
    Plain,
    Heading(usize),
    Link {
        href: Option<Url>,
        start: usize,
    },
    List,
    Item,
    Quote,
    Pre,
    DataTable,
    Row,
    Cell {
        saved: String,
        header: bool,
        colspan: usize,
    },
    Caption {
        saved: String,
    },
    Form,
    /// `muted`: a button inside a form, whose caption the form summary already shows.
    Button {
        muted: bool,
    },
}

struct Frame {
    kind: Kind,
    block: bool,
    inline: bool,
    capture: bool,
    /// This element's block is folded in `lean.md` (see `fold`).
    fold: bool,
}

/// A fold being written: its number, where its start marker is in `out`, the list items'
/// `used` flags when it started (its line takes the item's marker if the block did) and
/// what it folds.
struct OpenFold {
    k: usize,
    start: usize,
    used: Vec<bool>,
    /// The blocks it folds (more than one when adjacent folds join).
    parts: Vec<fold::Fold>,
}

struct Pre {
    raw: String,
    lang: Option<String>,
    depth: usize,
}

struct Composer<'c> {
    ctx: &'c DocContext<'c>,
    out: String,
    line: String,
    pending_space: bool,
    lead: Option<String>,
    need_blank: bool,
    blocks: Vec<Block>,
    lists: Vec<(bool, u64)>,
    inline_only: usize,
    captures: Vec<Collapsed>,
    frames: Vec<Frame>,
    pre: Option<Pre>,
    tables: Vec<TableState>,
    form_depth: usize,
    /// While > 0, text is captured but not written (see `Kind::Button`).
    muted: usize,
    items: Collected,
    /// Line length right after the last `[`: no space goes directly after it.
    link_open_at: Option<usize>,
    /// The URLs behind the markers.
    refs: Refs,
    /// The fold being written, and how many were made.
    fold: Option<OpenFold>,
    folds_made: usize,
    /// The last top-level fold, which an adjacent one may join.
    last_fold: Option<fold::LastFold>,
}

/// Compose the marked markdown view (render it with [`Refs::render`]) and collect the
/// structured lists.
pub(crate) fn compose(root: ElementRef<'_>, ctx: &DocContext<'_>) -> (String, Collected, Refs) {
    let mut c = Composer {
        ctx,
        out: String::new(),
        line: String::new(),
        pending_space: false,
        lead: None,
        need_blank: false,
        blocks: Vec::new(),
        lists: Vec::new(),
        inline_only: 0,
        captures: Vec::new(),
        frames: Vec::new(),
        pre: None,
        tables: Vec::new(),
        form_depth: 0,
        muted: 0,
        items: Collected::default(),
        link_open_at: None,
        refs: Refs::default(),
        fold: None,
        folds_made: 0,
        last_fold: None,
    };
    if let Some(t) = ctx.title.as_deref().filter(|t| !t.is_empty()) {
        c.write_line(&format!("# {t}"));
        c.need_blank = true;
    }
    walk(root, |ev| match ev {
        Event::Open(el) => c.open(el),
        Event::Close(el) => c.close(el),
        Event::Text(t) => c.text(t),
    });
    c.flush_line();
    let mut md = c.out;
    while md.ends_with(char::is_whitespace) {
        md.pop();
    }
    if !md.is_empty() {
        md.push('\n');
    }
    (md, c.items, c.refs)
}

fn attr_text(el: ElementRef<'_>, name: &str) -> Option<String> {
    el.value()
        .attr(name)
        .map(|a| super::dom::collapse(&refs::strip_nul(a)))
        .filter(|s| !s.is_empty())
}

mod elements;
pub(crate) mod fold;
mod output;
mod refs;

impl Composer<'_> {
    // ---- elements ----

    fn open(&mut self, el: ElementRef<'_>) {
        let name = el.value().name();
        if let Some(pre) = &mut self.pre {
            match name {
                "br" => pre.raw.push('\n'),
                "pre" | "listing" | "xmp" => pre.depth += 1,
                "code" if pre.lang.is_none() => pre.lang = code_lang(el),
                _ => {}
            }
            return;
        }
        let mut f = Frame {
            kind: Kind::Plain,
            block: false,
            inline: false,
            capture: false,
            fold: self.start_fold(el),
        };
        match name {
            "br" => {
                if self.inline_only > 0 {
                    self.space();
                } else {
                    self.flush_line();
                }
            }
            "a" => {
                let href = el
                    .value()
                    .attr("href")
                    .and_then(|h| resolve(&self.ctx.base, h))
                    .filter(|u| u.scheme() != "javascript");
                if href.is_some() {
                    self.open_marker("[");
                    self.link_open_at = Some(self.line.len());
                }
                let start = self.line.len().saturating_sub(1);
                f.kind = Kind::Link { href, start };
                f.inline = true;
                f.capture = true;
            }
            "img" => self.image(el),
            "iframe" | "frame" => self.frame(el),
            "hr" => {
                self.block(true);
                if self.inline_only == 0 {
                    self.write_line("---");
                    self.need_blank = true;
                }
            }
            "ul" | "ol" | "menu" => {
                self.block(true);
                let start = el
                    .value()
                    .attr("start")
                    .and_then(|s| s.trim().parse::<u64>().ok())
                    .unwrap_or(1);
                self.lists.push((name == "ol", start));
                f.kind = Kind::List;
            }
            "li" => {
                self.block(false);
                if self.inline_only == 0 && self.blocks.len() < MAX_BLOCK_DEPTH {
                    let marker = match self.lists.last_mut() {
                        Some((true, n)) => {
                            let m = format!("{n}. ");
                            *n += 1;
                            m
                        }
                        _ => "- ".to_string(),
                    };
                    self.blocks.push(Block::Item {
                        marker,
                        used: false,
                    });
                    f.kind = Kind::Item;
                }
            }
            "blockquote" => {
                self.block(true);
                if self.inline_only == 0 && self.blocks.len() < MAX_BLOCK_DEPTH {
                    // The separating blank line belongs outside the quote.
                    self.emit_pending_blank();
                    self.blocks.push(Block::Quote);
                    f.kind = Kind::Quote;
                }
                f.block = true;
            }
            "pre" | "listing" | "xmp" if self.inline_only == 0 => {
                self.block(true);
                self.pre = Some(Pre {
                    raw: String::new(),
                    lang: code_lang(el),
                    depth: 1,
                });
                f.kind = Kind::Pre;
            }
            "table" => {
                let data = self.inline_only == 0
                    && self.tables.is_empty()
                    && !self.ctx.layout_tables.contains(&el.id());
                self.block(true);
                if data {
                    self.tables.push(TableState::default());
                    f.kind = Kind::DataTable;
                    f.inline = true;
                } else {
                    f.block = true;
                }
            }
            "tr" if !self.tables.is_empty() => {
                let in_thead = el
                    .parent()
                    .and_then(|p| p.value().as_element().map(|e| e.name() == "thead"))
                    .unwrap_or(false);
                if let Some(t) = self.tables.last_mut() {
                    t.start_row(in_thead);
                }
                f.kind = Kind::Row;
            }
            "td" | "th" if !self.tables.is_empty() => {
                let saved = std::mem::take(&mut self.line);
                self.pending_space = false;
                let colspan = el
                    .value()
                    .attr("colspan")
                    .and_then(|s| s.trim().parse::<usize>().ok())
                    .unwrap_or(1);
                f.kind = Kind::Cell {
                    saved,
                    header: name == "th",
                    colspan,
                };
                f.capture = true;
            }
            "caption" if !self.tables.is_empty() => {
                let saved = std::mem::take(&mut self.line);
                self.pending_space = false;
                f.kind = Kind::Caption { saved };
            }
            "tr" | "td" | "th" => f.block = true,
            "form" => {
                let summary = summarize(el, &self.ctx.base, self.ctx.doc_url);
                self.block(true);
                if self.inline_only == 0 {
                    let name = format!("form {}", summary.method());
                    let action = self.refs.form_action(summary.action().to_string(), &name);
                    self.write_line(&summary.md_line(&action));
                    self.need_blank = true;
                }
                self.items.action(summary.to_json());
                self.form_depth += 1;
                f.kind = Kind::Form;
                f.block = true;
            }
            "button" => {
                let muted = self.form_depth > 0;
                if muted {
                    self.muted += 1;
                }
                f.kind = Kind::Button { muted };
                f.capture = true;
            }
            "input" if self.form_depth == 0 => {
                let v = el.value();
                let ty = v.attr("type").map(|t| t.trim().to_ascii_lowercase());
                if matches!(ty.as_deref(), Some("submit" | "button" | "reset")) {
                    self.items.button(label_attr(el).unwrap_or_default());
                }
            }
            _ => {
                if let Some(level) = heading_level(name) {
                    self.block(true);
                    if self.inline_only == 0 {
                        self.lead = Some(format!("{} ", "#".repeat(level)));
                    }
                    f.kind = Kind::Heading(level);
                    f.inline = true;
                    f.capture = true;
                } else if is_block(name) {
                    self.block(true);
                    f.block = true;
                }
            }
        }
        if f.inline {
            self.inline_only += 1;
        }
        if f.capture {
            if self.captures.len() < MAX_CAPTURES {
                self.captures.push(Collapsed::default());
            } else {
                f.capture = false;
            }
        }
        self.frames.push(f);
    }

    fn close(&mut self, el: ElementRef<'_>) {
        if let Some(pre) = &mut self.pre {
            if matches!(el.value().name(), "pre" | "listing" | "xmp") {
                pre.depth -= 1;
                if pre.depth == 0 {
                    self.finish_pre();
                    self.frames.pop();
                }
            }
            return;
        }
        let Some(f) = self.frames.pop() else {
            return;
        };
        let captured = if f.capture {
            self.captures
                .pop()
                .map(Collapsed::finish)
                .unwrap_or_default()
        } else {
            String::new()
        };
        if f.inline {
            self.inline_only = self.inline_only.saturating_sub(1);
        }
        match f.kind {
            Kind::Plain | Kind::Pre => {}
            Kind::Heading(level) => {
                self.items.heading(level, captured);
                self.block(true);
            }
            Kind::Link { href, start } => self.close_link(el, href, start, captured),
            Kind::List => {
                self.lists.pop();
                self.block(true);
            }
            Kind::Item | Kind::Quote => {
                self.flush_line();
                self.blocks.pop();
            }
            Kind::DataTable => self.finish_table(),
            Kind::Row => {
                if let Some(t) = self.tables.last_mut() {
                    t.end_row();
                }
            }
            Kind::Cell {
                saved,
                header,
                colspan,
            } => {
                let md = std::mem::replace(&mut self.line, saved);
                self.pending_space = false;
                if let Some(t) = self.tables.last_mut() {
                    t.cell(md.trim().to_string(), captured, header, colspan);
                }
            }
            Kind::Caption { saved } => {
                let md = std::mem::replace(&mut self.line, saved);
                self.pending_space = false;
                if let Some(t) = self.tables.last_mut() {
                    t.caption = Some(md.trim().to_string()).filter(|c| !c.is_empty());
                }
            }
            Kind::Form => self.form_depth = self.form_depth.saturating_sub(1),
            Kind::Button { muted } => {
                if muted {
                    self.muted = self.muted.saturating_sub(1);
                } else {
                    let text = if captured.is_empty() {
                        label_attr(el).unwrap_or_default()
                    } else {
                        captured
                    };
                    self.items.button(text);
                }
            }
        }
        if f.block {
            self.block(true);
        }
        if f.fold {
            self.end_fold();
        }
    }
}
