//! `afhttp mcp install|remove|check`: afhttp's entry in each coding agent's MCP server
//! configuration (see [`crate::mcp_install`]), like `afhttp skill` for the skill.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use serde_json::{json, Value};

use crate::env;
use crate::envelope::Event;
use crate::error::AfError;
use crate::fsutil;
use crate::mcp_install::{self, McpAgent, Scope, Status, Transport};

/// `afhttp mcp` configuration operations.
#[derive(Debug, Clone, Subcommand)]
pub enum McpInstallCommand {
    /// Write afhttp's MCP server entry into each agent's configuration (idempotent; every
    /// other entry of the file is kept byte for byte).
    Install(InstallArgs),
    /// Remove afhttp's entry (and only it); a file left empty is deleted.
    Remove(InstallArgs),
    /// Report per agent whether the entry is installed, outdated or missing.
    Check(InstallArgs),
}

/// Which agents, which file, and what the entry says.
#[derive(Debug, Clone, Args)]
pub struct InstallArgs {
    /// Agent: claude-code, codex, opencode or all.
    #[arg(
        long,
        value_name = "claude-code|codex|opencode|all",
        default_value = "all"
    )]
    pub agent: String,
    /// `user` (the agent's own file, for every project) or `project` (a file in the project
    /// directory: `.mcp.json`, `.codex/config.toml`, `opencode.json`).
    #[arg(long, value_name = "user|project", default_value = "user")]
    pub scope: String,
    /// Project directory for `--scope project` (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// The configuration file itself, instead of the agent's usual place (one agent only).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Point the agent at this host's `/mcp` (Streamable HTTP) instead of starting
    /// `afhttp mcp` over stdio. The token is read by the agent from --token-env, never
    /// written into the file.
    #[arg(long, value_name = "URL")]
    pub endpoint_url: Option<String>,
    /// With --endpoint-url: the environment variable the agent takes the bearer token from.
    #[arg(long, value_name = "NAME", default_value = env::TOKEN_SECRET)]
    pub token_env: String,
    /// An argument for the stdio server after `afhttp mcp` (such as
    /// `--deny-private-networks`). Repeatable.
    #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
    pub server_arg: Vec<String>,
}

/// Run one operation.
pub fn run(op: McpInstallCommand) -> Event {
    let (code, outcome) = match op {
        McpInstallCommand::Install(a) => ("mcp_install", operate(&a, Op::Install)),
        McpInstallCommand::Remove(a) => ("mcp_remove", operate(&a, Op::Remove)),
        McpInstallCommand::Check(a) => ("mcp_check", operate(&a, Op::Check)),
    };
    match outcome {
        Ok(result) => Event::result(code, result, None),
        Err(e) => Event::error(&e, None),
    }
}

#[derive(Clone, Copy)]
enum Op {
    Install,
    Remove,
    Check,
}

fn scope_of(a: &InstallArgs) -> Result<Scope, AfError> {
    let project = match (a.scope.as_str(), &a.project) {
        ("user", None) => return Ok(Scope::User),
        ("user", Some(_)) => {
            return Err(AfError::invalid("--project needs --scope project").with_field("project"))
        }
        ("project", Some(p)) => fsutil::absolute(p),
        ("project", None) => {
            std::env::current_dir().map_err(|e| AfError::io("read the current directory", &e))?
        }
        (other, _) => {
            return Err(AfError::invalid(format!(
                "--scope {:?} is not user or project",
                other.chars().take(64).collect::<String>()
            ))
            .with_field("scope"))
        }
    };
    if !project.is_dir() {
        return Err(AfError::invalid(format!(
            "--project {} is not an existing directory",
            project.display()
        ))
        .with_field("project"));
    }
    Ok(Scope::Project(project))
}

fn transport_of(a: &InstallArgs) -> Result<Transport, AfError> {
    match &a.endpoint_url {
        Some(url) => {
            if !a.server_arg.is_empty() {
                return Err(AfError::invalid(
                    "--server-arg applies to the stdio entry, not to --endpoint-url",
                )
                .with_field("server_arg"));
            }
            Transport::remote(url, &a.token_env)
        }
        None => {
            let exe = std::env::current_exe()
                .map_err(|e| AfError::io("find the afhttp executable", &e))?;
            Transport::stdio(exe.display().to_string(), &a.server_arg)
        }
    }
}

fn operate(a: &InstallArgs, op: Op) -> Result<Value, AfError> {
    let agents = McpAgent::parse_selection(&a.agent)?;
    let scope = scope_of(a)?;
    let transport = transport_of(a)?;
    let config = match &a.config {
        Some(_) if agents.len() > 1 => {
            return Err(
                AfError::invalid("--config names one file: pass one --agent").with_field("config"),
            )
        }
        Some(p) if p.as_os_str().is_empty() || p.is_dir() => {
            return Err(
                AfError::invalid(format!("--config {} is not a file path", p.display()))
                    .with_field("config"),
            )
        }
        Some(p) => {
            let p = fsutil::absolute(p);
            if !p.parent().is_some_and(Path::is_dir) {
                return Err(AfError::invalid(format!(
                    "--config {}: its directory does not exist",
                    p.display()
                ))
                .with_field("config"));
            }
            Some(p)
        }
        None => None,
    };
    let mut out = Vec::new();
    let mut all_installed = true;
    for agent in agents {
        let (path, create_dir) = match &config {
            Some(p) => (p.clone(), false),
            None => (agent.config_path(&scope, super::env())?, true),
        };
        let mut row = json!({"agent": agent.as_str(), "path": path});
        let status = match op {
            Op::Install => mcp_install::install(agent, &path, &transport, create_dir)?,
            Op::Remove => mcp_install::remove(agent, &path)?,
            Op::Check => {
                let (status, found) = mcp_install::check(agent, &path, &transport)?;
                if let Some(found) = found.filter(|_| status == Status::Outdated) {
                    row["found"] = found;
                }
                status
            }
        };
        all_installed &= status == Status::Installed;
        row["status"] = json!(status.as_str());
        if !matches!(op, Op::Remove) {
            row["entry"] = mcp_install::entry(agent, &transport);
        }
        out.push(row);
    }
    let mut v = match &scope {
        Scope::User => json!({"scope": "user"}),
        Scope::Project(p) => json!({"scope": "project", "project": p}),
    };
    v["transport"] = json!(transport.kind());
    v["agents"] = Value::Array(out);
    if matches!(op, Op::Check) {
        v["all_installed"] = json!(all_installed);
    }
    Ok(v)
}
