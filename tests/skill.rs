//! `afhttp skill install|check|remove` in an isolated HOME and project directory.

use std::fs;

use serde_json::Value;

use crate::support::Fixture;

fn statuses(r: &Value) -> Vec<(String, String)> {
    r["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["agent"].as_str().unwrap().to_string(),
                a["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn all(status: &str) -> Vec<(String, String)> {
    ["claude", "codex", "opencode"]
        .iter()
        .map(|a| (a.to_string(), status.to_string()))
        .collect()
}

#[test]
fn user_install_check_remove_round_trip() {
    let fx = Fixture::new();
    let paths = [
        fx.home.join(".claude/skills/afhttp/SKILL.md"),
        fx.home.join(".agents/skills/afhttp/SKILL.md"),
        fx.home.join(".config/opencode/skills/afhttp/SKILL.md"),
    ];

    let run = fx.cmd().args(["skill", "check"]).run();
    let r = run.result();
    assert_eq!(r["code"], "skill_check");
    assert_eq!(r["all_current"], false);
    assert!(r["agents"]
        .as_array()
        .unwrap()
        .iter()
        .all(|a| a["installed"] == false && a["current"] == false));

    let run = fx.cmd().args(["skill", "install"]).run();
    let r = run.result();
    assert_eq!(r["code"], "skill_install");
    assert_eq!(statuses(r), all("installed"));
    for p in &paths {
        let text = fs::read_to_string(p).unwrap();
        assert!(text.starts_with("---\nname: afhttp\n"), "{}", p.display());
    }
    let run = fx.cmd().args(["skill", "install"]).run();
    assert_eq!(statuses(run.result()), all("unchanged"));

    // A stale copy is reported and refreshed.
    fs::write(&paths[1], "old skill").unwrap();
    let run = fx.cmd().args(["skill", "check", "--agent", "codex"]).run();
    let r = run.result();
    assert_eq!(r["agents"][0]["installed"], true);
    assert_eq!(r["agents"][0]["current"], false);
    let run = fx
        .cmd()
        .args(["skill", "install", "--agent", "codex"])
        .run();
    assert_eq!(
        statuses(run.result()),
        [("codex".to_string(), "updated".to_string())]
    );
    let run = fx.cmd().args(["skill", "check"]).run();
    assert_eq!(run.result()["all_current"], true);

    // Remove touches only our SKILL.md (and the afhttp dir once empty).
    let other = fx.home.join(".claude/skills/other/SKILL.md");
    fs::create_dir_all(other.parent().unwrap()).unwrap();
    fs::write(&other, "someone else's").unwrap();
    let run = fx.cmd().args(["skill", "remove"]).run();
    let r = run.result();
    assert_eq!(r["code"], "skill_remove");
    assert_eq!(statuses(r), all("removed"));
    for p in &paths {
        assert!(!p.exists());
        assert!(!p.parent().unwrap().exists());
    }
    assert!(other.exists());
    let run = fx.cmd().args(["skill", "remove"]).run();
    assert_eq!(statuses(run.result()), all("absent"));
}

#[test]
fn project_install_and_bad_arguments() {
    let fx = Fixture::new();
    let project = fx.path().join("proj");
    fs::create_dir_all(&project).unwrap();
    let run = fx
        .cmd()
        .args(["skill", "install", "--agent", "opencode", "--project"])
        .arg(&project)
        .run();
    let r = run.result();
    assert_eq!(r["scope"], "project");
    assert!(project.join(".opencode/skills/afhttp/SKILL.md").is_file());
    assert!(!fx.home.join(".config").exists());

    let run = fx
        .cmd()
        .args(["skill", "install", "--agent", "claude", "--project", "proj"])
        .run();
    run.result();
    assert!(project.join(".claude/skills/afhttp/SKILL.md").is_file());

    fx.cmd()
        .args(["skill", "install", "--agent", "cursor"])
        .run()
        .error("invalid_argument", 1);
    fx.cmd()
        .args(["skill", "install", "--project", "does-not-exist"])
        .run()
        .error("invalid_argument", 1);
    assert!(!fx.path().join("does-not-exist").exists());
}
