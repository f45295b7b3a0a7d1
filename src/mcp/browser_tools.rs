//! `tabs_list`, `tabs_close`, `takeover` (the `panel` command) and `cdp` (only listed with
//! `--allow-cdp`): the host's browser, reached the way the thin CLI commands reach it.

use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::budget::Budget;
use super::result::{tool_error, tool_success};
use super::AfhttpMcp;
use crate::envelope::Event;
use crate::error::AfError;
use crate::sdk::builder::validate_cdp_method;
use crate::sdk::client::Client;

/// Arguments of `tabs_close`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TabsCloseArgs {
    /// The tab to close (a `tab_id` from `tabs_list` or a fetch result).
    pub tab: String,
}

/// Arguments of `takeover`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TakeoverArgs {
    /// Lifetime of the link in seconds, 60 to 3600 (default 900).
    #[serde(default)]
    pub ttl_s: Option<u64>,
}

/// Arguments of `cdp`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CdpArgs {
    /// The CDP method, `Domain.method` (`Runtime.evaluate`, `Browser.getVersion`, ...).
    pub method: String,
    /// Its parameters, a JSON object (default `{}`).
    #[serde(default)]
    pub params: Option<Map<String, Value>>,
    /// Send it to this tab instead of the browser target.
    #[serde(default)]
    pub tab: Option<String>,
}

/// Run one of this file's tools.
pub async fn call(server: &AfhttpMcp, tool: &str, args: Map<String, Value>) -> CallToolResult {
    let budget = server.config.text_budget;
    let ran = match tool {
        "tabs_list" => {
            let _: super::host_tools::NoArgs = match super::decode_args(tool, args) {
                Ok(a) => a,
                Err(e) => return tool_error(&e, None),
            };
            on_host(server, move |c| async move {
                let tabs = c.tabs().await?;
                Ok(Event::result("tabs_list", json!({"tabs": tabs}), None))
            })
            .await
        }
        "tabs_close" => {
            let a: TabsCloseArgs = match super::decode_args(tool, args) {
                Ok(a) => a,
                Err(e) => return tool_error(&e, None),
            };
            on_host(server, move |c| async move {
                c.close_tab(&a.tab).await?;
                Ok(Event::result(
                    "tabs_close",
                    json!({"tab_id": a.tab, "closed": true}),
                    None,
                ))
            })
            .await
        }
        "takeover" => {
            let a: TakeoverArgs = match super::decode_args(tool, args) {
                Ok(a) => a,
                Err(e) => return tool_error(&e, None),
            };
            if let Some(t) = a.ttl_s.filter(|t| !(60..=3600).contains(t)) {
                let e = AfError::invalid(format!("ttl_s must be between 60 and 3600, not {t}"))
                    .with_field("ttl_s");
                return tool_error(&e, None);
            }
            on_host(server, move |c| async move {
                let doc = c.takeover_handoff(a.ttl_s).await?;
                Ok(Event::result("panel", doc, None))
            })
            .await
        }
        _ => {
            let a: CdpArgs = match super::decode_args(tool, args) {
                Ok(a) => a,
                Err(e) => return tool_error(&e, None),
            };
            if let Err(e) = validate_cdp_method(&a.method) {
                return tool_error(&e.with_field("method"), None);
            }
            on_host(server, move |c| async move {
                let params = Value::Object(a.params.unwrap_or_default());
                let mut call = c.cdp(&a.method).params(params);
                if let Some(tab) = &a.tab {
                    call = call.tab(tab);
                }
                let result = call.send().await?;
                let mut body = json!({"method": a.method, "result": result});
                if let Some(t) = a.tab {
                    body["tab_id"] = json!(t);
                }
                Ok(Event::result("cdp", body, None))
            })
            .await
        }
    };
    match ran {
        Ok(event) => within_budget(event, budget),
        Err(e) => tool_error(&e, None),
    }
}

/// The event as text and structuredContent; a CDP answer larger than the budget is cut in
/// the text and left out of structuredContent (which then says how large it was).
fn within_budget(event: Event, budget: Budget) -> CallToolResult {
    let mut v = event.to_json(false);
    let whole = v["result"].to_string();
    // Half the characters each for the text and the structured copy of the same answer.
    let half = Budget {
        chars: budget.chars / 2,
        ..budget
    };
    let text = whole[..half.fit(&whole)].to_string();
    if text.len() < whole.len() {
        if let Some(Value::Object(r)) = v.get_mut("result") {
            if r.remove("result").is_some() {
                r.insert("result_bytes".into(), json!(whole.len()));
                r.insert("result_cut_at_text_budget".into(), json!(true));
            }
        }
    }
    let mut result = tool_success(text, &event, Vec::new());
    result.structured_content = Some(v);
    result
}

/// Resolve the host (endpoint, environment or the managed container) and run `job` with its
/// client on a thread of its own (the CDP futures are not `Send`).
async fn on_host<F, Fut>(server: &AfhttpMcp, job: F) -> Result<Event, AfError>
where
    F: FnOnce(Client) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<Event, AfError>>,
{
    let resolve = server.config.resolve_host.clone();
    tokio::task::spawn_blocking(move || {
        let client = resolve()?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| AfError::io("start the host runtime", &e))?;
        rt.block_on(job(client))
    })
    .await
    .map_err(|e| AfError::invalid(format!("host call: {e}")))?
}
