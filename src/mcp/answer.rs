//! The text a `fetch` result hands the model: a few lines of facts, then as much of the page
//! as the budget holds (`lean.md`, else `content.md`), ending with the exact `read_artifact`
//! call that reads on when it is cut.

use std::path::Path;

use serde_json::{json, Value};

use super::budget::Budget;
use crate::envelope::Event;
use crate::sdk::artifact::Artifact;
use crate::sdk::fetch::FetchOutcome;

/// Room kept for the closing line, whose length depends only on the path and two numbers.
const CLOSING_SLACK_TOKENS: usize = 24;

/// The answer's text: `notes` (such as the screenshot's line) go in the head, which is never
/// cut; the page's text fills what the budget leaves. The text names a path only where the
/// model needs one to act (resolving a link, opening a fold, reading on, the network log);
/// every artifact's path is in `structuredContent` and its `resource_link` anyway.
pub fn text(outcome: &FetchOutcome, event: &Event, budget: Budget, notes: &[String]) -> String {
    let mut head = head(outcome, event);
    for n in notes {
        head.push_str(n);
    }
    let quoted = [Artifact::Lean, Artifact::Content]
        .into_iter()
        .find_map(|a| outcome.file(a).map(|p| (a, p)));
    let Some((artifact, path)) = quoted else {
        head.push_str(&format!(
            "no lean.md or content.md was written (want did not include lean or content); \
             artifacts in {}\n",
            outcome.out_dir.display()
        ));
        return cut(&head, budget);
    };
    let page = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => {
            head.push_str(&format!("{} could not be read: {e}\n", path.display()));
            return cut(&head, budget);
        }
    };
    let closing = |shown: usize| {
        format!(
            "\n--- cut at the text budget after {shown} of {} bytes; read on with read_artifact \
             {} ---\n",
            page.len(),
            json!({"path": path, "offset": shown})
        )
    };
    let first_line = head.lines().next().unwrap_or_default().to_string();
    // The keys to the page's references, for as much of it as is shown.
    let keys = |shown: &str| {
        if artifact == Artifact::Lean {
            keys(outcome, shown)
        } else {
            String::new()
        }
    };
    let header = format!("--- {} ---\n", file_name(path));
    let whole = format!("{head}{}{header}{page}", keys(&page));
    if budget.fits(&whole) {
        return whole;
    }
    // Room for the page once the head, every key and the closing line are written.
    let room = budget
        .less(&format!("{head}{}{header}", keys("[0] [folded ")))
        .less(&closing(page.len()));
    if room.tokens <= CLOSING_SLACK_TOKENS || room.chars == 0 {
        // A budget too small for the head: the status line, the notes and how to read on.
        return cut(
            &format!("{first_line}\n{}{}", notes.concat(), closing(0)),
            budget,
        );
    }
    let room = Budget {
        tokens: room.tokens - CLOSING_SLACK_TOKENS,
        ..room
    };
    let shown = &page[..room.fit(&page)];
    let out = format!(
        "{head}{}{header}{shown}{}",
        keys(shown),
        closing(shown.len())
    );
    cut(&out, budget)
}

/// Status, the final URL when it is not the one asked for, page kind, warnings,
/// next_action, and the network's counts when the fetch wrote `network.json` (a browser
/// fetch).
fn head(outcome: &FetchOutcome, event: &Event) -> String {
    let v = event.to_json(false);
    let r = &v["result"];
    let final_url = r["final_url"].as_str().unwrap_or(&outcome.final_url);
    let mut head = format!("fetch {}", outcome.status);
    if final_url != outcome.url {
        head.push_str(&format!(" {final_url}"));
    }
    head.push_str(&format!(" (render {}", outcome.render_used));
    if let Some(kind) = r.get("page_kind").filter(|k| !k.is_null()) {
        head.push_str(&format!(", page kind {}", plain(kind)));
    }
    head.push_str(")\n");
    if let Some(w) = r.get("warnings").and_then(Value::as_array) {
        if !w.is_empty() {
            let codes: Vec<String> = w
                .iter()
                .map(|x| x.get("code").map(plain).unwrap_or_else(|| plain(x)))
                .collect();
            head.push_str(&format!("warnings: {}\n", codes.join(", ")));
        }
    }
    if let Some(next) = r.get("next_action").filter(|n| !n.is_null()) {
        head.push_str(&format!("next_action: {next}\n"));
    }
    if let Some(line) = network_line(outcome) {
        head.push_str(&line);
    }
    head
}

/// How to resolve what `shown` (a part of `lean.md`) refers to: `[text][n]` (an entry of
/// `links.json`) and `[folded ...; content.md lines A..B]` (lines of `content.md`), each
/// line only when `shown` has one.
fn keys(outcome: &FetchOutcome, shown: &str) -> String {
    let mut out = String::new();
    if let Some(path) = outcome.file(Artifact::Links).filter(|_| has_ref(shown)) {
        out.push_str(&format!(
            "[text][n]: read_artifact {{\"path\":{},\"unit\":\"entries\",\"offset\":n,\
             \"limit\":1}}\n",
            json!(path)
        ));
    }
    if let Some(path) = outcome
        .file(Artifact::Content)
        .filter(|_| shown.contains("[folded "))
    {
        out.push_str(&format!(
            "[folded ...; content.md lines A..B]: read_artifact {{\"path\":{},\
             \"unit\":\"lines\",\"offset\":A,\"limit\":B-A}}\n",
            json!(path)
        ));
    }
    out
}

/// Whether `s` has a `[n]` reference (`[text][n]`, a frame's or a form's `[n]`).
fn has_ref(s: &str) -> bool {
    s.match_indices('[').any(|(at, _)| {
        let rest = &s[at + 1..];
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        digits > 0 && rest[digits..].starts_with(']')
    })
}

/// `network: N requests, F failed, E answered 4xx/5xx` from `network.json`'s summary.
fn network_line(outcome: &FetchOutcome) -> Option<String> {
    let path = outcome.file(Artifact::Network)?;
    let doc = read_json(path)?;
    let entries = doc["entries"].as_array()?;
    let failed = entries
        .iter()
        .filter(|e| e["state"] == "failed" || !e["failure"].is_null())
        .count();
    let errors = entries
        .iter()
        .filter(|e| e["response"]["status"].as_u64().is_some_and(|s| s >= 400))
        .count();
    Some(format!(
        "network: {} requests, {failed} failed, {errors} answered 4xx/5xx: read_artifact \
         {}\n",
        entries.len(),
        json!({"path": path, "unit": "entries", "filter": {"status": "4xx"}})
    ))
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `s` cut to `budget` (only the head can reach this, on an absurdly small budget).
fn cut(s: &str, budget: Budget) -> String {
    s[..budget.fit(s)].to_string()
}

/// A JSON value as plain text (a string without its quotes).
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::has_ref;

    #[test]
    fn a_reference_is_a_bracketed_number() {
        assert!(has_ref("see [Docs][12] here"));
        assert!(has_ref("[form POST [3]: input q]"));
        assert!(!has_ref("[folded <nav>: 3 links] [x] [] [1a]"));
    }
}
