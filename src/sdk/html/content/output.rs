//! Markdown output primitives: lines, prefixes for quotes and list items, blank lines
//! and collapsed inline text.

use super::{Block, Composer};

impl Composer<'_> {
    pub(super) fn prefix(&mut self, blank: bool) -> String {
        let mut p = String::new();
        for b in &mut self.blocks {
            match b {
                Block::Quote => p.push_str("> "),
                Block::Item { marker, used } if blank || *used => {
                    p.push_str(&" ".repeat(marker.chars().count()))
                }
                Block::Item { marker, used } => {
                    p.push_str(marker);
                    *used = true;
                }
            }
        }
        p
    }

    pub(super) fn emit_pending_blank(&mut self) {
        // A blank line right after another (e.g. the first paragraph in a quote) is noise.
        // A fold's markers are not text (see `refs`): look at the last lines without them.
        let from = self.out.len().saturating_sub(512);
        let from = self.out[..floor(&self.out, from)]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        let end = super::refs::without_fold_markers(&self.out[from..]);
        let last = end.trim_end_matches('\n').rsplit('\n').next().unwrap_or("");
        let after_blank = end.ends_with("\n\n") || last.chars().all(|c| c == '>' || c == ' ');
        if self.need_blank && !self.out.is_empty() && !after_blank {
            let blank = self.prefix(true);
            self.out.push_str(blank.trim_end());
            self.out.push('\n');
        }
        self.need_blank = false;
    }

    pub(super) fn write_line(&mut self, s: &str) {
        self.emit_pending_blank();
        let p = self.prefix(false);
        self.out.push_str(&p);
        self.out.push_str(s);
        self.out.push('\n');
    }

    pub(super) fn flush_line(&mut self) {
        let text = std::mem::take(&mut self.line);
        self.pending_space = false;
        let lead = self.lead.take();
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        match lead {
            Some(lead) => self.write_line(&format!("{lead}{text}")),
            None => self.write_line(text),
        }
    }

    pub(super) fn in_item(&self) -> bool {
        self.blocks.iter().any(|b| matches!(b, Block::Item { .. }))
    }

    /// A block boundary: a new paragraph, or just a space inside inline-only content.
    pub(super) fn block(&mut self, blank: bool) {
        if self.inline_only > 0 {
            self.space();
            return;
        }
        self.flush_line();
        if blank && !self.in_item() {
            self.need_blank = true;
        }
    }

    pub(super) fn space(&mut self) {
        self.pending_space = true;
        for c in &mut self.captures {
            c.space();
        }
    }

    pub(super) fn push_space_if_pending(&mut self) {
        // Only right after the `[` itself: once anything follows it, or the line was
        // flushed or swapped (a table cell), the position means nothing.
        let after_open = self.link_open_at.take() == Some(self.line.len());
        if self.pending_space && !after_open && !self.line.is_empty() && !self.line.ends_with(' ') {
            self.line.push(' ');
        }
        self.pending_space = false;
    }

    /// Inline markup that opens something (`[`, `![..](..)`): a pending space goes before it.
    pub(super) fn open_marker(&mut self, s: &str) {
        if self.muted > 0 {
            return;
        }
        self.push_space_if_pending();
        self.line.push_str(s);
    }

    pub(super) fn text(&mut self, s: &str) {
        if let Some(pre) = &mut self.pre {
            pre.raw.push_str(&super::refs::strip_nul(s));
            return;
        }
        for c in &mut self.captures {
            c.push(s);
        }
        if self.muted > 0 {
            return;
        }
        // NUL is the URL markers' delimiter (see `refs`): never from the page.
        for ch in s.chars().filter(|c| *c != '\0') {
            if ch.is_whitespace() {
                self.pending_space = true;
            } else {
                self.push_space_if_pending();
                self.line.push(ch);
            }
        }
    }
}

/// The largest character boundary of `s` at or below `i`.
fn floor(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}
