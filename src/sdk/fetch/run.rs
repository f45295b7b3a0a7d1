//! The fetch pipeline: validate, decide, run HTTP attempts with retries, write artifacts.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::error::{AfError, ErrorCode};
use crate::sdk::cookies::jar;
use crate::sdk::cookies::Cookie;
use crate::sdk::documents;
use crate::sdk::fetch::browser_path::{self, BrowserSlot};
use crate::sdk::fetch::http_attempt::{attempt_once, AttemptEnd};
use crate::sdk::fetch::outcome::{FetchFailure, FetchOutcome, Trace};
use crate::sdk::fetch::outdir::OutDir;
use crate::sdk::fetch::FetchRequest;
use crate::sdk::http::client;
use crate::sdk::http::exchange::{self, CookieState};
use crate::sdk::render_decision::{self, EscalationReason};
use crate::sdk::request::Artifact;

/// Longest single backoff between retries.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Run one fetch to completion where its target says (a fleet picks the member here).
pub async fn fetch(mut req: FetchRequest) -> Result<FetchOutcome, FetchFailure> {
    match req.fleet.take() {
        Some(f) => crate::sdk::fleet::route::fetch(&f.fleet, req, f.connect_timeout).await,
        None => fetch_with(req, BrowserSlot::default()).await,
    }
}

/// Run one fetch with browser work going to `slot` (e.g. one sharing an SDK client's
/// connection).
pub async fn fetch_with(
    mut req: FetchRequest,
    mut slot: BrowserSlot,
) -> Result<FetchOutcome, FetchFailure> {
    let request_id = uuid::Uuid::new_v4().simple().to_string();
    let t0 = Instant::now();
    let mut trace = Trace::new(&request_id);
    trace.set(
        "render",
        json!({"mode": req.render, "decision": "http_only", "escalation_reason": null}),
    );
    // Nothing is captured yet; the end of the fetch says what was.
    record_sensitive_capture(&mut trace, &req, false, false);
    trace.set("cookie_jar_file", json!(req.cookie_jar));
    if req.documents.accept_markdown
        && !req
            .headers
            .iter()
            .any(|h| h.name.eq_ignore_ascii_case("accept"))
    {
        req.headers.push(crate::sdk::fetch::HeaderPair {
            name: "Accept".into(),
            value: documents::ACCEPT_MARKDOWN.into(),
        });
    }
    let fail = |error: AfError, trace: &Trace| FetchFailure {
        error,
        trace: trace.clone(),
    };

    let mut escalated = render_decision::before_request(&req);
    if let Some(reason) = &escalated {
        record_escalation(&mut trace, reason, &req);
    }
    // After the decision is recorded, so a refusal's trace shows it.
    if let Err(e) = check_browser_needs(&req) {
        return Err(fail(e, &trace));
    }

    // Everything that can refuse the request is checked before the first file is written.
    // Only an HTTP attempt needs the client; a fetch that starts in the browser just has its
    // transport options checked.
    let client = match escalated {
        None => Some(client::Clients::new(&req.transport, &req.url).map_err(|e| fail(e, &trace))?),
        Some(_) => {
            client::check(&req.transport).map_err(|e| fail(e, &trace))?;
            None
        }
    };
    let loaded_jar = match &req.cookie_jar {
        Some(path) => jar::read_jar_file(path).map_err(|e| fail(e, &trace))?,
        None => jar::CookieJar::default(),
    };
    let mut out = OutDir::prepare(req.out_dir.as_deref(), req.out_root.as_deref(), &request_id)
        .map_err(|e| fail(e, &trace))?;
    trace.timing("setup", t0.elapsed().as_secs_f64() * 1000.0);

    let mut attempt: u32 = 0;
    let result = loop {
        attempt += 1;
        out.begin_attempt();
        let started = Instant::now();
        let mut cookies = CookieState {
            jar: loaded_jar.clone(),
            extra: req.cookies.clone(),
            ..CookieState::default()
        };
        let run = async {
            // `escalated` never goes back to `None`, so the client exists whenever it is.
            if let Some(client) = client.as_ref().filter(|_| escalated.is_none()) {
                match attempt_once(
                    client,
                    &req,
                    &mut out,
                    &mut cookies,
                    &mut trace,
                    &request_id,
                )
                .await?
                {
                    AttemptEnd::Done(outcome) => return Ok((*outcome, cookies.received.clone())),
                    AttemptEnd::Escalate(reason) => {
                        // The HTTP response was not enough: its files give way to the browser's.
                        out.rollback_attempt();
                        record_escalation(&mut trace, &reason, &req);
                        escalated = Some(reason);
                    }
                }
            }
            browser_path::attempt(
                &mut slot,
                &req,
                &loaded_jar.cookies,
                &mut out,
                &request_id,
                &mut trace,
            )
            .await
        };
        let result = match tokio::time::timeout(req.timeout, run).await {
            Ok(r) => r,
            Err(_) => Err(AfError::new(
                ErrorCode::NavigationTimeout,
                format!(
                    "the attempt did not finish within {} ms",
                    req.timeout.as_millis()
                ),
            )
            .with_hint(crate::sdk::defaults::TIMEOUT_HINT)
            .with_field("timeout_ms")),
        };
        let elapsed = started.elapsed().as_secs_f64() * 1000.0;
        match result {
            Ok((outcome, received)) => {
                trace.attempt(attempt, elapsed, None);
                break merge_cookies(slot.jar_path(&req), received).map(|n| (outcome, n));
            }
            Err(e) => {
                trace.attempt(attempt, elapsed, Some(&e));
                out.rollback_attempt();
                if e.retryable() && attempt <= req.retry {
                    tokio::time::sleep(backoff(req.backoff, attempt)).await;
                    continue;
                }
                break Err(e);
            }
        }
    };
    // Closing tabs and stopping an inline browser change no fact of the answer.
    let shutdown_started = std::time::Instant::now();
    if slot.has_inline() && !crate::sdk::afterwards::answering_first() {
        slot.shutdown().await;
        trace.timing(
            "inline_host_stop",
            shutdown_started.elapsed().as_secs_f64() * 1000.0,
        );
    } else {
        crate::sdk::afterwards::after_answer(async move {
            slot.shutdown().await;
        })
        .await;
    }
    trace.timing("total", t0.elapsed().as_secs_f64() * 1000.0);
    let network_written = matches!(&result, Ok((o, _)) if o.file(Artifact::Network).is_some());
    record_sensitive_capture(&mut trace, &req, network_written, escalated.is_some());
    if let Some(reason) = &escalated {
        record_resent(&mut trace, reason, &req);
    }
    match result {
        Ok((mut outcome, updates)) => {
            if let Some(n) = updates {
                trace.set("cookie_jar_updates", json!(n));
            }
            outcome.trace = trace;
            Ok(outcome)
        }
        Err(e) => {
            out.rollback_attempt();
            out.cleanup_if_empty();
            Err(fail(e, &trace))
        }
    }
}

/// `trace.sensitive_capture`: what was captured, not which options were given. Credential
/// headers are unredacted only in a `network.json` that was written; WebSocket and SSE
/// frames are recorded only by the browser, into `network.json` (a fetch that stayed on the
/// HTTP path, or wrote no `network.json`, recorded none).
fn record_sensitive_capture(
    trace: &mut Trace,
    req: &FetchRequest,
    network_written: bool,
    browser_ran: bool,
) {
    let frames = network_written && browser_ran;
    trace.set(
        "sensitive_capture",
        json!({
            "no_network_redact": network_written && req.no_network_redact,
            "capture_ws": frames && req.browser.capture_ws,
            "capture_sse": frames && req.browser.capture_sse,
        }),
    );
}

fn record_escalation(trace: &mut Trace, reason: &EscalationReason, req: &FetchRequest) {
    trace.set(
        "render",
        json!({
            "mode": req.render,
            "decision": "escalate",
            "escalation_reason": reason.to_json(),
            // Set by `record_resent` once the browser really sent the request.
            "request_resent": false,
            "non_idempotent_resent": false,
        }),
    );
}

/// `trace.render.request_resent`: true only when an HTTP attempt sent the request and a
/// browser then sent it again (not when the browser never started, or never navigated).
fn record_resent(trace: &mut Trace, reason: &EscalationReason, req: &FetchRequest) {
    // Reasons decided before any request leave the browser's request the only one.
    let after_http = !reason.before_request();
    let resent = after_http && trace.browser_sent();
    let idempotent = matches!(req.method.as_str(), "GET" | "HEAD" | "OPTIONS");
    let mut render = trace.get("render").cloned().unwrap_or_else(|| json!({}));
    render["request_resent"] = json!(resent);
    render["non_idempotent_resent"] = json!(!idempotent && resent);
    trace.set("render", render);
}

/// Delay before retry number `attempt` (1-based): doubling, small jitter, capped.
pub fn backoff(base: Duration, attempt: u32) -> Duration {
    let exp = base.saturating_mul(1u32 << (attempt - 1).min(16));
    let jitter = Duration::from_millis(fastrand::u64(0..=(exp.as_millis() as u64 / 10).max(1)));
    exp.saturating_add(jitter).min(MAX_BACKOFF)
}

/// Options that need a host, checked once the route is known (every check of the request
/// itself is [`crate::sdk::fetch::FetchSpec::validate`]'s).
fn check_browser_needs(req: &FetchRequest) -> Result<(), AfError> {
    let b = &req.browser;
    if b.tab.as_deref().is_some_and(|t| t != "new") && req.endpoint.is_none() {
        return Err(AfError::invalid(
            "tab names an existing tab, but an inline browser has none; use a host endpoint, or tab new",
        )
        .with_field("tab"));
    }
    if b.takeover && req.endpoint.is_none() {
        return Err(AfError::new(
            ErrorCode::TakeoverUnavailable,
            "takeover needs a takeover-ready host, and none was given or found",
        )
        .with_hint(
            "set endpoint_url to a host started with `afhttp host --takeover-provider novnc`, or run `afhttp container install` (fetch finds that container by itself)",
        ));
    }
    if b.profile.is_some() && req.endpoint.is_none() {
        return Err(AfError::invalid("profile needs a host endpoint")
            .with_field("profile")
            .with_hint("profiles live on the host; an inline browser is always ephemeral"));
    }
    if req.browser_family.is_some() && req.endpoint.is_some() {
        return Err(AfError::invalid(
            "browser chooses an inline browser; a host runs its own (`afhttp host --browser`)",
        )
        .with_field("browser"));
    }
    if req.browser_bin.is_some() && req.endpoint.is_some() {
        return Err(AfError::invalid(
            "browser_bin is the executable of an inline browser; a host runs its own (`afhttp host --browser-bin`)",
        )
        .with_field("browser_bin")
        .with_hint("drop browser_bin, or drop endpoint_url to render in an inline browser"));
    }
    Ok(())
}

/// Store the cookies received into the jar file under its lock; returns how many.
fn merge_cookies(
    jar_path: Option<std::path::PathBuf>,
    received: Vec<Cookie>,
) -> Result<Option<usize>, AfError> {
    let Some(path) = jar_path else {
        return Ok(None);
    };
    let now = exchange::now_unix();
    let count = received.len();
    jar::update_jar_file(&path, move |j| {
        for c in received {
            j.store(c, now);
        }
    })?;
    Ok(Some(count))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_caps() {
        let b = Duration::from_millis(100);
        assert!(
            backoff(b, 1) >= Duration::from_millis(100)
                && backoff(b, 1) <= Duration::from_millis(110)
        );
        assert!(backoff(b, 3) >= Duration::from_millis(400));
        assert_eq!(backoff(Duration::from_secs(10), 10), MAX_BACKOFF);
    }
}
