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
/// cut; the page's text fills what the budget leaves.
pub fn text(outcome: &FetchOutcome, event: &Event, budget: Budget, notes: &[String]) -> String {
    let mut head = head(outcome, event);
    for n in notes {
        head.push_str(n);
    }
    let quoted = [Artifact::Lean, Artifact::Content]
        .into_iter()
        .find_map(|a| outcome.file(a).map(|p| (a, p)));
    let Some((artifact, path)) = quoted else {
        head.push_str(
            "no lean.md or content.md was written (want did not include lean or content)\n",
        );
        return cut(&head, budget);
    };
    if artifact == Artifact::Lean {
        if let Some(line) = links_line(outcome) {
            head.push_str(&line);
        }
    }
    let page = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => {
            head.push_str(&format!("{} could not be read: {e}\n", file_name(path)));
            return cut(&head, budget);
        }
    };
    let header = format!("--- {} ({} bytes) ---\n", file_name(path), page.len());
    let closing = |shown: usize| {
        format!(
            "\n--- cut at the text budget after {shown} of {} bytes; read on with read_artifact \
             {} ---\n",
            page.len(),
            json!({"path": path, "offset": shown})
        )
    };
    let first_line = head.lines().next().unwrap_or_default().to_string();
    let mut out = head;
    out.push_str(&header);
    let room = budget.less(&out).less(&closing(page.len()));
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
    let shown = if budget.less(&out).fits(&page) {
        page.len()
    } else {
        room.fit(&page)
    };
    out.push_str(&page[..shown]);
    if shown < page.len() {
        out.push_str(&closing(shown));
    }
    cut(&out, budget)
}

/// Status, final URL, page kind, warnings, next_action, where the artifacts are, and the
/// network's counts when the fetch wrote `network.json` (a browser fetch).
fn head(outcome: &FetchOutcome, event: &Event) -> String {
    let v = event.to_json(false);
    let r = &v["result"];
    let mut head = format!(
        "fetch {} {} (render {}",
        outcome.status,
        r["final_url"].as_str().unwrap_or(&outcome.final_url),
        outcome.render_used
    );
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
    head.push_str(&format!(
        "artifacts: {} (paths in structuredContent; one resource_link each)\n",
        outcome.out_dir.display()
    ));
    if let Some(line) = network_line(outcome) {
        head.push_str(&line);
    }
    head
}

/// How to resolve `[text][n]`: the link table's path and the call that reads entry `n`.
fn links_line(outcome: &FetchOutcome) -> Option<String> {
    let path = outcome.file(Artifact::Links)?;
    let count = read_json(path)
        .and_then(|v| v["count"].as_u64())
        .unwrap_or(0);
    Some(format!(
        "links: [text][n] is entry n of links.json ({count} links; filter by same_site, \
         text_contains, url_contains): read_artifact {{\"path\": {}, \"unit\": \"entries\", \
         \"offset\": n, \"limit\": 1}}\n",
        json!(path)
    ))
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
        "network: {} requests, {failed} failed, {errors} answered 4xx/5xx (network.json; \
         read_artifact unit entries, filter status \"4xx\")\n",
        entries.len()
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
