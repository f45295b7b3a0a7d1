//! Inside the running container: the init reaps, the host runs unprivileged; `container
//! status` and `container logs` (also `--follow` until the container stops) keep the token
//! out of their output.

use std::time::Duration;

use super::cmd;
use crate::support::docker::{rt, Engine};
use crate::support::{wait_for, Fixture};

/// `afhttp host` as PID 1 reaps orphans and runs with no privileges.
pub(super) fn init_reaps_and_runs_unprivileged(engine: &Engine) {
    // `afhttp host` as PID 1 is a reaping init (src/host/init.rs): the browsers stopped by
    // the profile switches leave orphans, and none of them may linger as a zombie.
    let zombies = || {
        let script = "grep -l '^State:.*Z' /proc/[0-9]*/status 2>/dev/null | wc -l";
        engine.exec_output("afhttp-host", &["/bin/sh", "-c", script])
    };
    let reaped = crate::support::wait_until(Duration::from_secs(5), || zombies().trim() == "0");
    assert!(reaped, "zombies in the container: {}", zombies());
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
}

/// `container status` and `container logs` describe the container; none shows `token`.
pub(super) fn status_and_logs_hide_the_token(
    fx: &Fixture,
    engine: &Engine,
    port: u16,
    token: &str,
) {
    let status = cmd(fx, engine).args(["container", "status"]).run();
    let s = status.result();
    assert_eq!(s["installed"], true);
    assert_eq!(s["running"], true);
    assert_eq!(s["container"]["port"], port);
    assert_eq!(s["version_matches"], true);
    assert!(s.get("token_secret").is_none());

    let logs = cmd(fx, engine).args(["container", "logs"]).run();
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
    let raw = cmd(fx, engine)
        .args(["container", "logs", "--raw", "--tail", "5"])
        .run();
    assert!(raw.result()["lines"].as_array().unwrap().len() <= 5);
    // The token appears in none of this output unless revealed (docs/security.md).
    let all_logs = cmd(fx, engine).args(["container", "logs", "--raw"]).run();
    for run in [&status, &logs, &raw, &all_logs] {
        for out in [&run.stdout, &run.stderr] {
            assert!(!out.contains(token), "token leaked: {}", run.context);
        }
    }
}

/// A `container logs --raw --follow` streams to stderr until the container is stopped
/// (SIGTERM through the init; the host exits 0), then reports what it streamed.
pub(super) fn follower_streams_until_the_stop(fx: &Fixture, engine: &Engine) {
    let mut follower = std::process::Command::new(env!("CARGO_BIN_EXE_afhttp"))
        .env("DOCKER_HOST", &engine.host)
        .args(["container", "logs", "--raw", "--follow", "--tail", "2"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Whatever fails below, the follower does not outlive the test.
    let _deadline = crate::support::deadline::Watchdog::new(
        follower.id(),
        Duration::from_secs(180),
        "afhttp container logs --follow",
    );
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
    let stopped = cmd(fx, engine).arg("health").run();
    stopped.error("host_unreachable", 1);
}

fn wait_output(mut child: std::process::Child, limit: Duration) -> std::process::Output {
    crate::support::deadline::collect_within(
        &mut child,
        limit,
        "`container logs --follow` (it should end with the container)",
    )
}
