//! `afhttp host`: a foreground browser host. Prints one `host_ready` result when it serves
//! (or one error if it cannot start), then runs until SIGINT/SIGTERM and exits 0.

use std::time::Duration;

use crate::envelope::Event;
use crate::error::AfError;
use crate::host::listener::{ListenAddr, TokenSecret};
use crate::host::run::{self, HostOptions};
use crate::profile::{Backend, ProfileName, EPHEMERAL};

pub use super::host_args::HostArgs;

/// Largest `--recent-requests-cap` (records are small, but memory is not free).
const MAX_RECENT_REQUESTS: u64 = 100_000;
/// Highest `--upload-max-bytes` (10 GiB).
const MAX_UPLOAD_BYTES: u64 = 10 * 1024 * 1024 * 1024;
/// Largest `--profile-switch-wait-ms` (ten minutes).
const MAX_SWITCH_WAIT_MS: u64 = 600_000;
/// Upper bound of `--max-clients` and `--max-tabs` (far beyond what one browser sustains).
const MAX_CAP: usize = 4096;

/// Largest `--tab-pool`.
const MAX_TAB_POOL: usize = 16;

/// Turn flags into validated options.
pub fn resolve(args: HostArgs) -> Result<HostOptions, AfError> {
    let listen = ListenAddr::parse(&args.listen)?;
    // A bad name is refused before any browser is looked for.
    if let Some(name) = args.profile.as_deref().filter(|p| *p != EPHEMERAL) {
        ProfileName::parse(name)?;
    }
    if args.ephemeral_only && args.profile.as_deref().is_some_and(|p| p != EPHEMERAL) {
        return Err(AfError::invalid(
            "--ephemeral-only keeps no persistent profile, so it cannot start on --profile NAME",
        ));
    }
    let headless = match args.display.as_str() {
        "headless" => true,
        "headful" => false,
        other => {
            return Err(AfError::invalid(format!(
                "--display must be headless or headful, not {other:?}"
            )))
        }
    };
    let takeover = crate::host::display::Provider::parse(&args.takeover_provider)?;
    if args.takeover_quality_percent > 100 {
        return Err(AfError::invalid("--takeover-quality-percent is 0 to 100"));
    }
    let backend = match args.browser.as_str() {
        "auto" => None,
        other => Some(Backend::parse(other)?),
    };
    let health_public_minimal = match args.health_public.as_str() {
        "off" => false,
        "minimal" => true,
        other => {
            return Err(AfError::invalid(format!(
                "--health-public must be off or minimal, not {other:?}"
            )))
        }
    };
    let token = match (args.token.token_secret, &args.token.token_secret_file) {
        (Some(t), _) => Some(TokenSecret::new(t)?),
        (None, Some(path)) => Some(TokenSecret::new(crate::host::token::load_or_create(path)?)?),
        (None, None) => None,
    };
    if let Some(p) = &args.proxy_url {
        crate::sdk::fetch::options::parse_proxy_url(p.expose())?;
    }
    let engine_env = args
        .engine_env
        .iter()
        .map(|kv| {
            kv.split_once('=')
                .filter(|(k, _)| !k.is_empty())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| AfError::invalid(format!("--engine-env {kv:?} needs K=V")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut opts = HostOptions::local(listen, super::env());
    opts.profile = args.profile;
    opts.headless = headless;
    opts.backend = backend;
    opts.browser_bin = args.browser_bin;
    opts.token = token;
    opts.health = !args.no_health;
    opts.health_public_minimal = health_public_minimal;
    opts.proxy_url = args.proxy_url;
    opts.engine_env = engine_env;
    opts.browser_args = args
        .browser_arg
        .into_iter()
        .filter(|a| !a.is_empty())
        .collect();
    opts.allowed_hosts = args.allowed_host;
    opts.trusted_proxies = args
        .trusted_proxy
        .iter()
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            crate::host::egress::policy::parse_ip_block(p).ok_or_else(|| {
                AfError::invalid(format!("--trusted-proxy {p:?} is not an IP or IP/PREFIX"))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    opts.egress = egress_policy(
        args.egress_policy,
        args.deny_private_networks,
        &args.egress_allow,
    )?;
    if args.recent_requests_cap > MAX_RECENT_REQUESTS {
        return Err(AfError::invalid(format!(
            "--recent-requests-cap {} is above the limit of {MAX_RECENT_REQUESTS}",
            args.recent_requests_cap
        )));
    }
    opts.recent_requests_cap = args.recent_requests_cap as usize;
    if args.profile_switch_wait_ms > MAX_SWITCH_WAIT_MS {
        return Err(AfError::invalid(format!(
            "--profile-switch-wait-ms {} is above the limit of {MAX_SWITCH_WAIT_MS}",
            args.profile_switch_wait_ms
        )));
    }
    opts.ephemeral_only = args.ephemeral_only;
    opts.profile_switch_wait = Duration::from_millis(args.profile_switch_wait_ms);
    if args.upload_max_bytes == 0 || args.upload_max_bytes > MAX_UPLOAD_BYTES {
        return Err(AfError::invalid(format!(
            "--upload-max-bytes {} must be between 1 and {MAX_UPLOAD_BYTES}",
            args.upload_max_bytes
        )));
    }
    opts.upload_max_bytes = args.upload_max_bytes;
    for (flag, value) in [
        ("--max-clients", args.max_clients),
        ("--max-tabs", args.max_tabs),
    ] {
        if value == 0 || value > MAX_CAP {
            return Err(AfError::invalid(format!(
                "{flag} {value} must be between 1 and {MAX_CAP}"
            )));
        }
    }
    opts.max_clients = args.max_clients;
    opts.max_tabs = args.max_tabs;
    if args.tab_pool > MAX_TAB_POOL {
        return Err(AfError::invalid(format!(
            "--tab-pool {} must be between 0 and {MAX_TAB_POOL}",
            args.tab_pool
        )));
    }
    opts.tab_pool = args.tab_pool;
    let output_ttl = crate::profile::parse_age(&args.mcp_output_ttl)
        .map_err(|e| AfError::invalid(format!("--mcp-output-ttl: {}", e.message)))?;
    if output_ttl.is_zero() {
        return Err(AfError::invalid("--mcp-output-ttl must be at least 1s"));
    }
    let budget = super::mcp::budget_of(args.mcp_text_budget_tokens, args.mcp_text_budget_chars)
        .map_err(|e| e.with_hint("check --mcp-text-budget-tokens and --mcp-text-budget-chars"))?;
    opts.mcp = (!args.no_mcp).then_some(crate::host::mcp_host::McpHostOptions {
        output_ttl,
        output_max_bytes: args.mcp_output_max_bytes,
        allow_cdp: args.mcp_allow_cdp,
        text_budget_tokens: budget.tokens,
        text_budget_chars: budget.chars,
        image_max_bytes: args.mcp_image_max_bytes,
    });
    opts.startup_timeout = Duration::from_secs(30);
    opts.takeover = takeover;
    opts.takeover_quality_percent = args.takeover_quality_percent;
    if let Some(ms) = super::env().get(crate::env::TEST_RESTART_WINDOW_MS) {
        let ms = ms.parse::<u64>().map_err(|_| {
            AfError::invalid(format!(
                "{} must be a number of milliseconds",
                crate::env::TEST_RESTART_WINDOW_MS
            ))
        })?;
        opts.restart_window = Duration::from_millis(ms);
    }
    Ok(opts)
}

/// Run `afhttp host`. Returns the event still to print (none once `host_ready` was printed)
/// and the exit code.
pub fn run(args: HostArgs) -> (Option<Event>, u8) {
    // As a container's PID 1, stay a small init and run the host as our child.
    if let Some(code) = crate::host::init::run_if_pid1() {
        return (None, code);
    }
    let fail = |e: &AfError| (Some(Event::error(e, None)), super::output::EXIT_ERROR);
    // `/mcp` answers before its fetches' tabs close; the host lives on to close them.
    crate::sdk::afterwards::answer_first();
    let opts = match resolve(args) {
        Ok(o) => o,
        Err(e) => return fail(&e),
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(&AfError::io("start the async runtime", &e)),
    };
    let mut printed = false;
    let result = rt.block_on(run::run_foreground(opts, |ready| {
        super::output::emit(&Event::result("host_ready", ready.clone(), None), false);
        printed = true;
    }));
    rt.shutdown_timeout(Duration::from_secs(2));
    match (result, printed) {
        (Ok(()), _) => (None, super::output::EXIT_OK),
        (Err(e), false) => fail(&e),
        (Err(e), true) => {
            // One event per command: after host_ready, a later failure goes to the log only.
            crate::host::log::log(
                crate::host::log::Level::Error,
                "host failed",
                serde_json::json!({"code": e.code.as_str(), "error": e.message}),
            );
            (None, super::output::EXIT_ERROR)
        }
    }
}

/// The egress policy from `--egress-policy`, `--deny-private-networks` and
/// `--egress-allow` (either of the last two turns it on); a malformed exception is
/// `invalid_argument`. Shared by `host`, `mcp` (always on) and `fetch`.
pub(super) fn egress_policy(
    on: bool,
    deny_private: bool,
    allow: &[String],
) -> Result<Option<crate::host::egress::Policy>, AfError> {
    let allow = allow
        .iter()
        .filter(|a| !a.trim().is_empty())
        .map(|a| crate::host::egress::AllowRule::parse(a))
        .collect::<Result<Vec<_>, _>>()?;
    if !(on || deny_private || !allow.is_empty()) {
        return Ok(None);
    }
    Ok(Some(crate::host::egress::Policy {
        deny_private,
        allow,
    }))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use clap::Parser;

    const TOKEN: &str = "-host-token-canary-5150";

    /// The host's parsed flags and its resolved options hold the token, and `Debug` of
    /// either shows neither it nor its tail.
    #[test]
    fn debug_of_the_host_config_does_not_print_the_token() {
        let cli = super::super::Cli::try_parse_from([
            "afhttp",
            "host",
            "--token-secret",
            TOKEN,
            "--listen",
            "tcp:127.0.0.1:0",
        ])
        .unwrap();
        let super::super::Commands::Host(args) = cli.command else {
            panic!("not the host command");
        };
        let shown = format!("{args:?}");
        assert!(!shown.contains("canary"), "{shown}");
        let opts = super::resolve(*args).unwrap();
        assert_eq!(opts.token.as_ref().unwrap().expose(), TOKEN);
        let shown = format!("{opts:?}");
        assert!(!shown.contains("canary"), "{shown}");
        assert!(shown.contains("token: Some("), "{shown}");
    }
}
