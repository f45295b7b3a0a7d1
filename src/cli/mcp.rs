//! `afhttp mcp`: the stdio MCP server. Its fetches go where the CLI's would: plain HTTP and
//! an inline browser, the host named by `--endpoint-url` / `AFHTTP_ENDPOINT_URL`, a
//! `--fleet`, or the discovered container (through [`super::fetch::resolve_on`]).

use std::sync::Arc;

use clap::Args;

use super::driver::DriverArgs;
use super::reach::HostArgs;
use crate::env;
use crate::envelope::Event;
use crate::error::AfError;
use crate::mcp::budget::Budget;
use crate::mcp::{
    AfhttpMcp, McpConfig, DEFAULT_IMAGE_MAX_BYTES, DEFAULT_TEXT_BUDGET_CHARS,
    DEFAULT_TEXT_BUDGET_TOKENS,
};

/// Arguments of `afhttp mcp`: the server's options, or one of the configuration
/// subcommands.
#[derive(Debug, Clone, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct McpArgs {
    /// Write, remove or check afhttp's entry in a coding agent's MCP configuration instead
    /// of serving.
    #[command(subcommand)]
    pub command: Option<super::mcp_install::McpInstallCommand>,
    /// Where the host is; without an endpoint or a fleet, fetches are local (plain HTTP, an
    /// inline browser).
    #[command(flatten)]
    pub host: HostArgs,
    /// Largest text content of one tool result, in o200k_base tokens (counted exactly); a
    /// longer page is cut and the answer ends with the read_artifact call that reads on.
    #[arg(long, value_name = "N", env = env::MCP_TEXT_BUDGET_TOKENS, default_value_t = DEFAULT_TEXT_BUDGET_TOKENS)]
    pub text_budget_tokens: usize,
    /// Largest text content of one tool result, in characters (UTF-16 code units, the
    /// structured facts included): Claude Code saves a result over 50,000 to a file.
    #[arg(long, value_name = "N", env = env::MCP_TEXT_BUDGET_CHARS, default_value_t = DEFAULT_TEXT_BUDGET_CHARS)]
    pub text_budget_chars: usize,
    /// Largest inline screenshot of a fetch result, in bytes (0: never). The screenshot is
    /// first fitted to 1568 px and 1.15 MP (a tall page: its top, 768 px wide), then sent as
    /// PNG, or as a smaller JPEG to fit; the full image stays an artifact.
    #[arg(long, value_name = "BYTES", env = env::MCP_IMAGE_MAX_BYTES, default_value_t = DEFAULT_IMAGE_MAX_BYTES)]
    pub image_max_bytes: u64,
    /// With --fleet: the member the host tools (`health`, `capabilities`, `tabs_*`,
    /// `takeover`, `cdp`) talk to, by name. Fetches route by their own profile.
    #[arg(long, value_name = "NAME")]
    pub member: Option<String>,
    /// With --fleet: the host tools talk to the member holding this persistent profile.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// List and serve the `cdp` tool (raw CDP: it can do anything the browser can).
    #[arg(long)]
    pub allow_cdp: bool,
    /// Also refuse fetches of loopback, private (RFC 1918, fc00::/7) and shared (100.64/10)
    /// addresses, on the HTTP step (every redirect hop) and in the inline browser.
    /// Link-local and cloud metadata addresses are always refused.
    #[arg(long, env = env::DENY_PRIVATE_NETWORKS, value_parser = clap::builder::FalseyValueParser::new())]
    pub deny_private_networks: bool,
    /// An exception to the egress policy: IP, IP/PREFIX or exact host name. Repeatable.
    #[arg(long, value_name = "CIDR|HOST", env = env::EGRESS_ALLOW, value_delimiter = ',')]
    pub egress_allow: Vec<String>,
}

/// Run `afhttp mcp` until the client closes stdin; an event is printed only when the server
/// cannot start or fails (stdout is the protocol channel while it runs).
pub fn run(args: McpArgs) -> Option<Event> {
    let text_budget = match budget_of(args.text_budget_tokens, args.text_budget_chars) {
        Ok(b) => b,
        Err(e) => return Some(super::error_event(e, None)),
    };
    // Always on for MCP (a model that reads untrusted pages chooses the URLs): link-local
    // and metadata addresses refused, and with --deny-private-networks private ones too.
    let egress =
        match super::host::egress_policy(true, args.deny_private_networks, &args.egress_allow) {
            Ok(p) => p.unwrap_or_default(),
            Err(e) => return Some(super::error_event(e, None)),
        };
    // Where the host is, resolved once (the same step as the CLI's fetch); a fetch that
    // needs a host and has none discovers the managed container.
    let reach = match args.host.resolve() {
        Ok(r) => r,
        Err(e) => return Some(super::error_event(e, None)),
    };
    // The host tools reach the same target; a local one becomes the managed container, and
    // a fleet its member, per call, as the CLI's driver commands do.
    let driver = driver_args(&args);
    let (client_driver, client_reach) = (driver.clone(), reach.clone());
    let host_reach = reach.clone();
    let local = args.host.is_local();
    let config = McpConfig {
        text_budget,
        image_max_bytes: args.image_max_bytes,
        resolve_fetch: Arc::new(move |spec| super::fetch::resolve_on(spec, &reach)),
        resolve_client: Arc::new(move || {
            if local {
                return Ok(None);
            }
            client_driver.check()?;
            client_driver
                .client_on(client_reach.clone())
                .map(|(client, _)| Some(client))
        }),
        resolve_host: Arc::new(move || {
            driver.check()?;
            driver.client_on(host_reach.clone()).map(|(c, _)| c)
        }),
        allow_cdp: args.allow_cdp,
        egress: Some(egress),
    };
    let server = AfhttpMcp::new(config);
    // Answers go out before their tabs close and inline browsers stop; those finish
    // before the server exits.
    crate::sdk::afterwards::answer_first();
    let serve = async {
        let (stdin, stdout) = super::output::protocol_streams();
        let served = crate::mcp::transport::serve_stdio(server, stdin, stdout).await;
        crate::sdk::afterwards::finish(super::AFTER_ANSWER_BOUND).await;
        served
    };
    match super::block_on(serve) {
        Ok(Ok(())) => None,
        Ok(Err(e)) | Err(e) => Some(super::error_event(e, None)),
    }
}

/// The thin commands' host arguments (endpoint, token; discovery when no endpoint), for
/// their checks and their member routing; the host itself is the server's one [`Reach`].
///
/// [`Reach`]: super::reach::Reach
fn driver_args(args: &McpArgs) -> DriverArgs {
    DriverArgs {
        host: args.host.clone(),
        timeout_ms: crate::sdk::defaults::TIMEOUT_MS,
        member: args.member.clone(),
        profile: args.profile.clone(),
    }
}

/// The text budget from `--text-budget-tokens` and `--text-budget-chars` (also the host's
/// `--mcp-text-budget-*`), checked.
pub(crate) fn budget_of(tokens: usize, chars: usize) -> Result<Budget, AfError> {
    if !(256..=10_000_000).contains(&tokens) {
        return Err(
            AfError::invalid("the text budget must be between 256 and 10000000 tokens")
                .with_field("text_budget_tokens"),
        );
    }
    if !(1024..=40_000_000).contains(&chars) {
        return Err(AfError::invalid(
            "the text budget must be between 1024 and 40000000 characters",
        )
        .with_field("text_budget_chars"));
    }
    Ok(Budget { tokens, chars })
}
