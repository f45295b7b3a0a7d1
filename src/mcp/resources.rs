//! Artifacts as MCP resources: `resources/list` names every artifact of this session's
//! fetches, and `resources/read` returns one by the `file://` URI of its `resource_link`, with
//! the same containment check as `read_artifact` (a client on another machine than the
//! server reads them this way).

use std::path::{Path, PathBuf};

use base64::Engine;
use rmcp::model::{ReadResourceResult, Resource, ResourceContents};
use rmcp::ErrorData;
use serde_json::json;

use crate::error::AfError;

/// Largest artifact `resources/read` returns whole; larger ones are paged with
/// `read_artifact`.
pub const MAX_RESOURCE_BYTES: u64 = 16 * 1024 * 1024;
/// Most resources one `resources/list` names.
const MAX_LISTED: usize = 1000;

/// The MIME type of an artifact file, by its extension.
pub fn mime_of(path: &Path) -> Option<&'static str> {
    match path.extension()?.to_str()? {
        "jpeg" => Some("image/jpeg"),
        "b64" => Some("text/plain"),
        ext => crate::sdk::content_type::media_type_of_extension(ext),
    }
}

/// A resource entry for `path` (`file://` URI, name, MIME type, size).
pub fn resource_of(path: &Path, description: String) -> Option<Resource> {
    let uri = url::Url::from_file_path(path).ok()?;
    let name = path.file_name()?.to_string_lossy().to_string();
    let mut r = Resource::new(uri.to_string(), name).with_description(description);
    if let Some(mime) = mime_of(path) {
        r = r.with_mime_type(mime);
    }
    if let Ok(meta) = std::fs::metadata(path) {
        r = r.with_size(meta.len());
    }
    Some(r)
}

/// Every artifact file under `dirs` (one level of subdirectories: `network-bodies/`).
pub fn list(dirs: &[PathBuf]) -> Vec<Resource> {
    let mut out = Vec::new();
    for dir in dirs {
        let mut todo = vec![(dir.clone(), 0)];
        while let Some((d, depth)) = todo.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            let mut entries: Vec<_> = entries.flatten().collect();
            entries.sort_by_key(|e| e.file_name());
            for e in entries {
                let Ok(kind) = e.file_type() else { continue };
                if kind.is_dir() && depth == 0 {
                    todo.push((e.path(), 1));
                } else if kind.is_file() && out.len() < MAX_LISTED {
                    if let Some(r) = resource_of(&e.path(), "afhttp artifact".into()) {
                        out.push(r);
                    }
                }
            }
        }
    }
    out
}

/// Read the resource at `uri` (inside one of `dirs`).
pub fn read(uri: &str, dirs: &[PathBuf]) -> Result<ReadResourceResult, ErrorData> {
    let path = super::artifacts::inside_out_dir(uri, dirs).map_err(|e| as_protocol(&e))?;
    let size = std::fs::metadata(&path)
        .map_err(|e| as_protocol(&AfError::io(format!("read {}", path.display()), &e)))?
        .len();
    if size > MAX_RESOURCE_BYTES {
        let e = AfError::invalid(format!(
            "{} is {size} bytes, above the {MAX_RESOURCE_BYTES}-byte resources/read limit",
            path.display()
        ))
        .with_hint("page it with the read_artifact tool");
        return Err(as_protocol(&e));
    }
    let bytes = std::fs::read(&path)
        .map_err(|e| as_protocol(&AfError::io(format!("read {}", path.display()), &e)))?;
    let mime = mime_of(&path);
    let textual = mime.is_none_or(|m| m.starts_with("text/") || m == "application/json");
    let contents = match (textual, String::from_utf8(bytes)) {
        (true, Ok(text)) => ResourceContents::text(text, uri),
        (_, Ok(text)) => ResourceContents::blob(
            base64::engine::general_purpose::STANDARD.encode(text.as_bytes()),
            uri,
        ),
        (_, Err(e)) => ResourceContents::blob(
            base64::engine::general_purpose::STANDARD.encode(e.as_bytes()),
            uri,
        ),
    };
    let contents = match mime {
        Some(m) => contents.with_mime_type(m),
        None => contents,
    };
    Ok(ReadResourceResult::new(vec![contents]))
}

/// An afhttp error as a JSON-RPC error whose `data` is the CLI's error object.
fn as_protocol(e: &AfError) -> ErrorData {
    let data = json!({
        "code": e.code.as_str(),
        "message": e.message,
        "retryable": e.retryable(),
        "hint": e.hint,
    });
    ErrorData::invalid_params(format!("{}: {}", e.code.as_str(), e.message), Some(data))
}
