//! Command-line front end: clap definitions, one file per command, and the dispatch.

pub mod capabilities;
pub mod cdp;
pub mod container;
pub mod driver;
pub mod fetch;
pub mod fleet;
pub mod health;
pub mod help_doc;
pub mod host;
pub mod host_args;
pub mod mcp;
pub mod mcp_install;
pub mod output;
pub mod panel;
pub mod profile;
pub mod progress;
pub mod reach;
pub mod skill;
pub mod tabs;
pub mod upload;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use crate::envelope::Event;
use crate::error::AfError;

/// afhttp: open a URL and get back facts — artifacts on disk and one JSON event on stdout.
#[derive(Debug, Parser)]
#[command(name = "afhttp", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Commands,
}

/// Every registered command.
#[derive(Debug, Subcommand)]
pub enum Commands {
    /// Run a foreground browser host: browser, profile and the CDP/HTTP listener.
    Host(Box<host::HostArgs>),
    /// Acquire a URL over HTTP (or a browser when needed) and write artifacts.
    Fetch(Box<fetch::FetchArgs>),
    /// Attach a local file to an `<input type=file>` in a host's tab (`DOM.setFileInputFiles`).
    Upload(upload::UploadArgs),
    /// Send one raw CDP method to a host's browser or one of its tabs.
    Cdp(cdp::CdpArgs),
    /// List or close a host's tabs.
    Tabs(tabs::TabsArgs),
    /// Print a short-lived takeover URL (a single-use handoff, never the token) for a human.
    Panel(panel::PanelArgs),
    /// Query a host's /health readiness.
    Health(health::HealthArgs),
    /// Query a host's /capabilities planning metadata.
    Capabilities(capabilities::CapabilitiesArgs),
    /// Inspect and administer local browser profiles.
    Profile(profile::ProfileArgs),
    /// Install, remove or check the embedded Agent Skill for coding agents.
    Skill(skill::SkillArgs),
    /// Build, install, inspect, log or remove the managed local host container.
    Container(container::ContainerArgs),
    /// A fleet of hosts (Swarm, Kubernetes): every member's health, load and profiles.
    Fleet(fleet::FleetArgs),
    /// Serve the Model Context Protocol over stdio (tools: fetch, read_artifact, health,
    /// capabilities, tabs_list, tabs_close, takeover; cdp with --allow-cdp) for agents that
    /// configure MCP servers.
    Mcp(mcp::McpArgs),
}

/// Run the command line and return the process exit code.
pub fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    ExitCode::from(run(args))
}

/// Parse `args` (including argv\[0\]), run the command, print its one event; returns the exit code.
pub fn run(args: Vec<OsString>) -> u8 {
    crate::host::log::init(env());
    if let Some(req) = help_doc::recursive_help_request(&args) {
        if let Some(page) = help_doc::render_request(&Cli::command(), &req) {
            output::emit_text(&page);
            return output::EXIT_OK;
        }
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(err) => return report_parse_error(err, &args),
    };
    if let Commands::Host(args) = cli.command {
        let (event, code) = host::run(*args);
        if let Some(e) = event {
            output::emit(&e, false);
        }
        return code;
    }
    if let Commands::Mcp(mut args) = cli.command {
        if let Some(op) = args.command.take() {
            let event = mcp_install::run(op);
            output::emit(&event, false);
            return if event.is_error() {
                output::EXIT_ERROR
            } else {
                output::EXIT_OK
            };
        }
        return match mcp::run(args) {
            Some(e) => {
                output::emit(&e, false);
                output::EXIT_ERROR
            }
            None => output::EXIT_OK,
        };
    }
    if let Commands::Fetch(args) = cli.command {
        let event = fetch::run(*args, &|e| output::emit(e, false));
        return if event.is_error() {
            output::EXIT_ERROR
        } else {
            output::EXIT_OK
        };
    }
    let (event, reveal) = match cli.command {
        Commands::Container(args) => container::run(args),
        other => (dispatch(other), false),
    };
    output::emit(&event, reveal);
    if event.is_error() {
        output::EXIT_ERROR
    } else {
        output::EXIT_OK
    }
}

fn dispatch(command: Commands) -> Event {
    match command {
        Commands::Fetch(_) => {
            Event::error(&AfError::invalid("fetch is dispatched separately"), None)
        }
        Commands::Host(_) => Event::error(&AfError::invalid("host is dispatched separately"), None),
        Commands::Upload(args) => upload::run(args),
        Commands::Cdp(args) => cdp::run(args),
        Commands::Tabs(args) => tabs::run(args),
        Commands::Panel(args) => panel::run(args),
        Commands::Health(args) => health::run(args),
        Commands::Capabilities(args) => capabilities::run(args),
        Commands::Profile(args) => profile::run(args),
        Commands::Skill(args) => skill::run(args),
        Commands::Container(args) => container::run(args).0,
        Commands::Fleet(args) => fleet::run(args),
        Commands::Mcp(_) => Event::error(&AfError::invalid("mcp is dispatched separately"), None),
    }
}

fn report_parse_error(err: clap::Error, args: &[OsString]) -> u8 {
    use clap::error::ErrorKind;
    match err.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            output::emit_text(&err.render().to_string());
            output::EXIT_OK
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let e = AfError::invalid("a command is required")
                .with_hint("run `afhttp --help` to list the commands");
            output::emit(&Event::error(&e, None), false);
            output::EXIT_USAGE
        }
        _ => {
            let e = AfError::invalid(parse_error_message(&err.render().to_string()))
                .with_hint("run the command with --help for usage");
            output::emit(&Event::error(&e, None), false);
            if is_value_error(&err, args) {
                output::EXIT_ERROR
            } else {
                output::EXIT_USAGE
            }
        }
    }
}

/// Whether a parse error is about a value given to a known flag (exit 1) rather than the
/// shape of the command line (exit 2). A flag left without its value (last on the line, or
/// followed by another flag) is a shape error; an explicitly empty value is a value error.
fn is_value_error(err: &clap::Error, args: &[OsString]) -> bool {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    match err.kind() {
        ErrorKind::InvalidValue => {
            let empty = matches!(
                err.get(ContextKind::InvalidValue),
                Some(ContextValue::String(v)) if v.is_empty()
            );
            let flag = match err.get(ContextKind::InvalidArg) {
                Some(ContextValue::String(a)) => a.split_whitespace().next().map(str::to_string),
                _ => None,
            };
            !(empty && flag.is_some_and(|f| value_missing(args, &f)))
        }
        ErrorKind::ValueValidation | ErrorKind::InvalidUtf8 => true,
        _ => false,
    }
}

/// Whether `flag` appears in `args` with nothing after it, or with another flag after it.
fn value_missing(args: &[OsString], flag: &str) -> bool {
    args.iter().enumerate().skip(1).any(|(i, a)| {
        a.to_str() == Some(flag)
            && args
                .get(i + 1)
                .and_then(|next| next.to_str())
                .is_none_or(|next| next.len() > 1 && next.starts_with('-'))
    })
}

/// clap's rendered error as one line: its first paragraph, so a list that follows a colon
/// (the missing arguments, the possible values) stays in the message; without "error: "
/// and without the usage and tips.
fn parse_error_message(rendered: &str) -> String {
    let paragraph: Vec<&str> = rendered
        .lines()
        .skip_while(|l| l.trim().is_empty())
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    let line = paragraph.join(" ");
    let line = line.trim_start_matches("error: ").trim();
    if line.is_empty() {
        "invalid command line".to_string()
    } else {
        line.to_string()
    }
}

/// The flag a request field is set with: `timeout_ms` is `--timeout-ms`, `url` the `URL`
/// argument.
pub fn flag_for(field: &str) -> String {
    match field {
        "url" => "the URL argument".to_string(),
        f => format!("--{}", f.replace('_', "-")),
    }
}

/// An SDK error as the command line shows it. The SDK's messages and hints name request
/// fields (an MCP caller or an SDK user has no flags); when the error names its field, the
/// hint's mentions of that field become its flag (`raise timeout_ms` → `raise
/// --timeout-ms`), or the flag is added.
pub fn flag_hint(mut e: AfError) -> AfError {
    let Some(field) = e.field.clone() else {
        return e;
    };
    let flag = flag_for(&field);
    e.hint = Some(match e.hint.take() {
        Some(h) if field != "url" && mentions(&h, &field) => replace_word(&h, &field, &flag),
        Some(h) => format!("{h} ({flag})"),
        None => format!("check {flag}"),
    });
    e
}

/// Whether `text` names `word` as a whole word (letters, digits and `_` are word characters).
fn mentions(text: &str, word: &str) -> bool {
    replace_word(text, word, "") != text
}

/// `text` with every whole-word `word` replaced by `with`.
fn replace_word(text: &str, word: &str, with: &str) -> String {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let before = rest[..at].chars().last().is_some_and(is_word);
        let after = rest[at + word.len()..].chars().next().is_some_and(is_word);
        out.push_str(&rest[..at]);
        out.push_str(if before || after { word } else { with });
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

/// The error event of a command: [`Event::error`] with the flag named in the hint
/// ([`flag_hint`]).
pub fn error_event(e: AfError, trace: Option<serde_json::Value>) -> Event {
    Event::error(&flag_hint(e), trace)
}

/// Resolve a driver's client and run `f` with it on the runtime.
pub fn run_client<F, Fut>(driver: &driver::DriverArgs, f: F) -> Event
where
    F: FnOnce(std::sync::Arc<crate::sdk::client::Client>) -> Fut,
    Fut: std::future::Future<Output = Result<Event, AfError>>,
{
    let (client, trace) = match driver.resolve() {
        Ok((c, trace)) => (std::sync::Arc::new(c), trace),
        Err(e) => return error_event(e, None),
    };
    let event = match block_on(f(client)) {
        Ok(Ok(event)) => event,
        Ok(Err(e)) | Err(e) => error_event(e, trace.clone()),
    };
    match trace {
        // Say that the host was discovered rather than given.
        Some(t) => event.with_trace_default(t),
        None => event,
    }
}

/// How long a command waits, after printing its answer, for the clean-ups the answer did
/// not wait for (closing tabs, stopping an inline browser; [`crate::sdk::afterwards`]).
pub(crate) const AFTER_ANSWER_BOUND: std::time::Duration = std::time::Duration::from_secs(15);
/// The process environment, read once for the whole command: the resolve steps take what
/// they need from it and hand it down, so no layer below reads the environment itself.
pub fn env() -> &'static crate::env::Snapshot {
    static ENV: std::sync::OnceLock<crate::env::Snapshot> = std::sync::OnceLock::new();
    ENV.get_or_init(crate::env::Snapshot::read)
}

/// Run a future to completion on a small single-threaded runtime.
pub fn block_on<F: std::future::Future>(fut: F) -> Result<F::Output, AfError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| AfError::io("start the async runtime", &e))?;
    Ok(rt.block_on(fut))
}

#[cfg(test)]
mod tests {
    use super::flag_hint;
    use crate::error::AfError;

    /// The SDK's hint names the field; the command line shows the flag in its place, or adds
    /// it when the hint does not name the field.
    #[test]
    fn hints_name_the_flag_of_the_field() {
        let e = flag_hint(
            AfError::invalid("the attempt did not finish")
                .with_hint(crate::sdk::defaults::TIMEOUT_HINT)
                .with_field("timeout_ms"),
        );
        assert_eq!(e.hint.as_deref(), Some("raise --timeout-ms, or set retry"));
        let e = flag_hint(
            AfError::invalid("x")
                .with_hint("set ca_cert to a PEM file, or tls_insecure")
                .with_field("ca_cert"),
        );
        assert_eq!(
            e.hint.as_deref(),
            Some("set --ca-cert to a PEM file, or tls_insecure")
        );
        let e = flag_hint(
            AfError::invalid("x")
                .with_hint("no such page")
                .with_field("url"),
        );
        assert_eq!(e.hint.as_deref(), Some("no such page (the URL argument)"));
        let e = flag_hint(AfError::invalid("x").with_field("selector"));
        assert_eq!(e.hint.as_deref(), Some("check --selector"));
        // A longer word that contains the field is not the field.
        let e = flag_hint(
            AfError::invalid("x")
                .with_hint("drop endpoint_url")
                .with_field("url"),
        );
        assert_eq!(
            e.hint.as_deref(),
            Some("drop endpoint_url (the URL argument)")
        );
    }

    /// Neither the host's token nor its proxy password shows in the parsed arguments' or the
    /// resolved host options' `Debug`.
    #[test]
    fn host_secrets_never_show_in_debug() {
        use clap::Parser;
        let cli = super::Cli::try_parse_from([
            "afhttp",
            "host",
            "--token-secret",
            "tok-hunter2",
            "--proxy-url",
            "http://user:pw-hunter2@127.0.0.1:3128",
        ])
        .unwrap();
        let shown = format!("{cli:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        let super::Commands::Host(args) = cli.command else {
            panic!("not host")
        };
        let opts = super::host::resolve(*args).unwrap();
        let shown = format!("{opts:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
    }
}
