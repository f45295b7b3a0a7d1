//! `fetch`: the CLI's fetch over MCP, with a result that fits the model's context.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value};

use super::result::{tool_error, tool_success};
use super::AfhttpMcp;
use crate::envelope::Event;
use crate::error::AfError;
use crate::profile::outputs_root;
use crate::sdk::artifact::Artifact;
use crate::sdk::fetch::{self as sdk_fetch, FetchOutcome, FetchSpec};
use crate::sdk::request::NetworkBodies;

/// What the HTTP path writes for MCP when the caller names no `want`: the text projections
/// too, so the answer always has `lean.md` to quote and `links.json` behind it.
const MCP_HTTP_WANT: [Artifact; 6] = [
    Artifact::Body,
    Artifact::Text,
    Artifact::Content,
    Artifact::ContentJson,
    Artifact::Lean,
    Artifact::Links,
];

/// What a browser render writes for MCP when the caller names no `want`: what the answer
/// reads (the text projections, the inline screenshot, the network's counts), with network
/// bodies off unless `network_bodies` asks; rendered HTML, console, observation, storage,
/// PDF and bodies come on request.
const MCP_BROWSER_WANT: [Artifact; 8] = [
    Artifact::Body,
    Artifact::Text,
    Artifact::Content,
    Artifact::ContentJson,
    Artifact::Lean,
    Artifact::Links,
    Artifact::Screenshot,
    Artifact::Network,
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
    // A default directory gets a short name (the answer spells its path out), made here.
    let made_out = match spec.out {
        Some(_) => None,
        None => match super::fetch_args::fresh_out(&out_root) {
            Ok(dir) => Some(dir),
            Err(e) => return tool_error(&e, None),
        },
    };
    if made_out.is_some() {
        spec.out = made_out.clone();
    }
    let area_root = area.as_ref().map(|a| a.root().to_path_buf());
    let default_want = spec.want.is_none();
    let egress = server.config.egress.clone();
    let resolve = server.config.resolve_fetch.clone();
    // The fetch pipeline's future is not `Send`, and resolution may block (discovery): both
    // run on a blocking thread with a runtime of their own.
    let ran = tokio::task::spawn_blocking(move || {
        let mut request = match resolve(spec) {
            Ok(r) if default_want => r
                .with_http_default_want(MCP_HTTP_WANT.to_vec())
                .with_browser_defaults(MCP_BROWSER_WANT.to_vec(), NetworkBodies::Off),
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
        // The request's target routes it (local, one host, or a fleet's member).
        let fetched = rt.block_on(sdk_fetch::fetch(request));
        fetched.map_err(|f| Box::new((f.error, Some(f.trace.to_json()))))
    })
    .await;
    match ran {
        Ok(Ok(outcome)) => {
            server.record_out_dir(outcome.out_dir.clone());
            let event = Event::result("fetch", outcome.to_json(), Some(outcome.trace.to_json()));
            let mut blocks = resource_links(&outcome);
            // The screenshot's line goes in the head; the page gets the rest of the budget.
            let (image, note) = inline_screenshot(&outcome, server.config.image_max_bytes)
                .await
                .unwrap_or_default();
            blocks.splice(0..0, image);
            // The structured facts count against the characters too (a client may show
            // them), leaving the text at least half.
            let facts = event.to_json(false).to_string();
            let whole = server.config.text_budget;
            let facts = super::budget::chars(&facts).min(whole.chars / 2);
            let budget = whole.less_chars(facts);
            let notes: Vec<String> = (!note.is_empty()).then_some(note).into_iter().collect();
            let text = super::answer::text(&outcome, &event, budget, &notes);
            tool_success(text, &event, blocks)
        }
        Ok(Err(failed)) => {
            // A failed fetch leaves no empty directory behind (`remove_dir` spares a full one).
            if let Some(dir) = &made_out {
                let _ = std::fs::remove_dir(dir);
            }
            tool_error(&failed.0, failed.1)
        }
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
