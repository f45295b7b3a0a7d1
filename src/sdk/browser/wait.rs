//! Readiness: wait for the `--wait` condition, bounded by a deadline. Running out of time is a
//! `readiness_timeout` warning, never a failed fetch; a crash is `tab_crashed`.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::assets;
use super::eval::evaluate;
use super::network::State;
use super::session::{crashed_error, lock, Shared};
use crate::error::{AfError, ErrorCode, Warning};
use crate::sdk::cdp::CdpConnection;
use crate::sdk::fetch::BrowserOptions;
use crate::sdk::request::Wait;

/// How often conditions are polled.
const TICK: Duration = Duration::from_millis(50);

/// The readiness signals recorded in the trace, and any warning.
#[derive(Debug)]
pub struct Readiness {
    /// `trace.readiness`.
    pub signals: Value,
    /// `readiness_timeout` when the deadline hit first.
    pub warning: Option<Warning>,
}

#[derive(Default)]
struct Seen {
    load_ms: Option<f64>,
    idle: bool,
    dom_stable: bool,
    text_ok: bool,
    selector_matched: bool,
    probe: Value,
}

fn ms(d: Duration) -> f64 {
    crate::sdk::fetch::outcome::round1(d.as_secs_f64() * 1000.0)
}

/// Wait until `opts.wait` holds or `deadline` passes.
pub async fn wait(
    conn: &CdpConnection,
    session: &str,
    state: &Shared,
    opts: &BrowserOptions,
    nav_start: Instant,
    deadline: Instant,
) -> Result<Readiness, AfError> {
    let mut seen = Seen::default();
    let started = Instant::now();
    let call_timeout = |now: Instant| {
        deadline
            .saturating_duration_since(now)
            .clamp(Duration::from_millis(200), Duration::from_secs(5))
    };
    let changed = std::sync::Arc::clone(&lock(state).changed);
    let timed_out = loop {
        let now = Instant::now();
        let (loaded, doc_responded, inflight, quiet) = {
            let st = lock(state);
            if let Some(why) = &st.crashed {
                return Err(crashed_error(why));
            }
            let doc = st
                .network
                .document()
                .is_some_and(|d| d.state != State::Pending);
            (
                st.load_at,
                doc,
                st.network.inflight(),
                st.network.quiet_ms(),
            )
        };
        if let (None, Some(at)) = (seen.load_ms, loaded) {
            seen.load_ms = Some(ms(at.saturating_duration_since(nav_start)));
        }
        seen.idle =
            (loaded.is_some() || doc_responded) && inflight == 0 && quiet >= opts.readiness_idle_ms;
        let done = match &opts.wait {
            Wait::Load => loaded.is_some(),
            Wait::Idle => seen.idle,
            Wait::Ms(n) => loaded.is_some_and(|at| at.elapsed() >= Duration::from_millis(*n)),
            Wait::Selector(css) | Wait::SelectorVisible(css) => {
                let visible = matches!(opts.wait, Wait::SelectorVisible(_));
                let expr = assets::selector_probe(css, visible);
                match evaluate(conn, session, &expr, false, call_timeout(now)).await {
                    Ok(Ok(v)) => seen.selector_matched = v.as_bool().unwrap_or(false),
                    Ok(Err(text)) if text.contains("not a valid selector") => {
                        return Err(AfError::invalid(format!("--wait selector {css:?}: {text}")));
                    }
                    Ok(Err(_)) => {}
                    Err(e) if e.code == ErrorCode::CdpUnavailable => return Err(e),
                    Err(_) => {}
                }
                seen.selector_matched
            }
            Wait::Auto => {
                if loaded.is_some() && seen.idle {
                    probe(conn, session, opts, &mut seen, call_timeout(now)).await?;
                }
                loaded.is_some() && seen.idle && seen.dom_stable && seen.text_ok
            }
        };
        if done {
            break false;
        }
        if Instant::now() >= deadline {
            break true;
        }
        // Sleep until the next event, the moment the network-quiet window would be reached,
        // or the next poll, whichever is first: a fixed poll alone would add up to a whole
        // tick after the load event or the quiet window on every fetch.
        let mut nap = TICK.min(deadline.saturating_duration_since(Instant::now()));
        if (loaded.is_some() || doc_responded) && inflight == 0 {
            let to_idle = Duration::from_millis(opts.readiness_idle_ms.saturating_sub(quiet));
            nap = nap.min(to_idle.max(Duration::from_millis(1)));
        }
        // A selector is only seen by evaluating it, so those waits keep the plain poll rather
        // than evaluating once per network event.
        let polled = matches!(opts.wait, Wait::Selector(_) | Wait::SelectorVisible(_));
        tokio::select! {
            () = changed.notified(), if !polled => {}
            () = tokio::time::sleep(nap) => {}
        }
    };
    if seen.probe.is_null() {
        let t = call_timeout(Instant::now());
        probe(conn, session, opts, &mut seen, t).await?;
    }
    let (inflight, quiet) = {
        let st = lock(state);
        (st.network.inflight(), st.network.quiet_ms())
    };
    let waited = ms(started.elapsed());
    let signals = json!({
        "wait": opts.wait.to_string(),
        "load_ms": seen.load_ms,
        "idle_reached": seen.idle,
        "inflight_requests": inflight,
        "network_quiet_ms": quiet,
        "dom_stable": seen.dom_stable,
        "dom_quiet_ms": seen.probe.get("quiet_ms"),
        "dom_mutations": seen.probe.get("mutations"),
        "text_bytes": seen.probe.get("text_bytes"),
        "selector_matched": matches!(opts.wait, Wait::Selector(_) | Wait::SelectorVisible(_)).then_some(seen.selector_matched),
        "waited_ms": waited,
        "timed_out": timed_out,
    });
    let warning = timed_out.then(|| {
        Warning::general(
            ErrorCode::ReadinessTimeout,
            timeout_message(&opts.wait, &seen, waited),
        )
    });
    Ok(Readiness { signals, warning })
}

async fn probe(
    conn: &CdpConnection,
    session: &str,
    opts: &BrowserOptions,
    seen: &mut Seen,
    t: Duration,
) -> Result<(), AfError> {
    let mut v = match evaluate(conn, session, assets::READINESS_PROBE, false, t).await {
        Ok(Ok(v)) => v,
        Err(e) if e.code == ErrorCode::CdpUnavailable => return Err(e),
        _ => Value::Null,
    };
    if v.is_null() {
        // An attached tab or a document without the injected counter: install it now.
        let _ = evaluate(conn, session, assets::READINESS_JS, false, t).await;
        v = json!({});
    }
    seen.dom_stable = v["quiet_ms"]
        .as_u64()
        .is_some_and(|q| q >= opts.readiness_stable_ms);
    seen.text_ok = v["text_bytes"]
        .as_u64()
        .is_some_and(|b| b >= opts.readiness_min_text_bytes);
    seen.probe = v;
    Ok(())
}

fn timeout_message(wait: &Wait, seen: &Seen, waited: f64) -> String {
    let missing = |cond: bool, name: &str| (!cond).then(|| name.to_string());
    match wait {
        Wait::Selector(css) | Wait::SelectorVisible(css) => format!(
            "--wait {wait}: the selector {css:?} never matched{} within {waited} ms; captured anyway",
            if matches!(wait, Wait::SelectorVisible(_)) { " a visible element" } else { "" }
        ),
        Wait::Auto => {
            let parts: Vec<String> = [
                missing(seen.load_ms.is_some(), "load"),
                missing(seen.idle, "network idle"),
                missing(seen.dom_stable, "DOM stable"),
                missing(seen.text_ok, "minimum text"),
            ]
            .into_iter()
            .flatten()
            .collect();
            format!(
                "--wait auto: not reached within {waited} ms (missing: {}); captured anyway",
                parts.join(", ")
            )
        }
        _ => format!("--wait {wait}: not reached within {waited} ms; captured anyway"),
    }
}
