//! Installing the managed host: image (built when missing), volume, a fresh container with
//! the afhttp labels, start, and a wait until the host's own `/health` says ok.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use bollard::models::{
    ContainerCreateBody, HostConfig, PortBinding, RestartPolicy, RestartPolicyNameEnum,
    VolumeCreateRequest,
};
use bollard::query_parameters::{
    CreateContainerOptions, RemoveContainerOptions, StopContainerOptions,
};
use bollard::Docker;
use serde_json::{json, Value};

use super::{discover, engine, image, logs, Reporter};
use crate::error::{AfError, ErrorCode};
use crate::sdk::client::Client;
use crate::sdk::endpoint::Endpoint;

/// `/dev/shm` for the browser (Chromium crashes tabs with Docker's 64 MiB default).
const SHM_BYTES: i64 = 2 * 1024 * 1024 * 1024;
/// Seconds a stopping host gets before SIGKILL (it stops in well under one).
const STOP_GRACE_S: i32 = 10;
/// Pause between readiness polls.
const POLL: Duration = Duration::from_millis(250);

/// What `container install` does.
#[derive(Debug, Clone)]
pub struct InstallSpec {
    /// How to build the image when it is missing (or `rebuild`).
    pub build: image::BuildSpec,
    /// Build even when the image exists.
    pub rebuild: bool,
    /// `--browser` as given: an existing image with another browser is rebuilt.
    pub wanted_browser: Option<String>,
    /// `--takeover-provider` as given: an existing image with another one is rebuilt.
    pub wanted_takeover: Option<String>,
    /// Port published on 127.0.0.1.
    pub port: u16,
    /// Give up waiting for `/health` after this long.
    pub wait: Duration,
    /// Extra `AFHTTP_*` environment for the host (`K=V`), e.g. `AFHTTP_LOG=debug`.
    pub env: Vec<String>,
}

/// Install (or replace) the managed container and wait until it is healthy.
pub async fn install(
    docker: &Docker,
    spec: &InstallSpec,
    r: &dyn Reporter,
) -> Result<Value, AfError> {
    spec.build.validate()?;
    let existing = if image::exists(docker).await? {
        Some(image_labels(docker).await?)
    } else {
        None
    };
    let differs = |label: &str, wanted: &Option<String>| match (&existing, wanted) {
        (Some(l), Some(w)) => l.get(label) != Some(w),
        _ => false,
    };
    let stale = differs(super::LABEL_BROWSER, &spec.wanted_browser)
        || differs(super::LABEL_TAKEOVER, &spec.wanted_takeover);
    let built = if spec.rebuild || existing.is_none() || stale {
        Some(image::build(docker, &spec.build, r).await?)
    } else {
        r.line(&format!("using existing image {}", super::image_ref()));
        None
    };
    let labels = image_labels(docker).await?;
    let takeover = labels
        .get(super::LABEL_TAKEOVER)
        .cloned()
        .unwrap_or_else(|| spec.build.takeover.clone());
    let browser = labels
        .get(super::LABEL_BROWSER)
        .cloned()
        .unwrap_or_else(|| spec.build.browser.clone());
    remove_existing(docker, r).await?;
    ensure_volume(docker).await?;

    let started = Instant::now();
    let mut container_labels = HashMap::new();
    container_labels.insert(super::LABEL_MANAGED.to_string(), "true".to_string());
    container_labels.insert(super::LABEL_VERSION.to_string(), super::VERSION.to_string());
    container_labels.insert(super::LABEL_PORT.to_string(), spec.port.to_string());
    container_labels.insert(super::LABEL_TAKEOVER.to_string(), takeover.clone());
    container_labels.insert(super::LABEL_BROWSER.to_string(), browser.clone());
    let inner = format!("{}/tcp", super::INNER_PORT);
    let mut ports = HashMap::new();
    ports.insert(
        inner.clone(),
        Some(vec![PortBinding {
            // Published on loopback only: the token is the only guard, keep it off the LAN.
            host_ip: Some("127.0.0.1".into()),
            host_port: Some(spec.port.to_string()),
        }]),
    );
    let body = ContainerCreateBody {
        image: Some(super::image_ref()),
        hostname: Some(super::HOSTNAME.into()),
        env: Some(spec.env.clone()),
        labels: Some(container_labels),
        exposed_ports: Some(vec![inner]),
        host_config: Some(HostConfig {
            binds: Some(vec![format!("{}:/data", super::VOLUME_NAME)]),
            port_bindings: Some(ports),
            shm_size: Some(SHM_BYTES),
            // The host runs as an unprivileged user and needs no capability at all.
            cap_drop: Some(vec!["ALL".into()]),
            security_opt: Some(vec!["no-new-privileges".into()]),
            restart_policy: Some(RestartPolicy {
                name: Some(RestartPolicyNameEnum::UNLESS_STOPPED),
                maximum_retry_count: None,
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let options = CreateContainerOptions {
        name: Some(super::CONTAINER_NAME.into()),
        ..Default::default()
    };
    let created = docker
        .create_container(Some(options), body)
        .await
        .map_err(|e| engine::failed("create the container", &e))?;
    docker
        .start_container(&created.id, None)
        .await
        .map_err(|e| {
            engine::failed("start the container", &e).with_hint(format!(
                "is 127.0.0.1:{} free? pick another with --port",
                spec.port
            ))
        })?;
    r.line(&format!(
        "started {}; waiting for /health",
        super::CONTAINER_NAME
    ));
    let (health, token) = wait_healthy(docker, &created.id, spec.port, spec.wait).await?;
    let healthy_ms = started.elapsed().as_millis();
    Ok(json!({
        "container_id": created.id,
        "container_name": super::CONTAINER_NAME,
        "image": super::image_ref(),
        "image_built": built.is_some(),
        "build_ms": built.as_ref().map(|b| b.elapsed_ms),
        "install_to_healthy_ms": healthy_ms,
        "endpoint_url": format!("ws://127.0.0.1:{}", spec.port),
        "port": spec.port,
        "volume": super::VOLUME_NAME,
        "driver_version": super::VERSION,
        "host_version": health.get("version").cloned().unwrap_or(Value::Null),
        "backend": health.get("backend").cloned().unwrap_or(Value::Null),
        "takeover": takeover_readiness(&takeover, &health),
        "token_secret": token,
        "token_hint": token_hint(),
    }))
}

/// How a user gets the token without it being printed by default.
pub fn token_hint() -> String {
    format!(
        "driver commands read it automatically; `afhttp container status --reveal-token-secret` prints it (it lives in {} on volume {})",
        super::TOKEN_PATH,
        super::VOLUME_NAME
    )
}

fn takeover_readiness(provider: &str, health: &Value) -> Value {
    // `/health` says which provider the host runs and whether its display answers.
    let reported = health.get("takeover").cloned();
    let field = |k: &str| reported.as_ref().and_then(|t| t.get(k)).cloned();
    let ready = provider != "off"
        && field("provider").and_then(|p| p.as_str().map(|s| s == provider)) == Some(true)
        && field("connected").and_then(|c| c.as_bool()) == Some(true);
    json!({"provider": provider, "ready": ready, "host_report": reported})
}

async fn image_labels(docker: &Docker) -> Result<HashMap<String, String>, AfError> {
    let inspect = docker
        .inspect_image(&super::image_ref())
        .await
        .map_err(|e| engine::failed("inspect the image", &e))?;
    Ok(inspect.config.and_then(|c| c.labels).unwrap_or_default())
}

/// Remove the container of the managed name, if afhttp made it.
pub async fn remove_existing(docker: &Docker, r: &dyn Reporter) -> Result<bool, AfError> {
    match docker.inspect_container(super::CONTAINER_NAME, None).await {
        Ok(c) => {
            let managed = c
                .config
                .and_then(|c| c.labels)
                .and_then(|l| l.get(super::LABEL_MANAGED).cloned())
                .as_deref()
                == Some("true");
            if !managed {
                return Err(AfError::invalid(format!(
                    "a container named {} exists and afhttp did not create it",
                    super::CONTAINER_NAME
                ))
                .with_hint("remove or rename it, then run the command again"));
            }
            r.line(&format!(
                "removing the old {} container",
                super::CONTAINER_NAME
            ));
            // SIGTERM first, so the browser saves its profile (force-removal is SIGKILL).
            let stop = StopContainerOptions {
                t: Some(STOP_GRACE_S),
                ..Default::default()
            };
            match docker
                .stop_container(super::CONTAINER_NAME, Some(stop))
                .await
            {
                Ok(()) => {}
                // 304: already stopped.
                Err(e) if engine::status(&e) == Some(304) => {}
                Err(e) => return Err(engine::failed("stop the old container", &e)),
            }
            let options = RemoveContainerOptions {
                force: true,
                ..Default::default()
            };
            docker
                .remove_container(super::CONTAINER_NAME, Some(options))
                .await
                .map_err(|e| engine::failed("remove the old container", &e))?;
            Ok(true)
        }
        Err(e) if engine::is_not_found(&e) => Ok(false),
        Err(e) => Err(engine::failed("inspect the container", &e)),
    }
}

async fn ensure_volume(docker: &Docker) -> Result<(), AfError> {
    let mut labels = HashMap::new();
    labels.insert(super::LABEL_MANAGED.to_string(), "true".to_string());
    // Creating an existing named volume returns it unchanged (profiles and token survive).
    docker
        .create_volume(VolumeCreateRequest {
            name: Some(super::VOLUME_NAME.into()),
            labels: Some(labels),
            ..Default::default()
        })
        .await
        .map_err(|e| engine::failed("create the volume", &e))?;
    Ok(())
}

/// Poll until the container's host answers `/health` with `ok`; returns the health
/// document and the token. A container that stops meanwhile fails with its log tail.
pub async fn wait_healthy(
    docker: &Docker,
    id: &str,
    port: u16,
    wait: Duration,
) -> Result<(Value, String), AfError> {
    let deadline = Instant::now() + wait;
    let endpoint = Endpoint::parse(&format!("ws://127.0.0.1:{port}"))?;
    let mut last = String::from("no answer yet");
    loop {
        let state = docker
            .inspect_container(id, None)
            .await
            .map_err(|e| engine::failed("inspect the container", &e))?
            .state;
        let running = state.as_ref().and_then(|s| s.running).unwrap_or(false);
        let restarting = state.as_ref().and_then(|s| s.restarting).unwrap_or(false);
        if !running && !restarting {
            let tail = logs::tail_text(docker, id, 30).await.unwrap_or_default();
            return Err(AfError::new(
                ErrorCode::BrowserLaunchFailed,
                format!(
                    "the host container stopped while starting\n--- last log lines ---\n{tail}"
                ),
            )
            .with_hint(
                "see `afhttp container logs`; rebuild with --rebuild if the image is stale",
            ));
        }
        if let Some(token) = discover::read_token(docker, id).await? {
            let client = Client::new(endpoint.clone())
                .with_token(Some(token.clone().into()))
                .with_timeout(Duration::from_secs(5));
            match client.health().await {
                Ok(h) if h.get("status").and_then(Value::as_str) == Some("ok") => {
                    return Ok((h, token))
                }
                Ok(h) => last = format!("status {}", h.get("status").unwrap_or(&Value::Null)),
                Err(e) => last = e.message,
            }
        }
        if Instant::now() >= deadline {
            return Err(AfError::new(
                ErrorCode::HostUnreachable,
                format!(
                    "the host did not become healthy within {} ms ({last})",
                    wait.as_millis()
                ),
            )
            .with_hint("see `afhttp container logs`, or raise --wait-timeout-ms"));
        }
        tokio::time::sleep(POLL).await;
    }
}
