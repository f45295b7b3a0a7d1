//! `afhttp fetch`: clap arguments, resolution into a [`FetchRequest`], and the call into the SDK.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::env;
use crate::envelope::Event;
use crate::error::AfError;
use crate::sdk::endpoint::Endpoint;
use crate::sdk::fetch::{self as sdk_fetch, FetchRequest, FetchSpec};
use crate::sdk::secret::Secret;

/// Arguments of `afhttp fetch`: the SDK's [`FetchSpec`] plus where the host is.
#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub struct FetchArgs {
    /// Everything about the request itself.
    #[command(flatten)]
    pub spec: FetchSpec,
    /// Browser host to drive (ws://, wss://, http://, https:// or unix:/path).
    #[arg(long, value_name = "URL", env = env::ENDPOINT_URL)]
    pub endpoint_url: Option<String>,
    #[command(flatten)]
    pub fleet: super::fleet::FleetOpt,
    /// Bearer token for the host.
    #[arg(long, value_name = "STRING", env = env::TOKEN_SECRET, hide_env_values = true)]
    pub token_secret: Option<Secret>,
    /// File holding the bearer token.
    #[arg(long, value_name = "PATH", env = env::TOKEN_SECRET_FILE)]
    pub token_secret_file: Option<PathBuf>,
    /// Refuse loopback, private (RFC 1918, fc00::/7) and shared (100.64/10) addresses, and
    /// always link-local and cloud metadata ones, on the HTTP step (every redirect hop) and
    /// in an inline browser (`egress_denied`). A host's browser keeps the host's own policy.
    #[arg(long, env = env::DENY_PRIVATE_NETWORKS, value_parser = clap::builder::FalseyValueParser::new())]
    pub deny_private_networks: bool,
    /// An exception to that egress policy: IP, IP/PREFIX or exact host name; alone, it turns
    /// the policy on (link-local and metadata refused). Repeatable.
    #[arg(long, value_name = "CIDR|HOST", env = env::EGRESS_ALLOW, value_delimiter = ',')]
    pub egress_allow: Vec<String>,
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
        Err(e) => return Event::error(&flag_hint(e), None),
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
        Ok(Err(failure)) => Event::error(&flag_hint(failure.error), Some(failure.trace.to_json())),
        Err(e) => Event::error(&e, None),
    }
}

/// The fleet and its connect bound, when `--fleet` is given.
fn fleet_of(args: &FetchArgs) -> Result<Option<(crate::sdk::fleet::Fleet, Duration)>, AfError> {
    let connect = args.fleet.connect_timeout()?;
    Ok(args.fleet.parsed()?.map(|f| (f, connect)))
}

/// The flag a spec field is set with: `timeout_ms` is `--timeout-ms`, `url` the `URL`
/// argument.
pub fn flag_for(field: &str) -> String {
    match field {
        "url" => "the URL argument".to_string(),
        f => format!("--{}", f.replace('_', "-")),
    }
}

/// Name the flag in the hint of an error the SDK raised about a spec field.
fn flag_hint(mut e: AfError) -> AfError {
    if let Some(field) = e.field.clone() {
        let flag = flag_for(&field);
        e.hint = Some(match e.hint.take() {
            Some(h) => format!("{h} ({flag})"),
            None => format!("check {flag}"),
        });
    }
    e
}

/// Map flags, `AFHTTP_*` env and container discovery onto the SDK request: the only place
/// fetch reads the environment. Every check of the request itself is the SDK's
/// [`FetchSpec::validate`].
pub fn resolve(args: FetchArgs) -> Result<FetchRequest, AfError> {
    let mut spec = args.spec;
    // A jar named only by the environment gives way to an explicit --no-cookie-jar.
    if spec.no_cookie_jar
        && spec.cookie_jar.is_some()
        && spec.cookie_jar == env::var(env::COOKIE_JAR).map(PathBuf::from)
    {
        spec.cookie_jar = None;
    }
    // So does a browser executable named only by the environment: it is the inline
    // browser's default (the inline host reads it itself), not a request a host could refuse.
    if spec.browser_bin.is_some()
        && spec.browser_bin == env::var(env::BROWSER_BIN).map(PathBuf::from)
    {
        spec.browser_bin = None;
    }
    let needs_host = (spec.profile.is_some() || spec.takeover)
        && spec.render.as_deref() != Some("none")
        && args.fleet.fleet.is_none();
    let mut request = spec
        .validate()?
        .with_launcher(crate::host::inline::InlineLauncher::shared());
    if let Some(policy) =
        super::host::egress_policy(false, args.deny_private_networks, &args.egress_allow)?
    {
        request = request.with_egress_policy(policy);
    }
    let mut token = super::driver::resolve_token(
        args.token_secret.as_ref(),
        args.token_secret_file.as_deref(),
    )?;
    // What a printed `recommended_command` must repeat to reach this host (never the token).
    let mut replay_args = Vec::new();
    if let Some(u) = &args.endpoint_url {
        replay_args.extend(["--endpoint-url".to_string(), u.clone()]);
    }
    if let Some(f) = &args.token_secret_file {
        let f = crate::fsutil::absolute(f);
        replay_args.extend(["--token-secret-file".to_string(), f.display().to_string()]);
    }
    // `--profile` and `--takeover` need a host: without an endpoint, use the managed local
    // container (plain fetches stay HTTP/inline, as the spec says). Nothing found: the fetch
    // pipeline explains what the flag needs.
    let endpoint_url = match args.endpoint_url {
        Some(u) => Some(u),
        None if needs_host => match super::driver::discover_opt(token.is_none())? {
            Some(found) => {
                if token.is_none() {
                    token = found.token;
                }
                Some(found.endpoint_url)
            }
            None => None,
        },
        None => None,
    };
    Ok(match endpoint_url {
        Some(raw) => request.on_host(Endpoint::parse(&raw)?, token, replay_args),
        // A fleet routes it later and needs the token for its members.
        None => request.with_token(token),
    })
}
