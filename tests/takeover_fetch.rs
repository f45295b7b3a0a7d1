//! `fetch --takeover` end to end on a real novnc takeover host: the fetch meets a captcha
//! wall, switches the host to the site's profile, keeps the tab and hands back a takeover URL;
//! a "human" in a separate real Chromium opens it and clears the wall through the noVNC panel
//! while the agent keeps using CDP on the same tab (multi-attach); the printed
//! `recommended_command`, run as printed, then returns the content with no `next_action`.

use crate::support::deadline::CommandDeadline;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::routes_takeover::{BLOCK_RGB, GATE_CONTENT, GATE_PHRASE};
use crate::support::wait_for;
use crate::support::{Fixture, FixtureServer};
use crate::takeover::{eval_in_tab, health, start_novnc_host, TOKEN};

/// Run a printed command line through `sh`, with the binary first on PATH, in `fx`'s
/// environment plus `env`; returns the one JSON event.
pub(crate) fn run_printed(fx: &Fixture, command: &str, env: &[(&str, &str)]) -> Value {
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_afhttp"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = fx
        .isolated("sh")
        .args(["-c", command])
        .env("PATH", path)
        .envs(env.iter().copied())
        .current_dir(fx.path())
        .stdin(Stdio::null())
        .output_within(Duration::from_secs(300))
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.lines().count(),
        1,
        "{command}\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap()
}

#[test]
fn fetch_takeover_hands_a_wall_to_a_human_and_refetches() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let (mut host, port) = start_novnc_host(&fx);
    let ep = host.endpoint.clone();
    // The token travels in a file, so the printed command can name the file, not the secret.
    let token_file = fx.path().join("token");
    std::fs::write(&token_file, TOKEN).unwrap();
    let token_file = token_file.to_str().unwrap().to_string();
    let auth = [
        "--endpoint-url",
        ep.as_str(),
        "--token-secret-file",
        &token_file,
    ];
    let gate = srv.url("/takeover-fixture/gate");

    // 1. The wall: a kept tab, the site's profile, a takeover URL and a command.
    let first = fx
        .cmd()
        .args(["fetch", &gate, "--takeover"])
        .args(auth)
        .run();
    let r = first.result();
    assert_eq!(first.fetch().render, "browser", "{}", first.context);
    assert_eq!(r["page_kind"], "security_challenge", "{}", first.context);
    let next = &r["next_action"];
    assert_eq!(next["kind"], "human_takeover", "{}", first.context);
    assert_eq!(next["target_content_verified"], false);
    assert!(
        next["reason"]
            .as_str()
            .unwrap()
            .starts_with("challenge_markers: recaptcha"),
        "{next}"
    );
    let tab = r["tab_id"].as_str().unwrap().to_string();
    assert_eq!(next["tab_id"], tab.as_str());
    let url = next["takeover_url"].as_str().unwrap().to_string();
    assert!(
        url.starts_with(&format!("http://127.0.0.1:{port}/takeover/panel?handoff=")),
        "{url}"
    );
    assert!(next["takeover_url_expires_at_rfc3339"]
        .as_str()
        .unwrap()
        .ends_with('Z'));
    assert!(
        !first.stdout.contains(TOKEN),
        "the token leaked into the event"
    );
    let command = next["recommended_command"].as_str().unwrap().to_string();
    assert!(command.contains(&format!("--tab {tab}")), "{command}");
    let trace = &first.event["trace"];
    assert_eq!(trace["readiness"]["timed_out"], false, "{trace}");
    assert_eq!(trace["takeover"]["profile"], "127.0.0.1", "{trace}");
    assert_eq!(trace["takeover"]["profile_source"], "site");
    assert_eq!(trace["takeover"]["reason"], next["reason"]);
    assert_eq!(health(port)["profile"]["name"], "127.0.0.1");
    let tabs = fx.cmd().args(["tabs", "list"]).args(auth).run();
    assert!(
        tabs.result()["tabs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["tab_id"] == tab.as_str()),
        "the takeover tab was closed: {}",
        tabs.stdout
    );

    // 2. The human clears the wall through the panel, typing the pass phrase.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/playwright");
    let (r8, g8, b8) = BLOCK_RGB;
    let mut viewer = Command::new("node")
        .current_dir(dir)
        .args([
            "takeover.mjs",
            &url,
            &format!("{r8},{g8},{b8}"),
            GATE_PHRASE,
            fx.path().join("gate.png").to_str().unwrap(),
            "hold",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let _deadline = crate::support::deadline::Watchdog::new(
        viewer.id(),
        Duration::from_secs(300),
        "node takeover.mjs",
    );
    let mut lines = BufReader::new(viewer.stdout.take().unwrap()).lines();
    let phase = lines.next().unwrap().unwrap();
    assert!(
        phase.contains("\"typed\""),
        "the viewer failed: {phase}; host health: {}",
        health(port)
    );

    // 3. Multi-attach: while the human's panel is connected, the agent reads the same tab.
    let eval = |expr: &str| eval_in_tab(&fx, &tab, &auth, expr);
    wait_for("the typed phrase", Duration::from_secs(10), || {
        eval("document.querySelector('#field').value") == GATE_PHRASE
    });
    assert_eq!(eval("document.cookie.includes('gate_passed=1')"), true);
    drop(viewer.stdin.take());
    let done: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(done["ok"], true, "{done}");
    assert_eq!(
        done["still_connected"], true,
        "the panel dropped during CDP use"
    );
    assert!(done["colour_fraction"].as_f64().unwrap() > 0.1, "{done}");
    viewer.wait().unwrap();

    // 4. The recommended command, run as printed, reaches the content on the same tab.
    let started = Instant::now();
    let again = run_printed(&fx, &command, &[]);
    assert_eq!(again["kind"], "result", "{again}");
    let r = &again["result"];
    assert!(r["next_action"].is_null(), "{again}");
    assert!(r["page_kind"].is_null(), "{again}");
    assert_eq!(r["status"], 200);
    assert_eq!(r["tab_id"], tab.as_str());
    let content = std::fs::read_to_string(r["content_file"].as_str().unwrap()).unwrap();
    assert!(content.contains(GATE_CONTENT), "{content}");
    assert!(again["trace"]["takeover"]["reason"].is_null());
    eprintln!(
        "measure: takeover re-fetch: {} ms",
        started.elapsed().as_millis()
    );

    // 5. The warmed profile now reaches the target on a fresh tab, with nothing to hand over.
    let warm = fx
        .cmd()
        .args(["fetch", &gate, "--takeover", "--want", "content"])
        .args(auth)
        .run();
    let w = warm.result();
    assert!(w["next_action"].is_null(), "{}", warm.context);
    assert_ne!(w["tab_id"], tab.as_str());
    assert!(std::fs::read_to_string(w["content_file"].as_str().unwrap())
        .unwrap()
        .contains(GATE_CONTENT));
    assert_eq!(host.terminate().0, 0);
}

#[test]
fn fetch_takeover_offers_the_takeover_on_a_turnstile_wall() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let (mut host, port) = start_novnc_host(&fx);
    let ep = host.endpoint.clone();
    let auth = ["--endpoint-url", ep.as_str(), "--token-secret", TOKEN];
    for name in [
        "cloudflare_turnstile_widget",
        "cloudflare_turnstile_just_a_moment",
    ] {
        let url = srv.url(&format!("/challenge/{name}"));
        let run = fx
            .cmd()
            .args(["fetch", &url, "--takeover"])
            .args(auth)
            .run();
        let r = run.result();
        assert_eq!(run.fetch().render, "browser", "{name}: {}", run.context);
        assert_eq!(
            r["page_kind"], "security_challenge",
            "{name}: {}",
            run.context
        );
        let next = &r["next_action"];
        assert_eq!(next["kind"], "human_takeover", "{name}: {}", run.context);
        assert_eq!(next["target_content_verified"], false, "{name}");
        assert!(
            next["reason"].as_str().unwrap().contains("turnstile"),
            "{name}: {next}"
        );
        let takeover_url = next["takeover_url"].as_str().unwrap();
        assert!(
            takeover_url.starts_with(&format!("http://127.0.0.1:{port}/takeover/panel?handoff=")),
            "{name}: {takeover_url}"
        );
        let tab = r["tab_id"].as_str().unwrap();
        assert_eq!(next["tab_id"], tab, "{name}");
        let command = next["recommended_command"].as_str().unwrap();
        assert!(
            command.contains(&format!("--tab {tab}")),
            "{name}: {command}"
        );
        assert!(
            !run.stdout.contains(TOKEN),
            "the token leaked into the event"
        );
    }

    // A login form that carries a Turnstile widget is a page to use, not a wall.
    let url = srv.url("/challenge/neg_login_with_turnstile");
    let run = fx
        .cmd()
        .args(["fetch", &url, "--takeover"])
        .args(auth)
        .run();
    let r = run.result();
    assert_eq!(run.fetch().render, "browser", "{}", run.context);
    assert!(r["page_kind"].is_null(), "{}", run.context);
    assert!(r["next_action"].is_null(), "{}", run.context);
    assert!(
        run.event["trace"]["takeover"]["reason"].is_null(),
        "{}",
        run.context
    );
    assert_eq!(host.terminate().0, 0);
}
