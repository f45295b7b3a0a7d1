//! `--wait auto` ends when the page has settled, and third parties cannot hold a fetch
//! hostage: every fixture page under `/ready/` returns a result with its content, and the
//! pages that never settle end within the readiness budget with warnings naming what was
//! still pending. Real inline Chromium; the hanging third-party host is `HangServer`
//! (127.0.0.2, accepts and never answers). No timing assertions: what ended the wait is
//! read from `trace.readiness.ended_by`.

use serde_json::Value;

use crate::support::{warning, warning_codes, Fixture, FixtureServer, HangServer, Run};

const CHROMIUM: &str = "/usr/bin/chromium";

/// `afhttp fetch URL --render always --want text,network EXTRA...` in an inline Chromium.
fn render(fx: &Fixture, url: &str, extra: &[&str]) -> Run {
    crate::support::chromium::render(fx, url, "text,network", extra)
}

fn readiness(run: &Run) -> &Value {
    &run.event["trace"]["readiness"]
}

/// A page that settles: a result, every marker in text.txt, ended by the settle rule and
/// no readiness warning.
fn assert_settled(run: &Run, markers: &[&str]) {
    let r = run.result();
    let text = run.artifact_text("text_file");
    for m in markers {
        assert!(text.contains(m), "{m} missing from text.txt: {text}");
    }
    let rd = readiness(run);
    assert_eq!(rd["ended_by"], "settled", "{rd}");
    assert_eq!(rd["evidence"], "page", "{rd}");
    assert_eq!(rd["timed_out"], false, "{rd}");
    assert!(
        !warning_codes(r).contains(&"readiness_timeout".to_string()),
        "{r}"
    );
}

#[test]
fn content_after_short_timers_is_waited_for() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = render(&fx, &srv.url("/ready/timers"), &[]);
    assert_settled(&run, &["timer-50", "timer-300", "timer-900"]);
    assert_eq!(readiness(&run)["short_timers"], 0);
}

#[test]
fn three_chained_xhrs_and_a_fetch_inside_an_animation_frame_are_waited_for() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = render(&fx, &srv.url("/ready/xhr-chain"), &[]);
    assert_settled(&run, &["chain-done-3"]);
    let run = render(&fx, &srv.url("/ready/raf-fetch"), &[]);
    assert_settled(&run, &["raf-fetch-done"]);
}

#[test]
fn pages_that_never_go_idle_in_the_background_still_settle() {
    // A lazy image below the fold, polling every 2 s, a CSS animation plus a style-only
    // animation-frame loop, and a WebSocket that stays open: none is content still coming.
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    for (path, markers) in [
        ("/ready/lazy-image", &["lazy-image-page"][..]),
        ("/ready/poll", &["poll-count-1"][..]),
        ("/ready/animation", &["animated-page"][..]),
        ("/ready/websocket", &["ws-echo:hello"][..]),
    ] {
        let run = render(&fx, &srv.url(path), &[]);
        assert_settled(&run, markers);
    }
}

#[test]
fn the_page_idle_evidence_ends_the_wait_only_after_work_queued_without_dom_changes() {
    // After its fetch, the page works in eight 10 ms slices handed on through a
    // MessageChannel and changes the DOM only at the end: animation frames go by, but the
    // main thread is never idle until the last slice, so the early rule waits for it.
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = render(&fx, &srv.url("/ready/sliced"), &[]);
    assert_settled(&run, &["sliced-page", "sliced-render-done"]);
    let rd = readiness(&run);
    assert_eq!(rd["settled_by"], "page_idle", "{rd}");
    assert!(rd["frames_quiet"].as_u64().unwrap() >= 3, "{rd}");
    assert!(rd["idle_ms"].is_number(), "{rd}");
    // An explicit settle window is the caller's: it is waited out.
    let run = render(
        &fx,
        &srv.url("/ready/sliced"),
        &["--readiness-stable-ms", "200"],
    );
    assert_settled(&run, &["sliced-render-done"]);
    assert_eq!(readiness(&run)["settled_by"], "dom_quiet");
}

#[test]
fn a_websocket_handshake_and_a_sent_message_awaiting_its_answer_are_waited_for() {
    // The handshake is answered after 300 ms and the echo 300 ms after the message: longer
    // than any quiet window, with no DOM change in between.
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = render(&fx, &srv.url("/ready/ws-slow"), &[]);
    assert_settled(&run, &["ws-slow-page", "ws-slow:hi"]);
}

#[test]
fn hanging_third_parties_do_not_hold_the_fetch_and_are_named_at_capture() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let hang = HangServer::start();
    let url = srv.url(&format!("/ready/third-party?hang={}", hang.host()));
    let run = render(&fx, &url, &[]);
    assert_settled(&run, &["third-party-page"]);
    let r = run.result();
    // The image, the async script and the beacon are still open at capture: named by type
    // and host, and in the trace as third-party.
    let not_idle = warning(r, "network_not_idle");
    assert!(not_idle.contains(&hang.host()), "{not_idle}");
    assert!(not_idle.contains("Script"), "{not_idle}");
    let stuck = readiness(&run)["stuck_requests"]
        .as_array()
        .unwrap()
        .clone();
    assert!(
        stuck
            .iter()
            .any(|s| s["host"] == hang.host() && s["first_party"] == false),
        "{stuck:?}"
    );
    assert!(
        hang.accepted() > 0,
        "the page never reached the hanging host"
    );
}

#[test]
fn a_parser_blocking_third_party_script_ends_at_the_budget_with_what_was_parsed() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let hang = HangServer::start();
    let url = srv.url(&format!("/ready/blocking?hang={}", hang.host()));
    // The default budget (5 s), with no cut of the stalled host (tests/stall.rs cuts it).
    let run = render(&fx, &url, &["--stall-cutoff-ms", "0"]);
    let r = run.result();
    // The page showed only what was parsed before the script; text.txt is the served
    // HTML's, and the result says so.
    let text = run.artifact_text("text_file");
    assert!(text.contains("before-blocking-script"), "{text}");
    assert!(text.contains("after-blocking-script"), "{text}");
    assert_eq!(run.event["trace"]["text_source"], "served_html");
    assert!(
        warning(r, "document_incomplete").contains("served HTML"),
        "{r}"
    );
    let rd = readiness(&run);
    assert_eq!(rd["ended_by"], "readiness_budget", "{rd}");
    assert_eq!(rd["budget_ms"], 5000, "{rd}");
    assert_eq!(rd["timed_out"], true, "{rd}");
    assert_eq!(rd["ready_state"], "loading", "{rd}");
    let blocking = rd["parser_blocking"].as_array().unwrap();
    assert_eq!(blocking.len(), 1, "{rd}");
    assert_eq!(blocking[0]["host"], hang.host(), "{rd}");
    assert!(
        blocking[0]["url"]
            .as_str()
            .unwrap()
            .ends_with("/blocking.js"),
        "{rd}"
    );
    let msg = warning(r, "readiness_timeout");
    assert!(msg.contains("readiness budget"), "{msg}");
    assert!(msg.contains("document parsed"), "{msg}");
    assert!(
        msg.contains(&format!(
            "Script {}, third-party, parser-blocking",
            hang.host()
        )),
        "{msg}"
    );
    assert!(warning(r, "network_not_idle").contains(&hang.host()), "{r}");
}

#[test]
fn a_page_that_never_goes_idle_ends_at_the_budget_with_its_content() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = render(
        &fx,
        &srv.url("/ready/never-idle"),
        &["--readiness-budget-ms", "1500"],
    );
    let r = run.result();
    let text = run.artifact_text("text_file");
    assert!(
        text.contains("never-idle-page") && text.contains("tick-"),
        "{text}"
    );
    let rd = readiness(&run);
    assert_eq!(rd["ended_by"], "readiness_budget", "{rd}");
    assert_eq!(rd["budget_ms"], 1500, "{rd}");
    let missing: Vec<&str> = rd["missing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert!(missing.contains(&"short timers"), "{rd}");
    let msg = warning(r, "readiness_timeout");
    assert!(msg.contains("1500 ms readiness budget"), "{msg}");
}

#[test]
fn wait_idle_and_load_are_bounded_by_the_budget_too() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let hang = HangServer::start();
    let url = srv.url(&format!("/ready/stuck-image?hang={}", hang.host()));
    for wait in ["idle", "load"] {
        let run = render(
            &fx,
            &url,
            &[
                "--wait",
                wait,
                "--readiness-budget-ms",
                "1000",
                "--stall-cutoff-ms",
                "0",
            ],
        );
        let r = run.result();
        assert!(
            run.artifact_text("text_file").contains("stuck-image-page"),
            "{wait}"
        );
        assert_eq!(readiness(&run)["ended_by"], "readiness_budget", "{wait}");
        let msg = warning(r, "readiness_timeout");
        // SDK messages name the field, never the flag.
        assert!(msg.starts_with(&format!("wait {wait}:")), "{msg}");
        assert!(!msg.contains("--wait"), "{msg}");
        assert!(msg.contains(&format!("Image {}", hang.host())), "{msg}");
    }
}

#[test]
fn wait_ms_counts_from_the_commit_not_from_a_load_that_never_comes() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let hang = HangServer::start();
    let url = srv.url(&format!("/ready/stuck-image?hang={}", hang.host()));
    let run = render(&fx, &url, &["--wait", "ms:300"]);
    let r = run.result();
    assert!(run.artifact_text("text_file").contains("stuck-image-page"));
    let rd = readiness(&run);
    assert_eq!(rd["ended_by"], "ms", "{rd}");
    assert!(rd["load_ms"].is_null(), "the load event fired: {rd}");
    assert!(rd["commit_ms"].is_number(), "{rd}");
    assert!(
        !warning_codes(r).contains(&"readiness_timeout".to_string()),
        "{r}"
    );
}

#[test]
fn a_selector_that_never_appears_ends_at_the_budget_with_artifacts() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let hang = HangServer::start();
    // Behind a parser-blocking third-party script, with the default budget.
    let url = srv.url(&format!("/ready/blocking?hang={}", hang.host()));
    let run = render(
        &fx,
        &url,
        &["--wait", "selector:#never-there", "--stall-cutoff-ms", "0"],
    );
    let r = run.result();
    assert!(run
        .artifact_text("text_file")
        .contains("before-blocking-script"));
    let rd = readiness(&run);
    assert_eq!(rd["ended_by"], "readiness_budget", "{rd}");
    assert_eq!(rd["budget_ms"], 5000, "{rd}");
    assert_eq!(rd["selector_matched"], false, "{rd}");
    assert_eq!(rd["timed_out"], true, "{rd}");
    let msg = warning(r, "readiness_timeout");
    assert!(msg.contains("\"#never-there\" never matched"), "{msg}");
    assert!(msg.contains("5000 ms readiness budget"), "{msg}");
    assert!(
        msg.contains(&format!(
            "Script {}, third-party, parser-blocking",
            hang.host()
        )),
        "{msg}"
    );
    // A visible-element wait on a page whose load event never comes, with a smaller budget.
    let url = srv.url(&format!("/ready/stuck-image?hang={}", hang.host()));
    let run = render(
        &fx,
        &url,
        &[
            "--wait",
            "selector-visible:#never-there",
            "--readiness-budget-ms",
            "1000",
        ],
    );
    let r = run.result();
    assert!(run.artifact_text("text_file").contains("stuck-image-page"));
    assert_eq!(readiness(&run)["ended_by"], "readiness_budget");
    let msg = warning(r, "readiness_timeout");
    assert!(msg.contains("never matched a visible element"), "{msg}");
    assert!(msg.contains("1000 ms readiness budget"), "{msg}");
    // The same page with a selector that is there: the selector ends the wait, no warning.
    let run = render(
        &fx,
        &url,
        &["--wait", "selector:p", "--readiness-budget-ms", "1000"],
    );
    assert_eq!(readiness(&run)["ended_by"], "selector");
    assert!(!warning_codes(run.result()).contains(&"readiness_timeout".to_string()));
}

#[test]
fn an_explicit_wait_ms_is_honoured_beyond_the_budget_up_to_the_capture_reserve() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    // 2000 ms against a 500 ms budget: the 900 ms timer's content is in.
    let run = render(
        &fx,
        &srv.url("/ready/timers"),
        &["--wait", "ms:2000", "--readiness-budget-ms", "500"],
    );
    let r = run.result();
    assert!(run.artifact_text("text_file").contains("timer-900"));
    let rd = readiness(&run);
    assert_eq!(rd["ended_by"], "ms", "{rd}");
    assert!(rd["budget_ms"].is_null(), "{rd}");
    assert!(
        !warning_codes(r).contains(&"readiness_timeout".to_string()),
        "{r}"
    );
    // A wait that cannot fit in --timeout-ms ends at the capture reserve: a result with
    // the page's content and a warning, not a navigation_timeout.
    let run = render(
        &fx,
        &srv.url("/ready/timers"),
        &["--wait", "ms:60000", "--timeout-ms", "10000"],
    );
    let r = run.result();
    assert!(run.artifact_text("text_file").contains("timer-900"));
    assert_eq!(readiness(&run)["ended_by"], "deadline");
    let msg = warning(r, "readiness_timeout");
    assert!(msg.contains("wait ms:60000: not reached"), "{msg}");
    assert!(
        !msg.contains("--"),
        "the SDK names fields, not flags: {msg}"
    );
    assert!(msg.contains("capture reserve"), "{msg}");
}

#[test]
fn a_main_document_that_never_arrives_is_a_navigation_timeout() {
    let fx = Fixture::new();
    let hang = HangServer::start();
    let _one = crate::support::chromium::lock();
    let run = fx
        .cmd()
        .env("AFHTTP_NO_SANDBOX", "1")
        .env("AFHTTP_BROWSER_BIN", CHROMIUM)
        .args(["fetch", &format!("http://{}/", hang.host())])
        .args(["--render", "always", "--timeout-ms", "3000"])
        .run();
    run.error("navigation_timeout", 1);
}

#[test]
fn the_readiness_budget_is_checked_and_browser_only() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let url = srv.url("/static");
    let bad = fx
        .cmd()
        .args(["fetch", &url, "--readiness-budget-ms", "999999999"])
        .run();
    let e = bad.failure("invalid_argument", 1);
    assert!(e.message.contains("readiness_budget_ms"), "{e}");
    let none = fx
        .cmd()
        .args(["fetch", &url, "--render", "none"])
        .args(["--readiness-budget-ms", "1000"])
        .run();
    let e = none.failure("invalid_argument", 1);
    assert!(e.message.contains("readiness_budget_ms"), "{e}");
}
