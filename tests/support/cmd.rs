//! Running the built binary as an agent would, in an isolated environment.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::deadline::{collect_within, RUN_DEADLINE};
use super::events::{decode, ErrorBody, FetchResult};

/// An isolated environment: its own HOME, XDG_DATA_HOME and TMPDIR under one temp dir.
pub struct Fixture {
    /// Keeps the directory alive.
    pub dir: tempfile::TempDir,
    /// `$HOME` for the command.
    pub home: PathBuf,
    /// `$XDG_DATA_HOME` for the command.
    pub data: PathBuf,
    /// `$TMPDIR` for the command.
    pub tmp: PathBuf,
}

impl Fixture {
    /// A fresh environment.
    pub fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let data = dir.path().join("data");
        let tmp = dir.path().join("tmp");
        for d in [&home, &data, &tmp] {
            std::fs::create_dir_all(d).unwrap();
        }
        Fixture {
            dir,
            home,
            data,
            tmp,
        }
    }

    /// A command for the built binary in this environment.
    pub fn cmd(&self) -> Cmd {
        self.cmd_via(&[])
    }

    /// The binary run through a wrapper such as `unshare -n` (a private, empty network).
    pub fn cmd_via(&self, wrapper: &[&str]) -> Cmd {
        let mut cmd = match wrapper.split_first() {
            Some((program, rest)) => {
                let mut c = self.isolated(program);
                c.args(rest).arg(env!("CARGO_BIN_EXE_afhttp"));
                c
            }
            None => self.isolated(env!("CARGO_BIN_EXE_afhttp")),
        };
        cmd.current_dir(self.dir.path()).stdin(Stdio::null());
        Cmd {
            cmd,
            argv: Vec::new(),
            deadline: RUN_DEADLINE,
        }
    }

    /// The built binary as a long-running child in this environment (a host, or a fetch
    /// a test kills): browser sandbox off (root), warn-level logs on the test's stderr, and
    /// stdout piped for its event.
    pub fn child_command(&self) -> Command {
        let mut cmd = self.isolated(env!("CARGO_BIN_EXE_afhttp"));
        cmd.env("AFHTTP_NO_SANDBOX", "1")
            .env("AFHTTP_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        cmd
    }

    /// `program` with a cleared environment but this one's `PATH`, `HOME`, `XDG_DATA_HOME`
    /// and `TMPDIR`.
    pub fn isolated(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("XDG_DATA_HOME", &self.data)
            .env("TMPDIR", &self.tmp);
        cmd
    }

    /// The root of the environment.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// A pending run of the binary.
pub struct Cmd {
    cmd: Command,
    argv: Vec<String>,
    deadline: Duration,
}

impl Cmd {
    /// Add one argument.
    pub fn arg(mut self, a: impl AsRef<std::ffi::OsStr>) -> Self {
        self.argv.push(a.as_ref().to_string_lossy().into_owned());
        self.cmd.arg(a);
        self
    }

    /// Add several arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        for a in args {
            self = self.arg(a);
        }
        self
    }

    /// Set an environment variable.
    pub fn env(mut self, k: &str, v: impl AsRef<std::ffi::OsStr>) -> Self {
        self.cmd.env(k, v);
        self
    }

    /// Start it in the background; [`Running::finish`] waits and parses like [`Cmd::run`].
    pub fn spawn(mut self) -> Running {
        self.cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        Running {
            child: self.cmd.spawn().unwrap(),
            argv: self.argv,
            deadline: self.deadline,
        }
    }

    /// Run it and parse its stdout, which must be exactly one JSON line (unless `--help`).
    /// Past its deadline it is killed and the test fails with its argv and output.
    pub fn run(self) -> Run {
        self.spawn().finish()
    }
}

/// A run of the binary in the background.
pub struct Running {
    /// The process.
    pub child: std::process::Child,
    argv: Vec<String>,
    deadline: Duration,
}

impl Running {
    /// Wait for it to exit (within its deadline) and parse its output.
    pub fn finish(mut self) -> Run {
        let what = format!("afhttp {:?}", self.argv);
        let out = collect_within(&mut self.child, self.deadline, &what);
        Run::parse(out, &self.argv)
    }
}

impl Run {
    fn parse(out: std::process::Output, argv: &[String]) -> Run {
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let context = format!(
            "argv: afhttp {:?}\nstatus: {:?}\nstdout: {stdout}\nstderr: {stderr}",
            argv, out.status
        );
        let lines: Vec<&str> = stdout.lines().collect();
        let event = if lines.len() == 1 {
            serde_json::from_str(lines[0]).unwrap_or(Value::Null)
        } else {
            Value::Null
        };
        Run {
            status: out.status.code().unwrap_or(-1),
            stdout,
            stderr,
            event,
            context,
        }
    }
}

/// What one run produced.
pub struct Run {
    /// Exit status (-1 when killed by a signal).
    pub status: i32,
    /// Raw stdout.
    pub stdout: String,
    /// Raw stderr.
    pub stderr: String,
    /// The one JSON event (Null when stdout was not exactly one JSON line).
    pub event: Value,
    /// argv, status and output, for failure messages.
    pub context: String,
}

impl Run {
    /// Assert a `result` event with exit 0 and return `result`.
    pub fn result(&self) -> &Value {
        assert_eq!(self.status, 0, "expected success\n{}", self.context);
        assert_eq!(self.event["kind"], "result", "{}", self.context);
        &self.event["result"]
    }

    /// The absolute path in `result.<key>` (e.g. `body_file`) of a successful run.
    pub fn artifact_path(&self, key: &str) -> String {
        let p = self.result()[key]
            .as_str()
            .unwrap_or_else(|| panic!("no {key} in the result\n{}", self.context));
        assert!(Path::new(p).is_absolute(), "{key} is not absolute: {p}");
        p.to_string()
    }

    /// The text of the artifact at `result.<key>`.
    pub fn artifact_text(&self, key: &str) -> String {
        std::fs::read_to_string(self.artifact_path(key)).unwrap()
    }

    /// The artifact at `result.<key>`, parsed as JSON.
    pub fn artifact_json(&self, key: &str) -> Value {
        serde_json::from_slice(&std::fs::read(self.artifact_path(key)).unwrap()).unwrap()
    }

    /// A successful `fetch` run's result, typed.
    pub fn fetch(&self) -> FetchResult {
        let r: FetchResult = decode(self.result());
        assert_eq!(r.code, "fetch", "{}", self.context);
        r
    }

    /// Assert an `error` event with `code` and exit `status`; return `error`.
    pub fn error(&self, code: &str, status: i32) -> &Value {
        self.failure(code, status);
        &self.event["error"]
    }

    /// Assert an `error` event with `code` and exit `status`; return `error`, typed.
    pub fn failure(&self, code: &str, status: i32) -> ErrorBody {
        assert_eq!(
            self.event["kind"], "error",
            "expected an error\n{}",
            self.context
        );
        let e: ErrorBody = decode(&self.event["error"]);
        assert_eq!(e.code, code, "{}", self.context);
        assert_eq!(self.status, status, "{}", self.context);
        for (field, text) in [("message", Some(&e.message)), ("hint", e.hint.as_ref())] {
            if let Some(debug) = text.and_then(|t| rust_debug_form(t)) {
                panic!(
                    "the {field} shows a Rust Debug form {debug:?}\n{}",
                    self.context
                );
            }
        }
        e
    }
}

/// The first `Name("…")`, `Name(123)` or `Name { …` in `text`: a Rust `Debug` form of a
/// domain type, which a user-facing message must not show.
pub fn rust_debug_form(text: &str) -> Option<&str> {
    let bytes = text.as_bytes();
    let mut start = None;
    for (i, &b) in bytes.iter().enumerate() {
        match start {
            None if b.is_ascii_uppercase()
                && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_')) =>
            {
                start = Some(i)
            }
            Some(_) if b.is_ascii_alphanumeric() || b == b'_' => {}
            Some(s) => {
                let rest = &text[i..];
                if rest.starts_with("(\"") || rest.starts_with(" { ") || rest.starts_with("(Some(")
                {
                    return Some(&text[s..i]);
                }
                start = (b.is_ascii_uppercase()).then_some(i);
            }
            None => {}
        }
    }
    None
}

#[test]
fn debug_forms_are_recognised() {
    assert_eq!(
        rust_debug_form("no profile named ProfileName(\"nope\")"),
        Some("ProfileName")
    );
    assert!(rust_debug_form("Options { a: 1 }").is_some());
    for fine in [
        "no persistent profile named \"nope\"",
        "HTTP(S) proxy refused",
        "--render must be none, auto or always, not \"x\"",
        "SameSite None (\"x\")",
    ] {
        assert_eq!(rust_debug_form(fine), None, "{fine}");
    }
}
