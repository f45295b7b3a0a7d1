//! `text.txt`: visible text approximating `innerText` from markup and the default
//! stylesheet (no CSS from the page, no layout).

use scraper::ElementRef;

use super::dom::{is_block, walk, Event};

/// Builds text the way `innerText` does: collapsed whitespace, "required line breaks" around
/// blocks (two around `<p>`), literal newlines for `<br>`, tabs between table cells.
#[derive(Default)]
struct TextBuilder {
    out: String,
    pending_space: bool,
    pending_breaks: usize,
    /// Cells seen so far in each open table row (rows can nest through nested tables).
    rows: Vec<usize>,
    pre_depth: usize,
}

impl TextBuilder {
    fn flush_breaks(&mut self) {
        if self.pending_breaks == 0 {
            return;
        }
        if !self.out.is_empty() {
            while self.out.ends_with([' ', '\t']) {
                self.out.pop();
            }
            let have = self.out.len() - self.out.trim_end_matches('\n').len();
            for _ in have..self.pending_breaks {
                self.out.push('\n');
            }
        }
        self.pending_breaks = 0;
        self.pending_space = false;
    }

    fn text(&mut self, s: &str) {
        if self.pre_depth > 0 {
            if s.is_empty() {
                return;
            }
            self.flush_breaks();
            if self.pending_space
                && !self.out.is_empty()
                && !self.out.ends_with(char::is_whitespace)
            {
                self.out.push(' ');
            }
            self.pending_space = false;
            self.out.push_str(&s.replace("\r\n", "\n"));
            return;
        }
        for ch in s.chars() {
            if ch.is_whitespace() {
                self.pending_space = true;
                continue;
            }
            self.flush_breaks();
            if self.pending_space && !self.out.is_empty() && !self.out.ends_with(['\n', '\t', ' '])
            {
                self.out.push(' ');
            }
            self.pending_space = false;
            self.out.push(ch);
        }
    }

    fn breaks(&mut self, n: usize) {
        self.pending_breaks = self.pending_breaks.max(n);
        self.pending_space = false;
    }

    fn open(&mut self, el: ElementRef<'_>) {
        let name = el.value().name();
        match name {
            "br" => {
                self.flush_breaks();
                self.pending_space = false;
                self.out.push('\n');
            }
            "tr" => {
                self.breaks(1);
                self.rows.push(0);
            }
            "td" | "th" => {
                let seen = self.rows.last().copied();
                if let Some(cells) = self.rows.last_mut() {
                    *cells += 1;
                }
                if seen.is_some_and(|n| n > 0) {
                    self.flush_breaks();
                    while self.out.ends_with(' ') {
                        self.out.pop();
                    }
                    self.out.push('\t');
                    self.pending_space = false;
                }
            }
            "p" => self.breaks(2),
            _ if is_block(name) => self.breaks(1),
            _ => {}
        }
        if matches!(name, "pre" | "listing" | "plaintext" | "xmp") {
            self.pre_depth += 1;
        }
    }

    fn close(&mut self, el: ElementRef<'_>) {
        let name = el.value().name();
        match name {
            "tr" => {
                self.rows.pop();
                self.breaks(1);
            }
            "p" => self.breaks(2),
            _ if is_block(name) => self.breaks(1),
            _ => {}
        }
        if matches!(name, "pre" | "listing" | "plaintext" | "xmp") {
            self.pre_depth = self.pre_depth.saturating_sub(1);
        }
    }

    fn finish(mut self) -> String {
        while self.out.ends_with(char::is_whitespace) {
            self.out.pop();
        }
        if !self.out.is_empty() {
            self.out.push('\n');
        }
        self.out
    }
}

/// Visible text of the document rooted at `root`, newline-terminated when non-empty.
pub(crate) fn visible_text(root: ElementRef<'_>) -> String {
    let mut b = TextBuilder::default();
    walk(root, |ev| match ev {
        Event::Open(el) => b.open(el),
        Event::Close(el) => b.close(el),
        Event::Text(t) => b.text(t),
    });
    b.finish()
}
