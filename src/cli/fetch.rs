//! `afhttp fetch`: clap arguments, resolution into a [`FetchRequest`], and the call into the SDK.

use std::path::PathBuf;

use clap::Args;

use std::time::Duration;

use crate::env;
use crate::envelope::Event;
use crate::error::AfError;
use crate::sdk::cookies::parse::parse_cli_cookie;
use crate::sdk::endpoint::Endpoint;
use crate::sdk::fetch::{
    self as sdk_fetch, options, BrowserOptions, FetchRequest, HeaderPair, RequestBody,
    TransportOptions, MAX_RETRIES,
};
use crate::sdk::http::exchange::now_unix;
use crate::sdk::request::{Artifact, NetworkBodies, RenderMode, Wait, MAX_WAIT_MS};

/// Arguments of `afhttp fetch`.
#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub struct FetchArgs {
    /// The http:// or https:// URL to acquire.
    #[arg(value_name = "URL")]
    pub url: String,
    /// Browser host to drive (ws://, wss://, http://, https:// or unix:/path).
    #[arg(long, value_name = "URL", env = env::ENDPOINT_URL)]
    pub endpoint_url: Option<String>,
    #[command(flatten)]
    pub fleet: super::fleet::FleetOpt,
    /// Bearer token for the host.
    #[arg(long, value_name = "STRING", env = env::TOKEN_SECRET, hide_env_values = true)]
    pub token_secret: Option<String>,
    /// File holding the bearer token.
    #[arg(long, value_name = "PATH", env = env::TOKEN_SECRET_FILE)]
    pub token_secret_file: Option<PathBuf>,
    /// Browser executable for an inline host (no --endpoint-url).
    #[arg(long, value_name = "PATH", env = env::BROWSER_BIN)]
    pub browser_bin: Option<PathBuf>,
    /// none: HTTP only; auto: HTTP first, browser on a mechanical reason; always: browser.
    #[arg(long, value_name = "none|auto|always", default_value = "auto")]
    pub render: String,
    /// Browser tab to use: `new` (closed afterwards) or an existing tab id.
    #[arg(long, value_name = "new|ID")]
    pub tab: Option<String>,
    /// Human takeover: use the URL's site profile, keep the tab, and when a wall is in the
    /// way return next_action with a takeover_url and a re-fetch command (needs a takeover host).
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
    /// Artifacts to write, comma-separated (the list comes from the artifact registry).
    #[arg(long, value_name = "LIST", help = crate::sdk::artifact::want_help())]
    pub want: Option<String>,
    /// Sub-request bodies to save on the browser path: off, xhr (XHR, fetch, EventSource) or all (default: xhr with --wait auto, else off).
    #[arg(long, value_name = "off|xhr|all")]
    pub network_bodies: Option<String>,
    /// Largest captured sub-request body, in bytes; longer ones are cut (0 = no cap).
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
    /// Record WebSocket frames in network.json (sensitive).
    #[arg(long)]
    pub capture_ws: bool,
    /// Record server-sent (EventSource) messages in network.json (sensitive).
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
    // A fleet routes the fetch; --endpoint-url (more specific) wins over it.
    let fleet = match args
        .endpoint_url
        .is_none()
        .then(|| fleet_of(&args))
        .transpose()
    {
        Ok(f) => f.flatten(),
        Err(e) => return Event::error(&e, None),
    };
    let request = match resolve(args) {
        Ok(r) => r,
        Err(e) => return Event::error(&e, None),
    };
    let run = async {
        match &fleet {
            Some((fleet, connect)) => {
                crate::sdk::fleet::route::fetch(fleet, request, *connect).await
            }
            None => sdk_fetch::fetch(request).await,
        }
    };
    match super::block_on(run) {
        Ok(Ok(outcome)) => Event::result("fetch", outcome.to_json(), Some(outcome.trace.to_json())),
        Ok(Err(failure)) => Event::error(&failure.error, Some(failure.trace.to_json())),
        Err(e) => Event::error(&e, None),
    }
}

/// The fleet and its connect bound, when `--fleet` is given.
fn fleet_of(args: &FetchArgs) -> Result<Option<(crate::sdk::fleet::Fleet, Duration)>, AfError> {
    let connect = args.fleet.connect_timeout()?;
    Ok(args.fleet.parsed()?.map(|f| (f, connect)))
}

/// Largest accepted `--timeout-ms` (24 hours).
const MAX_TIMEOUT_MS: u64 = 24 * 60 * 60 * 1000;

/// Turn parsed flags into one validated request; the only place fetch reads the environment.
pub fn resolve(args: FetchArgs) -> Result<FetchRequest, AfError> {
    let url = options::parse_target_url(&args.url)?;
    let render: RenderMode = args.render.parse()?;
    let wait: Wait = args.wait.parse()?;
    let want = args.want.as_deref().map(Artifact::parse_list).transpose()?;
    let mut token = super::driver::resolve_token(
        args.token_secret.as_deref(),
        args.token_secret_file.as_deref(),
    )?;
    // `--profile` and `--takeover` need a host: without an endpoint, use the managed local
    // container (plain fetches stay HTTP/inline, as the spec says).
    // What a printed `recommended_command` must repeat to reach this host (never the token).
    let mut replay_args = Vec::new();
    if let Some(u) = &args.endpoint_url {
        replay_args.extend(["--endpoint-url".to_string(), u.clone()]);
    }
    if let Some(f) = &args.token_secret_file {
        let f = crate::fsutil::absolute(f);
        replay_args.extend(["--token-secret-file".to_string(), f.display().to_string()]);
    }
    let endpoint_url = match args.endpoint_url.clone() {
        Some(u) => Some(u),
        None if (args.profile.is_some() || args.takeover)
            && render != RenderMode::None
            && args.fleet.fleet.is_none() =>
        {
            if let Some(p) = &args.profile {
                crate::profile::ProfileName::parse(p)?;
            }
            // Nothing found: the fetch pipeline explains what the flag needs.
            match super::driver::discover_opt(token.is_none())? {
                Some(found) => {
                    if token.is_none() {
                        token = found.token;
                    }
                    Some(found.endpoint_url)
                }
                None => None,
            }
        }
        None => None,
    };
    let endpoint = endpoint_url.as_deref().map(Endpoint::parse).transpose()?;
    if args.data.is_some() && !args.form.is_empty() {
        return Err(AfError::invalid("--data and --form cannot be combined"));
    }
    let body = match (&args.data, args.form.is_empty()) {
        (Some(d), _) => Some(RequestBody::Bytes(options::read_data(d)?)),
        (None, false) => Some(RequestBody::Form(
            args.form
                .iter()
                .map(|f| options::parse_form_field(f))
                .collect::<Result<_, _>>()?,
        )),
        (None, true) => None,
    };
    let method = match &args.method {
        Some(m) => options::parse_method(m)?,
        None if body.is_some() => "POST".to_string(),
        None => "GET".to_string(),
    };
    if body.is_some() && (method == "HEAD" || method == "GET" && !args.form.is_empty()) {
        return Err(AfError::invalid(format!(
            "--method {method} cannot carry a request body"
        )));
    }
    let headers = args
        .header
        .iter()
        .map(|h| HeaderPair::parse(h))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(ua) = &args.user_agent {
        if ua.chars().any(char::is_control) || ua.len() > 4096 {
            return Err(AfError::invalid(
                "--user-agent has control characters or is longer than 4096 bytes",
            ));
        }
    }
    let now = now_unix();
    let cookies = args
        .cookie
        .iter()
        .map(|c| parse_cli_cookie(c, &url, now))
        .collect::<Result<Vec<_>, _>>()?;
    if args.no_cookie_jar
        && args.cookie_jar.is_some()
        && std::env::var_os(env::COOKIE_JAR).is_none()
    {
        return Err(AfError::invalid(
            "--cookie-jar and --no-cookie-jar cannot be combined",
        ));
    }
    let cookie_jar = if args.no_cookie_jar {
        None
    } else {
        args.cookie_jar.map(|p| crate::fsutil::absolute(&p))
    };
    if args.timeout_ms == 0 || args.timeout_ms > MAX_TIMEOUT_MS {
        return Err(AfError::invalid(format!(
            "--timeout-ms must be between 1 and {MAX_TIMEOUT_MS}"
        )));
    }
    if args.retry > MAX_RETRIES {
        return Err(AfError::invalid(format!(
            "--retry is at most {MAX_RETRIES}"
        )));
    }
    if args.backoff_ms > 60_000 {
        return Err(AfError::invalid("--backoff-ms is at most 60000"));
    }
    if args.network_body_max_bytes > 1 << 30 {
        return Err(AfError::invalid(
            "--network-body-max-bytes is at most 1073741824",
        ));
    }
    for (flag, v) in [
        ("--readiness-idle-ms", args.readiness_idle_ms),
        ("--readiness-stable-ms", args.readiness_stable_ms),
    ] {
        if v > MAX_WAIT_MS {
            return Err(AfError::invalid(format!("{flag} is at most {MAX_WAIT_MS}")));
        }
    }
    if let Some(out) = &args.out {
        if out.as_os_str().is_empty() {
            return Err(AfError::invalid("--out is empty"));
        }
    }
    let tab = args.tab.map(|t| validate_tab(&t)).transpose()?;
    let transport = TransportOptions {
        proxy_url: args
            .proxy_url
            .as_deref()
            .map(options::parse_proxy_url)
            .transpose()?,
        ca_cert: args.ca_cert,
        tls_insecure: args.tls_insecure,
    };
    let network_bodies = args
        .network_bodies
        .as_deref()
        .map(str::parse::<NetworkBodies>)
        .transpose()?;
    Ok(FetchRequest {
        method,
        headers,
        body,
        cookies,
        user_agent: args.user_agent,
        render,
        want,
        out_dir: args.out,
        cookie_jar,
        retry: args.retry,
        backoff: Duration::from_millis(args.backoff_ms),
        transport,
        timeout: Duration::from_millis(args.timeout_ms),
        max_response_bytes: args.max_response_bytes,
        no_network_redact: args.no_network_redact,
        endpoint,
        token,
        browser_bin: args.browser_bin,
        browser: BrowserOptions {
            wait,
            tab,
            takeover: args.takeover,
            profile: args.profile,
            replay_args,
            evaluate_after_wait: args.evaluate_after_wait,
            network_bodies,
            network_body_max_bytes: args.network_body_max_bytes,
            readiness_idle_ms: args.readiness_idle_ms,
            readiness_stable_ms: args.readiness_stable_ms,
            readiness_min_text_bytes: args.readiness_min_text_bytes,
            capture_ws: args.capture_ws,
            capture_sse: args.capture_sse,
            ..BrowserOptions::default()
        },
        ..FetchRequest::get(url)
    })
}

fn validate_tab(tab: &str) -> Result<String, AfError> {
    let ok = tab == "new"
        || (!tab.is_empty()
            && tab.len() <= 128
            && tab
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
    if ok {
        Ok(tab.to_string())
    } else {
        Err(AfError::invalid(format!(
            "--tab {tab:?} must be `new` or a tab id"
        )))
    }
}
