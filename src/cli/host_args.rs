//! `afhttp host` flags; every one has an `AFHTTP_*` twin so images and compose files need
//! no shell script.

use std::path::PathBuf;

use clap::Args;

use crate::env;

/// Arguments of `afhttp host`.
#[derive(Debug, Args)]
pub struct HostArgs {
    /// Where to listen: tcp:HOST:PORT or unix:/path.
    #[arg(long, value_name = "tcp:HOST:PORT|unix:/path", env = env::LISTEN, default_value = "tcp:127.0.0.1:9222")]
    pub listen: String,
    /// Persistent profile name, or `-` for an ephemeral profile removed on exit.
    #[arg(long, value_name = "NAME|-", env = env::PROFILE)]
    pub profile: Option<String>,
    /// headless or headful.
    #[arg(long, value_name = "headless|headful", env = env::DISPLAY_MODE, default_value = "headless")]
    pub display: String,
    /// Real-display takeover provider: novnc (TigerVNC + websockify + noVNC), kasmvnc, or off.
    /// With a provider the browser runs headful on its display, served at /takeover/panel.
    #[arg(long, value_name = "off|novnc|kasmvnc", env = env::TAKEOVER_PROVIDER, default_value = "off")]
    pub takeover_provider: String,
    /// Takeover stream quality, 0-100 (mapped onto the provider's 0-9 levels).
    #[arg(long, value_name = "0-100", env = env::TAKEOVER_QUALITY_PERCENT, default_value_t = 80)]
    pub takeover_quality_percent: u8,
    /// Browser backend.
    #[arg(long, value_name = "NAME", env = env::BROWSER, default_value = "auto")]
    pub browser: String,
    /// Browser executable (otherwise searched on PATH).
    #[arg(long, value_name = "PATH", env = env::BROWSER_BIN)]
    pub browser_bin: Option<PathBuf>,
    /// The bearer token clients must send (the same flags as a driver's); a missing
    /// `--token-secret-file` is created with a random token (mode 0600).
    #[command(flatten)]
    pub token: super::reach::TokenArgs,
    /// Do not serve /health.
    #[arg(long, env = env::NO_HEALTH, value_parser = clap::builder::FalseyValueParser::new())]
    pub no_health: bool,
    /// off: /health needs the token; minimal: unauthenticated callers get only the status.
    #[arg(long, value_name = "off|minimal", env = env::HEALTH_PUBLIC, default_value = "off")]
    pub health_public: String,
    /// Proxy for the browser's traffic (ambient HTTP_PROXY is never used).
    #[arg(long, value_name = "URL", env = env::PROXY_URL, hide_env_values = true)]
    pub proxy_url: Option<crate::sdk::secret::Secret>,
    /// Extra environment for the browser process, K=V. Repeatable.
    #[arg(long, value_name = "K=V", env = env::ENGINE_ENV, value_delimiter = ',')]
    pub engine_env: Vec<String>,
    /// Extra browser flag. Repeatable.
    #[arg(long, value_name = "FLAG", env = env::BROWSER_ARG, value_delimiter = ' ', allow_hyphen_values = true)]
    pub browser_arg: Vec<String>,
    /// Host names accepted without a bearer header (besides IPs and localhost). Repeatable.
    #[arg(long, value_name = "HOST", env = env::ALLOWED_HOST, value_delimiter = ',')]
    pub allowed_host: Vec<String>,
    /// Reverse proxies (IP or IP/PREFIX) whose `X-Forwarded-Proto: https` is believed, so the
    /// takeover cookie gets `Secure` behind them (an ingress controller in another pod).
    /// Loopback peers are always believed. Repeatable.
    #[arg(long, value_name = "CIDR", env = env::TRUSTED_PROXY, value_delimiter = ',')]
    pub trusted_proxy: Vec<String>,
    /// Also refuse the browser's connections to loopback, private (RFC 1918, fc00::/7) and
    /// shared (100.64/10) addresses. Link-local and cloud metadata addresses are always
    /// refused.
    #[arg(long, env = env::DENY_PRIVATE_NETWORKS, value_parser = clap::builder::FalseyValueParser::new())]
    pub deny_private_networks: bool,
    /// An exception to the egress policy: IP, IP/PREFIX or exact host name. Repeatable.
    #[arg(long, value_name = "CIDR|HOST", env = env::EGRESS_ALLOW, value_delimiter = ',')]
    pub egress_allow: Vec<String>,
    /// Run the browser behind the egress proxy, which refuses link-local and cloud metadata
    /// addresses (the image turns it on). Implied by --deny-private-networks and --egress-allow.
    #[arg(long, env = env::EGRESS_POLICY, value_parser = clap::builder::FalseyValueParser::new())]
    pub egress_policy: bool,
    /// Keep the last N request/response metadata records across the browser, served at
    /// `GET /recent-requests` (0 = off). At most 100000.
    #[arg(long, value_name = "N", env = env::RECENT_REQUESTS_CAP, default_value_t = 0)]
    pub recent_requests_cap: u64,
    /// Keep no persistent profile: `/cdp?profile=NAME` is refused with
    /// `backend_unsupported`, and `/health` and `/capabilities` report `role: ephemeral`
    /// (stateless fleet members; list them as `ephemeral:` in `--fleet`).
    #[arg(long, env = env::EPHEMERAL_ONLY, value_parser = clap::builder::FalseyValueParser::new())]
    pub ephemeral_only: bool,
    /// On a runtime profile switch, how long to wait for other clients (in-flight fetches)
    /// to finish before closing them with a reason. At most 600000.
    #[arg(long, value_name = "MS", env = env::PROFILE_SWITCH_WAIT_MS, default_value_t = 15_000)]
    pub profile_switch_wait_ms: u64,
    /// Largest file a driver may upload (`afhttp upload`), in bytes. 1 to 10737418240.
    #[arg(long, value_name = "BYTES", env = env::UPLOAD_MAX_BYTES, default_value_t = crate::host::listener::config::DEFAULT_UPLOAD_MAX_BYTES)]
    pub upload_max_bytes: u64,
    /// Most CDP clients (in-flight fetches, `afhttp cdp`/`tabs` sessions) at once; one more
    /// is refused with `host_busy` (retryable). 1 to 4096.
    #[arg(long, value_name = "N", env = env::MAX_CLIENTS, default_value_t = crate::host::listener::config::DEFAULT_MAX_CLIENTS)]
    pub max_clients: usize,
    /// Most open tabs at once; creating one more is refused with `host_busy` (retryable).
    /// 1 to 4096.
    #[arg(long, value_name = "N", env = env::MAX_TABS, default_value_t = crate::host::listener::config::DEFAULT_MAX_TABS)]
    pub max_tabs: usize,
    /// Blank tabs kept ready so a fetch does not wait for one to be created (each serves one
    /// fetch, then closes; refilled after each use; not listed, not counted in --max-tabs or
    /// tabs_active until a fetch takes one). A headful host keeps none. 0 turns it off. 0 to
    /// 16.
    #[arg(long, value_name = "N", env = env::TAB_POOL, default_value_t = crate::host::listener::config::DEFAULT_TAB_POOL)]
    pub tab_pool: usize,
    /// Serve no `/mcp` (Streamable HTTP MCP). It is served by default, only to callers with
    /// the bearer token (a host without a token answers 401 there).
    #[arg(long, env = env::NO_MCP, value_parser = clap::builder::FalseyValueParser::new())]
    pub no_mcp: bool,
    /// How long the artifacts of a fetch made through `/mcp` are kept after their last write
    /// (in the host's output area, $XDG_DATA_HOME/afhttp/mcp-out): 90m, 12h, 7d (also s, w).
    #[arg(long, value_name = "AGE", env = env::MCP_OUTPUT_TTL, default_value = "24h")]
    pub mcp_output_ttl: String,
    /// Cap of that output area in bytes; past it the oldest fetch directories are removed
    /// (0 = no cap).
    #[arg(long, value_name = "BYTES", env = env::MCP_OUTPUT_MAX_BYTES, default_value_t = crate::mcp::area::DEFAULT_MAX_BYTES)]
    pub mcp_output_max_bytes: u64,
    /// List and serve the raw `cdp` tool on `/mcp` (it can do anything the browser can).
    #[arg(long, env = env::MCP_ALLOW_CDP, value_parser = clap::builder::FalseyValueParser::new())]
    pub mcp_allow_cdp: bool,
    /// Largest text of one `/mcp` tool result, in o200k_base tokens (as `afhttp mcp
    /// --text-budget-tokens`).
    #[arg(long, value_name = "N", env = env::MCP_TEXT_BUDGET_TOKENS, default_value_t = crate::mcp::DEFAULT_TEXT_BUDGET_TOKENS)]
    pub mcp_text_budget_tokens: usize,
    /// Largest text of one `/mcp` tool result, in characters (as `afhttp mcp
    /// --text-budget-chars`).
    #[arg(long, value_name = "N", env = env::MCP_TEXT_BUDGET_CHARS, default_value_t = crate::mcp::DEFAULT_TEXT_BUDGET_CHARS)]
    pub mcp_text_budget_chars: usize,
    /// Largest screenshot a `/mcp` fetch result carries inline, in bytes (0: never; as
    /// `afhttp mcp --image-max-bytes`).
    #[arg(long, value_name = "BYTES", env = env::MCP_IMAGE_MAX_BYTES, default_value_t = crate::mcp::DEFAULT_IMAGE_MAX_BYTES)]
    pub mcp_image_max_bytes: u64,
}
