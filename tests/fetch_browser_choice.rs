//! Which browser and tab a fetch uses (issue 13, part 2): `--tab ID` under the default
//! `--render auto` drives that tab on the host (escalation reason `tab`), `--tab new` without
//! an endpoint opens the inline browser's tab, `--browser FAMILY` picks the inline browser,
//! and the inline browser's own options are refused on a host rather than ignored.

use std::time::Duration;

use serde_json::{json, Value};

use crate::support::chromium::BIN as CHROMIUM;
use crate::support::{wait_for, Fixture, FixtureServer, HostProc, Run};
use crate::takeover::eval_in_tab;

/// The `code` of the render decision's escalation reason.
fn escalation_code(run: &Run) -> Value {
    run.event["trace"]["render"]["escalation_reason"]["code"].clone()
}

#[test]
fn tab_under_auto_uses_that_tab() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let mut host = HostProc::start(&fx, &["--listen", "tcp:127.0.0.1:0"], &[]);
    let auth = ["--endpoint-url", host.endpoint.as_str()];
    let params = json!({ "url": srv.url("/static") }).to_string();
    let opened = fx
        .cmd()
        .args(["cdp", "Target.createTarget", "--params", &params])
        .args(auth)
        .run();
    let tab = opened.result()["result"]["targetId"]
        .as_str()
        .unwrap()
        .to_string();
    // A new tab starts on about:blank, whose readyState is already "complete": wait for the
    // fixture's own document, or the mark below can land mid-navigation and read back null.
    let loaded = "document.readyState === 'complete' && document.title === 'Fixture Static Page'";
    wait_for("the tab's page", Duration::from_secs(30), || {
        eval_in_tab(&fx, &tab, &auth, loaded) == true
    });
    // sessionStorage belongs to the tab (and outlives a navigation within the origin): only
    // this tab answers with the mark.
    let mark = "sessionStorage.setItem('owner', 'this-tab'); true";
    assert_eq!(eval_in_tab(&fx, &tab, &auth, mark), true);

    // The static page needs no browser: without --tab it stays on the HTTP path.
    let plain = fx
        .cmd()
        .args(["fetch", &srv.url("/static")])
        .args(auth)
        .run();
    assert_eq!(plain.fetch().render, "http", "{}", plain.context);

    let run = fx
        .cmd()
        .args(["fetch", &srv.url("/static"), "--tab", &tab])
        .args(["--evaluate-after-wait", "sessionStorage.getItem('owner')"])
        .args(auth)
        .run();
    let r = run.result();
    assert_eq!(run.fetch().render, "browser", "{}", run.context);
    assert_eq!(r["tab_id"], tab.as_str(), "{}", run.context);
    assert_eq!(escalation_code(&run), "tab", "{}", run.context);
    assert_eq!(
        run.event["trace"]["evaluate_after_wait"]["value"], "this-tab",
        "the fetch did not run in the tab: {}",
        run.context
    );
    assert!(run.artifact_text("text_file").contains("Static Fixture"));
    assert_eq!(host.terminate().0, 0);
}

#[test]
fn tab_new_without_an_endpoint_opens_the_inline_browsers_tab() {
    let _one = crate::support::chromium::lock();
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = fx
        .cmd()
        .env("AFHTTP_NO_SANDBOX", "1")
        .env("AFHTTP_BROWSER_BIN", CHROMIUM)
        .args(["fetch", &srv.url("/static"), "--tab", "new"])
        .run();
    assert_eq!(run.fetch().render, "browser", "{}", run.context);
    assert_eq!(escalation_code(&run), "tab", "{}", run.context);
    assert_eq!(
        run.event["trace"]["browser_host"], "inline",
        "{}",
        run.context
    );
    assert_eq!(
        run.event["trace"]["tab"]["created"], true,
        "{}",
        run.context
    );
    assert!(run.artifact_text("text_file").contains("Static Fixture"));
}

#[test]
fn browser_family_picks_the_inline_browser() {
    let _one = crate::support::chromium::lock();
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let lightpanda = crate::host_browser::lightpanda_binary();
    let render = |family: &str, bin: &str| {
        fx.cmd()
            .env("AFHTTP_NO_SANDBOX", "1")
            .args(["fetch", &srv.url("/static"), "--render", "always"])
            .args(["--browser", family, "--browser-bin", bin])
            .args(["--want", "text,screenshot"])
            .run()
    };
    // Lightpanda takes no screenshots: the warning shows which browser rendered.
    let run = render("lightpanda", lightpanda.to_str().unwrap());
    let r = run.result();
    assert_eq!(run.fetch().render, "browser", "{}", run.context);
    let unsupported = |r: &Value| {
        r["warnings"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|w| w["artifact"] == "screenshot" && w["code"] == "backend_unsupported")
    };
    assert!(unsupported(r), "{}", run.context);
    assert!(run.artifact_text("text_file").contains("Static Fixture"));

    let run = render("chromium", CHROMIUM);
    let r = run.result();
    assert!(!unsupported(r), "{}", run.context);
    assert!(r["screenshot_file"].is_string(), "{}", run.context);

    let run = render("netscape", CHROMIUM);
    let e = run.error("invalid_argument", 1);
    assert!(e["message"].as_str().unwrap().contains("netscape"), "{e}");
}

#[test]
fn inline_browser_options_are_refused_on_a_host() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    // Nothing listens there: the refusal comes before any connection.
    let endpoint = format!("http://127.0.0.1:{}", crate::support::free_port());
    for (field, extra) in [
        ("browser", ["--browser", "chromium"]),
        ("browser_bin", ["--browser-bin", CHROMIUM]),
    ] {
        let run = fx
            .cmd()
            .args(["fetch", &srv.url("/static"), "--endpoint-url", &endpoint])
            .args(extra)
            .run();
        let e = run.error("invalid_argument", 1);
        let message = e["message"].as_str().unwrap();
        assert!(message.contains(field), "{field}: {e}");
        assert!(message.contains("host"), "{field}: {e}");
    }
    // AFHTTP_BROWSER_BIN is the inline browser's default, not a request: a host fetch that
    // needs no browser is answered over HTTP.
    let run = fx
        .cmd()
        .env("AFHTTP_BROWSER_BIN", CHROMIUM)
        .args(["fetch", &srv.url("/static"), "--endpoint-url", &endpoint])
        .run();
    assert_eq!(run.fetch().render, "http", "{}", run.context);
    // Nor is it refused with --render none.
    let run = fx
        .cmd()
        .env("AFHTTP_BROWSER_BIN", CHROMIUM)
        .args(["fetch", &srv.url("/static"), "--render", "none"])
        .run();
    assert_eq!(run.fetch().render, "http", "{}", run.context);
    fx.cmd()
        .args(["fetch", &srv.url("/static"), "--render", "none"])
        .args(["--browser-bin", CHROMIUM])
        .run()
        .error("invalid_argument", 1);
}
