//! The `--wait auto` rule, as a pure function of the evidence: the page-side probe
//! (`assets/js/readiness.js`), the load events and the requests still open.
//!
//! A page is settled when its document is parsed (or loaded), no first-party XHR, fetch,
//! EventSource, script or frame request is open (by CDP's Network events), no IndexedDB open or
//! service-worker registration is in progress, no short timer is pending, the DOM has been
//! quiet for the settle window (animation-frame callbacks included; `style` changes are
//! animation and do not count), counted from the last DOM change or the last first-party
//! response, whichever came later, and there is some text.
//! Third-party requests, images, fonts and long timers never hold it.
//!
//! The settle window is the rule of last resort. [`page_idle`] ends the wait sooner on the
//! page's own evidence: the DOM quiet for a shorter window, animation frames rendered since
//! its last change, and the main thread idle since both that change and the last
//! first-party response. `trace.readiness.settled_by` names which of the two ended it.

use std::time::Duration;

use serde_json::Value;

use super::network::PendingRequest;
use crate::sdk::redact;

/// What the page-side probe reported.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Probe {
    /// `document.readyState`.
    pub ready_state: String,
    /// DOM mutations seen since the document started.
    pub mutations: u64,
    /// Milliseconds since the last DOM change.
    pub quiet_ms: u64,
    /// Milliseconds since an animation-frame callback last changed the DOM, if one did.
    pub raf_dom_quiet_ms: Option<u64>,
    /// Pending `setTimeout`s of at most 1 s.
    pub short_timers: u64,
    /// When the next of them is due.
    pub next_timer_ms: Option<u64>,
    /// Active `setInterval`s (reported, never waited on).
    pub intervals: u64,
    /// IndexedDB opens and service-worker registrations in progress.
    pub pending_work: u64,
    /// The classic script the parser is stopped at, while the document is loading.
    pub blocking_script: Option<String>,
    /// Bytes of `document.body.innerText`.
    pub text_bytes: u64,
    /// Animation frames rendered since the last DOM change (counted while probed).
    pub frames_quiet: u64,
    /// Milliseconds since the main thread last went idle (`requestIdleCallback`), when it
    /// did after the last DOM change.
    pub idle_ms: Option<u64>,
}

impl Probe {
    /// Parse the probe's JSON; `None` when it is not a probe answer (the counter is missing).
    pub fn from_json(v: &Value) -> Option<Probe> {
        let u = |k: &str| v[k].as_u64();
        Some(Probe {
            ready_state: v["ready_state"].as_str()?.to_string(),
            mutations: u("mutations").unwrap_or(0),
            quiet_ms: u("quiet_ms").unwrap_or(0),
            raf_dom_quiet_ms: u("raf_dom_quiet_ms"),
            short_timers: u("short_timers").unwrap_or(0),
            next_timer_ms: u("next_timer_ms"),
            intervals: u("intervals").unwrap_or(0),
            pending_work: u("pending_work").unwrap_or(0),
            blocking_script: v["blocking_script"].as_str().map(redact::url),
            text_bytes: u("text_bytes").unwrap_or(0),
            frames_quiet: u("frames_quiet").unwrap_or(0),
            idle_ms: u("idle_ms"),
        })
    }
}

/// The knobs of the rule.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// The settle window: how long the DOM must have been quiet.
    pub settle_ms: u64,
    /// Text the page must show, at least.
    pub min_text_bytes: u64,
    /// [`page_idle`] may end the wait before the settle window.
    pub idle_evidence: bool,
}

/// The rule's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Every condition holds.
    pub settled: bool,
    /// The conditions that do not hold, named for the trace and the warning.
    pub missing: Vec<&'static str>,
    /// When to look again: the earliest moment a missing condition could hold.
    pub recheck_in: Duration,
    /// What ended it, once settled: `page_idle` or `dom_quiet` (the settle window).
    pub by: Option<&'static str>,
}

/// How often the page is probed at most while something is still pending.
const RECHECK: Duration = Duration::from_millis(50);

/// The DOM-quiet window of [`page_idle`], and how long ago the last first-party response
/// must have ended.
pub const IDLE_QUIET_MS: u64 = 50;
/// Animation frames rendered with no DOM change that [`page_idle`] asks for.
pub const IDLE_FRAMES: u64 = 3;
/// The idle period must begin at least this long after the last first-party response
/// ended: the response still has to reach the page's main thread as a task.
const IDLE_AFTER_RESPONSE_MS: u64 = 16;
/// How often the page is probed while only the idle evidence is awaited.
const IDLE_RECHECK: Duration = Duration::from_millis(20);

/// The early rule: the page has settled before the settle window when its DOM has been
/// quiet for [`IDLE_QUIET_MS`], the last first-party response ended at least as long ago,
/// [`IDLE_FRAMES`] animation frames were rendered since the last DOM change (no long task
/// holds the main thread), and the main thread went idle after both the change and the
/// response (no task was queued: no response body, message, timer or scheduler slice was
/// waiting to run). `own_quiet_ms`: milliseconds since the last first-party data or code
/// request (the main document aside) ended, `None` when none has.
pub fn page_idle(probe: &Probe, own_quiet_ms: Option<u64>) -> bool {
    let own = own_quiet_ms.unwrap_or(u64::MAX);
    probe.quiet_ms >= IDLE_QUIET_MS
        && own >= IDLE_QUIET_MS
        && probe.frames_quiet >= IDLE_FRAMES
        && probe
            .idle_ms
            .is_some_and(|i| i < probe.quiet_ms && i + IDLE_AFTER_RESPONSE_MS <= own)
}

/// The load and parse events and the requests, as CDP reports them.
#[derive(Debug, Clone, Copy)]
pub struct Tab<'a> {
    /// The load event fired.
    pub loaded: bool,
    /// DOMContentLoaded fired.
    pub parsed: bool,
    /// The open requests (first-party already decided).
    pub pending: &'a [PendingRequest],
    /// Milliseconds since the last first-party data or code request other than the main
    /// document ended.
    pub own_quiet_ms: Option<u64>,
}

/// Judge the evidence.
pub fn judge(probe: &Probe, tab: Tab<'_>, rule: Rule) -> Verdict {
    let Tab {
        loaded,
        parsed,
        pending,
        own_quiet_ms,
    } = tab;
    let mut missing = Vec::new();
    let mut recheck = RECHECK;
    if !(loaded || parsed || probe.ready_state != "loading") {
        missing.push("document parsed");
    }
    if pending.iter().any(PendingRequest::holds_settle) {
        missing.push("first-party requests");
    }
    if probe.pending_work > 0 {
        missing.push("page work (IndexedDB, service worker)");
    }
    if probe.short_timers > 0 {
        missing.push("short timers");
        if let Some(due) = probe.next_timer_ms {
            recheck = recheck.min(Duration::from_millis(due.max(1)));
        }
    }
    let streaming = pending.iter().any(PendingRequest::is_own_stream);
    let idle = rule.idle_evidence && !streaming && page_idle(probe, own_quiet_ms);
    // The window counts from the page's last change or its last own response, whichever
    // came later: what a response brings may take the page a while to show.
    let quiet = probe.quiet_ms.min(own_quiet_ms.unwrap_or(u64::MAX));
    if quiet < rule.settle_ms && !idle {
        let left = Duration::from_millis(rule.settle_ms - quiet);
        if probe.raf_dom_quiet_ms.is_some_and(|q| q < rule.settle_ms) {
            missing.push("animation-frame DOM changes");
        } else {
            missing.push("DOM quiet");
        }
        recheck = recheck.min(left);
        if rule.idle_evidence {
            let to_quiet = IDLE_QUIET_MS.saturating_sub(probe.quiet_ms);
            recheck = recheck.min(IDLE_RECHECK.max(Duration::from_millis(to_quiet)));
        }
    }
    if probe.text_bytes < rule.min_text_bytes {
        missing.push("minimum text");
    }
    let settled = missing.is_empty();
    let by = settled.then_some(if quiet >= rule.settle_ms {
        "dom_quiet"
    } else {
        "page_idle"
    });
    Verdict {
        settled,
        missing,
        recheck_in: recheck.max(Duration::from_millis(1)),
        by,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULE: Rule = Rule {
        settle_ms: 200,
        min_text_bytes: 1,
        idle_evidence: false,
    };

    fn tab(loaded: bool, parsed: bool, pending: &[PendingRequest]) -> Tab<'_> {
        Tab {
            loaded,
            parsed,
            pending,
            own_quiet_ms: Some(1000),
        }
    }

    fn quiet_page() -> Probe {
        Probe {
            ready_state: "complete".into(),
            quiet_ms: 500,
            text_bytes: 10,
            ..Probe::default()
        }
    }

    fn req(url: &str, t: &str, first_party: bool) -> PendingRequest {
        PendingRequest {
            url: url.into(),
            host: String::new(),
            resource_type: t.into(),
            first_party,
            responded: false,
        }
    }

    #[test]
    fn a_quiet_parsed_page_with_only_third_parties_open_is_settled() {
        let pending = [
            req("http://127.0.0.2:9/a.js", "Script", false),
            req("http://127.0.0.1:8/lazy.png", "Image", true),
        ];
        let v = judge(&quiet_page(), tab(false, true, &pending), RULE);
        assert!(v.settled, "{v:?}");
    }

    #[test]
    fn each_missing_condition_is_named() {
        let p = Probe {
            ready_state: "loading".into(),
            quiet_ms: 50,
            raf_dom_quiet_ms: Some(20),
            short_timers: 1,
            next_timer_ms: Some(30),
            pending_work: 1,
            text_bytes: 0,
            ..Probe::default()
        };
        let pending = [req("http://127.0.0.1:8/api", "Fetch", true)];
        let v = judge(&p, tab(false, false, &pending), RULE);
        assert_eq!(
            v.missing,
            [
                "document parsed",
                "first-party requests",
                "page work (IndexedDB, service worker)",
                "short timers",
                "animation-frame DOM changes",
                "minimum text"
            ]
        );
        assert_eq!(v.recheck_in, Duration::from_millis(30));
    }

    #[test]
    fn a_first_party_xhr_holds_and_the_dom_window_sets_the_recheck() {
        let mut p = quiet_page();
        p.quiet_ms = 150;
        let v = judge(
            &p,
            tab(true, true, &[req("http://a.example.com/x", "XHR", true)]),
            RULE,
        );
        assert_eq!(v.missing, ["first-party requests", "DOM quiet"]);
        assert_eq!(v.recheck_in, Duration::from_millis(50));
        let v = judge(
            &p,
            tab(true, true, &[req("https://ads.other.net/t", "XHR", false)]),
            RULE,
        );
        assert_eq!(v.missing, ["DOM quiet"]);
    }

    #[test]
    fn the_probe_parses_and_refuses_other_values() {
        let v = serde_json::json!({"ready_state": "loading", "quiet_ms": 12,
            "blocking_script": "http://u:p@h/x.js", "text_bytes": 3});
        let p = Probe::from_json(&v).unwrap();
        assert_eq!(p.ready_state, "loading");
        let blocking = p.blocking_script.unwrap();
        assert!(!blocking.contains("u:p"), "{blocking}");
        assert!(Probe::from_json(&Value::Null).is_none());
        assert!(Probe::from_json(&serde_json::json!({})).is_none());
    }

    /// A page quiet for 60 ms, 3 frames since, idle 10 ms ago.
    fn idle_page() -> Probe {
        Probe {
            ready_state: "complete".into(),
            quiet_ms: 60,
            frames_quiet: 3,
            idle_ms: Some(10),
            text_bytes: 10,
            ..Probe::default()
        }
    }

    #[test]
    fn idle_evidence_ends_the_wait_before_the_settle_window_and_is_named() {
        let rule = Rule {
            idle_evidence: true,
            ..RULE
        };
        let v = judge(&idle_page(), tab(true, true, &[]), rule);
        assert!(v.settled, "{v:?}");
        assert_eq!(v.by, Some("page_idle"));
        // Off (an explicit --readiness-stable-ms): the window is waited out.
        let v = judge(&idle_page(), tab(true, true, &[]), RULE);
        assert_eq!(v.missing, ["DOM quiet"]);
        let v = judge(&quiet_page(), tab(true, true, &[]), rule);
        assert_eq!(v.by, Some("dom_quiet"));
    }

    #[test]
    fn an_open_first_party_event_stream_leaves_only_the_window() {
        let rule = Rule {
            idle_evidence: true,
            ..RULE
        };
        let mut stream = req("http://a.test/events", "EventSource", true);
        stream.responded = true;
        let v = judge(
            &idle_page(),
            tab(true, true, std::slice::from_ref(&stream)),
            rule,
        );
        assert_eq!(v.missing, ["DOM quiet"], "{v:?}");
        // Another site's stream is not the page's content.
        stream.first_party = false;
        let v = judge(
            &idle_page(),
            tab(true, true, std::slice::from_ref(&stream)),
            rule,
        );
        assert_eq!(v.by, Some("page_idle"));
    }

    #[test]
    fn idle_evidence_needs_frames_an_idle_period_and_a_response_old_enough() {
        let p = idle_page();
        assert!(page_idle(&p, Some(60)));
        assert!(
            page_idle(&p, None),
            "no first-party request but the document"
        );
        assert!(!page_idle(&p, Some(40)), "the response is too recent");
        let mut early = idle_page();
        early.idle_ms = Some(50);
        assert!(
            !page_idle(&early, Some(60)),
            "idle too soon after the response"
        );
        let q = |f: fn(&mut Probe)| {
            let mut p = idle_page();
            f(&mut p);
            page_idle(&p, Some(500))
        };
        assert!(!q(|p| p.quiet_ms = 40), "DOM quiet too short");
        assert!(!q(|p| p.frames_quiet = 2), "too few frames");
        assert!(!q(|p| p.idle_ms = None), "no idle period since the change");
        assert!(!q(|p| p.idle_ms = Some(70)), "idle before the change");
    }

    #[test]
    fn the_settle_window_counts_from_the_last_first_party_response_too() {
        let t = Tab {
            own_quiet_ms: Some(120),
            ..tab(true, true, &[])
        };
        let v = judge(&quiet_page(), t, RULE);
        assert_eq!(v.missing, ["DOM quiet"]);
        assert_eq!(v.recheck_in, Duration::from_millis(50));
        let t = Tab {
            own_quiet_ms: Some(190),
            ..t
        };
        assert_eq!(
            judge(&quiet_page(), t, RULE).recheck_in,
            Duration::from_millis(10)
        );
    }

    #[test]
    fn while_only_idle_evidence_is_awaited_the_page_is_probed_sooner() {
        let rule = Rule {
            idle_evidence: true,
            ..RULE
        };
        let mut p = idle_page();
        p.frames_quiet = 1;
        let v = judge(&p, tab(true, true, &[]), rule);
        assert_eq!(v.recheck_in, Duration::from_millis(20));
        p.quiet_ms = 10;
        let v = judge(&p, tab(true, true, &[]), rule);
        assert_eq!(v.recheck_in, Duration::from_millis(40));
    }
}
