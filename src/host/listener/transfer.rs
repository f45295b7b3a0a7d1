//! Moving files between a driver and the host over the authenticated listener, so nothing
//! assumes a shared file system: `GET /downloads/{id}` streams a completed browser download,
//! `POST /uploads?name=` stores a driver's file in a private per-host directory.

use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, Query, Request, State};
use axum::http::{header, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures_util::StreamExt;
use serde_json::json;

use super::auth::ApiError;
use super::state::ListenerState;
use crate::error::{AfError, ErrorCode};
use crate::fsutil;
use crate::sdk::transfer::is_guid;

/// Bytes per chunk when streaming a download.
const CHUNK: usize = 64 * 1024;

/// `?name=` of `POST /uploads`.
#[derive(Debug, serde::Deserialize)]
pub struct UploadQuery {
    name: Option<String>,
}

fn refuse(status: StatusCode, message: String) -> Response {
    ApiError::error(ErrorCode::InvalidArgument, message)
        .with_http_status(status)
        .into_response()
}

/// Whether `name` can be a file name of its own (no directory part, no NUL, not `.`/`..`).
pub fn valid_upload_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && name != "."
        && name != ".."
        && !name.contains(['/', '\0'])
}

/// `GET /downloads/{id}`: the bytes of a completed download of the current browser.
pub async fn download(State(state): State<Arc<ListenerState>>, Path(id): Path<String>) -> Response {
    if !is_guid(&id) {
        return ApiError::BAD_REQUEST.into_response();
    }
    let Some(record) = state.view.download(&id) else {
        return ApiError::DOWNLOAD_NOT_FOUND.into_response();
    };
    if record.facts.state != "completed" {
        return ApiError::access(
            StatusCode::CONFLICT,
            "download_incomplete",
            "the download is not complete",
        )
        .with_detail("state", record.facts.state.clone())
        .into_response();
    }
    // O_NOFOLLOW: a symlink planted under the guid's name is refused, never followed.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&record.path);
    let Ok(file) = file else {
        return ApiError::DOWNLOAD_NOT_FOUND.into_response();
    };
    let len = match file.metadata() {
        Ok(m) if m.is_file() => m.len(),
        _ => return ApiError::DOWNLOAD_NOT_FOUND.into_response(),
    };
    let stream = fsutil::file_chunks(tokio::fs::File::from_std(file), len, CHUNK);
    Response::builder()
        .header(header::CONTENT_TYPE, "application/octet-stream")
        .header(header::CONTENT_LENGTH, len)
        .body(Body::from_stream(stream))
        .unwrap_or_else(|_| ApiError::BAD_REQUEST.into_response())
}

/// `POST /uploads?name=<file name>`: store the body (at most `--upload-max-bytes`) and
/// answer `{code: "upload", id, name, size_bytes, path}`; `path` is on the host, for
/// `DOM.setFileInputFiles`.
pub async fn upload(
    State(state): State<Arc<ListenerState>>,
    Query(q): Query<UploadQuery>,
    req: Request,
) -> Response {
    // Registered for every method so the auth layer answers first; only POST stores.
    if req.method() != Method::POST {
        return refuse(StatusCode::METHOD_NOT_ALLOWED, "use POST".into());
    }
    let Some(name) = q.name.filter(|n| valid_upload_name(n)) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "?name= must be a plain file name (no '/', not '.' or '..', at most 255 bytes)".into(),
        );
    };
    let cap = state.config.upload_max_bytes;
    let too_large = || {
        refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the file is larger than this host's --upload-max-bytes ({cap} bytes)"),
        )
    };
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > cap) {
        return too_large();
    }
    let id = uuid::Uuid::new_v4().simple().to_string();
    let dir = match state.uploads.dir().map(|d| d.join(&id)) {
        Ok(d) => d,
        Err(e) => return io_failure(&e),
    };
    if let Err(e) = fsutil::create_fresh_private_dir(&dir) {
        return io_failure(&e);
    }
    let stored = store(req.into_body(), &dir, &name, cap).await;
    match stored {
        Ok(Some((path, size))) => Json(json!({
            "code": "upload",
            "id": id,
            "name": name,
            "size_bytes": size,
            "path": path,
        }))
        .into_response(),
        Ok(None) => {
            let _ = std::fs::remove_dir_all(&dir);
            too_large()
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&dir);
            io_failure(&e)
        }
    }
}

/// Stream `body` into `dir/name`; `None` when it passes `cap` (nothing is kept then).
async fn store(
    body: Body,
    dir: &std::path::Path,
    name: &str,
    cap: u64,
) -> Result<Option<(PathBuf, u64)>, AfError> {
    let mut file = fsutil::PrivateFile::create(dir, name)?;
    let mut size = 0u64;
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| {
            AfError::new(
                crate::error::ErrorCode::IoError,
                format!("upload interrupted: {e}"),
            )
        })?;
        size += chunk.len() as u64;
        if size > cap {
            return Ok(None);
        }
        file.write_all(&chunk)?;
    }
    Ok(Some((file.commit()?, size)))
}

fn io_failure(e: &AfError) -> Response {
    crate::host::log::log(
        crate::host::log::Level::Warn,
        "upload failed",
        json!({"error": e.message}),
    );
    ApiError::error(ErrorCode::IoError, "the host could not store the upload").into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upload_names() {
        for ok in ["a.txt", "report 2024.csv", ".hidden", "ünï.bin"] {
            assert!(valid_upload_name(ok), "{ok}");
        }
        let long = "x".repeat(256);
        for bad in [
            "",
            ".",
            "..",
            "a/b",
            "/etc/passwd",
            "../x",
            "a\0b",
            long.as_str(),
        ] {
            assert!(!valid_upload_name(bad), "{bad:?}");
        }
    }
}
