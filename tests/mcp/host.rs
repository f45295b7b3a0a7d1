//! The host tools over MCP against a real host: `tabs_list`, `tabs_close`, `takeover`, and
//! `cdp`, which exists only with `--allow-cdp`.

use serde_json::{json, Value};

use super::run_steps;
use crate::support::events::tool_error;
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
    let code = |i: usize| tool_error(&s[i]["structured"]).code;
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

/// `afhttp mcp --fleet`: a fetch naming a profile goes to its rendezvous owner and stays
/// there, an ephemeral fetch goes to a healthy member, and the host tools talk to `--member`.
#[test]
fn mcp_over_a_fleet_routes_fetches_by_profile_and_host_tools_by_member() {
    const TOKEN: &str = "mcp-fleet-token-0123456789";
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let (da, db) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let start = |d: &std::path::Path| {
        HostProc::start(
            &fx,
            &["--listen", "tcp:127.0.0.1:0", "--token-secret", TOKEN],
            &[("XDG_DATA_HOME", d.to_str().unwrap())],
        )
    };
    let (a, b) = (start(da.path()), start(db.path()));
    let fleet = format!("a={},b={}", a.endpoint, b.endpoint);
    let owner = afhttp::sdk::fleet::placement::owner("alpha", ["a", "b"]).unwrap();
    let fetch = |profile: Option<&str>| {
        let mut args = json!({"url": srv.url("/static"), "render": "always", "want": "text"});
        if let Some(p) = profile {
            args["profile"] = json!(p);
        }
        json!({"call": "fetch", "args": args})
    };
    let r = run_steps(
        &fx,
        &[
            "mcp",
            "--fleet",
            &fleet,
            "--token-secret",
            TOKEN,
            "--fleet-connect-timeout-ms",
            "10000",
            "--member",
            "b",
        ],
        json!([
            fetch(Some("alpha")),
            fetch(Some("alpha")),
            fetch(None),
            {"call": "health", "args": {}},
        ]),
    );
    let s = r["steps"].as_array().unwrap();
    for (i, step) in s.iter().enumerate() {
        assert_eq!(step["is_error"], false, "step {i}: {step}");
    }
    let routed = |i: usize| s[i]["structured"]["trace"]["fleet"].clone();
    assert_eq!(routed(0)["member"], owner, "{}", s[0]);
    assert_eq!(routed(0)["reason"], "placed_by_rendezvous", "{}", s[0]);
    assert_eq!(routed(1)["member"], owner, "{}", s[1]);
    assert_eq!(routed(1)["reason"], "holds_profile", "{}", s[1]);
    assert!(
        ["a", "b"].contains(&routed(2)["member"].as_str().unwrap()),
        "{}",
        s[2]
    );
    assert_eq!(s[3]["structured"]["result"]["status"], "ok", "{}", s[3]);
}
