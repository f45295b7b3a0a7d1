//! `afhttp upload`: attach a file on the driver's disk to an `<input type=file>` in a host's
//! tab. The element is found first (so a wrong selector costs no transfer), the bytes go to
//! the host over the listener (`POST /uploads`), then `DOM.setFileInputFiles` points the
//! input at the host's copy.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use crate::error::{AfError, ErrorCode};
use crate::sdk::browser::assets::UPLOAD_TARGET_JS;
use crate::sdk::cdp::CdpConnection;
use crate::sdk::client::Client;

/// A `--selector` chain: CSS selectors joined by `>>`, with `shadow` entering the open
/// shadow root and `frame` the same-origin iframe document of the element matched so far
/// (the shape of observation.json's `selector_hint`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector {
    raw: String,
    parts: Vec<String>,
}

impl Selector {
    /// Parse and check the chain's shape (CSS syntax is checked by the page).
    pub fn parse(raw: &str) -> Result<Selector, AfError> {
        let parts: Vec<String> = raw.split(">>").map(|p| p.trim().to_string()).collect();
        let bad = |why: &str| {
            AfError::invalid(format!("selector {raw:?}: {why}"))
                .with_field("selector")
                .with_hint(
                "use CSS, optionally chained: `host >> shadow >> input`, `iframe >> frame >> input`",
            )
        };
        if parts.iter().any(String::is_empty) {
            return Err(bad("an empty part"));
        }
        let step = |p: &str| p == "shadow" || p == "frame";
        for (i, p) in parts.iter().enumerate() {
            if step(p) && (i == 0 || step(&parts[i - 1])) {
                return Err(bad(&format!("`{p}` must follow a CSS selector")));
            }
        }
        if parts.last().is_some_and(|p| step(p)) {
            return Err(bad("the chain must end with a CSS selector"));
        }
        Ok(Selector {
            raw: raw.to_string(),
            parts,
        })
    }

    /// The selector as given.
    pub fn as_str(&self) -> &str {
        &self.raw
    }
}

/// The driver-side file to upload.
#[derive(Debug, Clone)]
pub struct LocalFile {
    /// Its path.
    pub path: PathBuf,
    /// The name the page will see (`File.name`).
    pub name: String,
    /// Its size.
    pub size_bytes: u64,
}

impl LocalFile {
    /// Check that `path` is a readable regular file.
    pub fn check(path: &Path) -> Result<LocalFile, AfError> {
        let bad = |why: String| {
            AfError::invalid(format!("file {}: {why}", path.display())).with_field("file")
        };
        let meta = std::fs::metadata(path).map_err(|e| bad(e.to_string()))?;
        if !meta.is_file() {
            return Err(bad("not a regular file".into()));
        }
        std::fs::File::open(path).map_err(|e| bad(format!("cannot read ({e})")))?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| bad("no file name".into()))?;
        Ok(LocalFile {
            path: path.to_path_buf(),
            name,
            size_bytes: meta.len(),
        })
    }
}

/// A file attached to an input.
#[derive(Debug, Clone)]
pub struct Uploaded {
    /// The tab.
    pub tab_id: String,
    /// The selector as given.
    pub selector: String,
    /// The name the page sees.
    pub file_name: String,
    /// Bytes moved to the host.
    pub size_bytes: u64,
    /// The host's opaque id for its copy.
    pub upload_id: String,
}

impl Uploaded {
    /// The `upload` result (without `code`); never the host-side path.
    pub fn to_json(&self) -> Value {
        json!({
            "tab_id": self.tab_id,
            "selector": self.selector,
            "file_name": self.file_name,
            "size_bytes": self.size_bytes,
            "upload_id": self.upload_id,
        })
    }
}

/// Attach `file` to the input `selector` matches in tab `tab` of `client`'s host.
pub async fn upload(
    client: &Client,
    tab: &str,
    selector: &Selector,
    file: &LocalFile,
    timeout: Duration,
) -> Result<Uploaded, AfError> {
    let conn = client.cdp_connection().await?;
    let attached = conn
        .send(
            None,
            "Target.attachToTarget",
            json!({"targetId": tab, "flatten": true}),
            timeout,
        )
        .await
        .map_err(|e| {
            AfError::invalid(format!("no tab {tab:?} on this host ({})", e.message))
                .with_hint("list tabs with `afhttp tabs list`")
        })?;
    let session = attached["sessionId"]
        .as_str()
        .ok_or_else(|| {
            AfError::new(
                ErrorCode::CdpUnavailable,
                "attachToTarget returned no sessionId",
            )
        })?
        .to_string();
    let result = attach_file(client, &conn, &session, tab, selector, file, timeout).await;
    let _ = conn
        .send(
            None,
            "Target.detachFromTarget",
            json!({"sessionId": session}),
            timeout,
        )
        .await;
    result
}

async fn attach_file(
    client: &Client,
    conn: &CdpConnection,
    session: &str,
    tab: &str,
    selector: &Selector,
    file: &LocalFile,
    t: Duration,
) -> Result<Uploaded, AfError> {
    // The host refuses an oversized body without reading it, and a refusal racing the
    // body's bytes can reach us as a reset connection instead of an answer: ask first.
    if let Ok(caps) = client.capabilities().await {
        let cap = caps
            .pointer("/limits/upload_max_bytes")
            .and_then(Value::as_u64);
        if let Some(cap) = cap.filter(|cap| file.size_bytes > *cap) {
            return Err(AfError::invalid(format!(
                "the file is larger than this host's upload cap ({cap} bytes, `afhttp host --upload-max-bytes`)"
            )));
        }
    }
    let object_id = resolve(conn, session, selector, t).await?;
    let query = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("name", &file.name)
        .finish();
    let stored = crate::sdk::host_http::upload_file(
        client.endpoint(),
        &format!("/uploads?{query}"),
        client.token(),
        t,
        &file.path,
        file.size_bytes,
    )
    .await?;
    let (Some(host_path), Some(id)) = (stored["path"].as_str(), stored["id"].as_str()) else {
        return Err(AfError::new(
            ErrorCode::HostUnreachable,
            "the host's upload answer has no path",
        ));
    };
    conn.send(
        Some(session),
        "DOM.setFileInputFiles",
        json!({"files": [host_path], "objectId": object_id}),
        t,
    )
    .await?;
    Ok(Uploaded {
        tab_id: tab.to_string(),
        selector: selector.raw.clone(),
        file_name: file.name.clone(),
        size_bytes: stored["size_bytes"].as_u64().unwrap_or(file.size_bytes),
        upload_id: id.to_string(),
    })
}

/// The remote object id of the file input `selector` names, or a stable error.
async fn resolve(
    conn: &CdpConnection,
    session: &str,
    selector: &Selector,
    t: Duration,
) -> Result<String, AfError> {
    let expression = format!("({UPLOAD_TARGET_JS})({})", json!(selector.parts));
    let r = conn
        .send(
            Some(session),
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": false}),
            t,
        )
        .await?;
    if let Some(details) = r.get("exceptionDetails") {
        let text = details["exception"]["description"]
            .as_str()
            .or_else(|| details["text"].as_str())
            .unwrap_or("exception");
        return Err(AfError::invalid(format!(
            "resolving selector threw in the page: {text}"
        )));
    }
    let result = &r["result"];
    if result["subtype"] == "node" {
        if let Some(id) = result["objectId"].as_str() {
            return Ok(id.to_string());
        }
    }
    let failure = result["value"].as_str().unwrap_or("");
    Err(failure_error(selector, failure))
}

/// The stable error for a resolver failure string `kind:detail`.
fn failure_error(selector: &Selector, failure: &str) -> AfError {
    let (kind, detail) = failure.split_once(':').unwrap_or((failure, ""));
    let part = detail
        .parse::<usize>()
        .ok()
        .and_then(|i| selector.parts.get(i).map(|p| (i, p)));
    let at = |i: usize, p: &str| format!("part {} ({p:?}) of selector {:?}", i + 1, selector.raw);
    let hint = "check the tab's page (observation.json) and pass its selector_hint as printed";
    match (kind, part) {
        ("syntax", Some((i, p))) => {
            AfError::invalid(format!("{} is not a valid CSS selector", at(i, p)))
        }
        ("not_found", Some((i, p))) => AfError::new(
            ErrorCode::SelectorNotFound,
            format!("nothing matches {}", at(i, p)),
        )
        .with_hint(hint),
        ("no_shadow", Some((i, _))) => AfError::new(
            ErrorCode::SelectorNotFound,
            format!("the element before {} has no open shadow root", at(i, "shadow")),
        )
        .with_hint(hint),
        ("no_frame", Some((i, _))) => AfError::new(
            ErrorCode::SelectorNotFound,
            format!(
                "the element before {} is not an iframe with a same-origin document",
                at(i, "frame")
            ),
        )
        .with_hint("cross-origin frames cannot be reached from the page; open the frame's URL in its own tab"),
        ("not_file_input", _) => AfError::invalid(format!(
            "selector {:?} matched <{detail}>, not an <input type=file>",
            selector.raw
        )),
        _ => AfError::new(
            ErrorCode::SelectorNotFound,
            format!("selector {:?} did not resolve to an element", selector.raw),
        ),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn selector_chains() {
        let s = Selector::parse("#host >> shadow >> input[type=file]").unwrap();
        assert_eq!(s.parts, ["#host", "shadow", "input[type=file]"]);
        let s = Selector::parse("iframe#f >> frame >> #up").unwrap();
        assert_eq!(s.parts, ["iframe#f", "frame", "#up"]);
        assert_eq!(Selector::parse("input").unwrap().parts, ["input"]);
        for bad in [
            "",
            " ",
            "a >>",
            ">> a",
            "a >> >> b",
            "shadow >> a",
            "a >> shadow",
            "a >> shadow >> frame >> b",
            "a >> frame",
        ] {
            let e = Selector::parse(bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArgument, "{bad:?}");
        }
    }

    #[test]
    fn failures_map_to_codes() {
        let s = Selector::parse("#h >> shadow >> #x").unwrap();
        assert_eq!(
            failure_error(&s, "not_found:2").code,
            ErrorCode::SelectorNotFound
        );
        assert!(failure_error(&s, "not_found:2").message.contains("\"#x\""));
        assert_eq!(
            failure_error(&s, "no_shadow:1").code,
            ErrorCode::SelectorNotFound
        );
        assert_eq!(
            failure_error(&s, "syntax:0").code,
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            failure_error(&s, "not_file_input:input[type=text]").code,
            ErrorCode::InvalidArgument
        );
        assert_eq!(failure_error(&s, "").code, ErrorCode::SelectorNotFound);
    }

    #[test]
    fn local_files() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a b.txt");
        std::fs::write(&f, b"abc").unwrap();
        let got = LocalFile::check(&f).unwrap();
        assert_eq!((got.name.as_str(), got.size_bytes), ("a b.txt", 3));
        for bad in [dir.path().to_path_buf(), dir.path().join("missing")] {
            assert_eq!(
                LocalFile::check(&bad).unwrap_err().code,
                ErrorCode::InvalidArgument
            );
        }
    }
}
