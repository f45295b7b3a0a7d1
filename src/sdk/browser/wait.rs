//! Readiness: wait for the `--wait` condition, bounded by a deadline and, for every wait
//! but an explicit `ms:N` (`auto`, `idle`, `load`, `selector:`, `selector-visible:`), by the
//! readiness budget counted from the navigation commit. Running out of time is a `readiness_timeout` warning naming what was still
//! pending, never a failed fetch; a crash is `tab_crashed`.
//!
//! `--wait auto` ends on evidence ([`super::settle`]); only when the page-side evidence is
//! missing (a backend without the injected probe) does it fall back to the network-quiet
//! and DOM-quiet windows. `trace.readiness.ended_by` says which condition ended the wait.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::assets;
use super::eval::evaluate;
use super::network::{PendingRequest, State};
use super::session::{crashed_error, lock, Shared};
use super::settle::{self, Probe, Rule, Tab, Verdict};
use super::stall::Cutter;
use crate::error::{AfError, ErrorCode, Warning};
use crate::sdk::cdp::CdpConnection;
use crate::sdk::fetch::BrowserOptions;
use crate::sdk::request::Wait;

/// How often conditions are polled when no event arrives.
const TICK: Duration = Duration::from_millis(50);

/// Requests named in the trace at most.
const MAX_STUCK: usize = 20;

/// The readiness signals recorded in the trace, and any warning.
#[derive(Debug)]
pub struct Readiness {
    /// `trace.readiness`.
    pub signals: Value,
    /// `readiness_timeout` when the budget or the deadline hit first.
    pub warning: Option<Warning>,
}

/// What the page-side evidence is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Evidence {
    /// Not asked yet.
    Unknown,
    /// The probe was there from the document's start.
    Page,
    /// The probe was installed late (an attached tab): earlier timers and requests are
    /// invisible to it, so the network-quiet window is required too.
    Late,
    /// No probe answers (the backend cannot evaluate it).
    Missing,
}

struct Seen {
    load_ms: Option<f64>,
    dom_content_ms: Option<f64>,
    commit_ms: Option<f64>,
    idle: bool,
    selector_matched: bool,
    evidence: Evidence,
    probe: Option<Probe>,
    verdict: Option<Verdict>,
    next_probe: Instant,
}

/// The tab's state at one look.
struct Look {
    loaded: Option<Instant>,
    parsed: Option<Instant>,
    committed: Option<Instant>,
    doc_arrived: bool,
    inflight: usize,
    quiet: u64,
    own_quiet: Option<u64>,
    pending: Vec<PendingRequest>,
}

impl Look {
    /// The tab's side of the settle rule.
    fn tab(&self) -> Tab<'_> {
        Tab {
            loaded: self.loaded.is_some(),
            parsed: self.parsed.is_some(),
            pending: &self.pending,
            own_quiet_ms: self.own_quiet,
        }
    }
}

fn look(state: &Shared) -> Result<Look, AfError> {
    let st = lock(state);
    if let Some(why) = &st.crashed {
        return Err(crashed_error(why));
    }
    Ok(Look {
        loaded: st.load_at,
        parsed: st.dom_content_at,
        committed: st.committed_at,
        doc_arrived: st
            .network
            .document()
            .is_some_and(|d| d.state != State::Pending),
        inflight: st.network.inflight(),
        quiet: st.network.quiet_ms(),
        own_quiet: st.network.settle_quiet_ms(),
        pending: st.network.pending(),
    })
}

fn ms(d: Duration) -> f64 {
    crate::sdk::fetch::outcome::round1(d.as_secs_f64() * 1000.0)
}

/// Wait until `opts.wait` holds, its budget is spent, or `deadline` passes.
pub async fn wait(
    conn: &CdpConnection,
    session: &str,
    state: &Shared,
    opts: &BrowserOptions,
    nav_start: Instant,
    deadline: Instant,
    cutter: &mut Cutter,
) -> Result<Readiness, AfError> {
    let started = Instant::now();
    // An `ms:N` wait is a duration the user asked for, and nothing on the page can stretch
    // it: it is honoured up to the capture reserve. Every wait on the page (its settling,
    // its network, its load event, a selector) can be held hostage, so the budget bounds it.
    let budgeted = !matches!(opts.wait, Wait::Ms(_));
    let budget = Duration::from_millis(opts.readiness_budget_ms);
    let rule = Rule {
        settle_ms: opts.readiness_stable_ms,
        min_text_bytes: opts.readiness_min_text_bytes,
        idle_evidence: opts.readiness_idle_evidence,
    };
    let mut seen = Seen {
        load_ms: None,
        dom_content_ms: None,
        commit_ms: None,
        idle: false,
        selector_matched: false,
        evidence: Evidence::Unknown,
        probe: None,
        verdict: None,
        next_probe: started,
    };
    let call_timeout = |now: Instant| {
        deadline
            .saturating_duration_since(now)
            .clamp(Duration::from_millis(200), Duration::from_secs(5))
    };
    let changed = std::sync::Arc::clone(&lock(state).changed);
    let since_nav = |at: Option<Instant>| at.map(|t| ms(t.saturating_duration_since(nav_start)));
    let (ended_by, last) = loop {
        let now = Instant::now();
        let l = look(state)?;
        seen.load_ms = seen.load_ms.or(since_nav(l.loaded));
        seen.dom_content_ms = seen.dom_content_ms.or(since_nav(l.parsed));
        seen.commit_ms = seen.commit_ms.or(since_nav(l.committed));
        // The commit is when the main document arrived; a backend that never reports it
        // committed by the time `Page.navigate` answered, just before this wait began.
        let anchor = l.committed.unwrap_or(started);
        let until = if budgeted {
            deadline.min(anchor + budget)
        } else {
            deadline
        };
        // A stalled third party holding the page is cut (the page reloads without it).
        if cutter
            .check(conn, session, state, &opts.wait, call_timeout(now))
            .await?
        {
            seen.probe = None;
            seen.verdict = None;
            seen.next_probe = Instant::now();
            continue;
        }
        seen.idle = (l.loaded.is_some() || l.doc_arrived)
            && l.inflight == 0
            && l.quiet >= opts.readiness_idle_ms;
        let done: Option<&'static str> = match &opts.wait {
            Wait::Load => l.loaded.map(|_| "load"),
            Wait::Idle => seen.idle.then_some("network_idle"),
            Wait::Ms(n) => {
                (now.saturating_duration_since(anchor) >= Duration::from_millis(*n)).then_some("ms")
            }
            Wait::Selector(css) | Wait::SelectorVisible(css) => {
                let visible = matches!(opts.wait, Wait::SelectorVisible(_));
                let expr = assets::selector_probe(css, visible);
                match evaluate(conn, session, &expr, false, call_timeout(now)).await {
                    Ok(Ok(v)) => seen.selector_matched = v.as_bool().unwrap_or(false),
                    Ok(Err(text)) if text.contains("not a valid selector") => {
                        return Err(AfError::invalid(format!("wait selector {css:?}: {text}"))
                            .with_field("wait"));
                    }
                    Ok(Err(_)) => {}
                    Err(e) if e.code == ErrorCode::CdpUnavailable => return Err(e),
                    Err(_) => {}
                }
                seen.selector_matched.then_some("selector")
            }
            Wait::Auto => {
                auto_step(conn, session, state, &l, rule, &mut seen, call_timeout(now)).await?
            }
        };
        // A waiting third-party script or stylesheet the page cannot parse or paint past
        // gets its window (then it is cut) before the page counts as ready.
        let held = done.is_some()
            && matches!(
                opts.wait,
                Wait::Auto | Wait::Selector(_) | Wait::SelectorVisible(_)
            )
            && cutter.holds(state);
        if let Some(why) = done.filter(|_| !held) {
            break (why, l);
        }
        let now = Instant::now();
        if now >= until {
            let why = if budgeted && until < deadline {
                "readiness_budget"
            } else {
                "deadline"
            };
            break (why, l);
        }
        // Sleep until the next event, the moment a window would be reached, or the next
        // poll, whichever is first: a fixed poll alone would add up to a whole tick after
        // every condition on every fetch.
        let mut nap = TICK.min(until.saturating_duration_since(now));
        if (l.loaded.is_some() || l.doc_arrived) && l.inflight == 0 {
            let to_idle = Duration::from_millis(opts.readiness_idle_ms.saturating_sub(l.quiet));
            nap = nap.min(to_idle.max(Duration::from_millis(1)));
        }
        if let Wait::Ms(n) = opts.wait {
            let at = anchor + Duration::from_millis(n);
            nap = nap.min(
                at.saturating_duration_since(now)
                    .max(Duration::from_millis(1)),
            );
        }
        if let Some(at) = cutter.next_due(state) {
            nap = nap.min(
                at.saturating_duration_since(now)
                    .max(Duration::from_millis(1)),
            );
        }
        if matches!(opts.wait, Wait::Auto) && seen.next_probe > now {
            nap = nap.min(seen.next_probe - now);
        }
        // A selector is only seen by evaluating it, so those waits keep the plain poll rather
        // than evaluating once per network event.
        let polled = matches!(opts.wait, Wait::Selector(_) | Wait::SelectorVisible(_));
        tokio::select! {
            () = changed.notified(), if !polled => {}
            () = tokio::time::sleep(nap) => {}
        }
    };
    let timed_out = matches!(ended_by, "readiness_budget" | "deadline");
    if timed_out || seen.probe.is_none() {
        let t = call_timeout(Instant::now());
        if let Some(p) = probe(conn, session, &mut seen, t).await? {
            seen.verdict = Some(settle::judge(&p, last.tab(), rule));
        }
    }
    let waited = ms(started.elapsed());
    let stuck = stuck_requests(&last.pending, &seen);
    let blocking: Vec<Value> = seen
        .probe
        .as_ref()
        .and_then(|p| p.blocking_script.clone())
        .map(|url| {
            let host = super::network::pending::host_of(&url);
            json!({"url": url, "host": host})
        })
        .into_iter()
        .collect();
    let p = seen.probe.clone().unwrap_or_default();
    let have_probe = seen.probe.is_some();
    let signals = json!({
        "wait": opts.wait.to_string(),
        "ended_by": ended_by,
        "budget_ms": budgeted.then_some(opts.readiness_budget_ms),
        "evidence": match seen.evidence {
            Evidence::Page => "page",
            Evidence::Late => "page_late",
            Evidence::Missing | Evidence::Unknown => "quiet_window",
        },
        "commit_ms": seen.commit_ms,
        "dom_content_ms": seen.dom_content_ms,
        "load_ms": seen.load_ms,
        "idle_reached": seen.idle,
        "inflight_requests": last.inflight,
        "network_quiet_ms": last.quiet,
        "ready_state": have_probe.then_some(p.ready_state.clone()),
        "settled_by": (ended_by == "settled")
            .then(|| seen.verdict.as_ref().and_then(|v| v.by))
            .flatten(),
        "dom_stable": have_probe && p.quiet_ms >= opts.readiness_stable_ms,
        "dom_quiet_ms": have_probe.then_some(p.quiet_ms),
        "dom_mutations": have_probe.then_some(p.mutations),
        "frames_quiet": have_probe.then_some(p.frames_quiet),
        "idle_ms": p.idle_ms,
        "own_quiet_ms": last.own_quiet,
        "short_timers": have_probe.then_some(p.short_timers),
        "intervals": have_probe.then_some(p.intervals),
        "text_bytes": have_probe.then_some(p.text_bytes),
        "missing": seen.verdict.as_ref().map(|v| v.missing.clone()),
        "stuck_requests": stuck.iter().take(MAX_STUCK).map(|(r, b)| r.to_json(*b)).collect::<Vec<_>>(),
        "parser_blocking": blocking,
        "selector_matched": matches!(opts.wait, Wait::Selector(_) | Wait::SelectorVisible(_)).then_some(seen.selector_matched),
        "cuts": cutter.signals(state),
        "waited_ms": waited,
        "timed_out": timed_out,
    });
    let warning = timed_out.then(|| {
        Warning::general(
            ErrorCode::ReadinessTimeout,
            timeout_message(opts, ended_by, &seen, &stuck, waited),
        )
    });
    Ok(Readiness { signals, warning })
}

/// One look for `--wait auto`: `Some(reason)` once the page is settled.
async fn auto_step(
    conn: &CdpConnection,
    session: &str,
    state: &Shared,
    l: &Look,
    rule: Rule,
    seen: &mut Seen,
    t: Duration,
) -> Result<Option<&'static str>, AfError> {
    let fallback = |seen: &Seen| l.loaded.is_some() && seen.idle;
    if seen.evidence == Evidence::Missing {
        return Ok(fallback(seen).then_some("quiet_window"));
    }
    let parsed = l.loaded.is_some() || l.parsed.is_some();
    let held = l.pending.iter().any(PendingRequest::holds_settle);
    // Nothing to learn from the page before its document is parsed and its own requests
    // are done; the CDP events wake this wait when they are.
    if !l.doc_arrived || !parsed || held || Instant::now() < seen.next_probe {
        return Ok(None);
    }
    let Some(p) = probe(conn, session, seen, t).await? else {
        return Ok(fallback(seen).then_some("quiet_window"));
    };
    let verdict = settle::judge(&p, l.tab(), rule);
    seen.next_probe = Instant::now() + verdict.recheck_in;
    // A request the page started just before the probe answered is announced before that
    // answer, but the collector may not have folded it yet: give it a moment and look again.
    let settled = verdict.settled && {
        tokio::time::sleep(Duration::from_millis(2)).await;
        let again = look(state)?;
        !again.pending.iter().any(PendingRequest::holds_settle)
    };
    seen.verdict = Some(verdict);
    Ok(match (settled, seen.evidence) {
        (true, Evidence::Late) => seen.idle.then_some("quiet_window"),
        (true, _) => Some("settled"),
        (false, _) => None,
    })
}

/// Ask the page-side probe; install it when it is missing (an attached tab). `None` when the
/// page cannot answer at all.
async fn probe(
    conn: &CdpConnection,
    session: &str,
    seen: &mut Seen,
    t: Duration,
) -> Result<Option<Probe>, AfError> {
    let v = match evaluate(conn, session, assets::READINESS_PROBE, false, t).await {
        Ok(Ok(v)) => v,
        Err(e) if e.code == ErrorCode::CdpUnavailable => return Err(e),
        _ => Value::Null,
    };
    if let Some(p) = Probe::from_json(&v) {
        if seen.evidence == Evidence::Unknown {
            seen.evidence = Evidence::Page;
        }
        seen.probe = Some(p.clone());
        return Ok(Some(p));
    }
    if seen.evidence == Evidence::Unknown {
        let installed = evaluate(conn, session, assets::READINESS_JS, false, t).await;
        seen.evidence = match installed {
            Ok(Ok(Value::Bool(true))) => Evidence::Late,
            Err(e) if e.code == ErrorCode::CdpUnavailable => return Err(e),
            _ => Evidence::Missing,
        };
    }
    Ok(None)
}

/// The open requests worth naming, with whether the parser waits on each.
fn stuck_requests(pending: &[PendingRequest], seen: &Seen) -> Vec<(PendingRequest, bool)> {
    let blocking = seen.probe.as_ref().and_then(|p| p.blocking_script.as_ref());
    let mut out: Vec<(PendingRequest, bool)> = pending
        .iter()
        .filter(|r| !(r.resource_type == "EventSource" && r.responded))
        .map(|r| (r.clone(), blocking == Some(&r.url)))
        .collect();
    // The parser-blocking script first: it is why the page is empty.
    out.sort_by_key(|(_, b)| !*b);
    out
}

fn timeout_message(
    opts: &BrowserOptions,
    ended_by: &str,
    seen: &Seen,
    stuck: &[(PendingRequest, bool)],
    waited: f64,
) -> String {
    let wait = &opts.wait;
    let within = if ended_by == "readiness_budget" {
        format!(
            "within the {} ms readiness budget (readiness_budget_ms)",
            opts.readiness_budget_ms
        )
    } else {
        format!("within {waited} ms")
    };
    let pending = {
        const SHOWN: usize = 5;
        let mut names: Vec<String> = stuck
            .iter()
            .take(SHOWN)
            .map(|(r, blocking)| {
                let party = if r.first_party { "" } else { ", third-party" };
                let parser = if *blocking { ", parser-blocking" } else { "" };
                format!("{} {}{party}{parser}", r.resource_type, r.host)
            })
            .collect();
        if stuck.len() > SHOWN {
            names.push(format!("and {} more", stuck.len() - SHOWN));
        }
        if names.is_empty() {
            String::new()
        } else {
            format!("; still pending: {}", names.join("; "))
        }
    };
    match wait {
        Wait::Selector(css) | Wait::SelectorVisible(css) => format!(
            "wait {wait}: the selector {css:?} never matched{} {within}{pending}; captured anyway",
            if matches!(wait, Wait::SelectorVisible(_)) {
                " a visible element"
            } else {
                ""
            }
        ),
        Wait::Auto => {
            let missing = seen
                .verdict
                .as_ref()
                .map(|v| v.missing.join(", "))
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| {
                    if seen.idle {
                        "DOM quiet".into()
                    } else {
                        "network idle".into()
                    }
                });
            format!("wait auto: the page did not settle {within} (missing: {missing}){pending}; captured anyway")
        }
        Wait::Idle => {
            format!("wait idle: the network was not idle {within}{pending}; captured anyway")
        }
        Wait::Load => {
            format!("wait load: the load event did not fire {within}{pending}; captured anyway")
        }
        Wait::Ms(_) => format!(
            "wait {wait}: not reached {within} (the capture reserve of timeout_ms came first){pending}; captured anyway"
        ),
    }
}
