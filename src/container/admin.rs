//! `status` and `uninstall` of the managed host.

use bollard::query_parameters::{RemoveImageOptions, RemoveVolumeOptions};
use bollard::Docker;
use serde_json::{json, Value};

use super::{discover, engine, run, Reporter};
use crate::error::AfError;

/// The container (if any), its engine health, the image and the volume.
pub async fn status(docker: &Docker, reveal_token: bool) -> Result<Value, AfError> {
    let image_present = super::image::exists(docker).await?;
    let volume_present = match docker.inspect_volume(super::VOLUME_NAME).await {
        Ok(_) => true,
        Err(e) if engine::is_not_found(&e) => false,
        Err(e) => return Err(engine::failed("inspect the volume", &e)),
    };
    let mut out = json!({
        "installed": false,
        "image": super::image_ref(),
        "image_present": image_present,
        "volume": super::VOLUME_NAME,
        "volume_present": volume_present,
        "driver_version": super::VERSION,
    });
    let Some(c) = discover::find(docker).await? else {
        out["hint"] = json!("run `afhttp container install`");
        return Ok(out);
    };
    let inspect = docker
        .inspect_container(&c.id, None)
        .await
        .map_err(|e| engine::failed("inspect the container", &e))?;
    let state = inspect.state.unwrap_or_default();
    let health = state.health.and_then(|h| h.status).map(|s| s.to_string());
    out["installed"] = json!(true);
    out["container"] = c.to_json();
    out["running"] = json!(state.running.unwrap_or(false));
    out["engine_health"] = json!(health);
    out["started_at_rfc3339"] = json!(state.started_at);
    out["restart_count"] = json!(inspect.restart_count);
    out["version_matches"] = json!(c.version.as_deref() == Some(super::VERSION));
    if reveal_token {
        out["token_secret"] = json!(discover::read_token(docker, &c.id).await?);
    } else {
        out["token_hint"] = json!(run::token_hint());
    }
    Ok(out)
}

/// What `uninstall` may remove besides the container.
#[derive(Debug, Clone, Copy)]
pub struct Purge {
    /// Also remove the image and the volume (profiles and token are lost).
    pub purge: bool,
}

/// Remove the container; with `purge`, the image and the volume too.
pub async fn uninstall(docker: &Docker, how: Purge, r: &dyn Reporter) -> Result<Value, AfError> {
    let container_removed = run::remove_existing(docker, r).await?;
    let mut image_removed = false;
    let mut volume_removed = false;
    if how.purge {
        match docker
            .remove_image(
                &super::image_ref(),
                Some(RemoveImageOptions {
                    force: true,
                    ..Default::default()
                }),
                None,
            )
            .await
        {
            Ok(_) => image_removed = true,
            Err(e) if engine::is_not_found(&e) => {}
            Err(e) => return Err(engine::failed("remove the image", &e)),
        }
        match docker
            .remove_volume(
                super::VOLUME_NAME,
                Some(RemoveVolumeOptions { force: true }),
            )
            .await
        {
            Ok(()) => volume_removed = true,
            Err(e) if engine::is_not_found(&e) => {}
            Err(e) => return Err(engine::failed("remove the volume", &e)),
        }
    }
    Ok(json!({
        "container_removed": container_removed,
        "image": super::image_ref(),
        "image_removed": image_removed,
        "volume": super::VOLUME_NAME,
        "volume_removed": volume_removed,
        "purged": how.purge,
    }))
}
