//! The `--render auto` decision and challenge classification on the HTTP path.

use serde_json::Value;

use crate::support::{Fixture, FixtureServer};

/// The binary with no browser executable on `PATH`: these tests look at the render
/// decision, which a missing browser reports as `render_unavailable` without starting one.
fn no_browser(fx: &Fixture) -> crate::support::Cmd {
    fx.cmd().env("PATH", fx.path())
}

fn challenge_names() -> Vec<(String, bool)> {
    // (name, positive): fixtures whose name starts with `neg-` must stay unclassified.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/challenges");
    let mut names: Vec<(String, bool)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".html"))
                .map(String::from)
        })
        .filter(|n| !n.starts_with('_'))
        .map(|n| {
            let positive = !n.starts_with("neg");
            (n, positive)
        })
        .collect();
    names.sort();
    names
}

#[test]
fn challenge_pages_are_classified_with_next_action_under_render_none() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let names = challenge_names();
    assert!(names.iter().filter(|(_, p)| *p).count() >= 8, "{names:?}");
    assert!(names.iter().filter(|(_, p)| !*p).count() >= 5, "{names:?}");
    for (name, positive) in names {
        let url = srv.url(&format!("/challenge/{name}"));
        let run = fx.cmd().args(["fetch", &url, "--render", "none"]).run();
        let r = run.result();
        if positive {
            let kind = r["page_kind"]
                .as_str()
                .unwrap_or_else(|| panic!("{name} not classified: {r}"));
            assert!(kind == "bot_wall" || kind == "security_challenge");
            let code = if kind == "bot_wall" {
                "bot_wall_detected"
            } else {
                "security_challenge_detected"
            };
            assert!(
                r["warnings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|w| w["code"] == code),
                "{name}"
            );
            let next = &r["next_action"];
            assert_eq!(next["kind"], "human_takeover", "{name}");
            assert_eq!(next["target_content_verified"], false);
            let cmd = next["recommended_command"].as_str().unwrap();
            assert!(
                cmd.starts_with("afhttp fetch ") && cmd.ends_with(" --takeover"),
                "{cmd}"
            );
        } else {
            assert!(r.get("page_kind").is_none(), "{name} misclassified: {r}");
            assert!(r.get("next_action").is_none(), "{name}");
        }
    }
}

#[test]
fn challenge_under_auto_escalates_and_reports_the_reason() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let (name, _) = challenge_names().into_iter().find(|(_, p)| *p).unwrap();
    let run = no_browser(&fx)
        .args(["fetch", &srv.url(&format!("/challenge/{name}"))])
        .run();
    run.error("render_unavailable", 1);
    let reason = &run.event["trace"]["render"]["escalation_reason"];
    assert!(
        reason["code"] == "challenge_markers" || reason["code"] == "wall_status",
        "{reason}"
    );
}

#[test]
fn spa_shell_escalates_static_page_does_not() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = no_browser(&fx).args(["fetch", &srv.url("/spa")]).run();
    run.error("render_unavailable", 1);
    assert_eq!(
        run.event["trace"]["render"]["escalation_reason"]["code"],
        "empty_html_shell"
    );
    assert_eq!(run.event["trace"]["render"]["decision"], "escalate");

    let run = no_browser(&fx)
        .args(["fetch", &srv.url("/spa"), "--render", "none"])
        .run();
    assert_eq!(run.fetch().status, 200);

    let run = no_browser(&fx)
        .args(["fetch", &srv.url("/static"), "--want", "content"])
        .run();
    assert_eq!(run.fetch().render, "http");
    assert_eq!(run.event["trace"]["render"]["decision"], "http_only");
}

#[test]
fn browser_only_artifacts() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = no_browser(&fx)
        .args(["fetch", &srv.url("/static"), "--want", "screenshot"])
        .run();
    run.error("render_unavailable", 1);
    let reason: &Value = &run.event["trace"]["render"]["escalation_reason"];
    assert_eq!(reason["code"], "browser_only_artifact");
    assert_eq!(srv.hits("/static"), 0, "decided before any request");

    let run = no_browser(&fx)
        .args([
            "fetch",
            &srv.url("/static"),
            "--want",
            "screenshot",
            "--render",
            "none",
        ])
        .run();
    run.error("invalid_argument", 1);

    let run = no_browser(&fx)
        .args(["fetch", &srv.url("/static"), "--render", "always"])
        .run();
    run.error("render_unavailable", 1);
}

#[test]
fn wall_status_with_html_escalates_under_auto() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = no_browser(&fx)
        .args(["fetch", &srv.url("/status/429")])
        .run();
    run.error("render_unavailable", 1);
    assert_eq!(
        run.event["trace"]["render"]["escalation_reason"]["code"],
        "wall_status"
    );
    // JSON bodies are data, not walls.
    let run = no_browser(&fx)
        .args(["fetch", &srv.url("/status/429/json")])
        .run();
    assert_eq!(run.fetch().status, 429);
}
