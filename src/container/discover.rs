//! Finding the managed container: by label, its published port from its label (never a
//! hard-coded port), and its token read through the archive API (no exec, no `cat`).

use std::collections::HashMap;
use std::io::Read;

use bollard::query_parameters::{DownloadFromContainerOptions, ListContainersOptions};
use bollard::Docker;
use futures_util::StreamExt;
use serde_json::{json, Value};

use super::engine;
use crate::error::{AfError, ErrorCode};

/// Largest token file accepted (a token is 64 hex characters).
const MAX_TOKEN_BYTES: u64 = 4096;

/// The managed container as the engine describes it.
#[derive(Debug, Clone)]
pub struct Managed {
    /// Container id.
    pub id: String,
    /// Container name (without the leading `/`).
    pub name: String,
    /// Engine state: `running`, `exited`, `restarting`, …
    pub state: String,
    /// The engine's one-line status (`Up 3 minutes (healthy)`).
    pub status: String,
    /// Image reference the container runs.
    pub image: String,
    /// Port published on 127.0.0.1 (label `afhttp.port`).
    pub port: Option<u16>,
    /// afhttp version in the container (label `afhttp.version`).
    pub version: Option<String>,
    /// Takeover provider (label `afhttp.takeover`).
    pub takeover: Option<String>,
    /// Browser (label `afhttp.browser`).
    pub browser: Option<String>,
}

impl Managed {
    /// The driver endpoint for this container.
    pub fn endpoint_url(&self) -> Option<String> {
        self.port.map(|p| format!("ws://127.0.0.1:{p}"))
    }

    /// A JSON summary (no secrets).
    pub fn to_json(&self) -> Value {
        json!({
            "container_id": self.id,
            "container_name": self.name,
            "state": self.state,
            "status": self.status,
            "image": self.image,
            "port": self.port,
            "endpoint_url": self.endpoint_url(),
            "version": self.version,
            "takeover_provider": self.takeover,
            "browser": self.browser,
        })
    }
}

/// The managed container, running or not; `None` when there is none.
pub async fn find(docker: &Docker) -> Result<Option<Managed>, AfError> {
    let mut filters = HashMap::new();
    filters.insert(
        "label".to_string(),
        vec![format!("{}=true", super::LABEL_MANAGED)],
    );
    filters.insert("name".to_string(), vec![super::CONTAINER_NAME.to_string()]);
    let options = ListContainersOptions {
        all: true,
        filters: Some(filters),
        ..Default::default()
    };
    let list = docker
        .list_containers(Some(options))
        .await
        .map_err(|e| engine::failed("list containers", &e))?;
    // `name` filters by substring; keep the exact one.
    let exact = format!("/{}", super::CONTAINER_NAME);
    let Some(c) = list
        .into_iter()
        .find(|c| c.names.iter().flatten().any(|n| *n == exact))
    else {
        return Ok(None);
    };
    let labels = c.labels.unwrap_or_default();
    Ok(Some(Managed {
        id: c.id.unwrap_or_default(),
        name: super::CONTAINER_NAME.to_string(),
        state: c.state.map(|s| s.to_string()).unwrap_or_default(),
        status: c.status.unwrap_or_default(),
        image: c.image.unwrap_or_default(),
        port: labels.get(super::LABEL_PORT).and_then(|p| p.parse().ok()),
        version: labels.get(super::LABEL_VERSION).cloned(),
        takeover: labels.get(super::LABEL_TAKEOVER).cloned(),
        browser: labels.get(super::LABEL_BROWSER).cloned(),
    }))
}

/// The host's token, read from the container's volume; `None` while the host has not
/// written it yet.
pub async fn read_token(docker: &Docker, container: &str) -> Result<Option<String>, AfError> {
    let options = DownloadFromContainerOptions {
        path: super::TOKEN_PATH.to_string(),
    };
    let mut stream = docker.download_from_container(container, Some(options));
    let mut archive = Vec::new();
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(bytes) => archive.extend_from_slice(&bytes),
            Err(e) if engine::is_not_found(&e) => return Ok(None),
            Err(e) => return Err(engine::failed("read the host token", &e)),
        }
    }
    token_from_tar(&archive).map(Some)
}

fn token_from_tar(archive: &[u8]) -> Result<String, AfError> {
    let bad = |why: &str| AfError::new(ErrorCode::IoError, format!("host token: {why}"));
    let mut tar = tar::Archive::new(archive);
    let entries = tar.entries().map_err(|e| bad(&e.to_string()))?;
    for entry in entries {
        let entry = entry.map_err(|e| bad(&e.to_string()))?;
        if entry.header().entry_type() != tar::EntryType::Regular {
            continue;
        }
        let mut raw = String::new();
        entry
            .take(MAX_TOKEN_BYTES)
            .read_to_string(&mut raw)
            .map_err(|e| bad(&e.to_string()))?;
        let token = raw.trim();
        if token.is_empty() {
            return Err(bad("the token file is empty"));
        }
        return Ok(token.to_string());
    }
    Err(bad("the archive holds no file"))
}

/// What a driver gets from discovery.
#[derive(Debug, Clone)]
pub struct Discovered {
    /// `ws://127.0.0.1:<port>`.
    pub endpoint_url: String,
    /// The host's token (None when the driver already has one).
    pub token: Option<crate::sdk::secret::Secret>,
    /// For the trace: which container answered.
    pub container: Managed,
}

/// Discovery for driver commands. `Ok(None)` when there is no engine or no managed
/// container (the caller then says no endpoint was given); errors when the container
/// exists but cannot serve this driver. The engine is the one `env`'s `DOCKER_HOST` names.
pub async fn for_driver(
    env: &crate::env::Snapshot,
    need_token: bool,
) -> Result<Option<Discovered>, AfError> {
    let Ok(docker) = engine::connect(env).await else {
        return Ok(None);
    };
    let Some(c) = find(&docker).await? else {
        return Ok(None);
    };
    let reinstall = "run `afhttp container install` to (re)start the managed host";
    if c.version.as_deref() != Some(super::VERSION) {
        return Err(AfError::new(
            ErrorCode::HostVersionMismatch,
            format!(
                "the managed container runs afhttp {} but this driver is {}",
                c.version.as_deref().unwrap_or("unknown"),
                super::VERSION
            ),
        )
        .with_hint("run `afhttp container install` to rebuild and replace it with this version"));
    }
    if c.state != "running" {
        return Err(AfError::new(
            ErrorCode::HostUnreachable,
            format!("the managed container {} is {}", c.name, c.state),
        )
        .with_hint(reinstall));
    }
    let Some(endpoint_url) = c.endpoint_url() else {
        return Err(AfError::new(
            ErrorCode::InvalidEndpoint,
            format!(
                "the managed container {} has no {} label",
                c.name,
                super::LABEL_PORT
            ),
        )
        .with_hint(reinstall));
    };
    let token = if need_token {
        let t = read_token(&docker, &c.id).await?;
        if t.is_none() {
            return Err(AfError::new(
                ErrorCode::HostUnreachable,
                "the managed host has not written its token yet",
            )
            .with_hint("wait for `afhttp container status` to report healthy"));
        }
        t.map(crate::sdk::secret::Secret::new)
    } else {
        None
    };
    Ok(Some(Discovered {
        endpoint_url,
        token,
        container: c,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tar_with(name: &str, body: &[u8]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_size(body.len() as u64);
        h.set_mode(0o600);
        b.append_data(&mut h, name, body).unwrap();
        b.into_inner().unwrap()
    }

    #[test]
    fn token_is_the_trimmed_file() {
        assert_eq!(
            token_from_tar(&tar_with("host-token", b"abc\n")).unwrap(),
            "abc"
        );
        assert!(token_from_tar(&tar_with("host-token", b"\n")).is_err());
        assert!(token_from_tar(&[]).is_err());
    }
}
