//! `health` and `capabilities`: the configured host's documents, or this local server's.

use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::result::{tool_error, tool_success};
use super::AfhttpMcp;
use crate::envelope::Event;
use crate::error::AfError;
use crate::sdk::client::Client;

/// The arguments of a tool that takes none.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// `health`: the host's `/health`, or this server's own readiness when fetches are local.
pub async fn health(server: &AfhttpMcp, args: Map<String, Value>) -> CallToolResult {
    match run_host_doc(server, args, "health").await {
        Ok(event) => {
            let text = format!("health: {}", summary_line(&event));
            tool_success(text, &event, Vec::new())
        }
        Err(e) => tool_error(&e, None),
    }
}

/// `capabilities`: the host's `/capabilities`, or this server's own when fetches are local.
pub async fn capabilities(server: &AfhttpMcp, args: Map<String, Value>) -> CallToolResult {
    match run_host_doc(server, args, "capabilities").await {
        Ok(event) => {
            let text = format!("capabilities: {}", summary_line(&event));
            tool_success(text, &event, Vec::new())
        }
        Err(e) => tool_error(&e, None),
    }
}

async fn run_host_doc(
    server: &AfhttpMcp,
    args: Map<String, Value>,
    which: &'static str,
) -> Result<Event, AfError> {
    let _: NoArgs = super::decode_args(which, args)?;
    let resolve = server.config.resolve_client.clone();
    let client = tokio::task::spawn_blocking(move || resolve())
        .await
        .map_err(|e| AfError::invalid(format!("resolve the host: {e}")))??;
    let doc = match (client, which) {
        (Some(c), "health") => host_health(&c).await?,
        (Some(c), _) => c.capabilities().await?,
        (None, "health") => local_health(),
        (None, _) => local_capabilities(server.config.allow_cdp, server.config.egress.as_ref()),
    };
    Ok(Event::result(which, doc, None))
}

async fn host_health(client: &Client) -> Result<Value, AfError> {
    client.health().await
}

/// Readiness of this server when no host is configured: it is up, and fetches are local.
fn local_health() -> Value {
    json!({
        "status": "ok",
        "server": "afhttp mcp",
        "version": env!("CARGO_PKG_VERSION"),
        "host": Value::Null,
        "fetch": "local: plain HTTP first, an inline browser when needed",
    })
}

/// Planning metadata of this server when no host is configured.
fn local_capabilities(allow_cdp: bool, egress: Option<&crate::sdk::egress::Policy>) -> Value {
    json!({
        // As `host_ready` reports a host's: the policy's name and how many exceptions.
        "egress": match egress {
            Some(p) => json!({"enforced": true, "policy": p.name(), "allow": p.allow.len()}),
            None => json!({"enforced": false, "reason": "off"}),
        },
        "server": "afhttp mcp",
        "version": env!("CARGO_PKG_VERSION"),
        "host": Value::Null,
        "tools": super::tools(allow_cdp).iter().map(|t| t.name.to_string()).collect::<Vec<_>>(),
        "artifacts": crate::sdk::artifact::tokens(),
        "protocol_versions": super::transport::protocol_versions(),
    })
}

/// One line for the model: the document's `status` when it has one.
fn summary_line(event: &Event) -> String {
    let v = event.to_json(false);
    match v["result"].get("status").and_then(Value::as_str) {
        Some(s) => format!("status {s} (details in structuredContent)"),
        None => "see structuredContent".to_string(),
    }
}
