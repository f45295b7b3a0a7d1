//! Which member a fetch or a thin command goes to.
//!
//! - A persistent profile goes to the member that holds it; a profile no reachable member
//!   holds is placed on its rendezvous owner. It never runs anywhere else: with the owner (or
//!   any member that might hold it) unreachable, the fetch is a retryable `host_unreachable`
//!   naming the member, because running it elsewhere would fork the profile (spec §7).
//! - An ephemeral fetch goes to the least-loaded healthy member, in an isolated browser
//!   context, and fails over to the next on `host_busy`, `host_unreachable` or
//!   `cdp_unavailable` while its timeout lasts. Every attempt is in `trace.fleet.attempts`.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::placement;
use super::probe::{self, Report};
use super::{Fleet, Member};
use crate::error::{AfError, ErrorCode};
use crate::sdk::fetch::outcome::{round1, Trace};
use crate::sdk::fetch::{FetchFailure, FetchOutcome, FetchRequest};

/// Errors an ephemeral fetch fails over on: the member, not the target, was the problem.
pub const FAILOVER_CODES: [ErrorCode; 3] = [
    ErrorCode::HostBusy,
    ErrorCode::HostUnreachable,
    ErrorCode::CdpUnavailable,
];

/// Shortest time left for which another member is still tried.
const MIN_ATTEMPT: Duration = Duration::from_millis(500);

/// The member chosen for a persistent profile, and why.
#[derive(Debug, Clone)]
pub struct Choice {
    /// The member.
    pub member: Member,
    /// `holds_profile`, `placed_by_rendezvous`, `named` or `least_loaded`.
    pub reason: &'static str,
    /// Other members that also hold the profile (a fork someone made by hand).
    pub also_held_by: Vec<String>,
}

/// The member for persistent profile `profile` given every member's report.
pub fn for_profile(fleet: &Fleet, reports: &[Report], profile: &str) -> Result<Choice, AfError> {
    let persistent: Vec<&Report> = reports
        .iter()
        .filter(|r| !r.member.ephemeral_only)
        .collect();
    if persistent.is_empty() {
        return Err(AfError::invalid(format!(
            "profile {profile}: the fleet has only ephemeral members"
        ))
        .with_hint("list at least one member without the ephemeral: prefix"));
    }
    let owner = placement::owner(profile, fleet.persistent_members().map(|m| m.name.as_str()))
        .unwrap_or_default();
    let holders: Vec<&Report> = persistent
        .iter()
        .copied()
        .filter(|r| r.reachable() && r.holds(profile))
        .collect();
    if let Some(first) = holders
        .iter()
        .find(|r| r.member.name == owner)
        .or_else(|| holders.first())
    {
        return Ok(Choice {
            member: first.member.clone(),
            reason: "holds_profile",
            also_held_by: holders
                .iter()
                .filter(|r| r.member.name != first.member.name)
                .map(|r| r.member.name.clone())
                .collect(),
        });
    }
    let down: Vec<&Report> = persistent
        .iter()
        .copied()
        .filter(|r| !r.reachable())
        .collect();
    if let Some(r) = down.iter().find(|r| r.member.name == owner) {
        return Err(unreachable_owner(profile, r, "its member"));
    }
    if let Some(r) = down.first() {
        return Err(unreachable_owner(profile, r, "a member that may hold it"));
    }
    let member = fleet.member(owner)?.clone();
    Ok(Choice {
        member,
        reason: "placed_by_rendezvous",
        also_held_by: Vec::new(),
    })
}

fn unreachable_owner(profile: &str, r: &Report, whose: &str) -> AfError {
    let why = r.error.as_ref().map_or("", |e| e.message.as_str());
    AfError::new(
        ErrorCode::HostUnreachable,
        format!(
            "profile {profile:?}: {whose}, {}, is unreachable ({why}); it is not run elsewhere, which would fork the profile",
            r.member.name
        ),
    )
    .with_hint(format!(
        "retry once {} is back (`afhttp fleet status` shows every member)",
        r.member.name
    ))
}

/// Healthy members for an ephemeral fetch, least loaded first; equal loads are ordered by
/// rendezvous on `key` (the request), so concurrent drivers spread instead of piling on one.
pub fn ephemeral_order<'a>(reports: &'a [Report], key: &str) -> Vec<&'a Report> {
    let mut healthy: Vec<&Report> = reports.iter().filter(|r| r.healthy()).collect();
    healthy.sort_by(|a, b| {
        (a.clients_in_use, a.tabs_active)
            .cmp(&(b.clients_in_use, b.tabs_active))
            .then_with(|| {
                placement::score(&b.member.name, key).cmp(&placement::score(&a.member.name, key))
            })
    });
    healthy
}

/// Run `req` on the fleet (its endpoint is chosen here).
pub async fn fetch(
    fleet: &Fleet,
    req: FetchRequest,
    connect_timeout: Duration,
) -> Result<FetchOutcome, FetchFailure> {
    let started = Instant::now();
    let key = uuid::Uuid::new_v4().simple().to_string();
    let fail = |error: AfError, fleet_trace: Value| {
        let mut trace = Trace::new(&key);
        trace.set("fleet", fleet_trace);
        FetchFailure { error, trace }
    };
    let reports = probe::probe_all(
        fleet,
        req.token.as_ref().map(crate::sdk::secret::Secret::expose),
        connect_timeout,
    )
    .await;
    let probe_ms = round1(started.elapsed().as_secs_f64() * 1000.0);
    let base = json!({
        "members": fleet.members.len(),
        "members_healthy": reports.iter().filter(|r| r.healthy()).count(),
        "probe_ms": probe_ms,
    });
    if let Some(profile) = req.browser.profile.clone() {
        let choice = match for_profile(fleet, &reports, &profile) {
            Ok(c) => c,
            Err(e) => return Err(fail(e, with(base, json!({"profile": profile})))),
        };
        let mut decision = with(
            base,
            json!({
                "member": choice.member.name,
                "endpoint_url": choice.member.url,
                "reason": choice.reason,
                "profile": profile,
            }),
        );
        if !choice.also_held_by.is_empty() {
            decision["also_held_by"] = json!(choice.also_held_by);
        }
        let mut result = run_on(&choice.member, req).await;
        record(&mut result, decision, Vec::new());
        return result;
    }
    if req.browser.tab.as_deref().is_some_and(|t| t != "new") {
        return Err(fail(
            AfError::invalid("a tab id with a fleet needs the member that holds the tab")
                .with_hint("set endpoint_url to that member, or profile to the tab's profile"),
            base,
        ));
    }
    let order = ephemeral_order(&reports, &key);
    if order.is_empty() {
        let statuses: Vec<String> = reports
            .iter()
            .map(|r| {
                let s = r.status.as_deref().unwrap_or("unreachable");
                format!("{} {s}", r.member.name)
            })
            .collect();
        return Err(fail(
            AfError::new(
                ErrorCode::HostUnreachable,
                format!("no healthy member in the fleet ({})", statuses.join(", ")),
            )
            .with_hint("retry; `afhttp fleet status` shows every member"),
            base,
        ));
    }
    let deadline = started + req.timeout;
    let mut attempts = Vec::new();
    let mut last: Option<Result<FetchOutcome, FetchFailure>> = None;
    for report in order {
        let left = deadline.saturating_duration_since(Instant::now());
        if left < MIN_ATTEMPT && !attempts.is_empty() {
            break;
        }
        let mut one = req.clone();
        one.timeout = left.max(MIN_ATTEMPT);
        one.browser.isolated_context = true;
        let t = Instant::now();
        let result = run_on(&report.member, one).await;
        let mut attempt = json!({
            "member": report.member.name,
            "load": {"clients_in_use": report.clients_in_use, "tabs_active": report.tabs_active},
            "elapsed_ms": round1(t.elapsed().as_secs_f64() * 1000.0),
        });
        let failover = match &result {
            Ok(_) => false,
            Err(f) => {
                attempt["error"] =
                    json!({"code": f.error.code.as_str(), "message": f.error.message});
                FAILOVER_CODES.contains(&f.error.code)
            }
        };
        attempts.push(attempt);
        let member = report.member.clone();
        last = Some(result.map_err(|mut f| {
            f.trace.set("fleet_member", json!(member.name));
            f
        }));
        if !failover {
            break;
        }
    }
    let chosen = attempts.last().map(|a| a["member"].clone());
    let decision = with(
        base,
        json!({"member": chosen, "reason": "least_loaded", "isolated_context": true}),
    );
    match last {
        Some(mut result) => {
            record(&mut result, decision, attempts);
            result
        }
        None => Err(fail(
            AfError::new(ErrorCode::HostUnreachable, "no member was tried"),
            decision,
        )),
    }
}

/// `req` on `member`: its endpoint, and a printed command that reaches it again.
async fn run_on(member: &Member, mut req: FetchRequest) -> Result<FetchOutcome, FetchFailure> {
    req.endpoint = Some(member.endpoint.clone());
    let mut replay = vec!["--endpoint-url".to_string(), member.url.clone()];
    replay.append(&mut req.browser.replay_args);
    req.browser.replay_args = replay;
    crate::sdk::fetch::fetch_with(req, Default::default()).await
}

fn with(mut base: Value, extra: Value) -> Value {
    if let (Value::Object(b), Value::Object(e)) = (&mut base, extra) {
        b.extend(e);
    }
    base
}

/// Put the routing decision and the attempts into the fetch's trace.
fn record(
    result: &mut Result<FetchOutcome, FetchFailure>,
    mut decision: Value,
    attempts: Vec<Value>,
) {
    decision["attempts"] = json!(attempts);
    let trace = match result {
        Ok(o) => &mut o.trace,
        Err(f) => &mut f.trace,
    };
    trace.set("fleet", decision);
}

/// The member a thin command (`tabs`, `panel`, `cdp`, `upload`, `health`, `capabilities`)
/// goes to: `--member NAME`, or the member holding `--profile NAME`. Returns the member and
/// a trace of the decision.
pub async fn for_command(
    fleet: &Fleet,
    member: Option<&str>,
    profile: Option<&str>,
    token: Option<&str>,
    connect_timeout: Duration,
) -> Result<(Member, Value), AfError> {
    match (member, profile) {
        (Some(name), None) => {
            let m = fleet.member(name)?.clone();
            let trace = json!({"member": m.name, "endpoint_url": m.url, "reason": "named"});
            Ok((m, trace))
        }
        (None, Some(profile)) => {
            let reports = probe::probe_all(fleet, token, connect_timeout).await;
            let holder = reports
                .iter()
                .find(|r| !r.member.ephemeral_only && r.reachable() && r.holds(profile));
            match holder {
                Some(r) => Ok((
                    r.member.clone(),
                    json!({"member": r.member.name, "endpoint_url": r.member.url,
                           "reason": "holds_profile", "profile": profile}),
                )),
                None => {
                    // Not found: say whether a down member may be the reason.
                    let choice = for_profile(fleet, &reports, profile)?;
                    Err(AfError::new(
                        ErrorCode::ProfileNotFound,
                        format!(
                            "no member holds profile {profile:?} yet (a fetch would place it on {})",
                            choice.member.name
                        ),
                    )
                    .with_hint("`afhttp fleet status` lists where each profile lives"))
                }
            }
        }
        (Some(_), Some(_)) => Err(AfError::invalid(
            "member and profile both pick a fleet member; give one",
        )),
        (None, None) => Err(AfError::invalid(
            "a fleet needs a member name or a profile to pick the host",
        )
        .with_hint("`afhttp fleet status` lists the members and their profiles")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sdk::endpoint::Endpoint;

    fn member(name: &str, ephemeral_only: bool) -> Member {
        Member {
            name: name.into(),
            url: format!("ws://{name}:9222"),
            endpoint: Endpoint::parse(&format!("ws://{name}:9222")).unwrap(),
            ephemeral_only,
        }
    }

    fn report(m: &Member, up: bool, load: u64, profiles: &[&str]) -> Report {
        Report {
            member: m.clone(),
            status: up.then(|| "ok".to_string()),
            version: None,
            clients_in_use: load,
            tabs_active: 1,
            profiles: profiles.iter().map(|p| p.to_string()).collect(),
            active_profile: None,
            host_role: None,
            error: (!up).then(|| AfError::new(ErrorCode::HostUnreachable, "refused")),
            elapsed: Duration::ZERO,
        }
    }

    fn fleet(members: &[Member]) -> Fleet {
        Fleet {
            members: members.to_vec(),
            spec: String::new(),
        }
    }

    #[test]
    fn a_held_profile_stays_where_it_is() {
        let m: Vec<Member> = ["a", "b", "c"].iter().map(|n| member(n, false)).collect();
        let f = fleet(&m);
        // Pick a name whose rendezvous owner is not `b`, and put it on `b`.
        let name = (0..)
            .map(|i| format!("p{i}"))
            .find(|n| placement::owner(n, ["a", "b", "c"]) != Some("b"))
            .unwrap();
        let reports = vec![
            report(&m[0], true, 0, &[]),
            report(&m[1], true, 5, &[&name]),
            report(&m[2], true, 0, &[]),
        ];
        let c = for_profile(&f, &reports, &name).unwrap();
        assert_eq!((c.member.name.as_str(), c.reason), ("b", "holds_profile"));
    }

    #[test]
    fn a_new_profile_goes_to_its_owner_and_never_elsewhere_while_a_member_is_down() {
        let m: Vec<Member> = ["a", "b", "c"].iter().map(|n| member(n, false)).collect();
        let f = fleet(&m);
        let owner = placement::owner("new", ["a", "b", "c"]).unwrap();
        let all_up: Vec<Report> = m.iter().map(|m| report(m, true, 0, &[])).collect();
        let c = for_profile(&f, &all_up, "new").unwrap();
        assert_eq!(
            (c.member.name.as_str(), c.reason),
            (owner, "placed_by_rendezvous")
        );
        for down in ["a", "b", "c"] {
            let reports: Vec<Report> = m
                .iter()
                .map(|x| report(x, x.name != down, 0, &[]))
                .collect();
            let e = for_profile(&f, &reports, "new").unwrap_err();
            assert_eq!(e.code, ErrorCode::HostUnreachable);
            assert!(e.retryable());
            assert!(e.message.contains(down), "{}", e.message);
        }
    }

    #[test]
    fn ephemeral_members_never_get_profiles() {
        let m = vec![member("e1", true), member("p", false), member("e2", true)];
        let f = fleet(&m);
        for i in 0..200 {
            let reports: Vec<Report> = m.iter().map(|x| report(x, true, 0, &[])).collect();
            let c = for_profile(&f, &reports, &format!("n{i}")).unwrap();
            assert_eq!(c.member.name, "p");
        }
        let only = fleet(&[member("e", true)]);
        let reports = vec![report(&only.members[0], true, 0, &[])];
        assert_eq!(
            for_profile(&only, &reports, "x").unwrap_err().code,
            ErrorCode::InvalidArgument
        );
    }

    #[test]
    fn ephemeral_fetches_prefer_the_least_loaded_healthy_member() {
        let m: Vec<Member> = ["a", "b", "c", "d"]
            .iter()
            .map(|n| member(n, false))
            .collect();
        let reports = vec![
            report(&m[0], true, 3, &[]),
            report(&m[1], false, 0, &[]),
            report(&m[2], true, 1, &[]),
            report(&m[3], true, 2, &[]),
        ];
        let order: Vec<&str> = ephemeral_order(&reports, "k")
            .iter()
            .map(|r| r.member.name.as_str())
            .collect();
        assert_eq!(order, ["c", "d", "a"]);
        // Equal loads spread over the members by request.
        let idle: Vec<Report> = m.iter().map(|x| report(x, true, 0, &[])).collect();
        let firsts: std::collections::HashSet<String> = (0..200)
            .map(|i| {
                ephemeral_order(&idle, &format!("req{i}"))[0]
                    .member
                    .name
                    .clone()
            })
            .collect();
        assert_eq!(firsts.len(), 4);
    }
}
