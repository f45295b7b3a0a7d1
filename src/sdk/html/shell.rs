//! Facts for the empty-application-shell decision, read straight off the markup.

use scraper::{ElementRef, Html, Node};
use serde::Serialize;

use super::dom::{attr_eq, is_hidden};

/// Element ids front-end frameworks mount into (React, Vue, Next.js, Nuxt, Gatsby).
const MOUNT_IDS: &[&str] = &["root", "app", "__next", "__nuxt", "___gatsby"];
/// Custom elements that are framework mount points (Angular).
const MOUNT_TAGS: &[&str] = &["app-root"];

/// Mechanical facts about whether an HTML document is an empty application shell.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ShellFacts {
    /// Bytes of visible text (the `text.txt` projection).
    pub visible_text_bytes: usize,
    /// `<script>` elements a browser would execute (JSON/template script types excluded).
    pub script_count: usize,
    /// The first empty mount node, as `#id` or a tag name.
    pub empty_mount: Option<String>,
    /// A `<noscript>` whose text says JavaScript must be enabled.
    pub noscript_requires_js: bool,
}

pub(crate) fn facts(doc: &Html, text: &str) -> ShellFacts {
    let mut f = ShellFacts {
        visible_text_bytes: text.trim().len(),
        ..ShellFacts::default()
    };
    for el in doc.tree.nodes().filter_map(ElementRef::wrap) {
        let v = el.value();
        match v.name() {
            "script" if executable(v.attr("type")) => f.script_count += 1,
            "noscript" if !f.noscript_requires_js => {
                f.noscript_requires_js = says_js_required(&el.text().collect::<String>());
            }
            name if f.empty_mount.is_none() => {
                let mount = if MOUNT_TAGS.contains(&name) {
                    Some(name.to_string())
                } else {
                    v.id()
                        .filter(|id| MOUNT_IDS.contains(id))
                        .map(|id| format!("#{id}"))
                };
                if let Some(m) = mount {
                    if is_empty(el) {
                        f.empty_mount = Some(m);
                    }
                }
            }
            _ => {}
        }
    }
    f
}

/// Script `type` values browsers execute: none, a JavaScript MIME type, or `module`.
pub(super) fn executable(ty: Option<&str>) -> bool {
    let Some(ty) = ty.map(|t| t.trim().to_ascii_lowercase()) else {
        return true;
    };
    ty.is_empty()
        || ty == "module"
        || matches!(
            ty.split(';').next().unwrap_or("").trim(),
            "text/javascript"
                | "application/javascript"
                | "application/x-javascript"
                | "text/ecmascript"
                | "application/ecmascript"
                | "text/jscript"
        )
}

fn says_js_required(noscript: &str) -> bool {
    let t = noscript.to_ascii_lowercase();
    t.contains("javascript")
        && ["enable", "requir", "need", "turn on", "activate", "must"]
            .iter()
            .any(|w| t.contains(w))
}

/// No element children and no non-whitespace text.
fn is_empty(el: ElementRef<'_>) -> bool {
    el.children().all(|c| match c.value() {
        Node::Element(_) => false,
        Node::Text(t) => t.trim().is_empty(),
        _ => true,
    })
}

pub(crate) fn user_input_count(doc: &Html) -> usize {
    doc.tree
        .nodes()
        .filter_map(ElementRef::wrap)
        .filter(|el| {
            let v = el.value();
            if is_hidden(v) {
                return false;
            }
            let captcha_field = v
                .attr("name")
                .is_some_and(|n| n.ends_with("captcha-response"));
            match v.name() {
                "select" => true,
                "textarea" => !captcha_field,
                "input" => {
                    !captcha_field
                        && ![
                            "submit", "button", "reset", "image", "checkbox", "radio", "file",
                        ]
                        .iter()
                        .any(|t| attr_eq(v, "type", t))
                }
                _ => false,
            }
        })
        .count()
}
