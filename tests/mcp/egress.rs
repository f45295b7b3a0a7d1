//! The egress policy of `afhttp mcp` (`--deny-private-networks`, `--egress-allow`): an MCP
//! fetch of a private address is refused on the plain-HTTP step and in the inline browser,
//! by name and by IP, directly and through a redirect (and a page's own request in the
//! browser), before anything reaches the target.
//!
//! Every fixture is on loopback (nothing else may be a target here), so the tests allow the
//! first fixture by `--egress-allow 127.0.0.1` and show that a second fixture on another
//! loopback address (127.0.0.2), which the same fetch reaches without the flag, is refused.

use serde_json::{json, Value};

use super::run_steps;
use crate::support::events::tool_fetch;
use crate::support::{Fixture, FixtureServer};

/// The tool error of step `i`, checked to be `egress_denied` naming `addr`.
fn denied<'a>(r: &'a Value, i: usize, addr: &str) -> &'a Value {
    let got = &r["steps"][i];
    assert_eq!(got["is_error"], true, "step {i}: {got}");
    let err = &got["structured"]["error"];
    assert_eq!(err["code"], "egress_denied", "step {i}: {got}");
    assert_eq!(err["retryable"], false, "step {i}: {got}");
    let message = err["message"].as_str().unwrap();
    assert!(
        message.contains("egress policy") && message.contains(addr),
        "step {i}: {message}"
    );
    assert!(
        err["hint"].as_str().unwrap().contains("--egress-allow"),
        "{err}"
    );
    err
}

#[test]
fn deny_private_networks_refuses_loopback_by_name_and_ip_on_the_http_step() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let by_name = format!("http://localhost:{}/static", srv.port());
    let r = run_steps(
        &fx,
        &["mcp", "--deny-private-networks"],
        json!([
            {"call": "fetch", "args": {"url": by_name, "render": "none"}},
            {"call": "fetch", "args": {"url": srv.url("/static"), "render": "none"}},
            {"call": "fetch", "args": {"url": "http://[::1]:9/", "render": "none"}},
            {"call": "fetch", "args": {"url": by_name}},
            {"call": "capabilities", "args": {}},
        ]),
    );
    // The server says which policy its fetches obey.
    let egress = &r["steps"][4]["structured"]["result"]["egress"];
    assert_eq!(egress["enforced"], true, "{r}");
    assert_eq!(egress["policy"], "deny_private", "{r}");
    // A name that resolves to loopback is refused at the resolved address.
    denied(&r, 0, "is loopback");
    denied(&r, 1, "127.0.0.1 is loopback");
    denied(&r, 2, "::1 is loopback");
    // render auto: the HTTP step refuses; the fetch does not escalate around it.
    denied(&r, 3, "is loopback");
    assert!(
        srv.requests().is_empty(),
        "the fixture was reached: {:?}",
        srv.requests()
    );
}

#[test]
fn a_redirect_to_a_private_address_is_refused_on_the_http_and_the_browser_step() {
    // It starts Chromium (an inline browser or a host's).
    let _one = crate::support::chromium::lock();
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let private = FixtureServer::start_on("127.0.0.2");
    let target = private.url("/static");
    let hop = srv.url(&format!("/redirect/abs?to={target}"));
    // The page's own request to the private fixture goes through the same proxy.
    let probe = format!(
        "fetch('{}', {{mode: 'no-cors'}}).then(() => 'sent', e => 'refused: ' + e)",
        private.url("/echo")
    );
    let steps = json!([
        {"call": "fetch", "args": {"url": srv.url("/static"), "render": "none"}},
        {"call": "fetch", "args": {"url": hop, "render": "none"}},
        {"call": "fetch", "args": {"url": hop, "render": "always", "want": "body"}},
        {"call": "fetch", "args": {"url": target, "render": "always", "want": "body"}},
        {"call": "fetch", "args": {"url": srv.url("/static"), "render": "always", "want": "body"}},
        {"call": "fetch", "args": {"url": srv.url("/static"), "render": "always", "want": "body",
                                   "evaluate_after_wait": probe}},
    ]);
    let r = run_steps(
        &fx,
        &[
            "mcp",
            "--deny-private-networks",
            "--egress-allow",
            "127.0.0.1",
        ],
        steps.clone(),
    );
    // The allowed fixture is served on both paths.
    assert_eq!(r["steps"][0]["is_error"], false, "{r}");
    assert_eq!(tool_fetch(&r["steps"][0]["structured"]).status, 200, "{r}");
    assert_eq!(r["steps"][4]["is_error"], false, "{r}");
    assert_eq!(tool_fetch(&r["steps"][4]["structured"]).status, 200, "{r}");
    // The redirect's second hop is refused by the HTTP step, and by the inline browser
    // (which runs behind the egress proxy with the same policy); so is a direct navigation.
    denied(&r, 1, "127.0.0.2");
    denied(&r, 2, "127.0.0.2");
    denied(&r, 3, "127.0.0.2");
    assert_eq!(r["steps"][5]["is_error"], false, "{r}");
    assert_eq!(
        private.hits("/static") + private.hits("/echo"),
        0,
        "the private fixture was reached"
    );
    assert!(srv.hits("/redirect/abs") >= 2, "{r}");

    // The control: under the default policy the same fetches reach the second fixture.
    let r = run_steps(&fx, &["mcp"], steps);
    for i in 0..6 {
        assert_eq!(r["steps"][i]["is_error"], false, "step {i}: {r}");
        assert_eq!(tool_fetch(&r["steps"][i]["structured"]).status, 200, "{r}");
    }
    assert!(private.hits("/static") >= 3, "{r}");
    assert_eq!(private.hits("/echo"), 1, "the control page's request: {r}");
}

#[test]
fn malformed_egress_exceptions_are_refused_at_start() {
    let fx = Fixture::new();
    for bad in ["10.0.0.0/99", "a b"] {
        let run = fx.cmd().args(["mcp", "--egress-allow", bad]).run();
        let e = run.error("invalid_argument", 1);
        // The SDK names the field; the command line names its flag in the hint.
        assert!(
            e["message"].as_str().unwrap().contains("egress_allow"),
            "{}",
            run.context
        );
        assert!(
            e["hint"].as_str().unwrap().contains("--egress-allow"),
            "{}",
            run.context
        );
    }
}
