//! The only place that writes to stdout: exactly one JSON event per command.

#![allow(clippy::print_stdout)]

use std::io::Write;

use crate::envelope::Event;

/// Exit status for a result.
pub const EXIT_OK: u8 = 0;
/// Exit status for an error event.
pub const EXIT_ERROR: u8 = 1;
/// Exit status for a command-line parse error (still a JSON error event).
pub const EXIT_USAGE: u8 = 2;

/// Print `event` as one line; a closed stdout (broken pipe) is not an error.
pub fn emit(event: &Event, reveal_secrets: bool) {
    let line = event.to_line(reveal_secrets);
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(line.as_bytes()).and_then(|_| out.flush());
}

/// Print human text (only `--help`).
pub fn emit_text(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
}

/// Print one progress line on stderr (image builds, waits, followed logs); stdout keeps its
/// one event.
pub fn progress(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err
        .write_all(line.as_bytes())
        .and_then(|_| err.write_all(b"\n"));
}

/// The standard streams as the MCP server's protocol channel (`afhttp mcp`): while it runs,
/// stdout carries JSON-RPC messages instead of the one event.
#[cfg(feature = "mcp")]
pub fn protocol_streams() -> (tokio::io::Stdin, tokio::io::Stdout) {
    (tokio::io::stdin(), tokio::io::stdout())
}
