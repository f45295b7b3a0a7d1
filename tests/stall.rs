//! A stalled third party never empties a page (`--stall-cutoff-ms`): a request to another
//! site that has no response within the stall window is cut when it holds the page (a
//! script or stylesheet in place, held paused while its host is probed; anything else by a
//! reload with its host blocked), reported as `third_party_cut`, in `network.json`
//! and in `trace.readiness.cuts`; first-party requests are waited for. When capture still
//! comes before the document finished parsing, `document_incomplete` says so and the text
//! comes from the served HTML (`trace.text_source`). Real Chromium; the stalled host is
//! `HangServer` (127.0.0.2, accepts and never answers), the late one a fixture server on
//! 127.0.0.2. Content and warnings are checked, never times.

use serde_json::Value;

use crate::support::{warning, warning_codes, Fixture, FixtureServer, HangServer, HostProc, Run};

/// `afhttp fetch URL --render always --want text,content,network EXTRA...` inline.
fn render(fx: &Fixture, url: &str, extra: &[&str]) -> Run {
    crate::support::chromium::render(fx, url, "text,content,network", extra)
}

/// The page's markers are all in text.txt, a cut of `host` is reported (warning naming
/// the host and `types`, the trace's rounds, network.json entries failed as cut).
fn assert_cut(run: &Run, host: &str, types: &[&str], markers: &[&str]) {
    let r = run.result();
    let text = run.artifact_text("text_file");
    for m in markers {
        assert!(text.contains(m), "{m} missing from text.txt: {text}");
    }
    let msg = warning(r, "third_party_cut");
    assert!(msg.contains(host), "{msg}");
    for t in types {
        assert!(msg.contains(t), "{t} not named: {msg}");
    }
    let cuts = &run.event["trace"]["readiness"]["cuts"];
    let rounds = cuts["rounds"].as_array().unwrap();
    assert!(!rounds.is_empty(), "{cuts}");
    assert!(rounds[0]["at_ms"].is_number(), "{cuts}");
    assert!(
        rounds[0]["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["host"] == host),
        "{cuts}"
    );
    let network = run.artifact_json("network_file");
    let cut: Vec<&Value> = network["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["failure"]["blocked_reason"] == "third_party_cut")
        .collect();
    assert!(!cut.is_empty(), "no entry failed as cut");
    for e in &cut {
        assert_eq!(e["state"], "failed", "{e}");
        assert!(e["url"].as_str().unwrap().contains(host), "{e}");
    }
    assert!(
        !warning_codes(r).contains(&"document_incomplete".to_string()),
        "{r}"
    );
    assert_eq!(run.event["trace"]["text_source"], "rendered", "{r}");
}

fn no_cut(run: &Run) {
    let r = run.result();
    assert!(
        !warning_codes(r).contains(&"third_party_cut".to_string()),
        "{r}"
    );
    let rounds = &run.event["trace"]["readiness"]["cuts"]["rounds"];
    assert_eq!(rounds.as_array().map(Vec::len), Some(0), "{rounds}");
}

#[test]
fn stalled_parser_blocking_scripts_in_head_and_mid_body_are_cut() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let hang = HangServer::start();
    let h = hang.host();
    let run = render(&fx, &srv.url(&format!("/stall/head?hang={h}")), &[]);
    assert_cut(
        &run,
        &h,
        &["Script"],
        &["stall-head-page", "after-head-script"],
    );
    let run = render(&fx, &srv.url(&format!("/stall/mid?hang={h}")), &[]);
    assert_cut(
        &run,
        &h,
        &["Script"],
        &["before-mid-script", "after-mid-script"],
    );
}

#[test]
fn a_stalled_third_party_stylesheet_is_cut() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let hang = HangServer::start();
    let h = hang.host();
    let run = render(&fx, &srv.url(&format!("/stall/css?hang={h}")), &[]);
    assert_cut(&run, &h, &["Stylesheet"], &["after-stylesheet"]);
}

#[test]
fn a_stalled_third_party_iframe_holds_nothing_and_is_cut_for_wait_load() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let hang = HangServer::start();
    let h = hang.host();
    let url = srv.url(&format!("/stall/iframe?hang={h}"));
    // `--wait auto` does not wait for another site's frame: nothing to cut.
    let run = render(&fx, &url, &[]);
    no_cut(&run);
    let text = run.artifact_text("text_file");
    assert!(text.contains("after-iframe"), "{text}");
    assert_eq!(run.event["trace"]["readiness"]["ended_by"], "settled");
    // `--wait load` does: the frame is cut and the load event comes.
    let run = render(&fx, &url, &["--wait", "load"]);
    assert_cut(&run, &h, &["Document"], &["iframe-page", "after-iframe"]);
    assert_eq!(run.event["trace"]["readiness"]["ended_by"], "load");
}

#[test]
fn a_third_party_answering_after_the_window_is_cut_and_a_slow_first_party_is_not() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let third = FixtureServer::start_on("127.0.0.2");
    let t = format!("127.0.0.2:{}", third.port());
    let run = render(
        &fx,
        &srv.url(&format!("/stall/late?third={t}&ms=2500")),
        &["--stall-cutoff-ms", "500"],
    );
    assert_cut(
        &run,
        &t,
        &["Script"],
        &["before-late-script", "after-late-script"],
    );
    assert!(!run.artifact_text("text_file").contains("late-script-ran"));
    // The page's own script, slower than the window but inside the budget, is waited for.
    let run = render(
        &fx,
        &srv.url("/stall/first-slow?ms=1500"),
        &["--stall-cutoff-ms", "500"],
    );
    no_cut(&run);
    let text = run.artifact_text("text_file");
    assert!(
        text.contains("slow-script-ran") && text.contains("after-slow-first-party"),
        "{text}"
    );
    assert_eq!(run.event["trace"]["readiness"]["ended_by"], "settled");
}

#[test]
fn stall_cutoff_zero_keeps_the_budget_and_the_text_comes_from_the_served_html() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let hang = HangServer::start();
    let h = hang.host();
    let off = ["--stall-cutoff-ms", "0", "--readiness-budget-ms", "1500"];
    let run = render(&fx, &srv.url(&format!("/stall/head?hang={h}")), &off);
    no_cut(&run);
    let r = run.result();
    let rd = &run.event["trace"]["readiness"];
    assert_eq!(rd["ended_by"], "readiness_budget", "{rd}");
    assert_eq!(rd["ready_state"], "loading", "{rd}");
    let msg = warning(r, "document_incomplete");
    assert!(msg.contains("served HTML"), "{msg}");
    assert_eq!(run.event["trace"]["text_source"], "served_html", "{r}");
    for file in ["text_file", "content_file"] {
        let text = run.artifact_text(file);
        assert!(
            text.contains("stall-head-page") && text.contains("after-head-script"),
            "{file}: {text}"
        );
    }
    assert!(
        !warning_codes(r).contains(&"artifact_empty".to_string()),
        "{r}"
    );
    // A served body without text: the warning says why the text is what was rendered.
    let run = render(&fx, &srv.url(&format!("/stall/shell?hang={h}")), &off);
    let r = run.result();
    let msg = warning(r, "document_incomplete");
    assert!(msg.contains("served HTML has no text"), "{msg}");
    assert_eq!(run.event["trace"]["text_source"], "rendered", "{r}");
    assert!(
        warning_codes(r).contains(&"artifact_empty".to_string()),
        "{r}"
    );
    // With the default cutoff the same page renders its text.
    let run = render(&fx, &srv.url(&format!("/stall/shell?hang={h}")), &[]);
    assert_cut(&run, &h, &["Script"], &["shell-rendered"]);
}

#[test]
fn a_host_cuts_the_same_way_as_the_inline_browser() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let hang = HangServer::start();
    let h = hang.host();
    let url = srv.url(&format!("/stall/head?hang={h}"));
    let mut host = HostProc::start(&fx, &["--listen", "tcp:127.0.0.1:0"], &[]);
    let run = fx
        .cmd()
        .args(["fetch", &url, "--render", "always", "--timeout-ms", "20000"])
        .args([
            "--want",
            "text,content,network",
            "--endpoint-url",
            &host.endpoint,
        ])
        .run();
    assert_eq!(
        run.event["trace"]["browser_host"],
        Value::Null,
        "{}",
        run.context
    );
    assert_cut(
        &run,
        &h,
        &["Script"],
        &["stall-head-page", "after-head-script"],
    );
    assert_eq!(host.terminate().0, 0);
}

/// `fetch URL --render always --want text,content,network --endpoint-url EP EXTRA...`.
fn host_fetch(fx: &Fixture, endpoint: &str, url: &str, extra: &[&str]) -> Run {
    fx.cmd()
        .args(["fetch", url, "--render", "always", "--timeout-ms", "20000"])
        .args(["--want", "text,content,network", "--endpoint-url", endpoint])
        .args(extra)
        .run()
}

/// The hosts `GET /stalled-hosts` lists as stalled.
fn stalled_hosts(endpoint: &str) -> Vec<String> {
    memory_list(endpoint, "hosts")
}

/// The hosts `GET /stalled-hosts` lists under `key` (`hosts`, `answered`).
fn memory_list(endpoint: &str, key: &str) -> Vec<String> {
    let port = crate::support::host::port_of(endpoint);
    let r = crate::support::raw_http::get(port, "/stalled-hosts", None);
    assert_eq!(r.status, 200, "{}", r.raw());
    let doc = r.json();
    assert_eq!(doc["code"], "stalled_hosts", "{doc}");
    doc[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["host"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_host_remembers_a_stalled_third_party_and_blocks_it_from_the_start() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let hang = HangServer::start();
    let h = hang.host();
    let mut host = HostProc::start(&fx, &["--listen", "tcp:127.0.0.1:0"], &[]);
    let ep = host.endpoint.clone();
    assert!(stalled_hosts(&ep).is_empty());
    // The first fetch waits out the window and reloads; the host learns the stalled host.
    let run = host_fetch(&fx, &ep, &srv.url(&format!("/stall/head?hang={h}")), &[]);
    assert_cut(&run, &h, &["Script"], &["stall-head-page"]);
    assert!(!warning(run.result(), "third_party_cut").contains("from the start"));
    assert_eq!(stalled_hosts(&ep), vec![h.clone()]);
    // The next page using it has the host blocked before it loads: no cut round, no reload.
    let run = host_fetch(&fx, &ep, &srv.url(&format!("/stall/mid?hang={h}")), &[]);
    let r = run.result();
    let text = run.artifact_text("text_file");
    assert!(
        text.contains("before-mid-script") && text.contains("after-mid-script"),
        "{text}"
    );
    let msg = warning(r, "third_party_cut");
    assert!(
        msg.contains("blocked from the start") && msg.contains(&h),
        "{msg}"
    );
    let cuts = &run.event["trace"]["readiness"]["cuts"];
    assert_eq!(cuts["rounds"].as_array().map(Vec::len), Some(0), "{cuts}");
    assert_eq!(cuts["remembered"][0]["host"], h.as_str(), "{cuts}");
    let network = run.artifact_json("network_file");
    assert!(
        network["entries"].as_array().unwrap().iter().any(|e| {
            e["failure"]["blocked_reason"] == "third_party_cut"
                && e["url"].as_str().unwrap().contains(&h)
        }),
        "{network}"
    );
    // `--stall-cutoff-ms 0` uses no memory: the script is waited for within the budget.
    let off = ["--stall-cutoff-ms", "0", "--readiness-budget-ms", "1500"];
    let run = host_fetch(&fx, &ep, &srv.url(&format!("/stall/mid?hang={h}")), &off);
    no_cut(&run);
    assert!(warning_codes(run.result()).contains(&"document_incomplete".to_string()));
    // A page of the remembered host's own site (127.0.0.2) does not get it blocked: first
    // parties are never cut, and the page's budget rules apply.
    let own = FixtureServer::start_on("127.0.0.2");
    let budget = ["--readiness-budget-ms", "1500"];
    let run = host_fetch(&fx, &ep, &own.url(&format!("/stall/mid?hang={h}")), &budget);
    no_cut(&run);
    let cuts = &run.event["trace"]["readiness"]["cuts"];
    assert_eq!(
        cuts["remembered"].as_array().map(Vec::len),
        Some(0),
        "{cuts}"
    );
    assert!(warning_codes(run.result()).contains(&"document_incomplete".to_string()));
    assert_eq!(host.terminate().0, 0);
}

/// The trace's cut rounds.
fn rounds(run: &Run) -> Vec<Value> {
    run.event["trace"]["readiness"]["cuts"]["rounds"]
        .as_array()
        .unwrap()
        .clone()
}

/// The main documents `network.json` lists (a reload loads it again).
fn document_loads(run: &Run) -> usize {
    let network = run.artifact_json("network_file");
    network["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["resource_type"] == "Document" && e["frame_id"] == network["entries"][0]["frame_id"]
        })
        .count()
}

#[test]
fn a_stalled_parser_blocking_script_is_cut_in_place_and_an_answering_one_runs() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let hang = HangServer::start();
    let h = hang.host();
    // Held paused while the host is probed, failed still paused at the window: the parser
    // goes on in the first load, with no reload.
    let run = render(&fx, &srv.url(&format!("/stall/head?hang={h}")), &[]);
    assert_cut(
        &run,
        &h,
        &["Script"],
        &["stall-head-page", "after-head-script"],
    );
    let rounds = rounds(&run);
    assert_eq!(rounds.len(), 1, "{rounds:?}");
    assert_eq!(rounds[0]["in_place"], true, "{rounds:?}");
    assert_eq!(rounds[0]["reloaded"], false, "{rounds:?}");
    assert_eq!(document_loads(&run), 1, "{}", run.context);
    assert!(!warning(run.result(), "third_party_cut").contains("reloaded"));
    // Another site that answers: its probe lets the script go, and it runs.
    let third = FixtureServer::start_on("127.0.0.2");
    let t = format!("127.0.0.2:{}", third.port());
    let run = render(&fx, &srv.url(&format!("/stall/late?third={t}&ms=0")), &[]);
    no_cut(&run);
    let text = run.artifact_text("text_file");
    assert!(
        text.contains("late-script-ran") && text.contains("after-late-script"),
        "{text}"
    );
}

#[test]
fn a_stalled_image_under_wait_load_is_cut_by_a_reload() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let hang = HangServer::start();
    let h = hang.host();
    let run = render(
        &fx,
        &srv.url(&format!("/stall/img?hang={h}")),
        &["--wait", "load"],
    );
    assert_cut(&run, &h, &["Image"], &["img-page", "after-img"]);
    let rounds = rounds(&run);
    assert_eq!(rounds[0]["reloaded"], true, "{rounds:?}");
    assert!(warning(run.result(), "third_party_cut").contains("reloaded 1 time(s)"));
    assert_eq!(run.event["trace"]["readiness"]["ended_by"], "load");
}

#[test]
fn a_chain_of_stalled_scripts_is_cut_in_place_host_by_host_with_a_shorter_window_after_the_first() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let first = HangServer::start();
    let second = HangServer::start();
    let (h1, h2) = (first.host(), second.host());
    let url = srv.url(&format!("/stall/chain?hang={h1}&next={h2}"));
    let run = render(&fx, &url, &["--stall-cutoff-ms", "800"]);
    let text = run.artifact_text("text_file");
    assert!(
        text.contains("before-chain") && text.contains("after-chain"),
        "{text}"
    );
    let msg = warning(run.result(), "third_party_cut");
    for h in [&h1, &h2] {
        assert!(msg.contains(h.as_str()), "{h} not named: {msg}");
    }
    assert!(!msg.contains("reloaded"), "{msg}");
    let rounds = rounds(&run);
    assert_eq!(rounds.len(), 2, "{rounds:?}");
    let hosts = |r: &Value| -> Vec<String> {
        r["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["host"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(hosts(&rounds[0]), vec![h1.clone()], "{rounds:?}");
    assert_eq!(hosts(&rounds[1]), vec![h2.clone()], "{rounds:?}");
    assert!(rounds.iter().all(|r| r["in_place"] == true), "{rounds:?}");
    assert_eq!(rounds[0]["window_ms"], 800, "{rounds:?}");
    assert_eq!(rounds[1]["window_ms"], 400, "{rounds:?}");
    assert_eq!(document_loads(&run), 1, "{}", run.context);
}

#[test]
fn hosts_the_markup_names_are_probed_up_front_and_cut_within_one_window() {
    // A parser-blocking script on a stalled host in <head>, then a stalled image on the same
    // host and an async script on a second stalled host: the image takes the one slot the
    // browser gives low-priority requests while a head script is pending, so without the
    // markup the second host would be met only after the first cut (half the window).
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let first = HangServer::start();
    let second = HangServer::start();
    let (h1, h2) = (first.host(), second.host());
    let url = srv.url(&format!("/stall/pair?hang={h1}&next={h2}"));
    let run = render(&fx, &url, &["--stall-cutoff-ms", "800"]);
    let text = run.artifact_text("text_file");
    for m in ["before-pair", "after-pair"] {
        assert!(text.contains(m), "{m} missing: {text}");
    }
    let msg = warning(run.result(), "third_party_cut");
    for h in [&h1, &h2] {
        assert!(msg.contains(h.as_str()), "{h} not named: {msg}");
    }
    assert!(!msg.contains("reloaded"), "{msg}");
    // Each host is cut in place in its own round with the full window, the second one
    // probed because the document named it, with one document load.
    let rounds = rounds(&run);
    assert_eq!(rounds.len(), 2, "{rounds:?}");
    let host = |r: &Value| r["hosts"][0]["host"].as_str().unwrap().to_string();
    let second_round = rounds.iter().find(|r| host(r) == h2).expect("h2 cut");
    assert_eq!(second_round["named_by_document"], true, "{rounds:?}");
    assert!(rounds.iter().any(|r| host(r) == h1), "{rounds:?}");
    for r in &rounds {
        assert_eq!(r["in_place"], true, "{rounds:?}");
        assert_eq!(r["window_ms"], 800, "{rounds:?}");
    }
    assert_eq!(document_loads(&run), 1, "{}", run.context);
}

#[test]
fn a_host_remembers_a_third_party_that_answered_and_lets_it_go_without_a_probe() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let third = FixtureServer::start_on("127.0.0.2");
    let t = format!("127.0.0.2:{}", third.port());
    let mut host = HostProc::start(&fx, &["--listen", "tcp:127.0.0.1:0"], &[]);
    let ep = host.endpoint.clone();
    assert!(memory_list(&ep, "answered").is_empty());
    let url = srv.url(&format!("/stall/late?third={t}&ms=0"));
    // The first fetch probes the new host; it answers, and the host learns it.
    let run = host_fetch(&fx, &ep, &url, &[]);
    no_cut(&run);
    let cuts = &run.event["trace"]["readiness"]["cuts"];
    assert_eq!(cuts["answered"], serde_json::json!([t.clone()]), "{cuts}");
    assert_eq!(memory_list(&ep, "answered"), vec![t.clone()]);
    // The next fetch lets its script go at once: no probe, the script still runs.
    let run = host_fetch(&fx, &ep, &url, &[]);
    no_cut(&run);
    let cuts = &run.event["trace"]["readiness"]["cuts"];
    assert_eq!(cuts["answered"], serde_json::json!([]), "{cuts}");
    assert_eq!(cuts["remembered_answered"], 1, "{cuts}");
    let text = run.artifact_text("text_file");
    assert!(text.contains("late-script-ran"), "{text}");
    assert!(stalled_hosts(&ep).is_empty());
    assert_eq!(host.terminate().0, 0);
}

#[test]
fn a_host_whose_recent_fetches_saw_third_parties_stall_halves_the_window_from_the_start() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let hangs: Vec<HangServer> = (0..4).map(|_| HangServer::start()).collect();
    let h: Vec<String> = hangs.iter().map(HangServer::host).collect();
    let mut host = HostProc::start(&fx, &["--listen", "tcp:127.0.0.1:0"], &[]);
    let ep = host.endpoint.clone();
    let window = ["--stall-cutoff-ms", "800"];
    let first_window = |run: &Run| {
        let cuts = &run.event["trace"]["readiness"]["cuts"];
        (
            cuts["rounds"][0]["window_ms"].clone(),
            cuts["stalling_network"].clone(),
        )
    };
    // Two hosts stall in the first fetch (the second within it already at half the window).
    let chain = srv.url(&format!("/stall/chain?hang={}&next={}", h[0], h[1]));
    let run = host_fetch(&fx, &ep, &chain, &window);
    assert_eq!(
        first_window(&run),
        (800.into(), false.into()),
        "{}",
        run.context
    );
    // Two stalled hosts remembered are not yet evidence: a new one gets the whole window.
    let run = host_fetch(
        &fx,
        &ep,
        &srv.url(&format!("/stall/head?hang={}", h[2])),
        &window,
    );
    assert_cut(&run, &h[2], &["Script"], &["stall-head-page"]);
    assert_eq!(
        first_window(&run),
        (800.into(), false.into()),
        "{}",
        run.context
    );
    assert_eq!(stalled_hosts(&ep).len(), 3);
    // Three, and none answered: third parties stall on this network, so the next new host
    // is given half the window from its first hold, and the warning says why.
    let run = host_fetch(
        &fx,
        &ep,
        &srv.url(&format!("/stall/head?hang={}", h[3])),
        &window,
    );
    assert_cut(&run, &h[3], &["Script"], &["stall-head-page"]);
    assert_eq!(
        first_window(&run),
        (400.into(), true.into()),
        "{}",
        run.context
    );
    let msg = warning(run.result(), "third_party_cut");
    assert!(
        msg.contains("after 400 ms") && msg.contains("halved"),
        "{msg}"
    );
    assert_eq!(host.terminate().0, 0);
}
