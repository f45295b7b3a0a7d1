//! Connecting to the engine and turning bollard errors into afhttp errors.

use std::time::Duration;

use bollard::errors::Error as BollardError;
use bollard::Docker;

use crate::error::{AfError, ErrorCode};

/// Seconds bollard waits for one engine request (image builds stream, so this is per read).
const REQUEST_TIMEOUT_S: u64 = 600;
/// Seconds to wait for the first answer: a driver probing for the managed container must not
/// hang on a DOCKER_HOST that never answers.
const CONNECT_TIMEOUT_S: u64 = 5;

/// Connect through `DOCKER_HOST` as the front end read it into `env` (or the default
/// socket), negotiate the API version and ping. An engine that does not answer is
/// `container_engine_unavailable`.
pub async fn connect(env: &crate::env::Snapshot) -> Result<Docker, AfError> {
    let host = env.get(crate::env::DOCKER_HOST);
    let shown = host
        .clone()
        .unwrap_or_else(|| "unix:///var/run/docker.sock".into());
    let docker = match &host {
        Some(h) => Docker::connect_with_host(h),
        None => Docker::connect_with_local_defaults(),
    }
    .map_err(|e| unavailable(&shown, &e))?
    .with_timeout(Duration::from_secs(CONNECT_TIMEOUT_S));
    // The Debian engine speaks API 1.41 only; without negotiation every call is refused.
    let docker = docker
        .negotiate_version()
        .await
        .map_err(|e| unavailable(&shown, &e))?;
    docker.ping().await.map_err(|e| unavailable(&shown, &e))?;
    Ok(docker.with_timeout(Duration::from_secs(REQUEST_TIMEOUT_S)))
}

fn unavailable(host: &str, e: &BollardError) -> AfError {
    AfError::new(
        ErrorCode::ContainerEngineUnavailable,
        format!("no Docker engine answered at {host}: {e}"),
    )
    .with_hint("start Docker (or dockerd), or point DOCKER_HOST at a running engine")
}

/// Whether `e` is the engine's 404.
pub fn is_not_found(e: &BollardError) -> bool {
    status(e) == Some(404)
}

/// The HTTP status of an engine error response, if it was one.
pub fn status(e: &BollardError) -> Option<u16> {
    match e {
        BollardError::DockerResponseServerError { status_code, .. } => Some(*status_code),
        _ => None,
    }
}

/// A failed engine call, with what we were doing. Transport failures mean the engine went
/// away; answers are the engine refusing (`io_error` for lack of a better stable code).
pub fn failed(doing: &str, e: &BollardError) -> AfError {
    match e {
        BollardError::DockerResponseServerError { message, .. } => {
            AfError::new(ErrorCode::IoError, format!("{doing}: {message}"))
        }
        BollardError::DockerStreamError { error } => {
            AfError::new(ErrorCode::IoError, format!("{doing}: {error}"))
        }
        other => unavailable_while(doing, other),
    }
}

fn unavailable_while(doing: &str, e: &BollardError) -> AfError {
    AfError::new(
        ErrorCode::ContainerEngineUnavailable,
        format!("{doing}: the engine stopped answering ({e})"),
    )
    .with_hint("check that the Docker engine is running")
}
