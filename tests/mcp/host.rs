//! The host tools over MCP against a real host: `tabs_list`, `tabs_close`, `takeover`, and
//! `cdp`, which exists only with `--allow-cdp`.

use serde_json::{json, Value};

use super::run_steps;
use crate::support::{Fixture, FixtureServer, HostProc};

#[test]
fn tabs_takeover_and_cdp_reach_the_host_and_cdp_needs_allow_cdp() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let host = HostProc::start(&fx, &["--listen", "tcp:127.0.0.1:0"], &[]);
    let ep = host.endpoint.as_str();
    let tab = "$1.result.result.targetId";
    let r = run_steps(
        &fx,
        &["mcp", "--endpoint-url", ep, "--allow-cdp"],
        json!([
            {"call": "cdp", "args": {"method": "Browser.getVersion"}},
            {"call": "cdp", "args": {"method": "Target.createTarget", "params": {"url": srv.url("/static")}}},
            {"call": "tabs_list", "args": {}},
            {"call": "cdp", "args": {"method": "Runtime.evaluate", "tab": tab, "params": {"expression": "6 * 7", "returnByValue": true}}},
            {"call": "tabs_close", "args": {"tab": tab}},
            {"call": "tabs_list", "args": {}},
            {"call": "cdp", "args": {"method": "Runtime.evaluate; rm"}},
            {"call": "takeover", "args": {}},
            {"call": "takeover", "args": {"ttl_s": 5}},
            {"call": "health", "args": {}},
        ]),
    );
    assert!(
        r["tools"].as_array().unwrap().contains(&json!("cdp")),
        "{r}"
    );
    let s = r["steps"].as_array().unwrap();
    let ok = |i: usize| {
        assert_eq!(s[i]["is_error"], false, "step {i}: {}", s[i]);
        &s[i]["structured"]["result"]
    };
    assert!(
        ok(0)["result"]["product"]
            .as_str()
            .unwrap()
            .contains("Chrom"),
        "{}",
        s[0]
    );
    let id = ok(1)["result"]["targetId"].as_str().unwrap().to_string();
    let listed = |v: &Value| {
        v["tabs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["tab_id"] == json!(id))
    };
    assert!(listed(ok(2)), "{}", s[2]);
    assert_eq!(ok(3)["result"]["result"]["value"], 42, "{}", s[3]);
    assert_eq!(ok(4)["closed"], true, "{}", s[4]);
    assert!(!listed(ok(5)), "{}", s[5]);
    let code = |i: usize| s[i]["structured"]["error"]["code"].clone();
    assert_eq!(code(6), "invalid_argument", "{}", s[6]);
    assert_eq!(s[6]["structured"]["error"]["field"], "method", "{}", s[6]);
    // This host has no display provider; the link is refused with the host's code.
    assert_eq!(code(7), "takeover_unavailable", "{}", s[7]);
    assert_eq!(code(8), "invalid_argument", "{}", s[8]);
    assert_eq!(ok(9)["status"], "ok", "{}", s[9]);

    // Without --allow-cdp the tool is neither listed nor served.
    let r = run_steps(
        &fx,
        &["mcp", "--endpoint-url", ep],
        json!([{"call": "cdp", "args": {"method": "Browser.getVersion"}}]),
    );
    assert!(
        !r["tools"].as_array().unwrap().contains(&json!("cdp")),
        "{r}"
    );
    assert!(r["steps"][0]["protocol_error"].is_string(), "{r}");
}
