//! `afhttp mcp install|remove|check`: each agent's entry in its own format and place, the
//! rest of the file kept byte for byte, no token ever written, and one clear error for
//! hostile paths and agents.

use std::path::Path;

use serde_json::Value;

use crate::support::Fixture;

const TOKEN: &str = "tok-SECRET-never-in-a-file-0451";

/// An existing file per agent, with other entries in odd formatting that a re-serializer
/// would change (key order, spacing, escapes, comments).
fn original(agent: &str) -> &'static str {
    match agent {
        "claude-code" => "{\n    \"numStartups\": 7,\n    \"mcpServers\": {\n        \"github\": {\"type\": \"http\",   \"url\": \"https://example.invalid/mcp\", \"headers\": {\"X\": \"caf\\u00e9\"}}\n    },\n    \"projects\": {\"/p\": {\"allowedTools\": []}}\n}\n",
        "codex" => "# my settings\nmodel = \"o3\"   # pinned\n\n[mcp_servers.docs]\ncommand = \"npx\"\nargs = [ \"-y\",  \"docs-mcp\" ]\n\n[profiles.fast]\nmodel = \"mini\"\n",
        _ => "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"mcp\": {\n    \"other\": { \"type\": \"local\", \"command\": [\"x\"] }\n  },\n  \"theme\": \"dark\"\n}\n",
    }
}

/// The slice of `original` holding its other server's entry.
fn other_entry(agent: &str) -> &'static str {
    match agent {
        "claude-code" => "\"github\": {\"type\": \"http\",   \"url\": \"https://example.invalid/mcp\", \"headers\": {\"X\": \"caf\\u00e9\"}}",
        "codex" => "[mcp_servers.docs]\ncommand = \"npx\"\nargs = [ \"-y\",  \"docs-mcp\" ]\n",
        _ => "\"other\": { \"type\": \"local\", \"command\": [\"x\"] }",
    }
}

/// The afhttp entry as a JSON value, read back with a parser of the file's format.
fn entry_in(agent: &str, text: &str) -> Value {
    if agent == "codex" {
        let mut found = None;
        let mut in_table = false;
        let mut table = serde_json::Map::new();
        for line in text.lines() {
            if line.starts_with('[') {
                in_table = line == "[mcp_servers.afhttp]";
                continue;
            }
            if in_table {
                if let Some((k, v)) = line.split_once(" = ") {
                    let v: Value = serde_json::from_str(v).unwrap();
                    table.insert(k.to_string(), v);
                    found = Some(());
                }
            }
        }
        return found.map_or(Value::Null, |()| Value::Object(table));
    }
    let v: Value = serde_json::from_str(text).unwrap();
    let key = if agent == "claude-code" {
        "mcpServers"
    } else {
        "mcp"
    };
    v[key]["afhttp"].clone()
}

fn mcp(fx: &Fixture, op: &str, args: &[&str]) -> crate::support::Run {
    fx.cmd()
        .args(["mcp", op])
        .args(args)
        .env("AFHTTP_TOKEN_SECRET", TOKEN)
        .run()
}

fn status(run: &crate::support::Run) -> String {
    run.result()["agents"][0]["status"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn install_round_trips_for_each_agent_keeping_other_entries_byte_for_byte() {
    let fx = Fixture::new();
    for (agent, file) in [
        ("claude-code", "claude.json"),
        ("codex", "config.toml"),
        ("opencode", "opencode.json"),
    ] {
        for remote in [false, true] {
            let path = fx.path().join(format!("{}-{file}", u8::from(remote)));
            std::fs::write(&path, original(agent)).unwrap();
            let config = path.to_str().unwrap();
            let mut args = vec!["--agent", agent, "--config", config];
            if remote {
                args.extend(["--endpoint-url", "ws://127.0.0.1:9222/cdp"]);
            }
            let run = mcp(&fx, "install", &args);
            assert_eq!(status(&run), "installed", "{}", run.context);
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                text.contains(other_entry(agent)),
                "{agent}: the other entry changed:\n{text}"
            );
            let entry = entry_in(agent, &text);
            assert_eq!(entry, run.result()["agents"][0]["entry"], "{agent}: {text}");
            assert_agent_format(agent, remote, &entry);
            assert!(
                !text.contains(TOKEN),
                "{agent}: the token was written:\n{text}"
            );
            // Idempotent: nothing is rewritten.
            let again = mcp(&fx, "install", &args);
            assert_eq!(status(&again), "unchanged", "{}", again.context);
            assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
            let check = mcp(&fx, "check", &args);
            assert_eq!(status(&check), "installed", "{}", check.context);
            assert_eq!(check.result()["all_installed"], true);
            // The other transport's check says outdated, with what it found.
            let other: Vec<&str> = if remote {
                args[..4].to_vec()
            } else {
                [&args[..], &["--endpoint-url", "http://127.0.0.1:9222"]].concat()
            };
            let check = mcp(&fx, "check", &other);
            assert_eq!(status(&check), "outdated", "{}", check.context);
            assert_eq!(check.result()["agents"][0]["found"], entry);
            // Remove restores the file exactly; a second remove finds nothing.
            let run = mcp(&fx, "remove", &args);
            assert_eq!(status(&run), "removed", "{}", run.context);
            assert_eq!(
                std::fs::read_to_string(&path).unwrap(),
                original(agent),
                "{agent}: remove did not restore the file"
            );
            assert_eq!(status(&mcp(&fx, "remove", &args)), "missing");
            assert_eq!(status(&mcp(&fx, "check", &args)), "missing");
        }
    }
}

fn assert_agent_format(agent: &str, remote: bool, e: &Value) {
    let exe = env!("CARGO_BIN_EXE_afhttp");
    match (agent, remote) {
        ("claude-code", false) => {
            assert_eq!(e["type"], "stdio");
            assert_eq!(e["command"], exe);
            assert_eq!(e["args"], serde_json::json!(["mcp"]));
        }
        ("claude-code", true) => {
            assert_eq!(e["type"], "http");
            assert_eq!(e["url"], "http://127.0.0.1:9222/mcp");
            assert_eq!(
                e["headers"]["Authorization"],
                "Bearer ${AFHTTP_TOKEN_SECRET}"
            );
        }
        ("codex", false) => {
            assert_eq!(e["command"], exe);
            assert_eq!(e["args"], serde_json::json!(["mcp"]));
        }
        ("codex", true) => {
            assert_eq!(e["url"], "http://127.0.0.1:9222/mcp");
            assert_eq!(e["bearer_token_env_var"], "AFHTTP_TOKEN_SECRET");
        }
        ("opencode", false) => {
            assert_eq!(e["type"], "local");
            assert_eq!(e["command"], serde_json::json!([exe, "mcp"]));
        }
        _ => {
            assert_eq!(e["type"], "remote");
            assert_eq!(e["url"], "http://127.0.0.1:9222/mcp");
            assert_eq!(
                e["headers"]["Authorization"],
                "Bearer {env:AFHTTP_TOKEN_SECRET}"
            );
        }
    }
}

#[test]
fn default_places_per_scope_and_remove_deletes_what_install_created() {
    let fx = Fixture::new();
    let project = fx.path().join("proj");
    std::fs::create_dir(&project).unwrap();
    let p = project.to_str().unwrap();
    let install = mcp(&fx, "install", &["--server-arg", "--deny-private-networks"]);
    let rows = install.result()["agents"].as_array().unwrap().clone();
    let paths: Vec<&str> = rows.iter().map(|r| r["path"].as_str().unwrap()).collect();
    let home = fx.home.to_str().unwrap();
    assert_eq!(
        paths,
        [
            format!("{home}/.claude.json"),
            format!("{home}/.codex/config.toml"),
            format!("{home}/.config/opencode/opencode.json"),
        ],
        "{}",
        install.context
    );
    for r in &rows {
        assert_eq!(r["status"], "installed", "{r}");
        let text = std::fs::read_to_string(r["path"].as_str().unwrap()).unwrap();
        assert!(text.contains("--deny-private-networks"), "{text}");
    }
    let run = mcp(&fx, "install", &["--scope", "project", "--project", p]);
    let paths: Vec<String> = run.result()["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        paths,
        [
            format!("{p}/.mcp.json"),
            format!("{p}/.codex/config.toml"),
            format!("{p}/opencode.json"),
        ]
    );
    for args in [vec![], vec!["--scope", "project", "--project", p]] {
        let run = mcp(&fx, "remove", &args);
        for r in run.result()["agents"].as_array().unwrap() {
            assert_eq!(r["status"], "removed", "{r}");
            assert!(!Path::new(r["path"].as_str().unwrap()).exists(), "{r}");
        }
    }
}

#[test]
fn a_symlinked_config_is_edited_through_the_link() {
    let fx = Fixture::new();
    let real = fx.path().join("dotfiles-claude.json");
    std::fs::write(&real, original("claude-code")).unwrap();
    std::os::unix::fs::symlink(&real, fx.home.join(".claude.json")).unwrap();
    let run = mcp(&fx, "install", &["--agent", "claude-code"]);
    assert_eq!(status(&run), "installed", "{}", run.context);
    assert!(fx.home.join(".claude.json").is_symlink());
    assert!(std::fs::read_to_string(&real)
        .unwrap()
        .contains("\"afhttp\""));
    mcp(&fx, "remove", &["--agent", "claude"]);
    assert_eq!(
        std::fs::read_to_string(&real).unwrap(),
        original("claude-code")
    );
}

#[test]
fn hostile_agents_paths_and_tokens_are_one_clear_error_and_touch_nothing() {
    let fx = Fixture::new();
    let bad_json = fx.path().join("bad.json");
    std::fs::write(&bad_json, "{\"mcpServers\": {\"a\": 1},}").unwrap();
    let bad_toml = fx.path().join("bad.toml");
    std::fs::write(&bad_toml, "[mcp_servers\nx = ").unwrap();
    let not_object = fx.path().join("array.json");
    std::fs::write(&not_object, "[1, 2]").unwrap();
    let dir = fx.path().join("a-directory");
    std::fs::create_dir(&dir).unwrap();
    let cases: Vec<Vec<String>> = [
        vec!["--agent", "../../etc/passwd"],
        vec!["--agent", "cursor"],
        vec!["--agent", ""],
        vec!["--agent", "all", "--config", bad_json.to_str().unwrap()],
        vec![
            "--agent",
            "claude-code",
            "--config",
            bad_json.to_str().unwrap(),
        ],
        vec!["--agent", "codex", "--config", bad_toml.to_str().unwrap()],
        vec![
            "--agent",
            "opencode",
            "--config",
            not_object.to_str().unwrap(),
        ],
        vec!["--agent", "codex", "--config", dir.to_str().unwrap()],
        vec![
            "--agent",
            "codex",
            "--config",
            "/nonexistent-dir/x/config.toml",
        ],
        vec!["--scope", "galaxy"],
        vec!["--scope", "project", "--project", "/nonexistent-dir/p"],
        vec![
            "--agent",
            "codex",
            "--endpoint-url",
            "http://user:pw@127.0.0.1:9222",
        ],
        vec![
            "--agent",
            "codex",
            "--endpoint-url",
            &format!("http://127.0.0.1:9222/?token_secret={TOKEN}"),
        ],
        vec![
            "--agent",
            "codex",
            "--endpoint-url",
            "unix:/run/afhttp.sock",
        ],
        vec!["--agent", "codex", "--endpoint-url", "ftp://127.0.0.1/"],
        vec![
            "--agent",
            "codex",
            "--endpoint-url",
            "http://127.0.0.1:9222",
            "--token-env",
            "A B",
        ],
        vec![
            "--agent",
            "codex",
            "--server-arg",
            &format!("--token-secret={TOKEN}"),
        ],
    ]
    .iter()
    .map(|v| v.iter().map(|s| s.to_string()).collect())
    .collect();
    let before: Vec<(std::path::PathBuf, Vec<u8>)> = [&bad_json, &bad_toml, &not_object]
        .iter()
        .map(|p| (p.to_path_buf(), std::fs::read(p).unwrap()))
        .collect();
    for args in &cases {
        for op in ["install", "remove", "check"] {
            if op != "install" && args.iter().any(|a| a.contains("token-secret")) {
                continue;
            }
            let argv: Vec<&str> = args.iter().map(String::as_str).collect();
            let run = mcp(&fx, op, &argv);
            let e = run.error("invalid_argument", 1);
            assert!(
                !e["message"].as_str().unwrap().is_empty(),
                "{}",
                run.context
            );
            assert!(!run.stdout.contains(TOKEN), "{}", run.context);
        }
    }
    for (p, bytes) in before {
        assert_eq!(std::fs::read(&p).unwrap(), bytes, "{} changed", p.display());
    }
    // Nothing was created in the home directory, and no file anywhere holds the token.
    let created = super::files_under(&fx.home);
    assert!(created.is_empty(), "{created:?}");
    for f in super::files_under(fx.path()) {
        let text = std::fs::read(fx.path().join(&f)).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&text).contains(TOKEN),
            "{} holds the token",
            f.display()
        );
    }
}
