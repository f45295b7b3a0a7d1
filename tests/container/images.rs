//! The built image beyond the managed container: a stale managed container it replaces,
//! takeover through discovery, `compose.yaml`, and a read-only root filesystem.

use crate::support::deadline::CommandDeadline;
use std::process::Command;
use std::time::Duration;

use super::{cmd, wait_healthy};
use crate::support::docker::{rt, Engine};
use crate::support::routes_takeover::{BLOCK_RGB, GATE_CONTENT, GATE_PHRASE};
use crate::support::{free_port, Fixture, FixtureServer};
use crate::takeover_fetch::run_printed;

/// A managed-looking container claiming another afhttp version (it only sleeps).
pub(super) fn start_stale_container(engine: &Engine, base: &str, port: u16) {
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

/// `fetch --takeover` with no endpoint: the discovered container's browser meets the gate, a
/// separate headless Chromium opens the takeover URL and sees that browser (its colour block)
/// and types the pass phrase; the printed command, run as printed, discovers the container
/// again and returns the content.
pub(super) fn takeover_through_discovery(
    fx: &Fixture,
    engine: &Engine,
    server: &FixtureServer,
    port: u16,
) {
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
pub(super) fn compose_up_on_the_built_image(fx: &Fixture, engine: &Engine) {
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
pub(super) fn read_only_root_still_works(fx: &Fixture, engine: &Engine, server: &FixtureServer) {
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
    assert_eq!(f.fetch().status, 200, "{}", f.context);
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
