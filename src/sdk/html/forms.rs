//! Mechanical form summaries: method, absolute action and the controls, as written in the
//! markup (no guessing what the form is for).

use scraper::ElementRef;
use serde_json::{json, Value};
use url::Url;

use super::dom::{attr_eq, collapse, resolve};

/// Most controls listed per form (ASP.NET pages wrap the whole page in one form).
const MAX_FIELDS: usize = 200;

/// One form control.
pub(crate) struct Field {
    name: Option<String>,
    kind: String,
    required: bool,
    /// Button caption, for submit controls.
    text: Option<String>,
}

/// A form as markup declares it.
pub(crate) struct FormSummary {
    method: String,
    action: String,
    fields: Vec<Field>,
    more: usize,
}

/// Summarize `form`; a missing or empty `action` submits to the document URL.
pub(crate) fn summarize(form: ElementRef<'_>, base: &Url, doc_url: &Url) -> FormSummary {
    let el = form.value();
    let method = el
        .attr("method")
        .map(|m| m.trim().to_ascii_uppercase())
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| "GET".to_string());
    let action = el
        .attr("action")
        .filter(|a| !a.trim().is_empty())
        .and_then(|a| resolve(base, a))
        .unwrap_or_else(|| doc_url.clone())
        .to_string();
    let mut fields = Vec::new();
    let mut more = 0;
    for node in form.descendants() {
        let Some(child) = ElementRef::wrap(node) else {
            continue;
        };
        let Some(field) = field(child) else {
            continue;
        };
        if fields.len() < MAX_FIELDS {
            fields.push(field);
        } else {
            more += 1;
        }
    }
    FormSummary {
        method,
        action,
        fields,
        more,
    }
}

fn field(el: ElementRef<'_>) -> Option<Field> {
    let v = el.value();
    let name = v.attr("name").map(str::to_string).filter(|n| !n.is_empty());
    let required = v.attr("required").is_some();
    let (kind, text) = match v.name() {
        "input" => {
            let kind = v
                .attr("type")
                .map(|t| t.trim().to_ascii_lowercase())
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| "text".to_string());
            let text = matches!(kind.as_str(), "submit" | "button" | "reset" | "image")
                .then(|| v.attr("value").or(v.attr("alt")).map(collapse))
                .flatten();
            (kind, text)
        }
        "select" => ("select".to_string(), None),
        "textarea" => ("textarea".to_string(), None),
        "button" => {
            let kind = if attr_eq(v, "type", "button") {
                "button"
            } else if attr_eq(v, "type", "reset") {
                "reset"
            } else {
                "submit"
            };
            let mut text = collapse(&el.text().collect::<String>());
            if text.is_empty() {
                text = label_attr(el).unwrap_or_default();
            }
            (kind.to_string(), Some(text))
        }
        _ => return None,
    };
    Some(Field {
        name,
        kind,
        required,
        text,
    })
}

/// A control's accessible label from attributes, when it has no text of its own.
pub(crate) fn label_attr(el: ElementRef<'_>) -> Option<String> {
    let v = el.value();
    ["aria-label", "title", "value"]
        .iter()
        .filter_map(|a| v.attr(a))
        .map(collapse)
        .find(|s| !s.is_empty())
}

fn is_button_kind(kind: &str) -> bool {
    matches!(kind, "submit" | "button" | "reset" | "image")
}

impl FormSummary {
    /// One markdown line, e.g. `[form POST https://x/login: input email (email), button "Sign in"]`,
    /// with `action` written where the action goes (the composer passes its URL marker).
    /// Hidden inputs are left out here (they are in `content.json`).
    pub(crate) fn md_line(&self, action: &str) -> String {
        let mut parts: Vec<String> = Vec::new();
        for f in &self.fields {
            if f.kind == "hidden" {
                continue;
            }
            if is_button_kind(&f.kind) {
                let text = f.text.clone().unwrap_or_default();
                parts.push(format!("button {text:?}"));
                continue;
            }
            let tag = match f.kind.as_str() {
                "select" | "textarea" => f.kind.as_str(),
                _ => "input",
            };
            let name = f.name.as_deref().unwrap_or("(unnamed)");
            let req = if f.required { ", required" } else { "" };
            parts.push(format!("{tag} {name} ({}{req})", f.kind));
        }
        if self.more > 0 {
            parts.push(format!("… {} more", self.more));
        }
        // Never a NUL from the page beside the caller's `action` (the composer's marker).
        let parts: Vec<String> = parts.into_iter().map(|p| p.replace('\0', "")).collect();
        if parts.is_empty() {
            format!("[form {} {action}]", self.method)
        } else {
            format!("[form {} {action}: {}]", self.method, parts.join(", "))
        }
    }

    /// The absolute action URL.
    pub(crate) fn action(&self) -> &str {
        &self.action
    }

    /// The method, upper case.
    pub(crate) fn method(&self) -> &str {
        &self.method
    }

    /// The `content.json` action.
    pub(crate) fn to_json(&self) -> Value {
        let fields: Vec<Value> = self
            .fields
            .iter()
            .map(|f| {
                let mut v = json!({"name": f.name, "type": f.kind, "required": f.required});
                if let Some(t) = &f.text {
                    v["text"] = Value::String(t.clone());
                }
                v
            })
            .collect();
        let mut v = json!({
            "kind": "form",
            "method": self.method,
            "action": self.action,
            "fields": fields,
        });
        if self.more > 0 {
            v["fields_truncated"] = json!(true);
        }
        v
    }
}
