//! Element-specific rendering: links, images, frames, fenced code and tables.

use scraper::ElementRef;
use url::Url;

use super::{attr_text, Composer};
use crate::sdk::html::dom::{display_url, resolve};

impl Composer<'_> {
    pub(super) fn close_link(
        &mut self,
        el: ElementRef<'_>,
        href: Option<Url>,
        start: usize,
        captured: String,
    ) {
        let Some(href) = href else {
            return;
        };
        if self.muted > 0 {
            let text = attr_text(el, "aria-label").unwrap_or(captured);
            self.items
                .link(text, href.to_string(), el.value().attr("rel"));
            return;
        }
        let shown = display_url(&href);
        let inner_empty = self
            .line
            .get(start + 1..)
            .is_none_or(|s| s.trim().is_empty());
        let label = attr_text(el, "aria-label").or_else(|| attr_text(el, "title"));
        let text = if captured.is_empty() {
            label.clone().unwrap_or_default()
        } else {
            captured
        };
        if inner_empty {
            match &label {
                Some(l) => {
                    self.line.push_str(l);
                    let close = self.refs.link(shown, &text);
                    self.line.push_str(&close);
                }
                None if self.line.is_char_boundary(start)
                    && self.line[start..].starts_with('[') =>
                {
                    self.line.truncate(start);
                }
                None => {}
            }
        } else {
            let close = self.refs.link(shown, &text);
            self.line.push_str(&close);
        }
        self.items
            .link(text, href.to_string(), el.value().attr("rel"));
    }

    pub(super) fn image(&mut self, el: ElementRef<'_>) {
        let Some(alt) = attr_text(el, "alt") else {
            return;
        };
        let Some(src) = el
            .value()
            .attr("src")
            .and_then(|s| resolve(&self.ctx.base, s))
        else {
            return;
        };
        let src = display_url(&src);
        let mark = self.refs.image(src.clone());
        self.open_marker(&format!("![{}]{mark}", alt.replace(['[', ']'], "")));
        for c in &mut self.captures {
            c.push(&alt);
        }
        self.items.image(alt, src);
    }

    pub(super) fn frame(&mut self, el: ElementRef<'_>) {
        let Some(src) = el
            .value()
            .attr("src")
            .filter(|s| !s.trim().is_empty())
            .and_then(|s| resolve(&self.ctx.base, s))
        else {
            return;
        };
        let src = display_url(&src);
        let title = attr_text(el, "title");
        if zero_size(el) {
            // Nothing of it is on screen (tracking and messaging frames): a fact of
            // content.json, not a line of the text.
            self.items.frame(src, title);
            return;
        }
        let mark = self
            .refs
            .frame(src.clone(), title.as_deref().unwrap_or_default());
        let note = match &title {
            Some(t) => format!("[iframe {t:?}{mark}"),
            None => format!("[iframe{mark}"),
        };
        if self.inline_only == 0 {
            self.block(true);
            self.write_line(&note);
            self.need_blank = true;
        } else {
            self.open_marker(&note);
        }
        self.items.frame(src, title);
    }

    pub(super) fn finish_pre(&mut self) {
        let Some(pre) = self.pre.take() else {
            return;
        };
        let body = pre.raw.replace("\r\n", "\n");
        let body = body.trim_end();
        let body = body.trim_start_matches('\n');
        if body.trim().is_empty() {
            return;
        }
        let mut fence = "```".to_string();
        while body.contains(fence.as_str()) {
            fence.push('`');
        }
        self.write_line(&format!("{fence}{}", pre.lang.unwrap_or_default()));
        for l in body.lines() {
            self.write_line(l);
        }
        self.write_line(&fence);
        self.need_blank = true;
    }

    pub(super) fn finish_table(&mut self) {
        let Some(table) = self.tables.pop() else {
            return;
        };
        let caption = table.caption.clone();
        if table.rows_truncated {
            self.items.mark_truncated();
        }
        let Some(done) = table.finish() else {
            return;
        };
        self.flush_line();
        if let Some(c) = caption {
            self.write_line(&c);
            self.need_blank = true;
        }
        for l in &done.md_lines {
            self.write_line(l);
        }
        self.need_blank = true;
        self.items.table(done.headers, done.rows);
    }
}

/// `language-x` / `lang-x` class on a `pre` or `code`: the fence's info string.
pub(super) fn code_lang(el: ElementRef<'_>) -> Option<String> {
    el.value().classes().find_map(|c| {
        c.strip_prefix("language-")
            .or_else(|| c.strip_prefix("lang-"))
            .filter(|l| {
                !l.is_empty()
                    && l.chars()
                        .all(|ch| ch.is_ascii_alphanumeric() || "+-_#.".contains(ch))
            })
            .map(str::to_string)
    })
}

/// A frame whose `width` or `height` attribute is 0 (`0`, `0px`): it shows nothing.
fn zero_size(el: ElementRef<'_>) -> bool {
    ["width", "height"].iter().any(|a| {
        el.value().attr(a).is_some_and(|v| {
            let v = v.trim().trim_end_matches("px").trim();
            v.parse::<f64>().is_ok_and(|n| n == 0.0)
        })
    })
}
