//! The MCP server (`afhttp mcp`): one handler type over the official Rust SDK (`rmcp`).
//!
//! Everything rmcp-specific lives here, so its release cadence touches one module: the
//! handler and tool list (this file), one file per tool family, the result shapes
//! (`result.rs`) and the transport (`transport.rs`). Fetches go through the same
//! [`FetchSpec::validate`] as the CLI; where the host is comes from the front end's
//! resolvers, so this module never reads flags or the environment.

pub mod artifacts;
pub mod entries;
pub mod fetch_args;
pub mod fetch_tool;
pub mod host_tools;
pub mod result;
pub mod transport;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Map, Value};

use crate::error::AfError;
use crate::sdk::client::Client;
use crate::sdk::fetch::{FetchRequest, FetchSpec};

/// Turns a tool's [`FetchSpec`] into a request the way the front end's fetch does (host
/// flags, `AFHTTP_*`, container discovery); it may block, so it runs off the async threads.
pub type ResolveFetch = Arc<dyn Fn(FetchSpec) -> Result<FetchRequest, AfError> + Send + Sync>;
/// The configured host's client, or `None` when fetches are local (no endpoint).
pub type ResolveClient = Arc<dyn Fn() -> Result<Option<Client>, AfError> + Send + Sync>;

/// Default text budget of a tool result, in estimated tokens (bytes / 4).
pub const DEFAULT_TEXT_BUDGET_TOKENS: usize = 20_000;

/// How the server was started.
pub struct McpConfig {
    /// Largest text content of one tool result, in bytes (the token budget × 4).
    pub text_budget_bytes: usize,
    /// Fetch resolution (see [`ResolveFetch`]).
    pub resolve_fetch: ResolveFetch,
    /// Host resolution for `health` and `capabilities`.
    pub resolve_client: ResolveClient,
}

/// The afhttp MCP server: its configuration and the output directories of this session's
/// fetches (the only places `read_artifact` reads from).
#[derive(Clone)]
pub struct AfhttpMcp {
    config: Arc<McpConfig>,
    out_dirs: Arc<Mutex<Vec<PathBuf>>>,
}

impl AfhttpMcp {
    /// A server with `config` and no fetch yet.
    pub fn new(config: McpConfig) -> AfhttpMcp {
        AfhttpMcp {
            config: Arc::new(config),
            out_dirs: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// Remember a fetch's output directory so `read_artifact` may read inside it.
    fn record_out_dir(&self, dir: PathBuf) {
        let dir = dir.canonicalize().unwrap_or(dir);
        if let Ok(mut dirs) = self.out_dirs.lock() {
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }

    /// The output directories recorded so far.
    fn known_out_dirs(&self) -> Vec<PathBuf> {
        self.out_dirs.lock().map(|d| d.clone()).unwrap_or_default()
    }
}

/// The `fetch` input schema: [`FetchSpec`]'s, less what MCP refuses ([`fetch_args`]).
fn fetch_schema() -> JsonObject {
    let mut schema = (*result::schema_object::<FetchSpec>()).clone();
    fetch_args::trim_schema(&mut schema);
    schema
}

/// The tools this server lists.
pub fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "fetch",
            "Open a URL the way `afhttp fetch` does: plain HTTP first, a real browser when \
             needed. Returns a short summary with the start of content.md (cut at the text \
             budget), the CLI's JSON event as structuredContent (paths and facts), and a \
             resource_link per artifact. Default want: body,text,content,content_json (plus \
             the browser defaults when a browser renders).",
            fetch_schema(),
        )
        .with_annotations(ToolAnnotations::new().read_only(false).open_world(true)),
        Tool::new(
            "read_artifact",
            "Page through an artifact file of an earlier fetch in this session, by offset and \
             limit in bytes (default), lines, or entries (network.json/console.json entries, \
             observation.json nodes; network entries filter by resource_type, status and \
             url_contains). Paths outside that fetch's output directory are refused.",
            result::schema_object::<artifacts::ReadArtifactArgs>(),
        )
        .with_annotations(ToolAnnotations::new().read_only(true).open_world(false)),
        Tool::new(
            "health",
            "Readiness of the configured host's /health, or of this local server when fetches \
             run locally.",
            result::schema_object::<host_tools::NoArgs>(),
        )
        .with_annotations(ToolAnnotations::new().read_only(true)),
        Tool::new(
            "capabilities",
            "Planning metadata: the configured host's /capabilities, or this local server's \
             tools, artifacts and protocol versions.",
            result::schema_object::<host_tools::NoArgs>(),
        )
        .with_annotations(ToolAnnotations::new().read_only(true)),
    ]
}

impl ServerHandler for AfhttpMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("afhttp", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "afhttp opens URLs and returns facts. Call fetch, quote the summary, and read \
                 more of an artifact with read_artifact (path from structuredContent).",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let result: CallToolResult = match request.name.as_ref() {
            "fetch" => fetch_tool::call(self, args).await,
            "read_artifact" => artifacts::call(self, args).await,
            "health" => host_tools::health(self, args).await,
            "capabilities" => host_tools::capabilities(self, args).await,
            other => {
                return Err(ErrorData::invalid_params(
                    format!("unknown tool {other}"),
                    None,
                ))
            }
        };
        Ok(result.into())
    }
}

/// Decode a tool's arguments into `T`; a mismatch is `invalid_argument`.
pub(crate) fn decode_args<T: serde::de::DeserializeOwned>(
    tool: &str,
    args: Map<String, Value>,
) -> Result<T, AfError> {
    serde_json::from_value(Value::Object(args)).map_err(|e| {
        AfError::invalid(format!("{tool} arguments: {e}"))
            .with_hint(format!("see the {tool} tool's input schema (tools/list)"))
    })
}
