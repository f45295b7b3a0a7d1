//! A headless fetch does not announce itself: no `HeadlessChrome` in the User-Agent header
//! the fixture server received or in `navigator.userAgent`, the version is the browser's,
//! the client hints match it, and `navigator.webdriver` is false. `--user-agent` wins, and a
//! non-Chromium value gets no Chromium client hints. Real inline Chromium.

use serde_json::Value;

use std::time::Duration;

use crate::support::deadline::output_within;
use crate::support::{Fixture, FixtureServer, Run};

const CHROMIUM: &str = "/usr/bin/chromium";

/// `afhttp fetch URL --render always --want text EXTRA...` in an inline Chromium.
fn render(fx: &Fixture, url: &str, extra: &[&str]) -> Run {
    crate::support::chromium::render(fx, url, "text", extra)
}

/// The browser's full version, from `chromium --version` ("Chromium 156.0.8078.114 ...").
fn browser_version() -> String {
    let out = output_within(
        std::process::Command::new(CHROMIUM).arg("--version"),
        Duration::from_secs(30),
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    text.split_whitespace()
        .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .unwrap_or_else(|| panic!("no version in {text:?}"))
        .to_string()
}

/// What the page wrote about itself (`identity {json}` in text.txt).
fn page_identity(run: &Run) -> Value {
    let text = run.artifact_text("text_file");
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("identity "))
        .unwrap_or_else(|| panic!("no identity line in {text}"));
    serde_json::from_str(line).unwrap()
}

#[test]
fn a_headless_fetch_sends_its_headful_user_agent_and_client_hints() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let full = browser_version();
    let major = full.split('.').next().unwrap().to_string();
    let run = render(&fx, &srv.url("/ready/identity"), &[]);
    run.result();
    let req = srv.last_request("/ready/identity").unwrap();
    let header = req.header("user-agent").unwrap().to_string();
    assert!(!header.contains("Headless"), "{header}");
    assert!(header.contains(&format!("Chrome/{major}.")), "{header}");
    let hints = req.header("sec-ch-ua").unwrap_or_default().to_string();
    assert!(
        hints.contains(&format!("\"Chromium\";v=\"{major}\"")),
        "{hints}"
    );
    assert!(!hints.contains("Headless"), "{hints}");
    let page = page_identity(&run);
    assert_eq!(page["ua"], header.as_str(), "{page}");
    assert_eq!(page["webdriver"], false, "{page}");
    let brands = page["brands"].as_array().unwrap();
    assert!(
        brands
            .iter()
            .any(|b| b["brand"] == "Chromium" && b["version"] == major.as_str()),
        "{page}"
    );
    let full_list = page["full"].as_array().unwrap();
    assert!(
        full_list
            .iter()
            .any(|b| b["brand"] == "Chromium" && b["version"] == full.as_str()),
        "{page} vs {full}"
    );
    assert_eq!(page["platform"], "Linux", "{page}");
    assert_eq!(
        run.event["trace"]["user_agent"]["source"],
        "headful_equivalent"
    );
}

#[test]
fn user_agent_overrides_and_a_non_chromium_agent_gets_no_client_hints() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let ua = "TestAgent/1.0 (afhttp test)";
    let run = render(&fx, &srv.url("/ready/identity"), &["--user-agent", ua]);
    run.result();
    let req = srv.last_request("/ready/identity").unwrap();
    assert_eq!(req.header("user-agent"), Some(ua));
    assert!(req.header("sec-ch-ua").is_none(), "{:?}", req.headers);
    let page = page_identity(&run);
    assert_eq!(page["ua"], ua, "{page}");
    assert_eq!(page["webdriver"], false, "{page}");
    assert!(
        page["brands"].as_array().is_none_or(|b| b.is_empty()),
        "{page}"
    );
    let t = &run.event["trace"]["user_agent"];
    assert_eq!(t["source"], "flag", "{t}");
    assert_eq!(t["client_hints"], "not_sent", "{t}");
}

/// The User-Agent header the fixture server received on `path`.
fn received_ua(srv: &FixtureServer, path: &str) -> String {
    srv.last_request(path)
        .unwrap_or_else(|| panic!("no request for {path}"))
        .header("user-agent")
        .unwrap_or_default()
        .to_string()
}

#[test]
fn dedicated_and_service_workers_send_the_tabs_user_agent() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let major = browser_version().split('.').next().unwrap().to_string();
    let wait = ["--wait", "selector:#done"];
    let run = render(&fx, &srv.url("/ready/workers"), &wait);
    run.result();
    let text = run.artifact_text("text_file");
    assert!(text.contains("workers-done"), "{text}");
    let page = received_ua(&srv, "/ready/workers");
    assert!(!page.contains("Headless"), "{page}");
    // The shared worker ran (workers-done) but is not the tab's: it keeps the browser's
    // User-Agent (reference.md, "what still differs").
    for who in ["worker", "service-worker"] {
        let ua = received_ua(&srv, &format!("/ready/ua/{who}"));
        assert!(!ua.contains("Headless"), "{who}: {ua}");
        assert!(ua.contains(&format!("Chrome/{major}.")), "{who}: {ua}");
        assert_eq!(ua, page, "{who}");
    }
    // --user-agent reaches the workers too.
    let flag = "TestAgent/2.0 (afhttp worker test)";
    let run = render(
        &fx,
        &srv.url("/ready/workers"),
        &["--wait", "selector:#done", "--user-agent", flag],
    );
    assert!(run.artifact_text("text_file").contains("workers-done"));
    for who in ["worker", "service-worker"] {
        assert_eq!(
            received_ua(&srv, &format!("/ready/ua/{who}")),
            flag,
            "{who}"
        );
    }
}
