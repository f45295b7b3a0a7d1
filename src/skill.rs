//! The embedded Agent Skill and where each coding agent looks for it.
//!
//! Only `<skills>/afhttp/SKILL.md` is ever written or removed (plus its `afhttp` directory
//! when it ends up empty); nothing else in an agent's configuration is touched.

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::env;
use crate::error::AfError;
use crate::fsutil;

/// The skill text shipped in this binary.
pub const SKILL_MD: &str = include_str!("../assets/skill/SKILL.md");

/// File name agents load.
pub const SKILL_FILE: &str = "SKILL.md";

/// Directory name of our skill inside an agent's skills directory.
pub const SKILL_DIR: &str = "afhttp";

/// A coding agent with a skills directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Agent {
    /// Claude Code: `~/.claude/skills/`, project `.claude/skills/`.
    Claude,
    /// Codex: `~/.agents/skills/`, project `.agents/skills/`.
    Codex,
    /// opencode: `~/.config/opencode/skills/`, project `.opencode/skills/`.
    Opencode,
}

impl Agent {
    /// Every supported agent.
    pub const ALL: &'static [Agent] = &[Agent::Claude, Agent::Codex, Agent::Opencode];

    /// `claude`, `codex` or `opencode`.
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Opencode => "opencode",
        }
    }

    /// Parse an `--agent` value: one agent name or `all`.
    pub fn parse_selection(raw: &str) -> Result<Vec<Agent>, AfError> {
        if raw == "all" {
            return Ok(Agent::ALL.to_vec());
        }
        Agent::ALL
            .iter()
            .copied()
            .find(|a| a.as_str() == raw)
            .map(|a| vec![a])
            .ok_or_else(|| {
                AfError::invalid(format!("unknown agent {raw:?}"))
                    .with_hint("use claude, codex, opencode or all")
            })
    }

    /// The agent's skills directory: under `project` when given, else under `home`.
    pub fn skills_dir(self, home: &Path, project: Option<&Path>) -> PathBuf {
        match (self, project) {
            (Agent::Claude, Some(p)) => p.join(".claude/skills"),
            (Agent::Claude, None) => home.join(".claude/skills"),
            (Agent::Codex, Some(p)) => p.join(".agents/skills"),
            (Agent::Codex, None) => home.join(".agents/skills"),
            (Agent::Opencode, Some(p)) => p.join(".opencode/skills"),
            (Agent::Opencode, None) => home.join(".config/opencode/skills"),
        }
    }

    /// Full path of our `SKILL.md` for this agent.
    pub fn skill_path(self, home: &Path, project: Option<&Path>) -> PathBuf {
        self.skills_dir(home, project)
            .join(SKILL_DIR)
            .join(SKILL_FILE)
    }
}

/// `$HOME` of `env` (the front end's snapshot) as an absolute path (`invalid_argument` when
/// unset or relative).
pub fn home_dir(env: &env::Snapshot) -> Result<PathBuf, AfError> {
    env.get(env::HOME)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .ok_or_else(|| {
            AfError::invalid("HOME is not set to an absolute path")
                .with_hint("set HOME, or pass --project DIR")
        })
}

/// What `install` did for one agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstallOutcome {
    /// No skill was there; it is now.
    Installed,
    /// The same text was already there; nothing was written.
    Unchanged,
    /// A different text was there and was replaced.
    Updated,
}

impl InstallOutcome {
    /// `installed`, `unchanged` or `updated`.
    pub fn as_str(self) -> &'static str {
        match self {
            InstallOutcome::Installed => "installed",
            InstallOutcome::Unchanged => "unchanged",
            InstallOutcome::Updated => "updated",
        }
    }
}

/// What `remove` did for one agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoveOutcome {
    /// Our SKILL.md was deleted.
    Removed,
    /// There was nothing to remove.
    Absent,
}

impl RemoveOutcome {
    /// `removed` or `absent`.
    pub fn as_str(self) -> &'static str {
        match self {
            RemoveOutcome::Removed => "removed",
            RemoveOutcome::Absent => "absent",
        }
    }
}

/// Whether the skill is installed at `path` and matches this binary's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillStatus {
    /// The agent.
    pub agent: Agent,
    /// Where its SKILL.md is (or would be).
    pub path: PathBuf,
    /// A SKILL.md is there.
    pub installed: bool,
    /// It is byte-identical to the embedded skill.
    pub current: bool,
}

fn read_existing(path: &Path) -> Result<Option<Vec<u8>>, AfError> {
    match fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(AfError::io(format_args!("read {}", path.display()), &e)),
    }
}

/// Install (or refresh) the skill for `agent`; idempotent.
pub fn install(
    agent: Agent,
    home: &Path,
    project: Option<&Path>,
) -> Result<(PathBuf, InstallOutcome), AfError> {
    let path = agent.skill_path(home, project);
    let outcome = match read_existing(&path)? {
        Some(b) if b == SKILL_MD.as_bytes() => return Ok((path, InstallOutcome::Unchanged)),
        Some(_) => InstallOutcome::Updated,
        None => InstallOutcome::Installed,
    };
    let dir = agent.skills_dir(home, project).join(SKILL_DIR);
    fsutil::create_private_dir_all(&dir)?;
    write_public_file(&dir, SKILL_FILE, SKILL_MD.as_bytes())?;
    Ok((path, outcome))
}

/// Write `dir/name` atomically with mode 0644 (a skill is not a secret; agents must read it).
fn write_public_file(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), AfError> {
    let target = dir.join(name);
    let ctx = |what: &str| format!("{what} {}", target.display());
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".partial")
        .permissions(fs::Permissions::from_mode(0o644))
        .tempfile_in(dir)
        .map_err(|e| AfError::io(ctx("create"), &e))?;
    temp.write_all(bytes)
        .and_then(|()| temp.as_file().sync_all())
        .map_err(|e| AfError::io(ctx("write"), &e))?;
    temp.persist(&target)
        .map_err(|e| AfError::io(ctx("rename into"), &e.error))?;
    Ok(())
}

/// Remove our SKILL.md for `agent`, and its `afhttp` directory when that is then empty.
pub fn remove(
    agent: Agent,
    home: &Path,
    project: Option<&Path>,
) -> Result<(PathBuf, RemoveOutcome), AfError> {
    let path = agent.skill_path(home, project);
    let meta = match fs::symlink_metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok((path, RemoveOutcome::Absent))
        }
        Err(e) => return Err(AfError::io(format_args!("inspect {}", path.display()), &e)),
    };
    if meta.is_dir() {
        return Err(AfError::invalid(format!(
            "{} is a directory, not a skill file; leaving it alone",
            path.display()
        )));
    }
    fs::remove_file(&path)
        .map_err(|e| AfError::io(format_args!("remove {}", path.display()), &e))?;
    if let Some(dir) = path.parent() {
        // Fails harmlessly when other files remain: only an empty directory is removed.
        let _ = fs::remove_dir(dir);
    }
    Ok((path, RemoveOutcome::Removed))
}

/// Report whether the skill for `agent` is installed and current.
pub fn check(agent: Agent, home: &Path, project: Option<&Path>) -> Result<SkillStatus, AfError> {
    let path = agent.skill_path(home, project);
    let existing = read_existing(&path)?;
    Ok(SkillStatus {
        agent,
        installed: existing.is_some(),
        current: existing.as_deref() == Some(SKILL_MD.as_bytes()),
        path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skill_has_front_matter() {
        assert!(SKILL_MD.starts_with("---\nname: afhttp\ndescription: "));
        assert!(SKILL_MD.contains("next_action"));
    }

    #[test]
    fn paths_per_agent() {
        let h = Path::new("/h");
        let p = Some(Path::new("/p"));
        assert_eq!(
            Agent::Claude.skill_path(h, None),
            Path::new("/h/.claude/skills/afhttp/SKILL.md")
        );
        assert_eq!(
            Agent::Codex.skill_path(h, p),
            Path::new("/p/.agents/skills/afhttp/SKILL.md")
        );
        assert_eq!(
            Agent::Opencode.skill_path(h, None),
            Path::new("/h/.config/opencode/skills/afhttp/SKILL.md")
        );
        assert_eq!(
            Agent::Opencode.skill_path(h, p),
            Path::new("/p/.opencode/skills/afhttp/SKILL.md")
        );
        assert_eq!(Agent::parse_selection("all").unwrap().len(), 3);
        assert!(Agent::parse_selection("cursor").is_err());
    }

    #[test]
    fn install_check_remove() {
        let tmp = tempfile::tempdir().unwrap();
        let h = tmp.path();
        let (path, o) = install(Agent::Claude, h, None).unwrap();
        assert_eq!(o, InstallOutcome::Installed);
        assert_eq!(
            install(Agent::Claude, h, None).unwrap().1,
            InstallOutcome::Unchanged
        );
        fs::write(&path, b"old").unwrap();
        let st = check(Agent::Claude, h, None).unwrap();
        assert!(st.installed && !st.current);
        assert_eq!(
            install(Agent::Claude, h, None).unwrap().1,
            InstallOutcome::Updated
        );
        assert!(check(Agent::Claude, h, None).unwrap().current);

        let sibling = path.parent().unwrap().join("notes.txt");
        fs::write(&sibling, b"mine").unwrap();
        assert_eq!(
            remove(Agent::Claude, h, None).unwrap().1,
            RemoveOutcome::Removed
        );
        assert!(sibling.exists());
        fs::remove_file(&sibling).unwrap();
        install(Agent::Claude, h, None).unwrap();
        remove(Agent::Claude, h, None).unwrap();
        assert!(!path.parent().unwrap().exists());
        assert!(h.join(".claude/skills").exists());
        assert_eq!(
            remove(Agent::Claude, h, None).unwrap().1,
            RemoveOutcome::Absent
        );
    }
}
