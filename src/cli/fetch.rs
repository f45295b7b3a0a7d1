//! `afhttp fetch`: clap arguments, resolution into a [`FetchRequest`], and the call into the SDK.

use std::path::PathBuf;

use clap::Args;

use super::reach::HostArgs;
use crate::env;
use crate::envelope::Event;
use crate::error::AfError;
use crate::sdk::endpoint::Endpoint;
use crate::sdk::fetch::{self as sdk_fetch, FetchRequest, FetchSpec};

/// Arguments of `afhttp fetch`: the SDK's [`FetchSpec`] plus where the host is.
#[derive(Debug, Args)]
#[command(allow_negative_numbers = true)]
pub struct FetchArgs {
    /// Everything about the request itself.
    #[command(flatten)]
    pub spec: FetchSpec,
    /// Where the host is (none: plain HTTP and an inline browser).
    #[command(flatten)]
    pub host: HostArgs,
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

/// Run `afhttp fetch`: `emit` prints the answer as soon as it is known; the clean-ups
/// that follow it (closing the tab, stopping an inline browser) end before this returns.
pub fn run(args: FetchArgs, emit: &dyn Fn(&Event)) -> Event {
    // A fleet routes the fetch; --endpoint-url (more specific) wins over it.
    let refuse = |e: &AfError| {
        let event = Event::error(e, None);
        emit(&event);
        event
    };
    let fleet = match args.host.routing_fleet() {
        Ok(f) => f,
        Err(e) => return refuse(&e),
    };
    let request = match resolve(args) {
        Ok(r) => r,
        Err(e) => return refuse(&flag_hint(e)),
    };
    crate::sdk::afterwards::answer_first();
    let run = async {
        let fetched = match &fleet {
            Some((fleet, connect)) => {
                crate::sdk::fleet::route::fetch(fleet, request, *connect).await
            }
            None => sdk_fetch::fetch(request).await,
        };
        let event = match fetched {
            Ok(outcome) => Event::result("fetch", outcome.to_json(), Some(outcome.trace.to_json())),
            Err(failure) => Event::error(&flag_hint(failure.error), Some(failure.trace.to_json())),
        };
        emit(&event);
        crate::sdk::afterwards::finish(super::AFTER_ANSWER_BOUND).await;
        event
    };
    match super::block_on(run) {
        Ok(event) => event,
        Err(e) => refuse(&e),
    }
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
pub fn flag_hint(mut e: AfError) -> AfError {
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
        && args.host.fleet.fleet.is_none();
    let mut request = spec
        .validate()?
        .with_launcher(crate::host::inline::InlineLauncher::shared());
    if let Some(policy) =
        super::host::egress_policy(false, args.deny_private_networks, &args.egress_allow)?
    {
        request = request.with_egress_policy(policy);
    }
    let host = args.host;
    let mut token = host.token()?;
    // What a printed `recommended_command` must repeat to reach this host (never the token).
    let mut replay_args = Vec::new();
    if let Some(u) = &host.endpoint_url {
        replay_args.extend(["--endpoint-url".to_string(), u.clone()]);
    }
    if let Some(f) = &host.token_secret_file {
        let f = crate::fsutil::absolute(f);
        replay_args.extend(["--token-secret-file".to_string(), f.display().to_string()]);
    }
    // `--profile` and `--takeover` need a host: without an endpoint, use the managed local
    // container (plain fetches stay HTTP/inline, as the spec says). Nothing found: the fetch
    // pipeline explains what the flag needs.
    let endpoint_url = match host.endpoint_url {
        Some(u) => Some(u),
        None if needs_host => match super::reach::discover_opt(token.is_none())? {
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
