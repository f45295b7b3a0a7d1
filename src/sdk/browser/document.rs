//! A main response that is not HTML (PDF, JSON, text, CSV, a feed, an image) on the
//! browser path.
//!
//! Chromium shows such a response in a viewer (a PDF becomes a 601-byte wrapper page whose
//! stream never finishes in the network log) or saves it as a download, and
//! `Network.getResponseBody` gives back text already decoded with the page's charset. So
//! the navigation pauses the main frame's response in the `Fetch` domain: for a type that is
//! HTML by its header nothing more happens; otherwise `Fetch.getResponseBody` reads the
//! bytes as the server sent them, and the response then continues unchanged (the tab shows
//! whatever Chromium shows). `body` and the type's `text`/`content`/`content_json` are
//! written from those bytes through the same projection as the HTTP path, and page
//! readiness is not waited for: at most the load event, so a browser-only capture sees a
//! painted page.

use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};

use super::session::{lock, Shared};
use crate::error::{AfError, ErrorCode, Warning};
use crate::sdk::cdp::CdpConnection;
use crate::sdk::documents::{self, DocKind};
use crate::sdk::fetch::outdir::OutDir;
use crate::sdk::fetch::{projections, FetchRequest};
use crate::sdk::http::body::TEXT_PREFIX_LIMIT;
use crate::sdk::request::Artifact;

/// Bodies larger than this (by `Content-Length`) are not read through CDP (base64 in one
/// message); they go to the browser untouched, as before.
pub const MAX_INTERCEPTED_BYTES: u64 = 256 * 1024 * 1024;

/// Longest wait for the load event of a document's tab (a viewer fires it at once).
const LOAD_WAIT: Duration = Duration::from_secs(3);

/// The main response's bytes and facts, read before the browser saw them.
#[derive(Debug, Clone)]
pub struct MainDocument {
    /// What the bytes are.
    pub kind: DocKind,
    /// The body as the server sent it (content coding removed).
    pub bytes: Vec<u8>,
    /// The response's `Content-Type`, when it had one.
    pub content_type: Option<String>,
    /// The response URL (after redirects).
    pub url: url::Url,
}

/// The `Fetch.enable` pattern that pauses document responses.
pub fn response_pattern() -> Value {
    json!({"urlPattern": "*", "resourceType": "Document", "requestStage": "Response"})
}

/// Whether a `Fetch.requestPaused` event is at the response stage.
pub fn is_response_stage(ev: &Value) -> bool {
    ev.get("responseStatusCode").is_some() || ev.get("responseErrorReason").is_some()
}

fn header<'a>(ev: &'a Value, name: &str) -> Option<&'a str> {
    ev["responseHeaders"].as_array()?.iter().find_map(|h| {
        h["name"]
            .as_str()
            .filter(|n| n.eq_ignore_ascii_case(name))
            .and(h["value"].as_str())
    })
}

/// Whether a response-stage pause is the final main-frame response: not a redirect, not
/// an error, not a subframe (`main_frame` is the tab's target id, also its frame id).
pub fn is_main_response(ev: &Value, main_frame: &str) -> bool {
    let status = ev["responseStatusCode"].as_u64().unwrap_or(0);
    let redirect = (300..400).contains(&status) && header(ev, "location").is_some();
    ev["frameId"].as_str() == Some(main_frame)
        && ev.get("responseErrorReason").is_none()
        && status > 0
        && !redirect
}

/// Continue a paused request unchanged.
pub async fn continue_paused(conn: &CdpConnection, session: &str, ev: &Value, t: Duration) {
    let _ = conn
        .send(
            Some(session),
            "Fetch.continueRequest",
            json!({"requestId": ev["requestId"]}),
            t,
        )
        .await;
}

/// What reading the paused main response gave.
#[derive(Debug, Default)]
pub struct Taken {
    /// The document, when the response was one and its bytes were read.
    pub document: Option<MainDocument>,
    /// Why a response that is not HTML by its header was not read (the fetch then has only
    /// the browser's view of it: a viewer, a download).
    pub warning: Option<Warning>,
}

fn not_read(ct: Option<&str>, why: String) -> Taken {
    let ct = match crate::sdk::content_type::essence(ct) {
        e if e.is_empty() => "untyped".to_string(),
        e => e,
    };
    Taken {
        document: None,
        warning: Some(Warning::general(
            ErrorCode::ArtifactCaptureFailed,
            format!(
                "the main response ({ct}) was not read as a document: {why}; text and content \
                 are the browser's view of it (a viewer or a download), not the document's \
                 words; fetch it with render none for them"
            ),
        )),
    }
}

/// Decide on the paused main response: read its bytes when its header does not say HTML
/// (an attachment too: the browser still downloads it), then let it continue unchanged.
pub async fn take(
    conn: &CdpConnection,
    session: &str,
    ev: &Value,
    t: Duration,
) -> Result<Taken, AfError> {
    let ct = header(ev, "content-type").map(str::to_string);
    let length = header(ev, "content-length").and_then(|l| l.trim().parse::<u64>().ok());
    if documents::declared(ct.as_deref()) == Some(DocKind::Html) {
        continue_paused(conn, session, ev, t).await;
        return Ok(Taken::default());
    }
    if let Some(n) = length.filter(|n| *n > MAX_INTERCEPTED_BYTES) {
        continue_paused(conn, session, ev, t).await;
        return Ok(not_read(
            ct.as_deref(),
            format!(
                "it is {n} bytes, over the {} MiB the browser path reads through CDP",
                MAX_INTERCEPTED_BYTES >> 20
            ),
        ));
    }
    let read = conn
        .send(
            Some(session),
            "Fetch.getResponseBody",
            json!({"requestId": ev["requestId"]}),
            t,
        )
        .await;
    // The browser gets the response as it came, whatever was read.
    continue_paused(conn, session, ev, t).await;
    let r = match read {
        Ok(r) => r,
        Err(e) => {
            return Ok(not_read(
                ct.as_deref(),
                format!(
                    "reading it at the Fetch stage failed ({}: {})",
                    e.code, e.message
                ),
            ))
        }
    };
    let raw = r["body"].as_str().unwrap_or_default();
    let bytes = if r["base64Encoded"].as_bool().unwrap_or(false) {
        match base64::engine::general_purpose::STANDARD.decode(raw) {
            Ok(b) => b,
            Err(e) => {
                return Ok(not_read(
                    ct.as_deref(),
                    format!("the browser returned a body that is not base64 ({e})"),
                ))
            }
        }
    } else {
        raw.as_bytes().to_vec()
    };
    // Chromium answers a body it could not receive or decode (a false `Content-Encoding`, a
    // reset connection) with no bytes rather than an error.
    if let Some(n) = length.filter(|n| *n > 0 && bytes.is_empty()) {
        return Ok(not_read(
            ct.as_deref(),
            format!(
                "reading it at the Fetch stage failed (the browser returned none of its {n} \
                 declared bytes: a body it could not receive or decode)"
            ),
        ));
    }
    let kind = documents::classify(
        ct.as_deref(),
        &bytes[..bytes.len().min(documents::SNIFF_BYTES)],
    );
    if kind == DocKind::Html {
        return Ok(Taken::default());
    }
    let url = ev["request"]["url"]
        .as_str()
        .and_then(|u| url::Url::parse(u).ok())
        .ok_or_else(|| AfError::new(ErrorCode::ArtifactCaptureFailed, "paused without a URL"))?;
    Ok(Taken {
        document: Some(MainDocument {
            kind,
            bytes,
            content_type: ct,
            url,
        }),
        warning: None,
    })
}

/// Wait for the tab's load event, at most [`LOAD_WAIT`] and never past `until`; the
/// readiness facts for the trace.
pub async fn wait_for_load(state: &Shared, nav_start: Instant, until: Instant) -> Value {
    let until = until.min(Instant::now() + LOAD_WAIT);
    loop {
        let (load_at, changed) = {
            let st = lock(state);
            (st.load_at, std::sync::Arc::clone(&st.changed))
        };
        if load_at.is_some() || Instant::now() >= until {
            let load_ms = load_at
                .map(|at| (at.saturating_duration_since(nav_start).as_secs_f64() * 1000.0).round());
            return json!({
                "skipped": "main_response_document",
                "load_ms": load_ms,
                "load_reached": load_at.is_some(),
            });
        }
        tokio::select! {
            () = changed.notified() => {}
            () = tokio::time::sleep_until(until.into()) => {}
        }
    }
}

/// What writing a document's artifacts produced.
#[derive(Debug, Default)]
pub struct Written {
    /// Written files.
    pub files: Vec<(Artifact, std::path::PathBuf)>,
    /// Warnings about the body and the projections.
    pub warnings: Vec<Warning>,
    /// Bytes in the body file.
    pub body_bytes: u64,
    /// Whether the body was cut at `--max-response-bytes`.
    pub body_truncated: bool,
    /// Facts for `trace.document`.
    pub trace: Option<Value>,
}

/// Write `body` and the wanted projections from the main response's bytes, as the HTTP
/// path would for the same response.
pub async fn write(
    doc: &MainDocument,
    req: &FetchRequest,
    want: &[Artifact],
    out: &mut OutDir,
    budget: Duration,
) -> Result<Written, AfError> {
    let mut w = Written::default();
    let ct = doc.content_type.as_deref();
    let mut bytes: &[u8] = &doc.bytes;
    let cap = req.max_response_bytes;
    if cap > 0 && bytes.len() as u64 > cap {
        bytes = &bytes[..usize::try_from(cap).unwrap_or(usize::MAX)];
        w.body_truncated = true;
        w.warnings.push(Warning::artifact(
            "body",
            ErrorCode::NetworkBodyTruncated,
            format!("the body was cut at max_response_bytes ({cap})"),
        ));
    }
    w.body_bytes = bytes.len() as u64;
    let head = &bytes[..bytes.len().min(documents::SNIFF_BYTES)];
    let name = format!("body.{}", documents::body_extension(ct, head));
    let body_path = out.write(&name, bytes)?;
    w.files.push((Artifact::Body, body_path.clone()));

    let wanted: Vec<Artifact> = projections::PROJECTIONS
        .into_iter()
        .filter(|a| want.contains(a))
        .collect();
    if wanted.is_empty() {
        return Ok(w);
    }
    let prefix = &bytes[..bytes.len().min(TEXT_PREFIX_LIMIT)];
    let projected = documents::project(
        doc.kind,
        prefix,
        Some(&body_path),
        ct,
        &doc.url,
        req.documents,
        budget,
    )
    .await;
    w.trace = projected.trace.clone();
    w.warnings.extend(projected.warnings.iter().cloned());
    let cut = (doc.kind.is_textual() && prefix.len() < bytes.len()).then_some(prefix.len());
    projections::write(
        &wanted,
        out,
        &doc.url,
        ct,
        None,
        Some(projected),
        cut,
        &mut w.files,
        &mut w.warnings,
    )?;
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paused(frame: &str, status: u64, headers: Value) -> Value {
        json!({"requestId": "i", "frameId": frame, "responseStatusCode": status,
               "responseHeaders": headers, "request": {"url": "http://h/x"}})
    }

    #[test]
    fn main_response_excludes_redirects_and_subframes() {
        let ct = json!([{"name": "Content-Type", "value": "application/pdf"}]);
        assert!(is_main_response(&paused("T", 200, ct.clone()), "T"));
        assert!(!is_main_response(&paused("F", 200, ct), "T"));
        let redirect = json!([{"name": "location", "value": "/y"}]);
        assert!(!is_main_response(&paused("T", 302, redirect), "T"));
        // A 304 or 300 without a Location is a final response.
        assert!(is_main_response(&paused("T", 300, json!([])), "T"));
        assert!(is_response_stage(&paused("T", 200, json!([]))));
        assert!(!is_response_stage(
            &json!({"requestId": "i", "request": {}})
        ));
    }
}
