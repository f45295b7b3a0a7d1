//! The one fetch request specification: plain data, every option of `afhttp fetch`.
//!
//! CLI flags, SDK builder calls and MCP tool arguments are three ways of filling a
//! [`FetchSpec`]; none of them validates on its own. [`FetchSpec::validate`] (in
//! `validate/`) is the only way to a [`super::FetchRequest`], so nothing unchecked reaches
//! the pipeline. Values stay in their textual form (`"always"`, `"selector:#app"`,
//! `"Name: value"`) so the three ways in share one parser and one set of messages.
//!
//! Where the host is (endpoint, token) is not part of the request: the CLI resolves it
//! (flags, `AFHTTP_*`, container discovery) and the SDK takes it from its `Client`.

use std::path::PathBuf;

use serde::Deserialize;

/// Everything one fetch can ask for, before validation. Field docs are the option docs: clap
/// prints them as `afhttp fetch --help`, and the MCP tool schema carries them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[cfg_attr(feature = "mcp", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct FetchSpec {
    /// The http:// or https:// URL to acquire.
    #[cfg_attr(feature = "cli", arg(value_name = "URL"))]
    pub url: String,
    /// none: HTTP only; auto (default): HTTP first, a browser on a mechanical reason; always:
    /// a browser.
    #[cfg_attr(feature = "cli", arg(long, value_name = "none|auto|always"))]
    pub render: Option<String>,
    /// Browser tab to use: `new` (closed afterwards) or an existing tab id (implies a browser).
    #[cfg_attr(feature = "cli", arg(long, value_name = "new|ID"))]
    pub tab: Option<String>,
    /// Human takeover: use the URL's site profile, keep the tab, and when a wall is in the
    /// way return next_action with a takeover_url and a re-fetch command (needs a takeover host).
    #[cfg_attr(feature = "cli", arg(long))]
    pub takeover: bool,
    /// Persistent host profile to use for this fetch (needs a host).
    #[cfg_attr(feature = "cli", arg(long, value_name = "NAME"))]
    pub profile: Option<String>,
    /// Readiness condition (default auto): auto, load, idle, selector:<css>,
    /// selector-visible:<css>, ms:<n>.
    #[cfg_attr(feature = "cli", arg(long, value_name = "SPEC"))]
    pub wait: Option<String>,
    /// HTTP method (default GET, or POST when a body is given).
    #[cfg_attr(feature = "cli", arg(long, value_name = "METHOD"))]
    pub method: Option<String>,
    /// Request body: a string, or @file to read it from a file (@- reads standard input).
    #[cfg_attr(feature = "cli", arg(long, value_name = "STRING|@FILE"))]
    pub data: Option<String>,
    /// Form field name=value (urlencoded; multipart when a value is @file). Repeatable.
    #[cfg_attr(feature = "cli", arg(long, value_name = "NAME=VALUE"))]
    pub form: Vec<String>,
    /// Extra request header NAME:VALUE. Repeatable.
    #[cfg_attr(feature = "cli", arg(long, value_name = "NAME:VALUE"))]
    pub header: Vec<String>,
    /// Cookie to send: 'name=value[; Path=/; Domain=...; Secure; HttpOnly; SameSite=Lax]'.
    /// Repeatable.
    #[cfg_attr(feature = "cli", arg(long, value_name = "COOKIE"))]
    pub cookie: Vec<String>,
    /// User-Agent header value.
    #[cfg_attr(feature = "cli", arg(long, value_name = "STRING"))]
    pub user_agent: Option<String>,
    /// How JavaScript dialogs (alert, confirm, prompt, beforeunload) are answered as they
    /// open: dismiss (default) or accept. Each is recorded in console.json and warned about.
    #[cfg_attr(feature = "cli", arg(long, value_name = "accept|dismiss"))]
    pub dialog: Option<String>,
    /// JavaScript to evaluate after the wait, before capture (browser path only).
    #[cfg_attr(feature = "cli", arg(long, value_name = "JS"))]
    pub evaluate_after_wait: Option<String>,
    /// Artifacts to write, comma-separated (see the artifact table in docs/reference.md).
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "LIST", help = crate::sdk::artifact::want_help())
    )]
    pub want: Option<String>,
    /// Sub-request bodies to save on the browser path: off, xhr (XHR, fetch, EventSource) or
    /// all (default: xhr with --wait auto, else off).
    #[cfg_attr(feature = "cli", arg(long, value_name = "off|xhr|all"))]
    pub network_bodies: Option<String>,
    /// Largest captured sub-request body, in bytes; longer ones are cut (default 10485760,
    /// 0 = no cap).
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub network_body_max_bytes: Option<u64>,
    /// Largest main response body written, in bytes (default 1073741824, 0 = unlimited).
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub max_response_bytes: Option<u64>,
    /// Pages of a PDF read for text/content at most (default 500); past it content.json
    /// says truncated.
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub max_pdf_pages: Option<u32>,
    /// Ask for markdown ahead of HTML (Accept: text/markdown); a markdown answer is
    /// content.md as served.
    #[cfg_attr(feature = "cli", arg(long))]
    pub accept_markdown: bool,
    /// Network-quiet window for --wait idle (and --wait auto when the page-side evidence is
    /// missing), in milliseconds (default 500).
    #[cfg_attr(feature = "cli", arg(long, value_name = "MS"))]
    pub readiness_idle_ms: Option<u64>,
    /// Screenshot format: png (default, the full-page page.png), jpeg (page.jpg) or webp
    /// (page.webp).
    #[cfg_attr(feature = "cli", arg(long, value_name = "png|jpeg|webp"))]
    pub screenshot_format: Option<String>,
    /// Quality of a jpeg or webp screenshot, 1-100 (the browser's default when omitted).
    #[cfg_attr(feature = "cli", arg(long, value_name = "1-100"))]
    pub screenshot_quality: Option<u8>,
    /// Capture at most this many CSS pixels of the page's height (the result says when the
    /// screenshot was clipped).
    #[cfg_attr(feature = "cli", arg(long, value_name = "PX"))]
    pub screenshot_max_height: Option<u32>,
    /// How long any --wait but ms:N (auto, idle, load, selector) may take after the main
    /// document arrived before the fetch captures what the page shows, with warnings naming
    /// what was still pending (default 5000). Inside --timeout-ms; capture keeps its reserve.
    #[cfg_attr(feature = "cli", arg(long, value_name = "MS"))]
    pub readiness_budget_ms: Option<u64>,
    /// How long a request to another site than the page's may go without a response before
    /// it is cut (failed as a content blocker would) so the page's own content goes on; the
    /// page is reloaded with the stalled hosts blocked when one was holding it (default 1000,
    /// 0 = never cut). First-party requests are never cut.
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "MS", env = crate::env::STALL_CUTOFF_MS)
    )]
    pub stall_cutoff_ms: Option<u64>,
    /// Settle window for --wait auto: how long the DOM must be quiet, in milliseconds
    /// (default 200; when given, the page's idle evidence no longer ends the wait sooner).
    #[cfg_attr(feature = "cli", arg(long, value_name = "MS"))]
    pub readiness_stable_ms: Option<u64>,
    /// Minimum visible text for --wait auto to consider the page ready, in bytes (default 1).
    #[cfg_attr(feature = "cli", arg(long, value_name = "BYTES"))]
    pub readiness_min_text_bytes: Option<u64>,
    /// Keep credential headers in network.json (sensitive).
    #[cfg_attr(feature = "cli", arg(long))]
    pub no_network_redact: bool,
    /// Record WebSocket frames in network.json (sensitive; browser path only).
    #[cfg_attr(feature = "cli", arg(long))]
    pub capture_ws: bool,
    /// Record server-sent (EventSource) messages in network.json (sensitive; browser path only).
    #[cfg_attr(feature = "cli", arg(long))]
    pub capture_sse: bool,
    /// Directory for the artifacts (default: <tmp>/afhttp-out/<request_id>/).
    #[cfg_attr(feature = "cli", arg(long, value_name = "DIR"))]
    pub out: Option<PathBuf>,
    /// Cookie jar file to read and update.
    #[cfg_attr(feature = "cli", arg(long, value_name = "PATH", env = crate::env::COOKIE_JAR))]
    pub cookie_jar: Option<PathBuf>,
    /// Use no cookie jar at all, not even an implicit one.
    #[cfg_attr(feature = "cli", arg(long))]
    pub no_cookie_jar: bool,
    /// Retries of retryable failures (default 0; HTTP statuses are results, never retried).
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub retry: Option<u32>,
    /// First retry delay in milliseconds (default 250); doubles each retry (capped at 30 s).
    #[cfg_attr(feature = "cli", arg(long, value_name = "MS"))]
    pub backoff_ms: Option<u64>,
    /// Proxy for this fetch: http://, https://, socks5:// or socks5h://, credentials allowed
    /// (ambient HTTP_PROXY is never used).
    #[cfg_attr(feature = "cli", arg(long, value_name = "URL"))]
    pub proxy_url: Option<crate::sdk::secret::Secret>,
    /// Extra PEM CA certificate(s) to trust.
    #[cfg_attr(feature = "cli", arg(long, value_name = "PATH"))]
    pub ca_cert: Option<PathBuf>,
    /// Accept any TLS certificate (insecure).
    #[cfg_attr(feature = "cli", arg(long))]
    pub tls_insecure: bool,
    /// Bound for one whole attempt, body and artifacts included, in milliseconds (default
    /// 30000).
    #[cfg_attr(feature = "cli", arg(long, value_name = "MS"))]
    pub timeout_ms: Option<u64>,
    /// Browser family for an inline host (no host endpoint): chromium, chrome,
    /// chrome-headless-shell, edge, brave, lightpanda, ... (default: the chromium family on
    /// PATH).
    #[cfg_attr(feature = "cli", arg(long, value_name = "FAMILY"))]
    pub browser: Option<String>,
    /// Browser executable for an inline host (no host endpoint).
    #[cfg_attr(feature = "cli", arg(long, value_name = "PATH", env = crate::env::BROWSER_BIN))]
    pub browser_bin: Option<PathBuf>,
    /// A raw request body set from code (the SDK's `.body()`); `data` is its textual twin.
    #[cfg_attr(feature = "cli", arg(skip))]
    #[serde(skip)]
    pub data_bytes: Option<Vec<u8>>,
}

impl FetchSpec {
    /// A spec for `url` with every other option at its default.
    pub fn new(url: impl Into<String>) -> FetchSpec {
        FetchSpec {
            url: url.into(),
            ..FetchSpec::default()
        }
    }
}
