//! Structured host logs: one JSON object per line on stderr, level from `AFHTTP_LOG`.

use std::io::Write;

use serde_json::{json, Value};

/// Severity, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Verbose detail.
    Debug,
    /// Normal lifecycle events.
    Info,
    /// Something degraded.
    Warn,
    /// Something failed.
    Error,
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        }
    }
}

/// The threshold a front end set with [`init`] (`info` until then).
static THRESHOLD: std::sync::OnceLock<Option<Level>> = std::sync::OnceLock::new();

/// Set the threshold from `AFHTTP_LOG` in `env` (default `info`; `off` silences
/// everything), once per process: the front end's resolve step calls it.
pub fn init(env: &crate::env::Snapshot) {
    let _ = THRESHOLD.set(parse(env.get(crate::env::LOG).as_deref()));
}

/// The threshold: what [`init`] set, else `info`.
pub fn threshold() -> Option<Level> {
    *THRESHOLD.get().unwrap_or(&Some(Level::Info))
}

/// The threshold named by an `AFHTTP_LOG` value.
fn parse(value: Option<&str>) -> Option<Level> {
    match value.map(str::to_ascii_lowercase).as_deref() {
        Some("off") | Some("none") => None,
        Some("debug") | Some("trace") => Some(Level::Debug),
        Some("warn") | Some("warning") => Some(Level::Warn),
        Some("error") => Some(Level::Error),
        _ => Some(Level::Info),
    }
}

/// Write one log line with `fields` merged in (never secrets: callers pass redacted values).
pub fn log(level: Level, msg: &str, fields: Value) {
    if threshold().is_none_or(|t| level < t) {
        return;
    }
    let ts = crate::profile::now_rfc3339();
    let mut line = json!({"ts": ts, "level": level.as_str(), "msg": msg});
    if let (Value::Object(dst), Value::Object(src)) = (&mut line, fields) {
        dst.extend(src);
    }
    let mut s = line.to_string();
    s.push('\n');
    let _ = std::io::stderr().lock().write_all(s.as_bytes());
}
