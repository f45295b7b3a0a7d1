//! `afhttp container build|install|status|logs|uninstall`: the managed local host container,
//! through the Docker Engine API (`DOCKER_HOST` or the default socket).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};
use serde_json::json;

use super::progress::StderrReporter;
use crate::container::context::BinarySource;
use crate::container::image::{self, BuildSpec};
use crate::container::{admin, discover, engine, logs, run};
use crate::envelope::Event;
use crate::error::{AfError, ErrorCode};

/// Arguments of `afhttp container`.
#[derive(Debug, Args)]
pub struct ContainerArgs {
    #[command(subcommand)]
    command: ContainerCommand,
}

#[derive(Debug, Subcommand)]
enum ContainerCommand {
    /// Build the host image `afhttp-host:<version>` (progress on stderr).
    Build(BuildArgs),
    /// Build the image if missing, replace the container, start it and wait for /health.
    Install(InstallArgs),
    /// Report the managed container, image and volume.
    Status {
        /// Print the host token in the result.
        #[arg(long)]
        reveal_token_secret: bool,
    },
    /// Summarize the host's JSON logs (or print raw lines).
    Logs(LogsArgs),
    /// Remove the managed container (and with --purge --yes, its image and volume).
    Uninstall {
        /// Also remove the image and the volume (profiles and the token are lost).
        #[arg(long)]
        purge: bool,
        /// Confirm --purge.
        #[arg(long)]
        yes: bool,
    },
}

/// How the image is built.
#[derive(Debug, Args)]
struct BuildArgs {
    /// Compile afhttp inside the build from this source tree (default: the current
    /// directory) instead of copying the running executable.
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = ".")]
    from_source: Option<PathBuf>,
    /// Runtime base image (a Debian bookworm image; default debian:bookworm-slim).
    #[arg(long, value_name = "IMAGE")]
    base_image: Option<String>,
    /// Browser in the image: brave (default) or chromium.
    #[arg(long, value_name = "brave|chromium")]
    browser: Option<String>,
    /// Takeover display stack in the image: kasmvnc (default), novnc or off.
    #[arg(long, value_name = "kasmvnc|novnc|off")]
    takeover_provider: Option<String>,
    /// Extra Dockerfile build argument. Repeatable.
    #[arg(long, value_name = "K=V")]
    build_arg: Vec<String>,
    /// Do not use the engine's layer cache.
    #[arg(long)]
    no_cache: bool,
}

#[derive(Debug, Args)]
struct InstallArgs {
    #[command(flatten)]
    build: BuildArgs,
    /// Build the image even if this version's image exists.
    #[arg(long)]
    rebuild: bool,
    /// Port published on 127.0.0.1.
    #[arg(long, value_name = "PORT", default_value_t = crate::container::DEFAULT_PORT)]
    port: u16,
    /// How long to wait for the host's /health, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 120_000)]
    wait_timeout_ms: u64,
    /// Extra environment for the host (`AFHTTP_*` twins of `afhttp host` flags). Repeatable.
    #[arg(long, value_name = "K=V")]
    host_env: Vec<String>,
    /// Print the host token in the result.
    #[arg(long)]
    reveal_token_secret: bool,
}

#[derive(Debug, Args)]
struct LogsArgs {
    /// Raw log lines instead of the summary.
    #[arg(long)]
    raw: bool,
    /// Stream new lines to stderr until the container stops (needs --raw).
    #[arg(long, requires = "raw")]
    follow: bool,
    /// Only the last N lines.
    #[arg(long, value_name = "N")]
    tail: Option<usize>,
}

/// Run `afhttp container`; returns the event and whether to print `_secret` fields.
pub fn run(args: ContainerArgs) -> (Event, bool) {
    let reveal = match &args.command {
        ContainerCommand::Status {
            reveal_token_secret,
        } => *reveal_token_secret,
        ContainerCommand::Install(i) => i.reveal_token_secret,
        _ => false,
    };
    let event = match super::block_on(dispatch(args.command)) {
        Ok(Ok(event)) => event,
        Ok(Err(e)) | Err(e) => Event::error(&e, None),
    };
    (event, reveal)
}

async fn dispatch(command: ContainerCommand) -> Result<Event, AfError> {
    // Validate before touching the engine: bad input gets its own error, not the engine's.
    let build_spec = match &command {
        ContainerCommand::Build(b) => Some(build_spec(b)?),
        ContainerCommand::Install(i) => Some(build_spec(&i.build)?),
        ContainerCommand::Uninstall {
            purge: true,
            yes: false,
        } => {
            return Err(AfError::invalid(
                "--purge removes the image and the volume (profiles and the token)",
            )
            .with_hint("add --yes to confirm"));
        }
        _ => None,
    };
    let docker = engine::connect(super::env()).await?;
    match command {
        ContainerCommand::Build(_) => {
            let spec = build_spec.ok_or_else(|| AfError::invalid("no build spec"))?;
            let built = image::build(&docker, &spec, &StderrReporter::for_stderr()).await?;
            Ok(Event::result(
                "container_build",
                json!({
                    "image": built.image,
                    "image_id": built.image_id,
                    "target": spec.source.target(),
                    "browser": spec.browser,
                    "takeover_provider": spec.takeover,
                    "build_ms": built.elapsed_ms,
                }),
                None,
            ))
        }
        ContainerCommand::Install(i) => {
            let spec = run::InstallSpec {
                build: build_spec.ok_or_else(|| AfError::invalid("no build spec"))?,
                rebuild: i.rebuild,
                wanted_browser: i.build.browser.clone(),
                wanted_takeover: i.build.takeover_provider.clone(),
                port: valid_port(i.port)?,
                wait: valid_wait(i.wait_timeout_ms)?,
                env: valid_env(&i.host_env)?,
            };
            let result = run::install(&docker, &spec, &StderrReporter::for_stderr()).await?;
            Ok(Event::result("container_install", result, None))
        }
        ContainerCommand::Status {
            reveal_token_secret,
        } => Ok(Event::result(
            "container_status",
            admin::status(&docker, reveal_token_secret).await?,
            None,
        )),
        ContainerCommand::Logs(l) => logs_event(&docker, l).await,
        ContainerCommand::Uninstall { purge, .. } => Ok(Event::result(
            "container_uninstall",
            admin::uninstall(
                &docker,
                admin::Purge { purge },
                &StderrReporter::plain_stderr(),
            )
            .await?,
            None,
        )),
    }
}

async fn logs_event(docker: &bollard::Docker, l: LogsArgs) -> Result<Event, AfError> {
    let Some(c) = discover::find(docker).await? else {
        return Err(AfError::new(
            ErrorCode::HostUnreachable,
            "no managed afhttp container is installed",
        )
        .with_hint("run `afhttp container install`"));
    };
    if l.follow {
        let n = logs::follow(docker, &c.id, l.tail, &StderrReporter::plain_stderr()).await?;
        return Ok(Event::result(
            "container_logs",
            json!({"container_name": c.name, "raw": true, "followed": true, "lines_streamed": n}),
            None,
        ));
    }
    let lines = logs::lines(docker, &c.id, l.tail).await?;
    let body = if l.raw {
        json!({"container_name": c.name, "raw": true, "lines": lines})
    } else {
        json!({"container_name": c.name, "raw": false, "summary": logs::summarize(&lines)})
    };
    Ok(Event::result("container_logs", body, None))
}

fn build_spec(b: &BuildArgs) -> Result<BuildSpec, AfError> {
    let source = match &b.from_source {
        Some(dir) => BinarySource::SourceTree(dir.clone()),
        None => BinarySource::Running,
    };
    let spec = BuildSpec {
        source,
        base_image: b.base_image.clone(),
        browser: b.browser.clone().unwrap_or_else(|| "brave".into()),
        takeover: b
            .takeover_provider
            .clone()
            .unwrap_or_else(|| "kasmvnc".into()),
        build_args: image::parse_build_args(&b.build_arg)?,
        no_cache: b.no_cache,
    };
    spec.validate()?;
    Ok(spec)
}

fn valid_port(port: u16) -> Result<u16, AfError> {
    if port == 0 {
        return Err(AfError::invalid("--port must be 1-65535"));
    }
    Ok(port)
}

fn valid_wait(ms: u64) -> Result<Duration, AfError> {
    if ms == 0 || ms > 3_600_000 {
        return Err(AfError::invalid(
            "--wait-timeout-ms must be between 1 and 3600000",
        ));
    }
    Ok(Duration::from_millis(ms))
}

fn valid_env(raw: &[String]) -> Result<Vec<String>, AfError> {
    for kv in raw {
        let ok = kv
            .split_once('=')
            .is_some_and(|(k, _)| k.starts_with("AFHTTP_") && k != "AFHTTP_TOKEN_SECRET");
        if !ok {
            return Err(AfError::invalid(format!(
                "--host-env {kv:?} must be AFHTTP_NAME=VALUE (the token is never passed this way)"
            )));
        }
    }
    Ok(raw.to_vec())
}
