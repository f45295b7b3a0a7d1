//! `content.json`: the structured lists collected while composing `content.md`, bounded so a
//! 5 MB page cannot produce an unbounded document.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

/// Most entries kept in any one list; past it the document says `"truncated": true`.
pub const MAX_ITEMS: usize = 5_000;

/// Items gathered during the walk, in document order.
#[derive(Default)]
pub(crate) struct Collected {
    headings: Vec<Value>,
    links: Vec<Value>,
    /// href → index in `links`, for de-duplication.
    link_index: HashMap<String, usize>,
    actions: Vec<Value>,
    tables: Vec<Value>,
    images: Vec<Value>,
    frames: Vec<Value>,
    truncated: bool,
}

fn capped(list: &mut Vec<Value>, truncated: &mut bool, v: Value) {
    if list.len() < MAX_ITEMS {
        list.push(v);
    } else {
        *truncated = true;
    }
}

impl Collected {
    /// Record that some list (e.g. table rows) was cut short.
    pub(crate) fn mark_truncated(&mut self) {
        self.truncated = true;
    }

    pub(crate) fn heading(&mut self, level: usize, text: String) {
        capped(
            &mut self.headings,
            &mut self.truncated,
            json!({"level": level, "text": text}),
        );
    }

    /// A link; the first occurrence of an href wins, but a later one may supply the text the
    /// first lacked (an icon link followed by a text link to the same place).
    pub(crate) fn link(&mut self, text: String, href: String, rel: Option<&str>) {
        if let Some(&i) = self.link_index.get(&href) {
            if let Some(entry) = self.links.get_mut(i) {
                let empty = entry.get("text").and_then(Value::as_str) == Some("");
                if empty && !text.is_empty() {
                    entry["text"] = Value::String(text);
                }
            }
            return;
        }
        if self.links.len() >= MAX_ITEMS {
            self.truncated = true;
            return;
        }
        let mut entry = json!({"text": text, "href": href});
        if let Some(rel) = rel.map(str::trim).filter(|r| !r.is_empty()) {
            entry["rel"] = Value::String(rel.to_string());
        }
        self.link_index.insert(href, self.links.len());
        self.links.push(entry);
    }

    pub(crate) fn action(&mut self, action: Value) {
        capped(&mut self.actions, &mut self.truncated, action);
    }

    pub(crate) fn button(&mut self, text: String) {
        self.action(json!({"kind": "button", "text": text}));
    }

    pub(crate) fn table(&mut self, headers: Vec<String>, rows: Vec<Vec<String>>) {
        capped(
            &mut self.tables,
            &mut self.truncated,
            json!({"headers": headers, "rows": rows}),
        );
    }

    pub(crate) fn image(&mut self, alt: String, src: String) {
        capped(
            &mut self.images,
            &mut self.truncated,
            json!({"alt": alt, "src": src}),
        );
    }

    pub(crate) fn frame(&mut self, src: String, title: Option<String>) {
        let mut v = json!({"src": src});
        if let Some(t) = title {
            v["title"] = Value::String(t);
        }
        capped(&mut self.frames, &mut self.truncated, v);
    }

    /// The final document. Key order is fixed (serde_json keeps insertion order).
    pub(crate) fn into_json(
        self,
        url: &str,
        title: Option<&str>,
        lang: Option<&str>,
        text_bytes: usize,
    ) -> Value {
        let mut m = Map::new();
        m.insert("schema_version".into(), json!(1));
        m.insert("url".into(), json!(url));
        m.insert("title".into(), json!(title));
        m.insert("lang".into(), json!(lang));
        m.insert("headings".into(), Value::Array(self.headings));
        m.insert("links".into(), Value::Array(self.links));
        m.insert("actions".into(), Value::Array(self.actions));
        m.insert("tables".into(), Value::Array(self.tables));
        m.insert("images".into(), Value::Array(self.images));
        m.insert("frames".into(), Value::Array(self.frames));
        m.insert("text_bytes".into(), json!(text_bytes));
        if self.truncated {
            m.insert("truncated".into(), json!(true));
        }
        Value::Object(m)
    }
}
