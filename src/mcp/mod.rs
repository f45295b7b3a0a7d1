//! The MCP server (`afhttp mcp`): one handler type over the official Rust SDK (`rmcp`).
//!
//! Everything rmcp-specific lives here, so its release cadence touches one module: the
//! handler and tool list (this file), one file per tool family, the result shapes
//! (`result.rs`) and the transport (`transport.rs`). Fetches go through the same
//! [`FetchSpec::validate`] as the CLI; where the host is comes from the front end's
//! resolvers, so this module never reads flags or the environment.

pub mod answer;
pub mod area;
pub mod artifacts;
pub mod browser_tools;
pub mod budget;
pub mod entries;
pub mod fetch_args;
pub mod fetch_tool;
pub mod host_tools;
#[cfg(feature = "host")]
pub mod http;
pub mod inline_image;
pub mod resources;
pub mod result;
pub mod transport;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Map, Value};

use crate::error::AfError;
use crate::sdk::client::Client;
use crate::sdk::fetch::{FetchRequest, FetchSpec};

/// Turns a tool's [`FetchSpec`] into a request the way the front end's fetch does (host
/// flags, `AFHTTP_*`, container discovery), with the request's target (local, one host, or a
/// fleet) set, so the SDK's fetch routes it; it may block, so it runs off the async threads.
pub type ResolveFetch = Arc<dyn Fn(FetchSpec) -> Result<FetchRequest, AfError> + Send + Sync>;
/// The configured host's client, or `None` when fetches are local (no endpoint).
pub type ResolveClient = Arc<dyn Fn() -> Result<Option<Client>, AfError> + Send + Sync>;
/// A host's client for the tools that need one (tabs, takeover, cdp): the endpoint, or the
/// managed local container found by discovery; an error when there is none.
pub type ResolveHost = Arc<dyn Fn() -> Result<Client, AfError> + Send + Sync>;

/// Default text budget of a tool result, in o200k_base tokens ([`budget`]).
pub const DEFAULT_TEXT_BUDGET_TOKENS: usize = budget::DEFAULT_TOKENS;
/// Default character cap of a tool result's text (UTF-16 code units).
pub const DEFAULT_TEXT_BUDGET_CHARS: usize = budget::DEFAULT_CHARS;
/// Default cap of the inline screenshot image, in bytes.
pub const DEFAULT_IMAGE_MAX_BYTES: u64 = 1_000_000;

/// How the server was started.
pub struct McpConfig {
    /// Largest text content of one tool result: o200k_base tokens and characters.
    pub text_budget: budget::Budget,
    /// Largest inline screenshot, in bytes, after fitting ([`inline_image`]); 0: never.
    pub image_max_bytes: u64,
    /// Fetch resolution (see [`ResolveFetch`]).
    pub resolve_fetch: ResolveFetch,
    /// Host resolution for `health` and `capabilities`.
    pub resolve_client: ResolveClient,
    /// Host resolution for `tabs_list`, `tabs_close`, `takeover` and `cdp`.
    pub resolve_host: ResolveHost,
    /// Whether the `cdp` tool is listed and served (`--allow-cdp`).
    pub allow_cdp: bool,
    /// The egress policy every `fetch` obeys (set on each request after resolution: the
    /// plain-HTTP step, and an inline browser); `None`: none (the CLI's default, which an MCP
    /// front end should not pick). A host's `/mcp` passes the host's own policy.
    pub egress: Option<crate::sdk::egress::Policy>,
}

/// The afhttp MCP server: its configuration and the output directories of this session's
/// fetches (the only places `read_artifact` reads from).
#[derive(Clone)]
pub struct AfhttpMcp {
    config: Arc<McpConfig>,
    out_dirs: Arc<Mutex<Vec<PathBuf>>>,
    /// A host's output area (`/mcp`): fetches write there, and `read_artifact` and
    /// `resources/*` read anything in it. `None` (stdio): the temp output area, and only
    /// this session's fetches are readable.
    area: Option<Arc<area::ArtifactArea>>,
}

impl AfhttpMcp {
    /// A server with `config` and no fetch yet.
    pub fn new(config: McpConfig) -> AfhttpMcp {
        AfhttpMcp {
            config: Arc::new(config),
            out_dirs: Arc::new(Mutex::new(Vec::new())),
            area: None,
        }
    }

    /// Write every fetch into `area` and read from all of it (a host's `/mcp`).
    pub fn with_area(mut self, area: Arc<area::ArtifactArea>) -> AfhttpMcp {
        self.area = Some(area);
        self
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

    /// Where reads may reach: the host's whole output area, or the output directories of
    /// this session's fetches.
    fn known_out_dirs(&self) -> Vec<PathBuf> {
        if let Some(area) = &self.area {
            return vec![area.root().to_path_buf()];
        }
        self.out_dirs.lock().map(|d| d.clone()).unwrap_or_default()
    }

    /// The output directories `resources/list` walks (newest first in an output area).
    fn listed_out_dirs(&self) -> Vec<PathBuf> {
        match &self.area {
            Some(area) => area.dirs(),
            None => self.known_out_dirs(),
        }
    }
}

/// The `fetch` input schema: [`FetchSpec`]'s, less what MCP refuses ([`fetch_args`]).
fn fetch_schema() -> JsonObject {
    let mut schema = (*result::schema_object::<FetchSpec>()).clone();
    fetch_args::trim_schema(&mut schema);
    schema
}

/// The tools this server lists; `cdp` only when `allow_cdp`.
pub fn tools(allow_cdp: bool) -> Vec<Tool> {
    let mut tools = vec![
        Tool::new(
            "fetch",
            "Open a URL the way `afhttp fetch` does: plain HTTP first, a real browser when \
             needed. Returns a few lines of facts and the page as lean markdown (links as \
             [text][n], n an entry of links.json; no image URLs), cut at the text budget with \
             the read_artifact call that reads on; the CLI's JSON event as structuredContent \
             (paths and facts), and a resource_link per artifact. Default want: \
             body,text,content,content_json,lean,links, and when a browser renders also \
             screenshot (inline) and network (no bodies); ask for more with want.",
            fetch_schema(),
        )
        .with_annotations(ToolAnnotations::new().read_only(false).open_world(true)),
        Tool::new(
            "read_artifact",
            "Page through an artifact file of an earlier fetch in this session, by offset and \
             limit in bytes (default), lines, or entries (links.json links, network.json and \
             console.json entries, observation.json nodes; links filter by same_site, \
             text_contains, url_contains; network entries by resource_type, status and \
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
        Tool::new(
            "tabs_list",
            "The host browser's page targets: tab_id, type, url, title.",
            result::schema_object::<host_tools::NoArgs>(),
        )
        .with_annotations(ToolAnnotations::new().read_only(true)),
        Tool::new(
            "tabs_close",
            "Close one of the host browser's tabs by tab_id.",
            result::schema_object::<browser_tools::TabsCloseArgs>(),
        )
        .with_annotations(ToolAnnotations::new().destructive(true)),
        Tool::new(
            "takeover",
            "Mint a short-lived link a human opens to drive the host's real display (the \
             `afhttp panel` command); it carries a handoff id, never the host token.",
            result::schema_object::<browser_tools::TakeoverArgs>(),
        ),
    ];
    if allow_cdp {
        tools.push(
            Tool::new(
                "cdp",
                "Send one raw Chrome DevTools Protocol method to the host browser or a tab. It \
                 can do anything the browser can (read every cookie, navigate, run script).",
                result::schema_object::<browser_tools::CdpArgs>(),
            )
            .with_annotations(ToolAnnotations::new().destructive(true).open_world(true)),
        );
    }
    tools
}

impl ServerHandler for AfhttpMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
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
        Ok(ListToolsResult::with_all_items(tools(
            self.config.allow_cdp,
        )))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let dirs = self.listed_out_dirs();
        Ok(ListResourcesResult::with_all_items(resources::list(&dirs)))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let dirs = self.known_out_dirs();
        resources::read(&request.uri, &dirs).map(Into::into)
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
            "tabs_list" | "tabs_close" | "takeover" => {
                browser_tools::call(self, &request.name, args).await
            }
            "cdp" if self.config.allow_cdp => browser_tools::call(self, "cdp", args).await,
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

/// Decode a tool's arguments into `T`; a mismatch is `invalid_argument`, whose `field`
/// names the argument when serde's message does (an unknown or a missing one).
pub(crate) fn decode_args<T: serde::de::DeserializeOwned>(
    tool: &str,
    args: Map<String, Value>,
) -> Result<T, AfError> {
    serde_json::from_value(Value::Object(args)).map_err(|e| {
        let message = e.to_string();
        let mut err = AfError::invalid(format!("{tool} arguments: {message}"))
            .with_hint(format!("see the {tool} tool's input schema (tools/list)"));
        if let Some(field) = field_of(&message) {
            err = err.with_field(field);
        }
        err
    })
}

/// The argument a serde message is about: `unknown field `x`, expected ...` or
/// `missing field `x``. (The one place serde's wording is read; its messages for these two
/// have been stable since serde 1.0.)
fn field_of(message: &str) -> Option<&str> {
    let rest = message
        .strip_prefix("unknown field `")
        .or_else(|| message.strip_prefix("missing field `"))?;
    let name = &rest[..rest.find('`')?];
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    #[test]
    fn serde_messages_name_their_field() {
        use super::field_of;
        assert_eq!(
            field_of("unknown field `bogus`, expected one of `url`, `render`"),
            Some("bogus")
        );
        assert_eq!(field_of("missing field `path`"), Some("path"));
        assert_eq!(field_of("unknown field ``, expected `a`"), None);
        assert_eq!(
            field_of("invalid type: string \"soon\", expected u64"),
            None
        );
    }
}
