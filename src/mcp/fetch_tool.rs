//! `fetch`: the CLI's fetch over MCP, with a result that fits the model's context.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value};

use super::result::{cut_at_char, tool_error, tool_success};
use super::AfhttpMcp;
use crate::envelope::Event;
use crate::error::AfError;
use crate::profile::outputs_root;
use crate::sdk::artifact::Artifact;
use crate::sdk::fetch::{self as sdk_fetch, FetchOutcome, FetchSpec};

/// What the HTTP path writes for MCP when the caller names no `want`: the text projections
/// too, so the summary always has `content.md` to quote.
const MCP_HTTP_WANT: [Artifact; 4] = [
    Artifact::Body,
    Artifact::Text,
    Artifact::Content,
    Artifact::ContentJson,
];

/// Run the `fetch` tool.
pub async fn call(server: &AfhttpMcp, args: Map<String, Value>) -> CallToolResult {
    let mut spec: FetchSpec = match super::decode_args("fetch", args) {
        Ok(s) => s,
        Err(e) => return tool_error(&e, None),
    };
    let area = server.area.clone();
    let out_root = match &area {
        Some(a) => a.root().to_path_buf(),
        None => outputs_root(),
    };
    if let Err(e) = super::fetch_args::admit(&mut spec, &out_root) {
        return tool_error(&e, None);
    }
    // Held until the fetch ends, so the area's pruner spares what it writes.
    let _in_flight = area.as_ref().map(|a| a.begin());
    let area_root = area.as_ref().map(|a| a.root().to_path_buf());
    let default_want = spec.want.is_none();
    let egress = server.config.egress.clone();
    let resolve = server.config.resolve_fetch.clone();
    let fleet = server.config.fleet.clone();
    // The fetch pipeline's future is not `Send`, and resolution may block (discovery): both
    // run on a blocking thread with a runtime of their own.
    let ran = tokio::task::spawn_blocking(move || {
        let mut request = match resolve(spec) {
            Ok(r) if default_want => r.with_http_default_want(MCP_HTTP_WANT.to_vec()),
            Ok(r) => r,
            Err(e) => return Err(Box::new((e, None))),
        };
        request = match egress {
            Some(policy) => request.with_egress_policy(policy),
            None => request,
        };
        if let Some(root) = area_root {
            request = request.with_out_root(root);
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Box::new((AfError::io("start the fetch runtime", &e), None)))?;
        let fetched = rt.block_on(async {
            match &fleet {
                Some((fleet, connect)) => {
                    crate::sdk::fleet::route::fetch(fleet, request, *connect).await
                }
                None => sdk_fetch::fetch(request).await,
            }
        });
        fetched.map_err(|f| Box::new((f.error, Some(f.trace.to_json()))))
    })
    .await;
    match ran {
        Ok(Ok(outcome)) => {
            server.record_out_dir(outcome.out_dir.clone());
            let event = Event::result("fetch", outcome.to_json(), Some(outcome.trace.to_json()));
            let budget = server.config.text_budget_bytes;
            let mut blocks = resource_links(&outcome);
            // The screenshot's line goes after the head; the summary gets the rest of the budget.
            let (image, note) = inline_screenshot(&outcome, server.config.image_max_bytes)
                .await
                .unwrap_or_default();
            blocks.splice(0..0, image);
            let text = summary(&outcome, &event, budget.saturating_sub(note.len()));
            let text = cut_at_char(&with_line_after_head(&text, &note), budget).to_string();
            tool_success(text, &event, blocks)
        }
        Ok(Err(failed)) => tool_error(&failed.0, failed.1),
        Err(e) => tool_error(&AfError::invalid(format!("fetch: {e}")), None),
    }
}

/// One `resource_link` per written artifact (a `file://` URI, also readable with
/// `resources/read`).
fn resource_links(outcome: &FetchOutcome) -> Vec<ContentBlock> {
    outcome
        .files
        .iter()
        .filter_map(|(artifact, path)| {
            super::resources::resource_of(path, format!("afhttp {} artifact", artifact.as_str()))
        })
        .map(ContentBlock::resource_link)
        .collect()
}

/// The screenshot fitted for the model ([`super::inline_image`]) as image content, and the
/// line for the text that says what was sent (or why it is only linked); `None` without a
/// screenshot.
async fn inline_screenshot(
    outcome: &FetchOutcome,
    cap: u64,
) -> Option<(Option<ContentBlock>, String)> {
    use base64::Engine;
    let path = outcome.file(Artifact::Screenshot)?.to_path_buf();
    let fitted = tokio::task::spawn_blocking(move || super::inline_image::fit(&path, cap))
        .await
        .unwrap_or_else(|e| Err(format!("screenshot: not inline (fitting it failed: {e})\n")));
    Some(match fitted {
        Ok(inline) => {
            let data = base64::engine::general_purpose::STANDARD.encode(&inline.data);
            (Some(ContentBlock::image(data, inline.mime)), inline.note)
        }
        Err(note) => (None, note),
    })
}

/// `line` inserted after the first line of `text` (the `fetch STATUS URL` head), so the text
/// still ends with its continuation call.
fn with_line_after_head(text: &str, line: &str) -> String {
    let head_end = text.find('\n').map_or(text.len(), |i| i + 1);
    format!("{}{line}{}", &text[..head_end], &text[head_end..])
}

/// The text for the model: status, final URL, page kind, warnings, next_action, then the
/// start of `content.md`, the whole within `budget` bytes, saying how to read on.
pub fn summary(outcome: &FetchOutcome, event: &Event, budget: usize) -> String {
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
    let Some(content) = outcome.file(Artifact::Content) else {
        head.push_str("no content.md was written (want did not include content)\n");
        return cut_at_char(&head, budget).to_string();
    };
    let text = match std::fs::read(content) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => {
            head.push_str(&format!("content.md could not be read: {e}\n"));
            return cut_at_char(&head, budget).to_string();
        }
    };
    let path = content.display().to_string();
    let header = format!("--- content.md ({} bytes) ---\n", text.len());
    // Room for the closing note, whose length depends only on the path and an offset.
    let note_room = path.len() + 200;
    let room = budget.saturating_sub(head.len() + header.len() + note_room);
    let shown = cut_at_char(&text, room);
    let mut out = head;
    out.push_str(&header);
    out.push_str(shown);
    if shown.len() < text.len() {
        out.push_str(&format!(
            "\n--- cut at the text budget after {} of {} bytes; read on with read_artifact \
             {{\"path\": \"{}\", \"offset\": {}}} ---\n",
            shown.len(),
            text.len(),
            path,
            shown.len()
        ));
    }
    cut_at_char(&out, budget).to_string()
}

/// A JSON value as plain text (a string without its quotes).
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
