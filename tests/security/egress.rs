//! The host browser's egress policy, through real hosts and real Chromium: the in-host proxy
//! refuses link-local/metadata addresses with `--egress-policy` (on in the image) and
//! loopback/private ones with
//! `--deny-private-networks`, for navigations and for a page's own requests.

use crate::support::HostProc;
use crate::support::{Fixture, FixtureServer, Run};

fn fetch(fx: &Fixture, host: &HostProc, url: &str, extra: &[&str]) -> Run {
    let out = fx.path().join(format!("out-{}", fastrand::u64(..)));
    fx.cmd()
        .args(["fetch", url, "--endpoint-url", &host.endpoint])
        .args([
            "--render",
            "always",
            "--timeout-ms",
            "20000",
            "--want",
            "body",
        ])
        .arg("--out")
        .arg(&out)
        .args(extra)
        .env("AFHTTP_TOKEN_SECRET", super::TOKEN)
        .run()
}

fn host(fx: &Fixture, args: &[&str]) -> HostProc {
    let mut all = vec![
        "--listen",
        "tcp:127.0.0.1:0",
        "--token-secret",
        super::TOKEN,
    ];
    all.extend_from_slice(args);
    HostProc::start(fx, &all, &[])
}

#[test]
fn with_the_policy_metadata_is_refused_and_loopback_fixtures_work() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let h = host(&fx, &["--egress-policy"]);
    assert_eq!(h.ready["egress"]["enforced"], true, "{}", h.ready);
    assert_eq!(h.ready["egress"]["policy"], "deny_link_local");
    let ok = fetch(&fx, &h, &srv.url("/static"), &[]);
    assert_eq!(ok.fetch().status, 200);
    assert_eq!(srv.hits("/static"), 1);
    for url in [
        "http://169.254.169.254/latest/meta-data/",
        "http://[fe80::1]/",
        "http://0.0.0.0:8080/",
    ] {
        let run = fetch(&fx, &h, url, &[]);
        let e = run.error("egress_denied", 1);
        assert_eq!(e["retryable"], false, "{}", run.context);
        assert!(
            e["message"].as_str().unwrap().contains("egress policy"),
            "{}",
            run.context
        );
    }
    // Over https the browser only sees a refused tunnel; the hint says why it may be.
    let run = fetch(&fx, &h, "https://169.254.169.254/", &[]);
    let e = run.error("target_unreachable", 1);
    assert!(
        e["hint"].as_str().unwrap().contains("egress policy"),
        "{}",
        run.context
    );
}

#[test]
fn deny_private_networks_refuses_loopback_for_pages_and_their_requests() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let h = host(
        &fx,
        &["--deny-private-networks", "--egress-allow", "localhost"],
    );
    assert_eq!(h.ready["egress"]["policy"], "deny_private", "{}", h.ready);
    // An IP literal and a name resolving to loopback are both checked at the address.
    let run = fetch(&fx, &h, &srv.url("/static"), &[]);
    let e = run.error("egress_denied", 1);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("127.0.0.1 is loopback"),
        "{}",
        run.context
    );
    assert_eq!(srv.hits("/static"), 0, "the fixture was never reached");
    // `localhost` is allowed by name: the page loads, but its own request to 127.0.0.1 goes
    // through the same proxy and is refused before reaching the server.
    let page = format!("http://localhost:{}/static", srv.port());
    let probe = format!(
        "fetch('http://127.0.0.1:{}/echo', {{mode: 'no-cors'}}).then(() => 'sent', e => 'refused: ' + e)",
        srv.port()
    );
    let run = fetch(&fx, &h, &page, &["--evaluate-after-wait", &probe]);
    let r = run.result();
    assert_eq!(r["status"], 200, "{}", run.context);
    assert_eq!(srv.hits("/static"), 1);
    assert_eq!(
        srv.hits("/echo"),
        0,
        "a page's request must not bypass the policy"
    );
    // (An opaque no-cors answer resolves either way; the server's count is the proof.)
    assert_eq!(run.event["trace"]["evaluate_after_wait"]["value"], "sent");
    // An https tunnel to loopback is refused as well.
    let run = fetch(&fx, &h, &format!("https://127.0.0.1:{}/", srv.port()), &[]);
    run.error("target_unreachable", 1);

    // Without the exception the same page is refused by name too.
    let h2 = host(&fx, &["--deny-private-networks"]);
    fetch(&fx, &h2, &page, &[]).error("egress_denied", 1);
    // And a host told to allow the fixture's address serves it.
    // And a host told to allow the fixture's address serves it, the page's request included
    // (the control for the count above).
    let h3 = host(
        &fx,
        &["--deny-private-networks", "--egress-allow", "127.0.0.0/8"],
    );
    let run = fetch(&fx, &h3, &page, &["--evaluate-after-wait", &probe]);
    assert_eq!(run.fetch().status, 200);
    assert_eq!(srv.hits("/echo"), 1, "{}", run.context);
}

#[test]
fn contradictory_or_malformed_egress_flags_are_refused() {
    let fx = Fixture::new();
    for args in [
        vec!["--egress-allow", "10.0.0.0/99"],
        vec!["--egress-allow", "a b"],
    ] {
        let run = fx
            .cmd()
            .arg("host")
            .args(&args)
            .env("AFHTTP_NO_SANDBOX", "1")
            .run();
        run.error("invalid_argument", 1);
    }
    // Natively the policy is off unless asked for: the browser connects directly (and says so).
    let h = host(&fx, &[]);
    assert_eq!(h.ready["egress"]["enforced"], false, "{}", h.ready);
    assert_eq!(h.ready["egress"]["reason"], "off", "{}", h.ready);
    let h = HostProc::start(
        &fx,
        &[
            "--listen",
            "tcp:127.0.0.1:0",
            "--token-secret",
            super::TOKEN,
        ],
        &[("AFHTTP_EGRESS_POLICY", "1")],
    );
    assert_eq!(
        h.ready["egress"]["policy"], "deny_link_local",
        "{}",
        h.ready
    );
    // The environment twin turns the stricter policy on.
    let h = HostProc::start(
        &fx,
        &[
            "--listen",
            "tcp:127.0.0.1:0",
            "--token-secret",
            super::TOKEN,
        ],
        &[("AFHTTP_DENY_PRIVATE_NETWORKS", "1")],
    );
    assert_eq!(h.ready["egress"]["policy"], "deny_private", "{}", h.ready);
}

#[test]
fn the_policy_is_checked_before_chaining_to_the_proxy_url() {
    use crate::support::{HttpProxy, Socks5Proxy};
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let http = HttpProxy::start_with_auth("agent", "p@ss");
    let socks = Socks5Proxy::start();
    for (proxy, seen) in [
        (
            http.url_with_credentials("agent", "p%40ss"),
            Box::new(|| http.seen_targets()) as Box<dyn Fn() -> Vec<String>>,
        ),
        (socks.url(), Box::new(|| socks.seen_targets())),
    ] {
        let h = host(&fx, &["--egress-policy", "--proxy-url", &proxy]);
        let before = seen().len();
        let run = fetch(&fx, &h, &srv.url("/static"), &[]);
        assert_eq!(run.fetch().status, 200, "{proxy}");
        assert!(
            seen().len() > before,
            "{proxy}: the fetch went through the upstream"
        );
        fetch(&fx, &h, "http://169.254.169.254/", &[]).error("egress_denied", 1);
        let all = seen();
        assert!(
            !all.iter().any(|t| t.contains("169.254")),
            "{proxy}: a refused target never reaches the upstream: {all:?}"
        );
    }
}

#[test]
fn fetch_takes_the_same_policy_on_its_http_step_through_a_redirect() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let private = FixtureServer::start_on("127.0.0.2");
    let hop = srv.url(&format!("/redirect/abs?to={}", private.url("/static")));
    let fetch = |extra: &[&str]| {
        fx.cmd()
            .args(["fetch", &hop, "--render", "none", "--timeout-ms", "10000"])
            .arg("--out")
            .arg(fx.path().join(format!("out-{}", fastrand::u64(..))))
            .args(extra)
            .run()
    };
    // Off unless asked for: the CLI is the user's own hand.
    assert_eq!(fetch(&[]).fetch().status, 200);
    assert_eq!(private.hits("/static"), 1);
    let run = fetch(&["--deny-private-networks", "--egress-allow", "127.0.0.1"]);
    let e = run.error("egress_denied", 1);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("127.0.0.2 is loopback"),
        "{}",
        run.context
    );
    // The environment twin, with the exception from its own variable.
    let run = fx
        .cmd()
        .args(["fetch", &hop, "--render", "none"])
        .arg("--out")
        .arg(fx.path().join("out-env"))
        .env("AFHTTP_DENY_PRIVATE_NETWORKS", "1")
        .env("AFHTTP_EGRESS_ALLOW", "127.0.0.1")
        .run();
    run.error("egress_denied", 1);
    assert_eq!(private.hits("/static"), 1, "the refused hop was never sent");
    assert!(srv.hits("/redirect/abs") >= 3);
}
