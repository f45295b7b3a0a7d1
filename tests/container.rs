//! `afhttp container` against a real Docker engine: build, install, discovery, restart and
//! reinstall with a persistent profile, status, logs, uninstall --purge.

use std::time::{Duration, Instant};

use crate::support::docker::{rt, Engine};
use crate::support::{Cmd, Fixture, FixtureServer, Run};

fn cmd(fx: &Fixture, engine: &Engine) -> Cmd {
    fx.cmd().env("DOCKER_HOST", &engine.host)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn install(fx: &Fixture, engine: &Engine, base: &str, port: u16) -> Run {
    cmd(fx, engine)
        .args(["container", "install", "--browser", "chromium"])
        .args(["--takeover-provider", "off", "--base-image", base])
        .args(["--port", &port.to_string()])
        .run()
}

fn token(fx: &Fixture, engine: &Engine) -> String {
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
fn fetch_in_profile(fx: &Fixture, engine: &Engine, url: &str) -> Run {
    cmd(fx, engine)
        .args(["fetch", url, "--profile", "work", "--render", "always"])
        .args(["--want", "body", "--no-cookie-jar", "--timeout-ms", "60000"])
        .run()
}

fn wait_discovered_healthy(fx: &Fixture, engine: &Engine) {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let r = cmd(fx, engine).arg("health").run();
        if r.status == 0 && r.event["result"]["status"] == "ok" {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "never healthy again\n{}",
            r.context
        );
        std::thread::sleep(Duration::from_millis(500));
    }
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
    start_stale_container(&engine, &base, port);
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
    assert_eq!(r["takeover"]["provider"], "off");
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
    assert_eq!(f.result()["status"], 200, "{}", f.context);
    let echo = server.url("/cookies/echo");
    let seen = |fx: &Fixture| -> String {
        let f = fetch_in_profile(fx, &engine, &echo);
        assert_eq!(f.result()["status"], 200, "{}", f.context);
        f.artifact_text("body_file")
    };
    assert!(seen(&fx).contains("keep=yes"));

    let token_before = token(&fx, &engine);
    rt().block_on(async {
        let docker = engine.docker().await;
        docker
            .restart_container(
                "afhttp-host",
                None::<bollard::query_parameters::RestartContainerOptions>,
            )
            .await
            .unwrap();
    });
    wait_discovered_healthy(&fx, &engine);
    assert_eq!(token(&fx, &engine), token_before, "restart keeps the token");
    assert!(
        seen(&fx).contains("keep=yes"),
        "cookie lost across a restart"
    );

    let again = install(&fx, &engine, &base, port);
    assert_eq!(again.result()["image_built"], false, "{}", again.context);
    assert_eq!(
        token(&fx, &engine),
        token_before,
        "reinstall keeps the token"
    );
    assert!(
        seen(&fx).contains("keep=yes"),
        "cookie lost across a reinstall"
    );

    // `afhttp host` as PID 1 is a reaping init (src/host/init.rs): the browsers stopped by
    // the profile switches leave orphans, and none of them may linger as a zombie.
    let zombies = || {
        let script = "grep -l '^State:.*Z' /proc/[0-9]*/status 2>/dev/null | wc -l";
        engine.exec_output("afhttp-host", &["/bin/sh", "-c", script])
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    while zombies().trim() != "0" {
        assert!(
            Instant::now() < deadline,
            "zombies in the container: {}",
            zombies()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let pid1 = engine.exec_output("afhttp-host", &["/bin/cat", "/proc/1/cmdline"]);
    assert!(pid1.starts_with("/usr/local/bin/afhttp\0host"), "{pid1:?}");

    let status = cmd(&fx, &engine).args(["container", "status"]).run();
    let s = status.result();
    assert_eq!(s["installed"], true);
    assert_eq!(s["running"], true);
    assert_eq!(s["container"]["port"], port);
    assert_eq!(s["version_matches"], true);
    assert!(s.get("token_secret").is_none());

    let logs = cmd(&fx, &engine).args(["container", "logs"]).run();
    let summary = &logs.result()["summary"];
    assert!(
        summary["host_ready_count"].as_u64().unwrap() >= 1,
        "{}",
        logs.context
    );
    assert!(
        summary["levels"]["info"].as_u64().unwrap() >= 1,
        "{}",
        logs.context
    );
    let raw = cmd(&fx, &engine)
        .args(["container", "logs", "--raw", "--tail", "5"])
        .run();
    assert!(raw.result()["lines"].as_array().unwrap().len() <= 5);
    // The token appears in none of this output unless revealed (docs/security.md).
    let all_logs = cmd(&fx, &engine).args(["container", "logs", "--raw"]).run();
    for run in [&status, &logs, &raw, &all_logs] {
        for out in [&run.stdout, &run.stderr] {
            assert!(
                !out.contains(&token_before),
                "token leaked: {}",
                run.context
            );
        }
    }

    // A follower streams raw lines to stderr until the container goes away.
    let follower = std::process::Command::new(env!("CARGO_BIN_EXE_afhttp"))
        .env("DOCKER_HOST", &engine.host)
        .args(["container", "logs", "--raw", "--follow", "--tail", "2"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(1));

    // SIGTERM (a stop) goes through the init to the host, which exits 0.
    rt().block_on(async {
        let docker = engine.docker().await;
        docker
            .stop_container(
                "afhttp-host",
                None::<bollard::query_parameters::StopContainerOptions>,
            )
            .await
            .unwrap();
        let state = docker
            .inspect_container("afhttp-host", None)
            .await
            .unwrap()
            .state
            .unwrap();
        assert_eq!(state.exit_code, Some(0), "{state:?}");
    });
    let out = wait_output(follower, Duration::from_secs(30));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let followed: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(followed["result"]["followed"], true, "{stdout}");
    assert!(
        followed["result"]["lines_streamed"].as_u64().unwrap() >= 2,
        "{stdout}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("shutting down"));
    let stopped = cmd(&fx, &engine).arg("health").run();
    stopped.error("host_unreachable", 1);

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

fn wait_output(mut child: std::process::Child, limit: Duration) -> std::process::Output {
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("`container logs --follow` did not end with the container");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.wait_with_output().unwrap()
}

/// A managed-looking container claiming another afhttp version (it only sleeps).
fn start_stale_container(engine: &Engine, base: &str, port: u16) {
    use bollard::models::ContainerCreateBody;
    use std::collections::HashMap;
    let labels: HashMap<String, String> = [
        ("afhttp.managed", "true"),
        ("afhttp.version", "0.0.0-old"),
        ("afhttp.port", &port.to_string()),
        ("afhttp.takeover", "off"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    rt().block_on(async {
        let docker = engine.docker().await;
        let body = ContainerCreateBody {
            image: Some(base.into()),
            // Exits on SIGTERM (a bare `sleep` as PID 1 would wait out the stop grace).
            cmd: Some(vec![
                "/bin/sh".into(),
                "-c".into(),
                "trap 'exit 0' TERM; sleep 600 & wait".into(),
            ]),
            labels: Some(labels),
            ..Default::default()
        };
        let options = bollard::query_parameters::CreateContainerOptions {
            name: Some("afhttp-host".into()),
            ..Default::default()
        };
        let c = docker.create_container(Some(options), body).await.unwrap();
        docker.start_container(&c.id, None).await.unwrap();
    });
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
