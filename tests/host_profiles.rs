//! Profiles on `afhttp host`: a persistent profile is locked while a host holds it and
//! released at exit; switching profiles at runtime and separate hosts keep cookies apart.

use crate::support::{Fixture, FixtureServer, HostProc};

#[test]
fn persistent_profile_is_locked_and_released() {
    let fx = Fixture::new();
    let mut first = HostProc::start(
        &fx,
        &["--listen", "tcp:127.0.0.1:0", "--profile", "work"],
        &[],
    );
    let run = fx
        .cmd()
        .env("AFHTTP_NO_SANDBOX", "1")
        .args(["host", "--listen", "tcp:127.0.0.1:0", "--profile", "work"])
        .run();
    let e = run.failure("profile_locked", 1);
    assert!(
        e.message.as_str().contains(&first.child.id().to_string()),
        "{e:?}"
    );
    let status = fx.cmd().args(["profile", "lock-status", "work"]).run();
    assert_eq!(status.result()["locked"], true);
    assert_eq!(first.terminate().0, 0);
    let status = fx.cmd().args(["profile", "lock-status", "work"]).run();
    assert_eq!(status.result()["locked"], false);
    assert!(fx
        .data
        .join("afhttp/profiles/chromium/work/afhttp-profile.json")
        .exists());
}

#[test]
fn runtime_profile_switching_keeps_profiles_apart() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let mut host = HostProc::start(
        &fx,
        &["--listen", "tcp:127.0.0.1:0", "--profile", "alpha"],
        &[],
    );
    let ep = host.endpoint.clone();
    let fetch_text = |profile: &str, path: &str| -> String {
        let run = fx
            .cmd()
            .args([
                "fetch",
                &srv.url(path),
                "--endpoint-url",
                &ep,
                "--profile",
                profile,
                "--want",
                "text",
            ])
            .run();
        assert_eq!(
            run.event["trace"]["render"]["escalation_reason"]["code"],
            "profile_requested"
        );
        run.artifact_text("text_file")
    };
    // A persistent cookie (a session cookie rightly dies with the browser on a switch).
    fetch_text(
        "alpha",
        "/cookies/set-raw?h=who%3Dalpha%3B%20Path%3D%2F%3B%20Max-Age%3D3600",
    );
    assert!(fetch_text("alpha", "/cookies/echo").contains("who=alpha"));
    // Another profile: a relaunched browser with none of alpha's cookies.
    assert!(!fetch_text("beta", "/cookies/echo").contains("who=alpha"));
    let h = fx.cmd().args(["health", "--endpoint-url", &ep]).run();
    assert_eq!(h.result()["profile"]["name"], "beta");
    assert_eq!(
        fx.cmd()
            .args(["profile", "lock-status", "alpha"])
            .run()
            .result()["locked"],
        false
    );
    assert_eq!(
        fx.cmd()
            .args(["profile", "lock-status", "beta"])
            .run()
            .result()["locked"],
        true
    );
    // Back to alpha: its cookie survived the switch on disk.
    assert!(fetch_text("alpha", "/cookies/echo").contains("who=alpha"));
    let bad = fx
        .cmd()
        .args([
            "fetch",
            &srv.url("/"),
            "--endpoint-url",
            &ep,
            "--profile",
            "../etc",
        ])
        .run();
    bad.error("profile_invalid_name", 1);
    assert_eq!(host.terminate().0, 0);
}

#[test]
fn two_hosts_with_different_profiles_share_no_cookies() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let mut one = HostProc::start(
        &fx,
        &["--listen", "tcp:127.0.0.1:0", "--profile", "one"],
        &[],
    );
    let mut two = HostProc::start(
        &fx,
        &["--listen", "tcp:127.0.0.1:0", "--profile", "two"],
        &[],
    );
    let text = |ep: &str, path: &str| -> String {
        let run = fx
            .cmd()
            .args([
                "fetch",
                &srv.url(path),
                "--endpoint-url",
                ep,
                "--render",
                "always",
                "--want",
                "text",
            ])
            .run();
        run.artifact_text("text_file")
    };
    text(
        &one.endpoint,
        "/cookies/set-raw?h=only%3Done%3B%20Path%3D%2F%3B%20Max-Age%3D3600",
    );
    assert!(text(&one.endpoint, "/cookies/echo").contains("only=one"));
    assert!(!text(&two.endpoint, "/cookies/echo").contains("only=one"));
    assert_eq!(one.terminate().0, 0);
    assert_eq!(two.terminate().0, 0);
}
