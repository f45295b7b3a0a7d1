//! `afhttp skill`: install, remove or check the embedded Agent Skill.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use serde_json::{json, Value};

use crate::envelope::Event;
use crate::error::AfError;
use crate::fsutil;
use crate::skill::{self, Agent};

/// Arguments of `afhttp skill`.
#[derive(Debug, Args)]
pub struct SkillArgs {
    /// The skill operation.
    #[command(subcommand)]
    pub command: SkillCommand,
}

/// `afhttp skill` operations.
#[derive(Debug, Subcommand)]
pub enum SkillCommand {
    /// Write the skill into each agent's skills directory (idempotent).
    Install(TargetArgs),
    /// Delete the skill's SKILL.md (and its afhttp directory when empty); nothing else.
    Remove(TargetArgs),
    /// Report, per agent, whether the skill is installed and current.
    Check(TargetArgs),
}

/// Which agents and which scope.
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// Agent: claude, codex, opencode or all.
    #[arg(long, value_name = "claude|codex|opencode|all", default_value = "all")]
    pub agent: String,
    /// Project directory for a project-local skill instead of the user's home.
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
}

/// Run `afhttp skill`.
pub fn run(args: SkillArgs) -> Event {
    let (code, outcome) = match args.command {
        SkillCommand::Install(t) => ("skill_install", install(&t)),
        SkillCommand::Remove(t) => ("skill_remove", remove(&t)),
        SkillCommand::Check(t) => ("skill_check", check(&t)),
    };
    match outcome {
        Ok(result) => Event::result(code, result, None),
        Err(e) => Event::error(&e, None),
    }
}

/// Validated targets: agents, home, and the project directory when given.
struct Targets {
    agents: Vec<Agent>,
    home: PathBuf,
    project: Option<PathBuf>,
}

fn resolve(t: &TargetArgs) -> Result<Targets, AfError> {
    let agents = Agent::parse_selection(&t.agent)?;
    let project = match &t.project {
        Some(p) => {
            let p = fsutil::absolute(p);
            if !p.is_dir() {
                return Err(AfError::invalid(format!(
                    "--project {} is not an existing directory",
                    p.display()
                )));
            }
            Some(p)
        }
        None => None,
    };
    // HOME is only needed for user-level installs.
    let home = match &project {
        Some(_) => skill::home_dir(super::env()).unwrap_or_default(),
        None => skill::home_dir(super::env())?,
    };
    Ok(Targets {
        agents,
        home,
        project,
    })
}

fn scope(t: &Targets) -> Value {
    // Fields that do not apply are omitted rather than null (DESIGN "Events").
    match &t.project {
        Some(p) => json!({"scope": "project", "project": p}),
        None => json!({"scope": "user"}),
    }
}

fn finish(t: &Targets, agents: Vec<Value>) -> Value {
    let mut v = scope(t);
    v["skill_version"] = json!(crate::VERSION);
    v["agents"] = Value::Array(agents);
    v
}

fn project(t: &Targets) -> Option<&Path> {
    t.project.as_deref()
}

fn install(args: &TargetArgs) -> Result<Value, AfError> {
    let t = resolve(args)?;
    let mut out = Vec::new();
    for agent in &t.agents {
        let (path, outcome) = skill::install(*agent, &t.home, project(&t))?;
        out.push(json!({"agent": agent.as_str(), "path": path, "status": outcome.as_str()}));
    }
    Ok(finish(&t, out))
}

fn remove(args: &TargetArgs) -> Result<Value, AfError> {
    let t = resolve(args)?;
    let mut out = Vec::new();
    for agent in &t.agents {
        let (path, outcome) = skill::remove(*agent, &t.home, project(&t))?;
        out.push(json!({"agent": agent.as_str(), "path": path, "status": outcome.as_str()}));
    }
    Ok(finish(&t, out))
}

fn check(args: &TargetArgs) -> Result<Value, AfError> {
    let t = resolve(args)?;
    let mut out = Vec::new();
    let mut all_current = true;
    for agent in &t.agents {
        let st = skill::check(*agent, &t.home, project(&t))?;
        all_current &= st.current;
        out.push(json!({
            "agent": st.agent.as_str(),
            "path": st.path,
            "installed": st.installed,
            "current": st.current,
        }));
    }
    let mut v = finish(&t, out);
    v["all_current"] = json!(all_current);
    Ok(v)
}
