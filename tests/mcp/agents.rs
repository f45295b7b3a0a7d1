//! The real coding agents read what `afhttp mcp install` writes: Claude Code
//! (`@anthropic-ai/claude-code`) and Codex (`@openai/codex`), pinned in
//! tests/mcp/agents/package.json and installed by scripts/test.sh. Each runs in a throwaway
//! `HOME` and in an empty network namespace (`unshare -n`): their `mcp list` needs neither
//! network nor login, and nothing they try to send can leave the machine.
//!
//! Each test starts from a file the agent wrote itself (its first run, and one other server
//! added with the agent's own `mcp add`), installs afhttp, asks the agent, removes afhttp,
//! and compares the file with the agent's own bytes.

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use serde_json::Value;

use crate::support::deadline::CommandDeadline;
use crate::support::Fixture;

/// Where scripts/test.sh puts the agents' launchers (`npm ci --prefix tests/mcp/agents`).
const BIN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/mcp/agents/node_modules/.bin"
);

/// Run an agent CLI (`claude` or `codex`) in `fx`'s home with no network, within a deadline.
fn agent(fx: &Fixture, cli: &str, args: &[&str]) -> Output {
    let exe = Path::new(BIN).join(cli);
    assert!(
        exe.exists(),
        "{} is not installed: run `npm ci --prefix tests/mcp/agents` (scripts/test.sh does)",
        exe.display()
    );
    let mut cmd = fx.isolated("unshare");
    cmd.arg("-n")
        .arg(&exe)
        .args(args)
        .current_dir(fx.path())
        // Claude Code's documented switch for its updater, telemetry and error reports.
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .stdin(std::process::Stdio::null());
    let out = cmd
        .output_within(Duration::from_secs(120))
        .unwrap_or_else(|e| panic!("cannot start unshare -n {cli}: {e}"));
    assert!(
        out.status.success(),
        "{cli} {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `afhttp mcp OP --agent AGENT` in `fx`; the agent row's status.
fn afhttp(fx: &Fixture, op: &str, agent: &str) -> String {
    let run = fx.cmd().args(["mcp", op, "--agent", agent]).run();
    run.result()["agents"][0]["status"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn claude_code_lists_afhttp_connected_and_remove_restores_its_file() {
    let fx = Fixture::new();
    // The agent writes ~/.claude.json on its first run; a second server is added its way.
    let first = stdout(&agent(&fx, "claude", &["mcp", "list"]));
    assert!(first.contains("No MCP servers configured"), "{first}");
    agent(
        &fx,
        "claude",
        &[
            "mcp",
            "add",
            "--scope",
            "user",
            "--transport",
            "http",
            "docs",
            "http://127.0.0.1:9/mcp",
        ],
    );
    let file = fx.home.join(".claude.json");
    let before = std::fs::read(&file).unwrap();

    assert_eq!(afhttp(&fx, "install", "claude-code"), "installed");
    // Claude Code starts `afhttp mcp`, initializes it, and says so on the server's line.
    let listed = stdout(&agent(&fx, "claude", &["mcp", "list"]));
    let line = listed
        .lines()
        .find(|l| l.starts_with("afhttp: "))
        .unwrap_or_else(|| panic!("claude mcp list has no afhttp line:\n{listed}"));
    assert!(
        line.contains(env!("CARGO_BIN_EXE_afhttp")) && line.ends_with("Connected"),
        "afhttp is not connected:\n{listed}"
    );
    assert!(
        listed.lines().any(|l| l.starts_with("docs: ")),
        "the other server went missing:\n{listed}"
    );

    assert_eq!(afhttp(&fx, "remove", "claude-code"), "removed");
    assert!(
        std::fs::read(&file).unwrap() == before,
        "remove did not restore Claude Code's file:\nbefore: {}\nafter: {}",
        String::from_utf8_lossy(&before),
        std::fs::read_to_string(&file).unwrap()
    );
    let listed = stdout(&agent(&fx, "claude", &["mcp", "list"]));
    assert!(!listed.contains("afhttp"), "{listed}");
}

#[test]
fn codex_lists_afhttp_enabled_and_remove_restores_its_file() {
    let fx = Fixture::new();
    // Codex writes ~/.codex/config.toml itself when a first server is added its way.
    agent(
        &fx,
        "codex",
        &["mcp", "add", "docs", "--", "npx", "-y", "docs-mcp"],
    );
    let file = fx.home.join(".codex/config.toml");
    let before = std::fs::read(&file).unwrap();

    assert_eq!(afhttp(&fx, "install", "codex"), "installed");
    let table = stdout(&agent(&fx, "codex", &["mcp", "list"]));
    let row = table
        .lines()
        .find(|l| l.starts_with("afhttp "))
        .unwrap_or_else(|| panic!("codex mcp list has no afhttp row:\n{table}"));
    assert!(row.contains(" enabled "), "{table}");
    let listed: Value =
        serde_json::from_slice(&agent(&fx, "codex", &["mcp", "list", "--json"]).stdout).unwrap();
    let servers = listed.as_array().unwrap();
    let ours = servers
        .iter()
        .find(|s| s["name"] == "afhttp")
        .unwrap_or_else(|| panic!("no afhttp in codex mcp list --json: {listed}"));
    assert_eq!(ours["enabled"], true, "{listed}");
    assert_eq!(ours["transport"]["type"], "stdio", "{listed}");
    assert_eq!(
        ours["transport"]["command"],
        env!("CARGO_BIN_EXE_afhttp"),
        "{listed}"
    );
    assert_eq!(ours["transport"]["args"], serde_json::json!(["mcp"]));
    assert!(servers.iter().any(|s| s["name"] == "docs"), "{listed}");

    assert_eq!(afhttp(&fx, "remove", "codex"), "removed");
    assert!(
        std::fs::read(&file).unwrap() == before,
        "remove did not restore Codex's file:\nbefore: {}\nafter: {}",
        String::from_utf8_lossy(&before),
        std::fs::read_to_string(&file).unwrap()
    );
    let listed = stdout(&agent(&fx, "codex", &["mcp", "list", "--json"]));
    assert!(!listed.contains("afhttp"), "{listed}");
}
