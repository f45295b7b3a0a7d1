//! `fetch --takeover`: the per-site profile, the mechanical test of whether the target was
//! reached, and the `next_action` that hands the same tab to a human.
//!
//! Nothing here guesses from page wording beyond the conservative challenge markers: a page
//! needs a human when it matched them, answered 401/403/429, or ended on another registrable
//! domain than the one asked for (a login redirect). Each reason is a fact the trace records.

use std::net::IpAddr;

use serde_json::{json, Value};
use url::{Host, Url};

use crate::error::{AfError, ErrorCode};
use crate::profile::ProfileName;
use crate::sdk::client::Client;
use crate::sdk::fetch::outcome::FetchOutcome;
use crate::sdk::fetch::takeover_hint::{human_takeover, shell_quote};
use crate::sdk::fetch::FetchRequest;

/// Statuses that mean "not for you, not like this": the target was not reached.
const WALL_STATUSES: [u16; 3] = [401, 403, 429];

/// The registrable domain (eTLD+1) of `host` by the public suffix list:
/// `www.example.co.uk` → `example.co.uk`; `foo.github.io` stays whole (a private suffix);
/// a host that is itself a suffix, or has no known suffix, stays as it is.
pub fn registrable_domain(host: &str) -> String {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    match psl::domain_str(&host) {
        Some(d) => d.to_string(),
        None => host,
    }
}

/// The registrable domain of `url`'s host; IP literals and `localhost` as they are.
pub fn site_of(url: &Url) -> Option<String> {
    match url.host()? {
        Host::Domain(d) if d.eq_ignore_ascii_case("localhost") => Some("localhost".into()),
        Host::Domain(d) => Some(registrable_domain(d)),
        Host::Ipv4(ip) => Some(ip.to_string()),
        Host::Ipv6(ip) => Some(ip.to_string()),
    }
}

/// The profile `fetch --takeover` uses when `--profile` is absent: the URL's site, spelled as
/// a valid profile name (an IPv6 literal's `:` become `_`, behind an `ipv6_` prefix).
pub fn site_profile(url: &Url) -> Result<String, AfError> {
    let site = site_of(url)
        .ok_or_else(|| AfError::invalid(format!("{url} has no host to derive a profile from")))?;
    let name = match site.parse::<IpAddr>() {
        Ok(IpAddr::V6(v6)) => format!("ipv6_{}", v6.to_string().replace(':', "_")),
        _ => site,
    };
    ProfileName::parse(&name).map_err(|e| {
        e.with_hint("the site name cannot be a profile name; set profile explicitly")
            .with_field("profile")
    })?;
    Ok(name)
}

/// Why the target was not reached, as a mechanical fact; `None` when it was.
pub fn not_reached(requested: &Url, outcome: &FetchOutcome) -> Option<String> {
    if outcome.page_kind.is_some() {
        let reason = outcome
            .next_action
            .as_ref()
            .and_then(|n| n.get("reason"))
            .and_then(Value::as_str)
            .unwrap_or("challenge_markers");
        return Some(reason.to_string());
    }
    if WALL_STATUSES.contains(&outcome.status) {
        return Some(format!(
            "status_{}: the page answered {}",
            outcome.status, outcome.status
        ));
    }
    let final_url = Url::parse(&outcome.final_url).ok()?;
    let (want, got) = (site_of(requested)?, site_of(&final_url)?);
    (want != got).then(|| format!("other_site: the final URL is on {got}, not {want}"))
}

/// The command that re-fetches the same tab once a human is past the wall. It carries no
/// secret: the token comes from `AFHTTP_TOKEN_SECRET`, a token file, or container discovery.
pub fn recommended_command(req: &FetchRequest, tab_id: &str) -> String {
    let mut args = vec![
        "afhttp".to_string(),
        "fetch".into(),
        shell_quote(req.url.as_str()),
        "--takeover".into(),
        "--tab".into(),
        shell_quote(tab_id),
    ];
    if let Some(p) = req
        .browser
        .profile
        .as_deref()
        .filter(|_| !req.browser.profile_derived)
    {
        args.push("--profile".into());
        args.push(shell_quote(p));
    }
    args.extend(req.browser.replay_args.iter().map(|a| shell_quote(a)));
    args.join(" ")
}

/// Hand the tab over: a fresh handoff URL and the re-fetch command, as `next_action`.
pub async fn next_action(
    client: &Client,
    req: &FetchRequest,
    tab_id: &str,
    reason: &str,
) -> Result<Value, AfError> {
    let handoff = client.takeover_handoff(None).await?;
    let mut next = human_takeover(req.url.as_str(), reason);
    next["recommended_command"] = json!(recommended_command(req, tab_id));
    next["tab_id"] = json!(tab_id);
    next["takeover_url"] = json!(handoff.get("takeover_url"));
    next["takeover_url_expires_at_rfc3339"] = json!(handoff.get("expires_at_rfc3339"));
    Ok(next)
}

/// Refuse a host that serves no takeover display before switching its profile.
pub async fn require_takeover_host(client: &Client) -> Result<(), AfError> {
    let caps = client.capabilities().await?;
    if caps.pointer("/takeover/supported") == Some(&Value::Bool(true)) {
        return Ok(());
    }
    Err(AfError::new(
        ErrorCode::TakeoverUnavailable,
        "takeover needs a host with a takeover display, and this host has none",
    )
    .with_hint(
        "start the host with `afhttp host --takeover-provider novnc` (or kasmvnc), or use the container \
         (`afhttp container install`), which has one",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sdk::fetch::outcome::Trace;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn registrable_domains() {
        assert_eq!(registrable_domain("www.example.co.uk"), "example.co.uk");
        assert_eq!(registrable_domain("a.b.example.com"), "example.com");
        assert_eq!(registrable_domain("foo.github.io"), "foo.github.io");
        assert_eq!(registrable_domain("WWW.Example.COM."), "example.com");
        assert_eq!(registrable_domain("co.uk"), "co.uk");
    }

    #[test]
    fn site_profiles() {
        assert_eq!(
            site_profile(&url("https://my.contabo.com/x")).unwrap(),
            "contabo.com"
        );
        assert_eq!(
            site_profile(&url("http://127.0.0.1:8080/")).unwrap(),
            "127.0.0.1"
        );
        assert_eq!(
            site_profile(&url("http://localhost:1/")).unwrap(),
            "localhost"
        );
        assert_eq!(site_profile(&url("http://[::1]:1/")).unwrap(), "ipv6___1");
        assert_eq!(
            site_profile(&url("https://bücher.example.de/")).unwrap(),
            "example.de"
        );
        let long = format!("https://{}.com/", "a".repeat(63));
        let e = site_profile(&url(&long)).unwrap_err();
        assert_eq!(e.code, ErrorCode::ProfileInvalidName);
    }

    fn outcome(status: u16, final_url: &str) -> FetchOutcome {
        FetchOutcome {
            request_id: "r".into(),
            url: "https://www.example.com/a".into(),
            final_url: final_url.into(),
            status,
            content_type: None,
            render_used: "browser",
            tab_id: None,
            out_dir: "/tmp".into(),
            files: Vec::new(),
            body_bytes: 0,
            body_truncated: false,
            redirects: 0,
            page_kind: None,
            next_action: None,
            warnings: Vec::new(),
            download: None,
            trace: Trace::new("r"),
            screenshot: None,
        }
    }

    #[test]
    fn reached_or_not() {
        let req = url("https://www.example.com/a");
        assert_eq!(
            not_reached(&req, &outcome(200, "https://example.com/b")),
            None
        );
        assert_eq!(
            not_reached(&req, &outcome(200, "https://shop.example.com/")),
            None
        );
        assert!(
            not_reached(&req, &outcome(403, "https://www.example.com/a"))
                .unwrap()
                .starts_with("status_403")
        );
        assert!(not_reached(&req, &outcome(200, "https://login.idp.net/"))
            .unwrap()
            .starts_with("other_site: the final URL is on idp.net"));
        let mut walled = outcome(200, "https://www.example.com/a");
        walled.page_kind = Some(crate::sdk::challenge::PageKind::BotWall);
        walled.next_action = Some(json!({"reason": "challenge_markers: x (y)"}));
        assert_eq!(
            not_reached(&req, &walled).as_deref(),
            Some("challenge_markers: x (y)")
        );
    }

    #[test]
    fn command_runs_as_printed() {
        let mut req = FetchRequest::get(url("https://a.example.com/?q=1&r=2"));
        req.browser.takeover = true;
        req.browser.profile = Some("example.com".into());
        req.browser.profile_derived = true;
        req.browser.replay_args = vec!["--endpoint-url".into(), "http://127.0.0.1:9".into()];
        assert_eq!(
            recommended_command(&req, "T1"),
            "afhttp fetch 'https://a.example.com/?q=1&r=2' --takeover --tab T1 \
             --endpoint-url http://127.0.0.1:9"
        );
        req.browser.profile_derived = false;
        req.browser.profile = Some("work".into());
        req.browser.replay_args.clear();
        assert_eq!(
            recommended_command(&req, "T1"),
            "afhttp fetch 'https://a.example.com/?q=1&r=2' --takeover --tab T1 --profile work"
        );
    }
}
