//! The long token stays out of argv, child environments, logs and printed results: a real
//! host with a takeover display (browser, Xvnc, websockify), driven by a fetch and a panel
//! request, then every process and every line of output searched for the token.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::support::descendants;
use crate::support::{Fixture, FixtureServer};

fn read(path: String) -> String {
    std::fs::read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

#[test]
fn the_token_is_absent_from_argv_child_environments_logs_and_results() {
    let _one = crate::support::chromium::lock();
    let token = super::TOKEN;
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let log = fx.path().join("host.log");
    let mut child = fx
        .isolated(env!("CARGO_BIN_EXE_afhttp"))
        .args([
            "host",
            "--listen",
            "tcp:127.0.0.1:0",
            "--takeover-provider",
            "novnc",
        ])
        .env("AFHTTP_NO_SANDBOX", "1")
        .env("AFHTTP_LOG", "debug")
        // From the environment, as an operator would: the host's own argv stays clean.
        .env("AFHTTP_TOKEN_SECRET", token)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let _deadline = crate::support::deadline::Watchdog::new(
        child.id(),
        Duration::from_secs(300),
        "afhttp host --takeover-provider novnc",
    );
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut ready = String::new();
    stdout.read_line(&mut ready).unwrap();
    let doc: Value = serde_json::from_str(ready.trim()).unwrap();
    assert_eq!(doc["result"]["code"], "host_ready", "{ready}");
    let endpoint = doc["result"]["endpoint_url"].as_str().unwrap().to_string();
    let host_pid = child.id();

    // Drive it: a fetch (the CDP proxy logs), a panel handoff, a refused request.
    let fetch = fx
        .cmd()
        .args(["fetch", &srv.url("/static"), "--endpoint-url", &endpoint])
        .args(["--render", "always", "--want", "body"])
        .env("AFHTTP_TOKEN_SECRET", token)
        .env("AFHTTP_LOG", "debug")
        .run();
    assert_eq!(fetch.fetch().status, 200, "{}", fetch.context);
    let panel = fx
        .cmd()
        .args(["panel", "--endpoint-url", &endpoint])
        .env("AFHTTP_TOKEN_SECRET", token)
        .run();
    assert!(panel.result()["takeover_url"]
        .as_str()
        .unwrap()
        .contains("handoff="));
    let wrong = fx
        .cmd()
        .args([
            "health",
            "--endpoint-url",
            &endpoint,
            "--token-secret",
            "not-the-token",
        ])
        .run();
    wrong.error("unauthorized", 1);

    // Every process of the host: its argv, and the children's environments.
    // The browser and the display's processes (Xvnc, websockify at least).
    crate::support::wait_until(Duration::from_secs(10), || descendants(host_pid).len() >= 3);
    let kids = descendants(host_pid);
    assert!(kids.len() >= 3, "browser and display children: {kids:?}");
    let names: Vec<String> = kids
        .iter()
        .map(|p| read(format!("/proc/{p}/cmdline")).replace('\0', " "))
        .collect();
    for want in ["chromium", "Xvnc", "websockify"] {
        assert!(
            names.iter().any(|n| n.contains(want)),
            "{want} in {names:?}"
        );
    }
    assert!(!read(format!("/proc/{host_pid}/cmdline")).contains(token));
    let mut environments = 0;
    for pid in &kids {
        let cmdline = read(format!("/proc/{pid}/cmdline"));
        assert!(!cmdline.contains(token), "argv of {pid}: {cmdline:?}");
        let environ = read(format!("/proc/{pid}/environ"));
        if !environ.is_empty() {
            environments += 1;
        }
        assert!(
            !environ.contains(token),
            "environment of {pid} ({cmdline:?})"
        );
        assert!(
            !environ.contains("AFHTTP_"),
            "environment of {pid} ({cmdline:?})"
        );
    }
    assert!(environments >= 3, "the environments were readable");
    // The control: the host's own environment (set by the operator) does hold it, so the
    // search above would have found it.
    assert!(read(format!("/proc/{host_pid}/environ")).contains(token));

    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(host_pid as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut stdout, &mut rest);
    let logs = std::fs::read_to_string(&log).unwrap();
    assert!(logs.lines().count() >= 3, "debug logs were written: {logs}");
    for (what, text) in [
        ("host stdout", format!("{ready}{rest}")),
        ("host stderr", logs),
        ("fetch output", format!("{}{}", fetch.stdout, fetch.stderr)),
        ("panel output", format!("{}{}", panel.stdout, panel.stderr)),
        (
            "refused health",
            format!("{}{}", wrong.stdout, wrong.stderr),
        ),
    ] {
        assert!(!text.contains(token), "{what} holds the token");
    }
}

/// `afhttp host` refuses bad token flags (and other flags next to a token) without echoing
/// the token or any piece of it: a token that starts with `-` is a value, not an unknown
/// flag whose first letters clap would quote back.
#[test]
fn no_error_of_afhttp_host_echoes_a_bad_token_flag() {
    const CANARY: &str = "-Qx9canary-host-token";
    let fx = Fixture::new();
    let file = fx.path().join("token");
    std::fs::write(&file, format!("{CANARY}\n")).unwrap();
    let file = file.display().to_string();
    let flag = ["--token-secret", CANARY];
    let cases: Vec<(Vec<&str>, Option<&str>)> = vec![
        ([&flag[..], &["--listen", "nonsense"]].concat(), None),
        ([&flag[..], &flag[..]].concat(), None),
        ([&flag[..], &["--max-tabs", "many"]].concat(), None),
        ([&flag[..], &["--no-such-flag"]].concat(), None),
        ([&flag[..], &["stray"]].concat(), None),
        (vec!["--token-secret", "   "], None),
        (
            vec!["--token-secret-file", &file, "--listen", "nonsense"],
            None,
        ),
        (vec!["--listen", "nonsense"], Some(CANARY)),
        (vec!["--token-secret"], Some(CANARY)),
    ];
    for (args, from_env) in cases {
        let mut cmd = fx.cmd().arg("host").args(&args);
        if let Some(token) = from_env {
            cmd = cmd.env("AFHTTP_TOKEN_SECRET", token);
        }
        let run = cmd.run();
        assert_eq!(run.event["kind"], "error", "{}", run.context);
        assert_eq!(
            run.event["error"]["code"], "invalid_argument",
            "{}",
            run.context
        );
        let said = format!("{}\n{}", run.stdout, run.stderr);
        for piece in ["Qx9", "-Q", "canary"] {
            assert!(!said.contains(piece), "{piece:?} echoed: {}", run.context);
        }
    }
}
