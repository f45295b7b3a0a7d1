//! `read_artifact` with `unit: "entries"`: pages of a JSON artifact's list (`links.json`
//! `links`, `network.json` and `console.json` `entries`, `observation.json` `nodes`), by
//! index, with a filter for links and network entries.

use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};

use super::budget::{self, Budget};
use crate::error::AfError;

/// Which links or network entries to keep (every given condition must hold).
#[derive(Debug, Default, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EntryFilter {
    /// The entry's `resource_type`, case-insensitive (`document`, `XHR`, `Fetch`, `Script`,
    /// `Image`, ...).
    #[serde(default)]
    pub resource_type: Option<String>,
    /// The response status (`404`), or a class written `4xx`.
    #[serde(default)]
    pub status: Option<String>,
    /// A substring of the entry's URL.
    #[serde(default)]
    pub url_contains: Option<String>,
    /// links.json: only links on the page's own site (`true`) or only others (`false`).
    #[serde(default)]
    pub same_site: Option<bool>,
    /// links.json: a substring of the link's text, case-insensitive.
    #[serde(default)]
    pub text_contains: Option<String>,
}

impl EntryFilter {
    fn is_empty(&self) -> bool {
        self.resource_type.is_none()
            && self.status.is_none()
            && self.url_contains.is_none()
            && self.same_site.is_none()
            && self.text_contains.is_none()
    }

    /// Check the status pattern once, before reading the file.
    fn check(&self) -> Result<(), AfError> {
        if let Some(s) = &self.status {
            let ok = s.parse::<u16>().is_ok()
                || (s.len() == 3
                    && s.as_bytes()[0].is_ascii_digit()
                    && s[1..].eq_ignore_ascii_case("xx"));
            if !ok {
                return Err(AfError::invalid(format!(
                    "filter.status {s:?} must be a status (404) or a class (4xx)"
                ))
                .with_field("filter"));
            }
        }
        Ok(())
    }

    fn keeps(&self, entry: &Value) -> bool {
        if let Some(t) = &self.resource_type {
            let has = entry["resource_type"]
                .as_str()
                .is_some_and(|r| r.eq_ignore_ascii_case(t));
            if !has {
                return false;
            }
        }
        if let Some(s) = &self.status {
            let Some(code) = entry["response"]["status"].as_u64() else {
                return false;
            };
            let code = code.to_string();
            let matches = match s.parse::<u16>() {
                Ok(_) => code == *s,
                Err(_) => code.as_bytes().first() == s.as_bytes().first(),
            };
            if !matches {
                return false;
            }
        }
        if let Some(u) = &self.url_contains {
            if !entry["url"]
                .as_str()
                .is_some_and(|url| url.contains(u.as_str()))
            {
                return false;
            }
        }
        if let Some(same) = self.same_site {
            if entry["same_site"].as_bool() != Some(same) {
                return false;
            }
        }
        if let Some(t) = &self.text_contains {
            let t = t.to_lowercase();
            if !entry["text"]
                .as_str()
                .is_some_and(|text| text.to_lowercase().contains(&t))
            {
                return false;
            }
        }
        true
    }
}

/// One page of entries: the text for the model and the facts.
pub fn page(
    path: &Path,
    offset: u64,
    limit: Option<u64>,
    filter: Option<&EntryFilter>,
    room: Budget,
) -> Result<(String, Value), AfError> {
    if let Some(f) = filter {
        f.check()?;
    }
    let doc: Value = std::fs::read(path)
        .map_err(|e| AfError::io(format!("read {}", path.display()), &e))
        .and_then(|b| {
            serde_json::from_slice(&b).map_err(|e| {
                AfError::invalid(format!("{} is not a JSON artifact: {e}", path.display()))
                    .with_field("unit")
            })
        })?;
    let (key, list) = ["links", "entries", "nodes"]
        .iter()
        .find_map(|k| doc.get(*k).and_then(Value::as_array).map(|l| (*k, l)))
        .ok_or_else(|| {
            AfError::invalid(format!(
                "{} has no links, entries or nodes list; read it by bytes or lines",
                path.display()
            ))
            .with_field("unit")
        })?;
    let filter = filter.filter(|f| !f.is_empty());
    if filter.is_some() && key == "nodes" {
        return Err(
            AfError::invalid("filter applies to links, network and console entries only")
                .with_field("filter"),
        );
    }
    let matched: Vec<(usize, &Value)> = list
        .iter()
        .enumerate()
        .filter(|(_, e)| filter.is_none_or(|f| f.keeps(e)))
        .collect();
    let start = (offset as usize).min(matched.len());
    let limit = limit.unwrap_or(u64::MAX) as usize;
    let mut text = String::new();
    let mut indexes = Vec::new();
    let mut left = room;
    for (index, entry) in matched.iter().skip(start).take(limit) {
        // A link carries its own index; other entries are wrapped with theirs.
        let line = match key {
            "links" => format!("{entry}\n"),
            _ => format!("{}\n", json!({"index": index, key: entry})),
        };
        // Counted line by line, one token of slack each.
        let (t, c) = (budget::tokens(&line) + 1, budget::chars(&line));
        if t > left.tokens || c > left.chars {
            if indexes.is_empty() {
                // One entry larger than the whole budget: say so rather than cut JSON.
                text.push_str(&format!(
                    "{{\"index\": {index}, \"too_large_bytes\": {}, \"read_with\": \"unit bytes\"}}\n",
                    line.len()
                ));
                indexes.push(*index);
            }
            break;
        }
        left.tokens -= t;
        left.chars -= c;
        text.push_str(&line);
        indexes.push(*index);
    }
    let end = start + indexes.len();
    let next = (end < matched.len()).then_some(end as u64);
    let facts = json!({
        "path": path,
        "unit": "entries",
        "list": key,
        "offset": start,
        "returned": indexes.len(),
        "indexes": indexes,
        "total_entries": list.len(),
        "matched_entries": matched.len(),
        "next_offset": next,
        "eof": next.is_none(),
    });
    let mut header = format!(
        "{} ({key} {start}..{end} of {} matching, {} in the file)",
        path.display(),
        matched.len(),
        list.len()
    );
    match next {
        Some(n) => header.push_str(&format!("; read on with offset {n}\n")),
        None => header.push_str("; end of list\n"),
    }
    Ok((format!("{header}{text}"), facts))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(t: &str, status: u64, url: &str) -> Value {
        json!({"resource_type": t, "url": url, "response": {"status": status}})
    }

    #[test]
    fn filters_by_type_status_class_and_url() {
        let e = entry("XHR", 404, "http://h/api/items");
        let f = |t: Option<&str>, s: Option<&str>, u: Option<&str>| EntryFilter {
            resource_type: t.map(Into::into),
            status: s.map(Into::into),
            url_contains: u.map(Into::into),
            ..EntryFilter::default()
        };
        assert!(f(Some("xhr"), None, None).keeps(&e));
        assert!(f(None, Some("404"), Some("/api/")).keeps(&e));
        assert!(f(None, Some("4xx"), None).keeps(&e));
        assert!(!f(None, Some("2xx"), None).keeps(&e));
        assert!(!f(Some("Document"), None, None).keeps(&e));
        assert!(!f(None, None, Some("/other")).keeps(&e));
        assert!(f(None, Some("4x"), None).check().is_err());
    }

    #[test]
    fn pages_matching_entries_by_index() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("network.json");
        let entries: Vec<Value> = (0..10)
            .map(|i| entry(if i % 2 == 0 { "XHR" } else { "Image" }, 200, "http://h/x"))
            .collect();
        std::fs::write(&path, json!({"entries": entries}).to_string()).unwrap();
        let filter = EntryFilter {
            resource_type: Some("xhr".into()),
            ..EntryFilter::default()
        };
        let (_, facts) = page(&path, 1, Some(2), Some(&filter), Budget::default()).unwrap();
        assert_eq!(facts["indexes"], json!([2, 4]));
        assert_eq!(facts["matched_entries"], 5);
        assert_eq!(facts["next_offset"], 3);
        let (_, facts) = page(&path, 3, None, Some(&filter), Budget::default()).unwrap();
        assert_eq!(facts["indexes"], json!([6, 8]));
        assert_eq!(facts["eof"], true);
    }
}
