//! `afhttp mcp install|remove|check`: the afhttp entry in each coding agent's MCP server
//! configuration, in the agent's own format and place.
//!
//! Only the one entry named `afhttp` is ever written or removed (and its container key when
//! this tool created it and it ends up empty); every other byte of the file is kept (JSON by
//! splicing, [`json_edit`]; TOML with `toml_edit`, [`toml_file`]). A token is never written:
//! a remote entry names the environment variable the agent reads it from.
//!
//! Formats (sources in docs/mcp.md):
//! - Claude Code: `mcpServers.afhttp` in `.mcp.json` (project) or `~/.claude.json` (user);
//!   stdio `{type: stdio, command, args}`, remote `{type: http, url, headers}` with
//!   `${VAR}` expansion.
//! - Codex: `[mcp_servers.afhttp]` in `~/.codex/config.toml` (or `$CODEX_HOME`, project
//!   `.codex/config.toml`); stdio `command`/`args`, remote `url` + `bearer_token_env_var`.
//! - opencode: `mcp.afhttp` in `opencode.json` (project) or `~/.config/opencode/opencode.json`;
//!   `{type: local, command: [...]}` or `{type: remote, url, headers}` with `{env:VAR}`.

pub mod json_edit;
pub mod toml_file;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::env;
use crate::error::AfError;

/// The entry's name in every agent's configuration.
pub const ENTRY: &str = "afhttp";

/// The largest configuration file read (`~/.claude.json` grows with history).
const MAX_CONFIG_BYTES: u64 = 64 << 20;

/// A coding agent that configures MCP servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpAgent {
    /// Claude Code.
    ClaudeCode,
    /// OpenAI Codex CLI.
    Codex,
    /// opencode.
    Opencode,
}

impl McpAgent {
    /// Every supported agent.
    pub const ALL: &'static [McpAgent] =
        &[McpAgent::ClaudeCode, McpAgent::Codex, McpAgent::Opencode];

    /// `claude-code`, `codex` or `opencode`.
    pub fn as_str(self) -> &'static str {
        match self {
            McpAgent::ClaudeCode => "claude-code",
            McpAgent::Codex => "codex",
            McpAgent::Opencode => "opencode",
        }
    }

    /// Parse `--agent`: one agent (`claude` is accepted for `claude-code`, as `afhttp skill`
    /// names it) or `all`.
    pub fn parse_selection(raw: &str) -> Result<Vec<McpAgent>, AfError> {
        match raw {
            "all" => Ok(McpAgent::ALL.to_vec()),
            "claude-code" | "claude" => Ok(vec![McpAgent::ClaudeCode]),
            "codex" => Ok(vec![McpAgent::Codex]),
            "opencode" => Ok(vec![McpAgent::Opencode]),
            other => Err(AfError::invalid(format!(
                "unknown agent {:?}",
                other.chars().take(64).collect::<String>()
            ))
            .with_field("agent")
            .with_hint("use --agent claude-code, codex, opencode or all")),
        }
    }

    /// The key that holds MCP servers in this agent's file.
    fn container(self) -> &'static str {
        match self {
            McpAgent::ClaudeCode => "mcpServers",
            McpAgent::Codex => "mcp_servers",
            McpAgent::Opencode => "mcp",
        }
    }

    fn is_toml(self) -> bool {
        self == McpAgent::Codex
    }

    /// The configuration file for `scope`; a user's is found through `env` (the front end's
    /// snapshot: `HOME`, `CODEX_HOME`, `XDG_CONFIG_HOME`).
    pub fn config_path(self, scope: &Scope, env: &env::Snapshot) -> Result<PathBuf, AfError> {
        let home = || crate::skill::home_dir(env);
        Ok(match (self, scope) {
            (McpAgent::ClaudeCode, Scope::Project(p)) => p.join(".mcp.json"),
            (McpAgent::ClaudeCode, Scope::User) => home()?.join(".claude.json"),
            (McpAgent::Codex, Scope::Project(p)) => p.join(".codex/config.toml"),
            (McpAgent::Codex, Scope::User) => match env.get(env::CODEX_HOME) {
                Some(h) if Path::new(&h).is_absolute() => PathBuf::from(h).join("config.toml"),
                _ => home()?.join(".codex/config.toml"),
            },
            (McpAgent::Opencode, Scope::Project(p)) => p.join("opencode.json"),
            (McpAgent::Opencode, Scope::User) => match env.get(env::XDG_CONFIG_HOME) {
                Some(c) if Path::new(&c).is_absolute() => {
                    PathBuf::from(c).join("opencode/opencode.json")
                }
                _ => home()?.join(".config/opencode/opencode.json"),
            },
        })
    }
}

/// Where an entry goes: the user's configuration, or a project's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The user's own file (all projects).
    User,
    /// A project directory's file.
    Project(PathBuf),
}

/// How the agent reaches afhttp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// The agent starts `command args...` (`afhttp mcp ...`) and speaks over stdio.
    Stdio {
        /// The afhttp executable.
        command: String,
        /// `mcp` and the server's flags.
        args: Vec<String>,
    },
    /// The agent connects to a host's `/mcp` with a bearer token from its environment.
    Remote {
        /// `http(s)://HOST:PORT/mcp`.
        url: String,
        /// The environment variable holding the token (its name only is written).
        token_env: String,
    },
}

impl Transport {
    /// `stdio` or `remote`.
    pub fn kind(&self) -> &'static str {
        match self {
            Transport::Stdio { .. } => "stdio",
            Transport::Remote { .. } => "remote",
        }
    }

    /// The `/mcp` URL of a host endpoint (`ws(s)://` or `http(s)://`, no credentials, no
    /// query): a token in the URL would be written into the file, so it is refused.
    pub fn remote(endpoint_url: &str, token_env: &str) -> Result<Transport, AfError> {
        let bad = |why: &str| {
            AfError::invalid(format!("--endpoint-url {why}"))
                .with_field("endpoint_url")
                .with_hint("pass the host's base URL, e.g. http://127.0.0.1:9222; the token comes from the agent's environment")
        };
        let mut url = url::Url::parse(endpoint_url).map_err(|_| bad("is not a URL"))?;
        let scheme = match url.scheme() {
            "http" | "ws" => "http",
            "https" | "wss" => "https",
            "unix" => return Err(bad("is a unix socket, which agents cannot reach over HTTP; install the stdio entry with --server-arg=--endpoint-url=unix:/path")),
            _ => return Err(bad("must be http://, https://, ws:// or wss://")),
        };
        if !url.username().is_empty() || url.password().is_some() {
            return Err(bad(
                "carries credentials, which would be written into the file",
            ));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(bad(
                "carries a query or fragment (a token there would be written into the file)",
            ));
        }
        if !matches!(url.path(), "" | "/" | "/cdp" | "/mcp") {
            return Err(bad("has a path; give the host's base URL"));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(bad("has no host"));
        }
        url.set_scheme(scheme)
            .map_err(|_| bad("has an unusable scheme"))?;
        url.set_path("/mcp");
        let valid_env = token_env
            .bytes()
            .enumerate()
            .all(|(i, b)| b == b'_' || b.is_ascii_uppercase() || (i > 0 && b.is_ascii_digit()))
            && !token_env.is_empty()
            && token_env.len() <= 128;
        if !valid_env {
            return Err(AfError::invalid(format!(
                "--token-env {:?} is not an environment variable name (A-Z, 0-9, _)",
                token_env.chars().take(64).collect::<String>()
            ))
            .with_field("token_env"));
        }
        Ok(Transport::Remote {
            url: url.to_string(),
            token_env: token_env.to_string(),
        })
    }

    /// `afhttp mcp SERVER_ARGS...` run by `command`. A token among the arguments would be
    /// written into the file, so it is refused.
    pub fn stdio(command: String, server_args: &[String]) -> Result<Transport, AfError> {
        for a in server_args {
            if a.chars().any(char::is_control) {
                return Err(AfError::invalid("--server-arg contains control characters")
                    .with_field("server_arg"));
            }
            if a.starts_with("--token-secret") && !a.starts_with("--token-secret-file") {
                return Err(AfError::invalid(
                    "--server-arg --token-secret would write the token into the agent's configuration",
                )
                .with_field("server_arg")
                .with_hint("set AFHTTP_TOKEN_SECRET in the agent's environment, or pass --server-arg=--token-secret-file=PATH"));
            }
        }
        let mut args = vec!["mcp".to_string()];
        args.extend(server_args.iter().cloned());
        Ok(Transport::Stdio { command, args })
    }
}

/// The entry `agent` reads for `transport`.
pub fn entry(agent: McpAgent, transport: &Transport) -> Value {
    match (agent, transport) {
        (McpAgent::ClaudeCode, Transport::Stdio { command, args }) => {
            json!({"type": "stdio", "command": command, "args": args})
        }
        (McpAgent::ClaudeCode, Transport::Remote { url, token_env }) => json!({
            "type": "http",
            "url": url,
            "headers": {"Authorization": format!("Bearer ${{{token_env}}}")},
        }),
        (McpAgent::Codex, Transport::Stdio { command, args }) => {
            json!({"command": command, "args": args})
        }
        (McpAgent::Codex, Transport::Remote { url, token_env }) => {
            json!({"url": url, "bearer_token_env_var": token_env})
        }
        (McpAgent::Opencode, Transport::Stdio { command, args }) => {
            let mut cmd = vec![command.clone()];
            cmd.extend(args.iter().cloned());
            json!({"type": "local", "command": cmd, "enabled": true})
        }
        (McpAgent::Opencode, Transport::Remote { url, token_env }) => json!({
            "type": "remote",
            "url": url,
            "enabled": true,
            "headers": {"Authorization": format!("Bearer {{env:{token_env}}}")},
        }),
    }
}

/// What an operation found or did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The entry is there as this version writes it (after install: newly written).
    Installed,
    /// It was already there, identical: nothing was written.
    Unchanged,
    /// A different afhttp entry was there (install: replaced).
    Updated,
    /// An afhttp entry is there but differs from what install would write.
    Outdated,
    /// No afhttp entry.
    Missing,
    /// The entry was removed.
    Removed,
}

impl Status {
    /// The stable name in the result.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Installed => "installed",
            Status::Unchanged => "unchanged",
            Status::Updated => "updated",
            Status::Outdated => "outdated",
            Status::Missing => "missing",
            Status::Removed => "removed",
        }
    }
}

/// The file's text (`None` when it does not exist). Anything but a readable UTF-8 regular
/// file (after symlinks) is `invalid_argument`, and is left untouched.
fn read(path: &Path) -> Result<Option<String>, AfError> {
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if fs::symlink_metadata(path).is_ok() {
                return Err(AfError::invalid(format!(
                    "{} is a dangling symbolic link",
                    path.display()
                )));
            }
            return Ok(None);
        }
        Err(e) => return Err(AfError::io(format_args!("read {}", path.display()), &e)),
    };
    if !meta.is_file() {
        return Err(
            AfError::invalid(format!("{} is not a regular file", path.display()))
                .with_field("config"),
        );
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(AfError::invalid(format!(
            "{} is larger than {MAX_CONFIG_BYTES} bytes",
            path.display()
        )));
    }
    let bytes =
        fs::read(path).map_err(|e| AfError::io(format_args!("read {}", path.display()), &e))?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| AfError::invalid(format!("{} is not UTF-8 text", path.display())))
}

/// Write `text` over `path` atomically, through a symlink to its target, keeping the old
/// file's mode (a new file gets 0600).
fn write(path: &Path, text: &str) -> Result<(), AfError> {
    let target = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = target.parent().unwrap_or(Path::new("."));
    let mode = fs::metadata(&target)
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or(0o600);
    let mut temp = tempfile::Builder::new()
        .prefix(".afhttp-mcp.")
        .suffix(".partial")
        .tempfile_in(dir)
        .map_err(|e| AfError::io(format_args!("write in {}", dir.display()), &e))?;
    use std::io::Write;
    temp.write_all(text.as_bytes())
        .and_then(|()| {
            temp.as_file()
                .set_permissions(fs::Permissions::from_mode(mode))
        })
        .and_then(|()| temp.as_file().sync_all())
        .map_err(|e| AfError::io(format_args!("write {}", target.display()), &e))?;
    temp.persist(&target)
        .map_err(|e| AfError::io(format_args!("write {}", target.display()), &e.error))?;
    Ok(())
}

fn get(agent: McpAgent, text: &str) -> Result<Option<Value>, AfError> {
    if agent.is_toml() {
        toml_file::get(text, agent.container(), ENTRY)
    } else {
        json_edit::get(text, agent.container(), ENTRY)
    }
}

fn in_file(path: &Path, e: AfError) -> AfError {
    let message = format!("{}: {}", path.display(), e.message);
    AfError { message, ..e }
}

/// Write `agent`'s afhttp entry for `transport` into `path` (idempotent).
pub fn install(
    agent: McpAgent,
    path: &Path,
    transport: &Transport,
    create_dir: bool,
) -> Result<Status, AfError> {
    let want = entry(agent, transport);
    let text = read(path)?;
    let current = text.as_deref().unwrap_or("");
    let found = get(agent, current).map_err(|e| in_file(path, e))?;
    if found.as_ref() == Some(&want) {
        return Ok(Status::Unchanged);
    }
    let updated = if agent.is_toml() {
        toml_file::set(current, agent.container(), ENTRY, &want)
    } else {
        json_edit::set(current, agent.container(), ENTRY, &want)
    }
    .map_err(|e| in_file(path, e))?;
    if let Some(dir) = path.parent() {
        if create_dir && !dir.exists() {
            fs::create_dir_all(dir)
                .map_err(|e| AfError::io(format_args!("create {}", dir.display()), &e))?;
        } else if !dir.is_dir() {
            return Err(AfError::invalid(format!(
                "{} is not an existing directory",
                dir.display()
            ))
            .with_field("config"));
        }
    }
    write(path, &updated)?;
    Ok(if found.is_some() {
        Status::Updated
    } else {
        Status::Installed
    })
}

/// Remove `agent`'s afhttp entry from `path`; a file left with nothing in it is deleted.
pub fn remove(agent: McpAgent, path: &Path) -> Result<Status, AfError> {
    let Some(text) = read(path)? else {
        return Ok(Status::Missing);
    };
    let removed = if agent.is_toml() {
        toml_file::remove(&text, agent.container(), ENTRY)
    } else {
        json_edit::remove(&text, agent.container(), ENTRY)
    }
    .map_err(|e| in_file(path, e))?;
    let Some(rest) = removed else {
        return Ok(Status::Missing);
    };
    let empty = if agent.is_toml() {
        rest.trim().is_empty()
    } else {
        json_edit::is_empty_object(&rest)
    };
    if empty {
        let target = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        fs::remove_file(&target)
            .map_err(|e| AfError::io(format_args!("remove {}", target.display()), &e))?;
    } else {
        write(path, &rest)?;
    }
    Ok(Status::Removed)
}

/// Whether `path` holds the entry install would write: installed, outdated or missing.
pub fn check(
    agent: McpAgent,
    path: &Path,
    transport: &Transport,
) -> Result<(Status, Option<Value>), AfError> {
    let Some(text) = read(path)? else {
        return Ok((Status::Missing, None));
    };
    let found = get(agent, &text).map_err(|e| in_file(path, e))?;
    Ok(match found {
        None => (Status::Missing, None),
        Some(v) if v == entry(agent, transport) => (Status::Installed, Some(v)),
        Some(v) => (Status::Outdated, Some(v)),
    })
}
