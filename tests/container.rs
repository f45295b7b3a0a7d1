//! `afhttp container` against a real Docker engine: build, install, discovery, restart and
//! reinstall with a persistent profile, status, logs, uninstall --purge.

use crate::support::deadline::CommandDeadline;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::docker::{rt, Engine};
use crate::support::routes_takeover::{BLOCK_RGB, GATE_CONTENT, GATE_PHRASE};
use crate::support::{free_port, wait_for, Cmd, Fixture, FixtureServer, Run};
use crate::takeover_fetch::run_printed;

fn cmd(fx: &Fixture, engine: &Engine) -> Cmd {
    fx.cmd().env("DOCKER_HOST", &engine.host)
}

fn install(fx: &Fixture, engine: &Engine, base: &str, port: u16) -> Run {
    cmd(fx, engine)
        .args(["container", "install", "--browser", "chromium"])
        .args(["--takeover-provider", "novnc", "--base-image", base])
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
    wait_healthy("the discovered host", Duration::from_secs(90), || {
        cmd(fx, engine).arg("health").run()
    });
}

/// Poll `health` (an `afhttp health` run) until it says ok; panics after `limit`.
fn wait_healthy(what: &str, limit: Duration, health: impl Fn() -> Run) {
    let deadline = Instant::now() + limit;
    loop {
        let h = health();
        if h.status == 0 && h.event["result"]["status"] == "ok" {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what} never healthy\n{}",
            h.context
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
    assert_eq!(f.result()["status"], 200, "{}", f.context);
    let echo = server.url("/cookies/echo");
    let seen = |fx: &Fixture| -> String {
        let f = fetch_in_profile(fx, &engine, &echo);
        assert_eq!(f.result()["status"], 200, "{}", f.context);
        f.artifact_text("body_file")
    };
    assert!(seen(&fx).contains("keep=yes"));
    // The image turns the egress policy on: cloud metadata is refused, the bridge is not.
    let metadata = fetch_in_profile(&fx, &engine, "http://169.254.169.254/latest/meta-data/");
    metadata.error("egress_denied", 1);

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

    // SIGKILL (no graceful stop: the browser's profile and the token file are left as the
    // kernel found them), then start again.
    let started_before = rt().block_on(async {
        let docker = engine.docker().await;
        let before = docker
            .inspect_container("afhttp-host", None)
            .await
            .unwrap()
            .state
            .and_then(|s| s.started_at);
        docker
            .kill_container(
                "afhttp-host",
                Some(bollard::query_parameters::KillContainerOptions {
                    signal: "KILL".into(),
                }),
            )
            .await
            .unwrap();
        // `unless-stopped` may already be restarting it; a start of a running one is a no-op.
        let _ = docker
            .start_container(
                "afhttp-host",
                None::<bollard::query_parameters::StartContainerOptions>,
            )
            .await;
        before
    });
    wait_discovered_healthy(&fx, &engine);
    let started_after = rt().block_on(async {
        let docker = engine.docker().await;
        let c = docker.inspect_container("afhttp-host", None).await.unwrap();
        c.state.and_then(|s| s.started_at)
    });
    assert_ne!(
        started_after, started_before,
        "the container was not killed"
    );
    assert_eq!(token(&fx, &engine), token_before, "SIGKILL keeps the token");
    assert!(
        seen(&fx).contains("keep=yes"),
        "cookie lost across a SIGKILL"
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

    takeover_through_discovery(&fx, &engine, &server, port);

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
    // Unprivileged, no capabilities, no privilege gain (install's defaults).
    let status = engine.exec_output("afhttp-host", &["/bin/cat", "/proc/1/status"]);
    for line in [
        "Uid:\t1000\t1000\t1000\t1000",
        "CapEff:\t0000000000000000",
        "NoNewPrivs:\t1",
    ] {
        assert!(status.contains(line), "{line:?} not in {status}");
    }

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
    let mut follower = std::process::Command::new(env!("CARGO_BIN_EXE_afhttp"))
        .env("DOCKER_HOST", &engine.host)
        .args(["container", "logs", "--raw", "--follow", "--tail", "2"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The two tail lines arrive on the same stream as what follows, so once they are in,
    // the follower is attached and the stop below is streamed to it.
    let streamed = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let reader = {
        let streamed = std::sync::Arc::clone(&streamed);
        let stderr = follower.stderr.take().unwrap();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                streamed.lock().unwrap().push(line);
            }
        })
    };
    wait_for("the follower's tail lines", Duration::from_secs(30), || {
        streamed.lock().unwrap().len() >= 2
    });

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
    reader.join().unwrap();
    let streamed = streamed.lock().unwrap().join("\n");
    assert!(streamed.contains("shutting down"), "{streamed}");
    let stopped = cmd(&fx, &engine).arg("health").run();
    stopped.error("host_unreachable", 1);

    compose_up_on_the_built_image(&fx, &engine);
    read_only_root_still_works(&fx, &engine, &server);

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

/// `fetch --takeover` with no endpoint: the discovered container's browser meets the gate, a
/// separate headless Chromium opens the takeover URL and sees that browser (its colour block)
/// and types the pass phrase; the printed command, run as printed, discovers the container
/// again and returns the content.
fn takeover_through_discovery(fx: &Fixture, engine: &Engine, server: &FixtureServer, port: u16) {
    let gate = server.url("/takeover-fixture/gate");
    let first = cmd(fx, engine)
        .args(["fetch", &gate, "--takeover", "--timeout-ms", "60000"])
        .run();
    let next = &first.result()["next_action"];
    assert_eq!(next["kind"], "human_takeover", "{}", first.context);
    let url = next["takeover_url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("http://127.0.0.1:{port}/takeover/panel?handoff=")),
        "{url}"
    );
    let command = next["recommended_command"].as_str().unwrap().to_string();
    assert!(
        !command.contains("--endpoint-url"),
        "discovery, not an endpoint: {command}"
    );
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/playwright");
    let (r, g, b) = BLOCK_RGB;
    let shot = fx.path().join("container-panel.png");
    let out = Command::new("node")
        .current_dir(dir)
        .args(["takeover.mjs", url, &format!("{r},{g},{b}"), GATE_PHRASE])
        .arg(&shot)
        .output_within(Duration::from_secs(300))
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|_| panic!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(v["ok"], true, "{v}");
    assert!(
        v["colour_fraction"].as_f64().unwrap() > 0.1,
        "the panel does not show the container's browser: {v}"
    );
    eprintln!("container: panel connect {} ms", v["connect_ms"]);
    let again = run_printed(fx, &command, &[("DOCKER_HOST", engine.host.as_str())]);
    assert_eq!(again["kind"], "result", "{again}");
    assert!(again["result"]["next_action"].is_null(), "{again}");
    let content = std::fs::read_to_string(again["result"]["content_file"].as_str().unwrap());
    assert!(content.unwrap().contains(GATE_CONTENT), "{again}");
}

/// `compose.yaml` is valid for Debian's docker-compose and runs the image `container
/// install` built, healthy, under its own project; then it is taken down with its volume.
fn compose_up_on_the_built_image(fx: &Fixture, engine: &Engine) {
    let port = free_port();
    let token = "compose-test-token-0123456789";
    let compose = |args: &[&str]| {
        let out = Command::new("docker-compose")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("DOCKER_HOST", &engine.host)
            .env("COMPOSE_PROJECT_NAME", "afhttp-compose-test")
            .env(
                "AFHTTP_IMAGE",
                format!("afhttp-host:{}", env!("CARGO_PKG_VERSION")),
            )
            .env("AFHTTP_PORT", port.to_string())
            .env("AFHTTP_TOKEN_SECRET", token)
            .args(args)
            .output_within(Duration::from_secs(300))
            .expect("docker-compose is not installed (scripts/test.sh installs it)");
        assert!(
            out.status.success(),
            "docker-compose {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let config = compose(&["config"]);
    assert!(config.contains("shm_size"), "{config}");
    compose(&["up", "-d", "--no-build"]);
    let endpoint = format!("ws://127.0.0.1:{port}");
    let auth = ["--endpoint-url", endpoint.as_str(), "--token-secret", token];
    wait_healthy("the compose host", Duration::from_secs(60), || {
        fx.cmd().arg("health").args(auth).run()
    });
    compose(&["down", "-v"]);
}

/// The image with a read-only root filesystem (only `/data` and a tmpfs `/tmp` writable),
/// no capabilities and no privilege gain still starts, renders, and keeps a persistent
/// profile.
fn read_only_root_still_works(fx: &Fixture, engine: &Engine, server: &FixtureServer) {
    use bollard::models::{ContainerCreateBody, HostConfig, PortBinding};
    use std::collections::HashMap;
    let port = free_port();
    let token = "read-only-root-token-0123456789";
    let name = "afhttp-read-only-test";
    let ports = HashMap::from([(
        "9222/tcp".to_string(),
        Some(vec![PortBinding {
            host_ip: Some("127.0.0.1".into()),
            host_port: Some(port.to_string()),
        }]),
    )]);
    rt().block_on(async {
        let docker = engine.docker().await;
        let body = ContainerCreateBody {
            image: Some(format!("afhttp-host:{}", env!("CARGO_PKG_VERSION"))),
            env: Some(vec![format!("AFHTTP_TOKEN_SECRET={token}")]),
            host_config: Some(HostConfig {
                readonly_rootfs: Some(true),
                tmpfs: Some(HashMap::from([("/tmp".to_string(), String::new())])),
                binds: Some(vec![format!("{name}-data:/data")]),
                cap_drop: Some(vec!["ALL".into()]),
                security_opt: Some(vec!["no-new-privileges".into()]),
                shm_size: Some(2 * 1024 * 1024 * 1024),
                port_bindings: Some(ports),
                ..Default::default()
            }),
            ..Default::default()
        };
        let options = bollard::query_parameters::CreateContainerOptions {
            name: Some(name.into()),
            ..Default::default()
        };
        let c = docker.create_container(Some(options), body).await.unwrap();
        docker.start_container(&c.id, None).await.unwrap();
    });
    let endpoint = format!("ws://127.0.0.1:{port}");
    let auth = ["--endpoint-url", endpoint.as_str(), "--token-secret", token];
    wait_healthy("the read-only host", Duration::from_secs(60), || {
        fx.cmd().arg("health").args(auth).run()
    });
    let f = fx
        .cmd()
        .args([
            "fetch",
            &server.url("/static"),
            "--profile",
            "work",
            "--render",
            "always",
        ])
        .args(["--want", "body,screenshot", "--timeout-ms", "60000"])
        .args(auth)
        .run();
    assert_eq!(f.result()["status"], 200, "{}", f.context);
    assert!(
        std::fs::metadata(f.artifact_path("screenshot_file"))
            .unwrap()
            .len()
            > 1000
    );
    let profiles = engine.exec_output(name, &["/bin/ls", "/data/afhttp/profiles/chromium"]);
    assert!(profiles.contains("work"), "{profiles}");
    rt().block_on(async {
        let docker = engine.docker().await;
        let force = bollard::query_parameters::RemoveContainerOptions {
            force: true,
            ..Default::default()
        };
        docker.remove_container(name, Some(force)).await.unwrap();
        docker
            .remove_volume(
                &format!("{name}-data"),
                None::<bollard::query_parameters::RemoveVolumeOptions>,
            )
            .await
            .unwrap();
    });
}
