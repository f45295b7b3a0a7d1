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

const TOKEN: &str = "tab-pool-isolated-token-0123456789";

/// A host that also serves isolated fetches (through a one-member fleet, as the fleet router
/// sends its ephemeral fetches).
fn token_host(fx: &Fixture, pool: &str) -> HostProc {
    HostProc::start(
        fx,
        &[
            "--listen",
            "tcp:127.0.0.1:0",
            "--tab-pool",
            pool,
            "--token-secret",
            TOKEN,
        ],
        &[],
    )
}

/// The args of an isolated fetch of `url` on `ep` (a fleet's ephemeral fetch).
fn isolated_args(ep: &str, url: &str) -> Vec<String> {
    [
        "fetch",
        url,
        "--fleet",
        &format!("a={ep}"),
        "--token-secret",
        TOKEN,
        "--fleet-connect-timeout-ms",
        "10000",
        "--render",
        "always",
        "--want",
        "text",
        "--no-cookie-jar",
        "--timeout-ms",
        "60000",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// One isolated fetch: its text and its `trace.tab`.
fn isolated(fx: &Fixture, ep: &str, url: &str) -> (String, Value) {
    let run = fx.cmd().args(isolated_args(ep, url)).run();
    assert_eq!(
        run.event["trace"]["fleet"]["isolated_context"], true,
        "{}",
        run.context
    );
    let tab = run.event["trace"]["tab"].clone();
    assert!(tab["browser_context_id"].is_string(), "{}", run.context);
    (run.artifact_text("text_file"), tab)
}

/// `afhttp cdp METHOD` on the browser target of `ep`, as a client sees it.
fn cdp(fx: &Fixture, ep: &str, method: &str) -> Value {
    let run = fx
        .cmd()
        .args(["cdp", method, "--endpoint-url", ep, "--token-secret", TOKEN])
        .run();
    run.result()["result"].clone()
}

/// The browser contexts a client of `ep` sees (the host's ready ones are left out).
fn contexts(fx: &Fixture, ep: &str) -> Vec<Value> {
    cdp(fx, ep, "Target.getBrowserContexts")["browserContextIds"]
        .as_array()
        .unwrap()
        .clone()
}

fn isolated_ready(ep: &str) -> u64 {
    crate::support::health(crate::support::port_of(ep), Some(TOKEN))["tabs_ready_isolated"]
        .as_u64()
        .unwrap_or(0)
}

#[test]
fn isolated_fetches_take_ready_tabs_each_in_a_context_of_its_own() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let host = token_host(&fx, "2");
    let ep = host.endpoint.clone();
    // No isolated fetch yet: the host makes no isolated tab.
    assert_eq!(isolated_ready(&ep), 0);
    let set = srv.url("/cookies/set-raw?h=iso%3D1%3B%20Path%3D%2F%3B%20Max-Age%3D3600");
    let (_, first) = isolated(&fx, &ep, &set);
    assert!(first["ready"].is_null(), "none was ready yet: {first}");
    crate::support::wait_for(
        "ready isolated tabs after the first isolated fetch",
        std::time::Duration::from_secs(30),
        || isolated_ready(&ep) >= 1,
    );
    // Ready ones are the host's: no client sees their tabs or their contexts.
    assert!(contexts(&fx, &ep).is_empty(), "{:?}", contexts(&fx, &ep));
    let pages = cdp(&fx, &ep, "Target.getTargets")["targetInfos"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["type"] == "page")
        .count();
    let tabs = fx
        .cmd()
        .args([
            "tabs",
            "list",
            "--endpoint-url",
            &ep,
            "--token-secret",
            TOKEN,
        ])
        .run();
    let listed = tabs.result()["tabs"].as_array().unwrap().len();
    assert_eq!(pages, listed, "{}", tabs.context);
    assert!(listed <= 1, "ready tabs are listed: {}", tabs.result());

    // The next isolated fetch takes one: a context of its own, without the first's cookie.
    let echo = srv.url("/cookies/echo");
    let (text, second) = isolated(&fx, &ep, &echo);
    assert_eq!(second["ready"], true, "{second}");
    assert_ne!(second["browser_context_id"], first["browser_context_id"]);
    assert!(!text.contains("iso=1"), "{text}");
    // It set one in its own context: the next isolated fetch does not see it either.
    let (_, third) = isolated(&fx, &ep, &set);
    let (text, fourth) = isolated(&fx, &ep, &echo);
    assert_ne!(third["browser_context_id"], fourth["browser_context_id"]);
    assert!(!text.contains("iso=1"), "{text}");
    // Nor does a fetch in the host's own context.
    let plain = fx
        .cmd()
        .args(["fetch", &echo, "--render", "always", "--want", "text"])
        .args([
            "--endpoint-url",
            &ep,
            "--token-secret",
            TOKEN,
            "--no-cookie-jar",
        ])
        .run();
    assert!(plain.event["trace"]["tab"]["browser_context_id"].is_null());
    assert!(!plain.artifact_text("text_file").contains("iso=1"));
    // Every context a fetch took was disposed of.
    crate::support::wait_for(
        "the fetches' contexts to be disposed of",
        std::time::Duration::from_secs(10),
        || contexts(&fx, &ep).is_empty(),
    );
}

#[test]
fn a_driver_killed_mid_isolated_fetch_leaves_no_context() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let host = token_host(&fx, "2");
    let ep = host.endpoint.clone();
    isolated(&fx, &ep, &srv.url("/echo"));
    crate::support::wait_for(
        "a ready isolated tab",
        std::time::Duration::from_secs(30),
        || isolated_ready(&ep) >= 1,
    );
    let mut fetch = fx
        .child_command()
        .args(isolated_args(&ep, &srv.url("/slow?ms=30000")))
        .spawn()
        .unwrap();
    crate::support::wait_for(
        "the isolated fetch on the slow page",
        std::time::Duration::from_secs(30),
        || srv.hits("/slow") >= 1,
    );
    // The ready one it took is its own now: listed, until the driver goes.
    assert_eq!(contexts(&fx, &ep).len(), 1, "{:?}", contexts(&fx, &ep));
    crate::support::sigkill(fetch.id() as i32);
    let _ = fetch.wait();
    crate::support::wait_for(
        "the killed driver's context to be disposed of",
        std::time::Duration::from_secs(10),
        || contexts(&fx, &ep).is_empty(),
    );
}

#[test]
fn a_host_without_ready_tabs_still_serves_isolated_fetches() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let host = token_host(&fx, "0");
    let ep = host.endpoint.clone();
    let set = srv.url("/cookies/set-raw?h=solo%3D1%3B%20Path%3D%2F%3B%20Max-Age%3D3600");
    for _ in 0..2 {
        let (_, tab) = isolated(&fx, &ep, &set);
        assert!(tab["ready"].is_null(), "{tab}");
    }
    let (text, _) = isolated(&fx, &ep, &srv.url("/cookies/echo"));
    assert!(!text.contains("solo=1"), "{text}");
    assert_eq!(isolated_ready(&ep), 0);
    assert!(contexts(&fx, &ep).is_empty());
}

#[test]
fn a_host_with_a_takeover_display_keeps_ready_tabs_but_no_isolated_ones() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    // Its browser draws on the display, where a new context's window would be mapped over
    // the tab a human is handed.
    let host = HostProc::start(
        &fx,
        &[
            "--listen",
            "tcp:127.0.0.1:0",
            "--token-secret",
            TOKEN,
            "--takeover-provider",
            "novnc",
        ],
        &[],
    );
    let ep = host.endpoint.clone();
    let port = crate::support::port_of(&ep);
    let ready = || crate::support::health(port, Some(TOKEN))["tabs_ready"].as_u64();
    for _ in 0..2 {
        let (text, tab) = isolated(&fx, &ep, &srv.url("/static"));
        assert!(text.contains("Static Fixture"), "{text}");
        assert!(tab["ready"].is_null(), "{tab}");
        // The plain ready tabs are refilled (the pool is on), the isolated ones never made.
        crate::support::wait_for(
            "the pool's ready tabs",
            std::time::Duration::from_secs(30),
            || ready() == Some(2),
        );
        assert_eq!(isolated_ready(&ep), 0);
    }
    assert!(contexts(&fx, &ep).is_empty());
}
