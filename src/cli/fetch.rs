//! `afhttp fetch`: clap arguments, resolution into a [`FetchRequest`], and the call into the SDK.

use std::path::PathBuf;

use clap::Args;

use crate::env;
use crate::envelope::Event;
use crate::error::AfError;

/// Arguments of `afhttp fetch`.
#[derive(Debug, Args)]
pub struct FetchArgs {
    /// The http:// or https:// URL to acquire.
    #[arg(value_name = "URL")]
    pub url: String,
    /// Browser host to drive (ws://, wss://, http://, https:// or unix:/path).
    #[arg(long, value_name = "URL", env = env::ENDPOINT_URL)]
    pub endpoint_url: Option<String>,
    /// Bearer token for the host.
    #[arg(long, value_name = "STRING", env = env::TOKEN_SECRET, hide_env_values = true)]
    pub token_secret: Option<String>,
    /// none: HTTP only; auto: HTTP first, browser on a mechanical reason; always: browser.
    #[arg(long, value_name = "none|auto|always", default_value = "auto")]
    pub render: String,
    /// Browser tab to use: `new` (closed afterwards) or an existing tab id.
    #[arg(long, value_name = "new|ID")]
    pub tab: Option<String>,
    /// Prepare the tab for human takeover (needs a takeover-ready host).
    #[arg(long)]
    pub takeover: bool,
    /// Persistent host profile to use for this fetch (needs a host).
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Readiness condition: auto, load, idle, selector:<css>, selector-visible:<css>, ms:<n>.
    #[arg(long, value_name = "SPEC", default_value = "auto")]
    pub wait: String,
    /// HTTP method (default GET, or POST when --data/--form is given).
    #[arg(long, value_name = "METHOD")]
    pub method: Option<String>,
    /// Request body: a string, or @file to read it from a file.
    #[arg(long, value_name = "STRING|@FILE")]
    pub data: Option<String>,
    /// Form field name=value (urlencoded; multipart when a value is @file). Repeatable.
    #[arg(long, value_name = "NAME=VALUE")]
    pub form: Vec<String>,
    /// Extra request header NAME:VALUE. Repeatable.
    #[arg(long, value_name = "NAME:VALUE")]
    pub header: Vec<String>,
    /// Cookie to send: 'name=value[; Path=/; Domain=...; Secure; HttpOnly; SameSite=Lax]'. Repeatable.
    #[arg(long, value_name = "COOKIE")]
    pub cookie: Vec<String>,
    /// User-Agent header value.
    #[arg(long, value_name = "STRING")]
    pub user_agent: Option<String>,
    /// JavaScript to evaluate after the wait, before capture (browser path only).
    #[arg(long, value_name = "JS")]
    pub evaluate_after_wait: Option<String>,
    /// Artifacts to write, comma-separated: body,rendered_html,text,content,content_json,screenshot,network,console,observation,storage.
    #[arg(long, value_name = "LIST")]
    pub want: Option<String>,
    /// Sub-request bodies to save on the browser path: off, xhr or all.
    #[arg(long, value_name = "off|xhr|all")]
    pub network_bodies: Option<String>,
    /// Largest captured sub-request body, in bytes.
    #[arg(long, value_name = "N", default_value_t = 10 * 1024 * 1024)]
    pub network_body_max_bytes: u64,
    /// Largest main response body written, in bytes (0 = unlimited).
    #[arg(long, value_name = "N", default_value_t = 1024 * 1024 * 1024)]
    pub max_response_bytes: u64,
    /// Network-quiet window for --wait auto, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 500)]
    pub readiness_idle_ms: u64,
    /// DOM-stable window for --wait auto, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 300)]
    pub readiness_stable_ms: u64,
    /// Minimum visible text for --wait auto to consider the page ready, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 1)]
    pub readiness_min_text_bytes: u64,
    /// Keep credential headers in network.json (sensitive).
    #[arg(long)]
    pub no_network_redact: bool,
    /// Record WebSocket frames (sensitive).
    #[arg(long)]
    pub capture_ws: bool,
    /// Record server-sent events (sensitive).
    #[arg(long)]
    pub capture_sse: bool,
    /// Directory for the artifacts (default: <tmp>/afhttp-out/<request_id>/).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Cookie jar file to read and update.
    #[arg(long, value_name = "PATH", env = env::COOKIE_JAR)]
    pub cookie_jar: Option<PathBuf>,
    /// Use no cookie jar at all, not even an implicit one.
    #[arg(long)]
    pub no_cookie_jar: bool,
    /// Retries of retryable failures (HTTP statuses are results, never retried).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub retry: u32,
    /// First retry delay in milliseconds; doubles each retry (capped at 30 s).
    #[arg(long, value_name = "MS", default_value_t = 250)]
    pub backoff_ms: u64,
    /// Proxy for this fetch: http://, https:// or socks5:// (ambient HTTP_PROXY is never used).
    #[arg(long, value_name = "URL")]
    pub proxy_url: Option<String>,
    /// Extra PEM CA certificate(s) to trust.
    #[arg(long, value_name = "PATH")]
    pub ca_cert: Option<PathBuf>,
    /// Accept any TLS certificate (insecure).
    #[arg(long)]
    pub tls_insecure: bool,
    /// Bound for one whole attempt, body and artifacts included, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    pub timeout_ms: u64,
}

/// Run `afhttp fetch`.
pub fn run(args: FetchArgs) -> Event {
    let _ = args;
    Event::error(&AfError::invalid("fetch: not built yet"), None)
}
