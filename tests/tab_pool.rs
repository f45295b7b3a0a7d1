//! The host's ready tabs (`--tab-pool`): a fetch takes one, and nothing a fetch sets on its
//! tab (headers, cookies, user agent) reaches the next fetch on the same host.

use serde_json::Value;

use crate::support::{Fixture, FixtureServer, HostProc};

/// What `/echo` saw of one browser fetch's main request: (x-who, cookie, user-agent).
fn seen(fx: &Fixture, ep: &str, url: &str, extra: &[&str]) -> (String, String, String) {
    let run = fx
        .cmd()
        .args(["fetch", url, "--render", "always", "--want", "body"])
        .args(["--endpoint-url", ep])
        .args(extra)
        .run();
    assert_eq!(run.result()["render"], "browser", "{}", run.context);
    let echo = run.artifact_json("body_file");
    let header = |name: &str| {
        echo["headers"][name]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    (header("x-who"), header("cookie"), header("user-agent"))
}

#[test]
fn fetches_on_one_host_each_see_only_their_own_headers_cookies_and_user_agent() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let host = HostProc::start(
        &fx,
        &["--listen", "tcp:127.0.0.1:0", "--tab-pool", "2"],
        &[],
    );
    let ep = host.endpoint.clone();
    let url = srv.url("/echo");
    let own = |who: &str| {
        [
            "--header".to_string(),
            format!("X-Who: {who}"),
            "--cookie".to_string(),
            format!("who={who}"),
            "--user-agent".to_string(),
            format!("afhttp-pool-test-{who}"),
        ]
    };
    for who in ["alpha", "beta", "gamma"] {
        let args = own(who);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (x_who, cookie, ua) = seen(&fx, &ep, &url, &args);
        assert_eq!(x_who, who);
        assert_eq!(cookie, format!("who={who}"));
        assert_eq!(ua, format!("afhttp-pool-test-{who}"));
    }
    // A fetch that sets nothing gets nothing of theirs.
    let (x_who, cookie, ua) = seen(&fx, &ep, &url, &[]);
    assert_eq!(x_who, "");
    assert!(!cookie.contains("who="), "{cookie}");
    assert!(!ua.contains("afhttp-pool-test"), "{ua}");
    assert!(ua.contains("Chrome/"), "{ua}");

    // The ready tabs are the host's: neither `tabs list` nor a raw target list shows them.
    let tabs = fx.cmd().args(["tabs", "list", "--endpoint-url", &ep]).run();
    let listed = tabs.result()["tabs"].as_array().unwrap().len();
    assert!(listed <= 1, "ready tabs are listed: {}", tabs.result());
    let raw = fx
        .cmd()
        .args(["cdp", "Target.getTargets", "--endpoint-url", &ep])
        .run();
    let pages = raw.result()["result"]["targetInfos"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["type"] == "page")
        .count();
    assert_eq!(pages, listed, "{}", raw.context);
}

#[test]
fn a_host_without_ready_tabs_still_fetches() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let host = HostProc::start(
        &fx,
        &["--listen", "tcp:127.0.0.1:0", "--tab-pool", "0"],
        &[],
    );
    let (x_who, _, _) = seen(
        &fx,
        &host.endpoint,
        &srv.url("/echo"),
        &["--header", "X-Who: solo"],
    );
    assert_eq!(x_who, "solo");
    let refused = fx
        .cmd()
        .args(["host", "--listen", "tcp:127.0.0.1:0", "--tab-pool", "17"])
        .run();
    let e: &Value = refused.error("invalid_argument", 1);
    assert!(e["message"].as_str().unwrap().contains("--tab-pool"), "{e}");
}
