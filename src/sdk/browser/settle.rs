//! The `--wait auto` rule, as a pure function of the evidence: the page-side probe
//! (`assets/js/readiness.js`), the load events and the requests still open.
//!
//! A page is settled when its document is parsed (or loaded), no first-party XHR, fetch,
//! EventSource, script or frame request is open (by CDP's Network events), no IndexedDB open or
//! service-worker registration is in progress, no short timer is pending, the DOM has been quiet for the settle window (animation-frame callbacks
//! included; `style` changes are animation and do not count) and there is some text.
//! Third-party requests, images, fonts and long timers never hold it.

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
}

/// How often the page is probed at most while something is still pending.
const RECHECK: Duration = Duration::from_millis(50);

/// Judge the evidence. `loaded`/`parsed` are the load and DOMContentLoaded events;
/// `pending` the open requests CDP reports (first-party already decided).
pub fn judge(
    probe: &Probe,
    loaded: bool,
    parsed: bool,
    pending: &[PendingRequest],
    rule: Rule,
) -> Verdict {
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
    if probe.quiet_ms < rule.settle_ms {
        let left = Duration::from_millis(rule.settle_ms - probe.quiet_ms);
        if probe.raf_dom_quiet_ms.is_some_and(|q| q < rule.settle_ms) {
            missing.push("animation-frame DOM changes");
        } else {
            missing.push("DOM quiet");
        }
        recheck = recheck.min(left);
    }
    if probe.text_bytes < rule.min_text_bytes {
        missing.push("minimum text");
    }
    Verdict {
        settled: missing.is_empty(),
        missing,
        recheck_in: recheck.max(Duration::from_millis(1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULE: Rule = Rule {
        settle_ms: 200,
        min_text_bytes: 1,
    };

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
        let v = judge(&quiet_page(), false, true, &pending, RULE);
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
        let v = judge(&p, false, false, &pending, RULE);
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
            true,
            true,
            &[req("http://a.example.com/x", "XHR", true)],
            RULE,
        );
        assert_eq!(v.missing, ["first-party requests", "DOM quiet"]);
        assert_eq!(v.recheck_in, Duration::from_millis(50));
        let v = judge(
            &p,
            true,
            true,
            &[req("https://ads.other.net/t", "XHR", false)],
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
}
