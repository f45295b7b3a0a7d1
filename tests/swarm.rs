//! `deploy/swarm/` on a real single-node swarm: the private dockerd the container tests start,
//! the image they build. One test walks the scenario: 3 replicas healthy; 60 fetches with 3
//! persistent profiles and ephemeral pages; scale to 4 with every profile kept in place; a
//! replica's container killed with zero failed ephemeral fetches and its profile intact;
//! a takeover link through the fleet that opens that replica's panel in a real browser;
//! `docker stack rm` leaving no container.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::deadline::output_within;
use crate::support::docker::Engine;
use crate::support::routes_takeover::{BLOCK_RGB, GATE_PHRASE};
use crate::support::{wait_for, Fixture, FixtureServer, Run};

const STACK: &str = "afhttp-fleet-test";
const TOKEN: &str = "swarm-fleet-token-0123456789abcdef";
const PROFILES: [&str; 3] = ["p-one", "p-two", "p-three"];

/// `docker ARGS` on the test engine (bounded); stdout.
fn docker(engine: &Engine, args: &[&str]) -> String {
    let out = output_within(
        Command::new("docker")
            .env("DOCKER_HOST", &engine.host)
            .args(args),
        Duration::from_secs(180),
    );
    assert!(
        out.status.success(),
        "docker {args:?}:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// The stack for `n` replicas from deploy/swarm/stack.sh, written into `dir`, with its default
/// health check as users deploy it: a 2 s interval (3 retries) let swarm replace a replica whose
/// probes were slow for a few seconds on a loaded machine, which a profile fetch then met as an
/// unreachable member.
fn stack_file(dir: &Path, n: usize, port: u16, token_file: &Path) -> std::path::PathBuf {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/swarm/stack.sh");
    let out = output_within(
        Command::new("sh")
            .arg(script)
            .arg(n.to_string())
            .arg(port.to_string())
            .env("AFHTTP_TOKEN_FILE", token_file),
        Duration::from_secs(20),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = dir.join(format!("stack-{n}.yml"));
    std::fs::write(&path, &out.stdout).unwrap();
    path
}

fn fleet_spec(n: usize, port: u16) -> String {
    (1..=n)
        .map(|i| format!("afhttp-{i}=ws://127.0.0.1:{}", port + i as u16 - 1))
        .collect::<Vec<_>>()
        .join(",")
}

/// A run of `port..port+5` that nothing listens on now.
fn free_ports() -> u16 {
    (0..200)
        .map(|i| 20_000 + (std::process::id() as u16 % 200) * 50 + i * 7)
        .find(|p| (0..5).all(|k| std::net::TcpListener::bind(("0.0.0.0", p + k)).is_ok()))
        .expect("no free port range")
}

fn cmd(fx: &Fixture, engine: &Engine) -> crate::support::Cmd {
    fx.cmd().env("DOCKER_HOST", &engine.host)
}

/// A fetch through the fleet. Retries (on the same member: a persistent profile is never run
/// elsewhere) cover a host that answers 503 for a moment right after a profile switch.
fn fetch(fx: &Fixture, engine: &Engine, fleet: &str, url: &str, extra: &[&str]) -> Run {
    let r = fx
        .cmd()
        .args(["fetch", url, "--fleet", fleet, "--token-secret", TOKEN])
        .args(["--retry", "2", "--backoff-ms", "500"])
        .args(["--render", "always", "--want", "body", "--no-cookie-jar"])
        .args(["--timeout-ms", "90000"])
        .args(extra)
        .run();
    if r.status != 0 {
        eprintln!("{}", stack_diagnosis(engine));
    }
    r
}

/// What swarm knows about the stack's tasks (restarts, health failures, exit codes) and the
/// tail of each service's log: printed when a fetch fails, so a failure says why a replica
/// went away.
fn stack_diagnosis(engine: &Engine) -> String {
    let run = |args: &[&str]| {
        let out = output_within(
            Command::new("docker")
                .env("DOCKER_HOST", &engine.host)
                .args(args),
            Duration::from_secs(60),
        );
        format!(
            "$ docker {}\n{}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    let mut report = run(&["stack", "ps", "--no-trunc", STACK]);
    report += &run(&["ps", "-a", "--no-trunc"]);
    let services = run(&["stack", "services", "--format", "{{.Name}}", STACK]);
    for service in services.lines().skip(1).filter(|l| l.starts_with(STACK)) {
        report += &run(&["service", "logs", "--tail", "40", "--timestamps", service]);
    }
    report
}

fn status(fx: &Fixture, fleet: &str) -> Value {
    let r = fx
        .cmd()
        .args(["fleet", "status", "--fleet", fleet, "--token-secret", TOKEN])
        .run();
    r.result().clone()
}

fn wait_all_healthy(fx: &Fixture, fleet: &str, n: usize) {
    let mut last = Value::Null;
    let ok = crate::support::wait_until(Duration::from_secs(240), || {
        last = status(fx, fleet);
        last["members_healthy"] == n
    });
    assert!(ok, "not all {n} replicas became healthy: {last}");
}

fn member_of(r: &Run) -> String {
    r.event["trace"]["fleet"]["member"]
        .as_str()
        .unwrap_or_else(|| panic!("no fleet member in the trace\n{}", r.context))
        .to_string()
}

fn stack_containers(engine: &Engine) -> Vec<String> {
    docker(
        engine,
        &[
            "ps",
            "-aq",
            "--filter",
            &format!("label=com.docker.stack.namespace={STACK}"),
        ],
    )
    .lines()
    .map(str::to_string)
    .collect()
}

#[test]
fn swarm_fleet_scenario() {
    let started = Instant::now();
    let engine = Engine::start();
    let base = engine.base_image();
    let fx = Fixture::new();
    // The image the container tests build (the layer cache makes a rebuild quick).
    cmd(&fx, &engine)
        .args(["container", "build", "--browser", "chromium"])
        .args(["--takeover-provider", "novnc", "--base-image", &base])
        .run()
        .result();
    let gateway = engine.bridge_gateway();
    let info = docker(&engine, &["info", "--format", "{{.Swarm.LocalNodeState}}"]);
    if info.trim() != "active" {
        docker(&engine, &["swarm", "init", "--advertise-addr", &gateway]);
    }
    // A leftover stack from an interrupted run must not decide this one.
    let _ = output_within(
        Command::new("docker")
            .env("DOCKER_HOST", &engine.host)
            .args(["stack", "rm", STACK]),
        Duration::from_secs(120),
    );
    wait_for(
        "no leftover stack container",
        Duration::from_secs(60),
        || stack_containers(&engine).is_empty(),
    );
    for v in docker(&engine, &["volume", "ls", "-q"]).lines() {
        if v.starts_with(&format!("{STACK}_")) {
            let _ = docker(&engine, &["volume", "rm", "-f", v]);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token.secret");
    std::fs::write(&token_file, TOKEN).unwrap();
    let port = free_ports();
    let srv = FixtureServer::start_on(&gateway);
    let three = fleet_spec(3, port);

    // Deploy 3 replicas and wait until all are healthy.
    let s3 = stack_file(dir.path(), 3, port, &token_file);
    docker(
        &engine,
        &["stack", "deploy", "-c", s3.to_str().unwrap(), STACK],
    );
    wait_all_healthy(&fx, &three, 3);
    eprintln!("swarm: 3 replicas healthy after {:?}", started.elapsed());

    // 60 fetches: each profile sets its cookie once and reads it back; ephemeral pages see no
    // profile's cookie and spread over the replicas.
    let mut home: HashMap<&str, String> = HashMap::new();
    let mut ephemeral_members = HashSet::new();
    let mut count = 0;
    for p in PROFILES {
        let set = srv.url(&format!(
            "/cookies/set-raw?h=who%3D{p}%3B%20Path%3D%2F%3B%20Max-Age%3D86400"
        ));
        let r = fetch(&fx, &engine, &three, &set, &["--profile", p]);
        r.result();
        home.insert(p, member_of(&r));
        count += 1;
    }
    let echo = srv.url("/cookies/echo");
    while count < 60 {
        let p = PROFILES[count % 3];
        let r = fetch(&fx, &engine, &three, &echo, &["--profile", p]);
        let body = r.artifact_text("body_file");
        assert!(body.contains(&format!("who={p}")), "{p}: {body}");
        assert_eq!(member_of(&r), home[p], "{p} moved\n{}", r.context);
        let e = fetch(&fx, &engine, &three, &echo, &[]);
        let body = e.artifact_text("body_file");
        assert!(
            !body.contains("who="),
            "an ephemeral fetch saw a profile cookie: {body}"
        );
        ephemeral_members.insert(member_of(&e));
        count += 2;
    }
    assert_eq!(ephemeral_members.len(), 3, "{ephemeral_members:?}");
    let st = status(&fx, &three);
    for p in PROFILES {
        assert_eq!(st["profiles"][p], serde_json::json!([home[p]]), "{st}");
    }

    // Scale to 4: every existing profile stays on its member.
    let four = fleet_spec(4, port);
    let s4 = stack_file(dir.path(), 4, port, &token_file);
    docker(
        &engine,
        &["stack", "deploy", "-c", s4.to_str().unwrap(), STACK],
    );
    wait_all_healthy(&fx, &four, 4);
    let st = status(&fx, &four);
    for p in PROFILES {
        assert_eq!(st["profiles"][p], serde_json::json!([home[p]]), "{st}");
        let r = fetch(&fx, &engine, &four, &echo, &["--profile", p]);
        assert_eq!(member_of(&r), home[p]);
        assert_eq!(r.event["trace"]["fleet"]["reason"], "holds_profile");
    }

    // Kill the container of the replica holding p-one while ephemeral fetches keep running:
    // not one fails. Swarm replaces it; its profile is intact once it is healthy again.
    let victim = home["p-one"].clone();
    let service = format!("{STACK}_{victim}");
    let container = docker(
        &engine,
        &[
            "ps",
            "-q",
            "--filter",
            &format!("label=com.docker.swarm.service.name={service}"),
        ],
    );
    let container = container
        .lines()
        .next()
        .expect("the victim's container")
        .to_string();
    let stop = Arc::new(AtomicBool::new(false));
    let failures = Arc::new(Mutex::new(Vec::new()));
    let done = Arc::new(Mutex::new(0usize));
    let loader = {
        let (stop, failures, done) = (stop.clone(), failures.clone(), done.clone());
        let (four, echo) = (four.clone(), echo.clone());
        std::thread::spawn(move || {
            let fx = Fixture::new();
            while !stop.load(Ordering::SeqCst) {
                let r = fx
                    .cmd()
                    .args(["fetch", &echo, "--fleet", &four, "--token-secret", TOKEN])
                    .args(["--render", "always", "--want", "body", "--no-cookie-jar"])
                    .args(["--timeout-ms", "90000"])
                    .run();
                if r.status != 0 {
                    failures.lock().unwrap().push(r.context.clone());
                }
                *done.lock().unwrap() += 1;
            }
        })
    };
    wait_for("a first fetch under load", Duration::from_secs(120), || {
        *done.lock().unwrap() >= 1
    });
    docker(&engine, &["kill", &container]);
    let killed_at = Instant::now();
    wait_for(
        "swarm to replace the killed task",
        Duration::from_secs(180),
        || {
            let c = docker(
                &engine,
                &[
                    "ps",
                    "-q",
                    "--filter",
                    &format!("label=com.docker.swarm.service.name={service}"),
                ],
            );
            c.lines()
                .any(|id| !container.starts_with(id) && !id.is_empty())
        },
    );
    wait_all_healthy(&fx, &four, 4);
    let before = *done.lock().unwrap();
    wait_for(
        "two more fetches after the replacement",
        Duration::from_secs(120),
        || *done.lock().unwrap() >= before + 2,
    );
    stop.store(true, Ordering::SeqCst);
    loader.join().unwrap();
    let failed = failures.lock().unwrap().clone();
    assert!(
        failed.is_empty(),
        "ephemeral fetches failed during the kill:\n{}\n{}",
        failed.join("\n"),
        stack_diagnosis(&engine)
    );
    eprintln!(
        "swarm: {} ephemeral fetches during the kill, 0 failed; replaced and healthy after {:?}",
        *done.lock().unwrap(),
        killed_at.elapsed()
    );
    let r = fetch(&fx, &engine, &four, &echo, &["--profile", "p-one"]);
    assert_eq!(member_of(&r), victim);
    assert!(r.artifact_text("body_file").contains("who=p-one"));

    // Takeover through the fleet: routed by the site profile, the link opens that
    // replica's panel in a real browser, and the printed command names the same replica.
    let gate = srv.url("/takeover-fixture/gate");
    let t = fx
        .cmd()
        .args([
            "fetch",
            &gate,
            "--takeover",
            "--fleet",
            &four,
            "--token-secret",
            TOKEN,
        ])
        .args(["--timeout-ms", "90000"])
        .run();
    let next = &t.result()["next_action"];
    assert_eq!(next["kind"], "human_takeover", "{}", t.context);
    let member = member_of(&t);
    let member_port = port + member.trim_start_matches("afhttp-").parse::<u16>().unwrap() - 1;
    let url = next["takeover_url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!(
            "http://127.0.0.1:{member_port}/takeover/panel?handoff="
        )),
        "{url}"
    );
    let command = next["recommended_command"].as_str().unwrap();
    assert!(
        command.contains(&format!("--endpoint-url ws://127.0.0.1:{member_port}")),
        "{command}"
    );
    let (r, g, b) = BLOCK_RGB;
    let shot = fx.path().join("swarm-panel.png");
    let out = output_within(
        Command::new("node")
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/playwright"))
            .args(["takeover.mjs", url, &format!("{r},{g},{b}"), GATE_PHRASE])
            .arg(&shot),
        Duration::from_secs(120),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|_| panic!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(v["ok"], true, "{v}");
    assert!(v["colour_fraction"].as_f64().unwrap() > 0.1, "{v}");

    // docker stack rm leaves no container behind.
    docker(&engine, &["stack", "rm", STACK]);
    wait_for(
        "the stack's containers to go",
        Duration::from_secs(120),
        || stack_containers(&engine).is_empty(),
    );
    for v in docker(&engine, &["volume", "ls", "-q"]).lines() {
        if v.starts_with(&format!("{STACK}_")) {
            let _ = docker(&engine, &["volume", "rm", "-f", v]);
        }
    }
    docker(&engine, &["swarm", "leave", "--force"]);
    eprintln!("swarm: the whole scenario took {:?}", started.elapsed());
}
