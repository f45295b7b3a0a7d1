//! `afhttp fetch`: clap arguments, resolution into a [`FetchRequest`], and the call into the SDK.

use std::path::PathBuf;

use clap::Args;

use super::reach::{HostArgs, Reach};
use crate::env;
use crate::envelope::Event;
use crate::error::AfError;
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
    let refuse = |e: AfError| {
        let event = super::error_event(e, None);
        emit(&event);
        event
    };
    let request = match resolve(args) {
        Ok(r) => r,
        Err(e) => return refuse(e),
    };
    crate::sdk::afterwards::answer_first();
    let run = async {
        // The request's target routes it: local, one host, or a fleet's member.
        let event = match sdk_fetch::fetch(request).await {
            Ok(outcome) => Event::result("fetch", outcome.to_json(), Some(outcome.trace.to_json())),
            Err(failure) => super::error_event(failure.error, Some(failure.trace.to_json())),
        };
        emit(&event);
        crate::sdk::afterwards::finish(super::AFTER_ANSWER_BOUND).await;
        event
    };
    match super::block_on(run) {
        Ok(event) => event,
        Err(e) => refuse(e),
    }
}

/// Map flags, `AFHTTP_*` env and container discovery onto the SDK request: the only place
/// fetch reads the environment. Every check of the request itself is the SDK's
/// [`FetchSpec::validate`].
pub fn resolve(args: FetchArgs) -> Result<FetchRequest, AfError> {
    let (mut request, needs_host) = validated(args.spec)?;
    if let Some(policy) =
        super::host::egress_policy(false, args.deny_private_networks, &args.egress_allow)?
    {
        request = request.with_egress_policy(policy);
    }
    on_reach(request, needs_host, args.host.resolve()?)
}

/// A spec validated into a request against a host resolved once already (`afhttp mcp`'s
/// fetches).
pub fn resolve_on(spec: FetchSpec, reach: &Reach) -> Result<FetchRequest, AfError> {
    let (request, needs_host) = validated(spec)?;
    on_reach(request, needs_host, reach.clone())
}

/// The validated request with the inline launcher, and whether it needs a host
/// (`--profile`, `--takeover`).
fn validated(mut spec: FetchSpec) -> Result<(FetchRequest, bool), AfError> {
    // A jar named only by the environment gives way to an explicit --no-cookie-jar.
    if spec.no_cookie_jar
        && spec.cookie_jar.is_some()
        && spec.cookie_jar == super::env().get(env::COOKIE_JAR).map(PathBuf::from)
    {
        spec.cookie_jar = None;
    }
    // So does a browser executable named only by the environment: it is the inline
    // browser's default (the inline launcher takes it from the snapshot), not a request a
    // host could refuse.
    if spec.browser_bin.is_some()
        && spec.browser_bin == super::env().get(env::BROWSER_BIN).map(PathBuf::from)
    {
        spec.browser_bin = None;
    }
    let needs_host =
        (spec.profile.is_some() || spec.takeover) && spec.render.as_deref() != Some("none");
    let mut request = spec
        .validate()?
        .with_launcher(crate::host::inline::InlineLauncher::shared(super::env()));
    if let Ok(root) = crate::profile::profiles_root(super::env()) {
        request = request.with_profile_store(root);
    }
    Ok((request, needs_host))
}

/// Put the request where `reach` says. `--profile` and `--takeover` need a host: without an
/// endpoint or a fleet, the managed local container (plain fetches stay HTTP/inline, as the
/// spec says). Nothing found: the fetch pipeline explains what the flag needs.
fn on_reach(
    request: FetchRequest,
    needs_host: bool,
    reach: Reach,
) -> Result<FetchRequest, AfError> {
    let reach = if needs_host {
        reach.discovered(false)?
    } else {
        reach
    };
    Ok(request.with_target(reach.target))
}
