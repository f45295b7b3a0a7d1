//! `afhttp container` against a real Docker engine: build, install, discovery, restart and
//! reinstall with a persistent profile, status, logs, uninstall --purge.
//!
//! One engine and one installed container carry the whole lifecycle (a build is minutes), so
//! the lifecycle is one test whose phases live in the files beside this one.

mod images;
mod inside;
mod survival;

use std::time::Duration;

use crate::support::docker::{rt, Engine};
use crate::support::{free_port, Cmd, Fixture, FixtureServer, Run};

pub(super) fn cmd(fx: &Fixture, engine: &Engine) -> Cmd {
    fx.cmd().env("DOCKER_HOST", &engine.host)
}

pub(super) fn install(fx: &Fixture, engine: &Engine, base: &str, port: u16) -> Run {
    cmd(fx, engine)
        .args(["container", "install", "--browser", "chromium"])
        .args(["--takeover-provider", "novnc", "--base-image", base])
        .args(["--port", &port.to_string()])
        .run()
}

pub(super) fn token(fx: &Fixture, engine: &Engine) -> String {
    let r = cmd(fx, engine)
        .args(["container", "status", "--reveal-token-secret"])
        .run();
    let t = r.result()["token_secret"]
        .as_str()
        .unwrap_or("")
        .to_string();
    assert_eq!(t.len(), 64, "{}", r.context);
    t
}

/// A fetch through the discovered host's browser, in the persistent profile `work`.
pub(super) fn fetch_in_profile(fx: &Fixture, engine: &Engine, url: &str) -> Run {
    cmd(fx, engine)
        .args(["fetch", url, "--profile", "work", "--render", "always"])
        .args(["--want", "body", "--no-cookie-jar", "--timeout-ms", "60000"])
        .run()
}

pub(super) fn wait_discovered_healthy(fx: &Fixture, engine: &Engine) {
    wait_healthy("the discovered host", Duration::from_secs(90), || {
        cmd(fx, engine).arg("health").run()
    });
}

/// Poll `health` (an `afhttp health` run) until it says ok; panics after `limit`.
pub(super) fn wait_healthy(what: &str, limit: Duration, health: impl Fn() -> Run) {
    let mut last = String::new();
    let healthy = crate::support::wait_until(limit, || {
        let h = health();
        last = h.context.clone();
        h.status == 0 && h.event["result"]["status"] == "ok"
    });
    assert!(healthy, "{what} never healthy\n{last}");
}

#[test]
fn container_lifecycle_with_discovery_and_persistent_profile() {
    let engine = Engine::start();
    let base = engine.base_image();
    let fx = Fixture::new();
    // A leftover from an interrupted run must not decide this one.
    cmd(&fx, &engine)
        .args(["container", "uninstall", "--purge", "--yes"])
        .run()
        .result();

    // A failing build step fails the command with the step's error and the log tail.
    let broken = cmd(&fx, &engine)
        .args([
            "container",
            "build",
            "--browser",
            "chromium",
            "--takeover-provider",
            "off",
        ])
        .args(["--base-image", &engine.shell_less_image()])
        .run();
    let e = broken.error("io_error", 1);
    let msg = e["message"].as_str().unwrap();
    assert!(
        msg.contains("image build failed") && msg.contains("last build output"),
        "{msg}"
    );
    assert_eq!(broken.stdout.lines().count(), 1, "{}", broken.context);

    // An older managed container (another version) is refused by drivers, then replaced.
    let port = free_port();
    images::start_stale_container(&engine, &base, port);
    let stale = cmd(&fx, &engine).arg("health").run();
    let e = stale.error("host_version_mismatch", 1);
    assert!(e["hint"].as_str().unwrap().contains("container install"));

    let run = install(&fx, &engine, &base, port);
    let r = run.result();
    assert_eq!(
        r["endpoint_url"],
        format!("ws://127.0.0.1:{port}"),
        "{}",
        run.context
    );
    assert_eq!(r["host_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        r["token_secret"], "***",
        "the token is revealed only on request"
    );
    assert_eq!(r["takeover"]["provider"], "novnc", "{}", run.context);
    assert_eq!(r["takeover"]["ready"], true, "{}", run.context);
    assert_eq!(r["image_built"], true);
    eprintln!(
        "container: build_ms={} install_to_healthy_ms={}",
        r["build_ms"], r["install_to_healthy_ms"]
    );

    // Driver commands find the container with no endpoint and say so in the trace.
    for argv in [
        vec!["health"],
        vec!["capabilities"],
        vec!["cdp", "Browser.getVersion"],
        vec!["tabs", "list"],
    ] {
        let run = cmd(&fx, &engine).args(&argv).run();
        run.result();
        assert_eq!(
            run.event["trace"]["endpoint_source"], "container",
            "{}",
            run.context
        );
    }
    let v = cmd(&fx, &engine).args(["cdp", "Browser.getVersion"]).run();
    assert!(v.result()["result"]["product"]
        .as_str()
        .unwrap()
        .contains("Chrome"));

    // The container's browser reaches a fixture on the bridge gateway; a persistent cookie
    // set in profile `work` must survive an engine restart and a reinstall.
    let server = FixtureServer::start_on(&engine.bridge_gateway());
    let set = server.url("/cookies/set-raw?h=keep%3Dyes%3B%20Path%3D%2F%3B%20Max-Age%3D86400");
    let f = fetch_in_profile(&fx, &engine, &set);
    assert_eq!(f.fetch().status, 200, "{}", f.context);
    let echo = server.url("/cookies/echo");
    let seen = |fx: &Fixture| -> String {
        let f = fetch_in_profile(fx, &engine, &echo);
        assert_eq!(f.fetch().status, 200, "{}", f.context);
        f.artifact_text("body_file")
    };
    assert!(seen(&fx).contains("keep=yes"));
    // The image turns the egress policy on: cloud metadata is refused, the bridge is not.
    let metadata = fetch_in_profile(&fx, &engine, "http://169.254.169.254/latest/meta-data/");
    metadata.error("egress_denied", 1);

    let token_before = survival::restart_kill_and_reinstall(&fx, &engine, &base, port, &seen);
    images::takeover_through_discovery(&fx, &engine, &server, port);
    inside::init_reaps_and_runs_unprivileged(&engine);
    inside::status_and_logs_hide_the_token(&fx, &engine, port, &token_before);
    inside::follower_streams_until_the_stop(&fx, &engine);

    images::compose_up_on_the_built_image(&fx, &engine);
    images::read_only_root_still_works(&fx, &engine, &server);

    // --purge needs --yes; then nothing is left.
    cmd(&fx, &engine)
        .args(["container", "uninstall", "--purge"])
        .run()
        .error("invalid_argument", 1);
    let gone = cmd(&fx, &engine)
        .args(["container", "uninstall", "--purge", "--yes"])
        .run();
    let g = gone.result();
    assert_eq!(g["container_removed"], true);
    assert_eq!(g["image_removed"], true);
    assert_eq!(g["volume_removed"], true);
    rt().block_on(async {
        let docker = engine.docker().await;
        assert!(docker.inspect_container("afhttp-host", None).await.is_err());
        let image = format!("afhttp-host:{}", env!("CARGO_PKG_VERSION"));
        assert!(docker.inspect_image(&image).await.is_err());
        assert!(docker.inspect_volume("afhttp-host-data").await.is_err());
    });
    let after = cmd(&fx, &engine).args(["container", "status"]).run();
    assert_eq!(after.result()["installed"], false);
}

#[test]
fn unreachable_engine_is_one_json_error() {
    let fx = Fixture::new();
    for host in [
        "unix:///nonexistent/afhttp-test/docker.sock",
        "tcp://127.0.0.1:1",
    ] {
        let r = fx
            .cmd()
            .env("DOCKER_HOST", host)
            .args(["container", "status"])
            .run();
        let e = r.error("container_engine_unavailable", 1);
        assert!(
            e["hint"].as_str().unwrap().contains("DOCKER_HOST"),
            "{}",
            r.context
        );
        assert_eq!(r.stdout.lines().count(), 1, "{}", r.context);
    }
    // Driver commands without an endpoint and without an engine explain both ways out.
    let r = fx
        .cmd()
        .env("DOCKER_HOST", "unix:///nonexistent/afhttp-test/docker.sock")
        .arg("health")
        .run();
    let e = r.error("invalid_endpoint", 1);
    assert!(e["hint"].as_str().unwrap().contains("container install"));
}
