//! Streaming bodies: a host's download written to a sink chunk by chunk, a driver's file
//! sent as the request body, neither ever whole in memory.

use std::path::Path;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use serde_json::Value;

use super::status::refusal;
use super::{build, connect};
use crate::error::{AfError, ErrorCode};
use crate::sdk::endpoint::Endpoint;

/// Bytes per chunk read from a local file.
const CHUNK: usize = 64 * 1024;
/// Longest JSON answer (or error document) read after a transfer.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// What [`download_to`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received {
    /// The whole body, this many bytes.
    Complete(u64),
    /// The body passed `max_bytes`; the sink got only part of it and must be discarded.
    TooLarge,
}

fn body_failed(path: &str, e: &hyper::Error) -> AfError {
    AfError::new(
        ErrorCode::HostUnreachable,
        format!(
            "{path}: the host's answer broke off: {}",
            crate::sdk::http::errors::source_chain(e)
        ),
    )
}

/// The next data chunk of `body`; `None` at its end.
async fn next_chunk(body: &mut Incoming, path: &str) -> Result<Option<Bytes>, AfError> {
    loop {
        match body.frame().await {
            None => return Ok(None),
            Some(Err(e)) => return Err(body_failed(path, &e)),
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    return Ok(Some(data));
                }
            }
        }
    }
}

/// The whole of `body`, or the first bytes past `cap` (which then no longer parse).
pub(super) async fn read_capped(
    mut body: Incoming,
    cap: usize,
    path: &str,
) -> Result<Vec<u8>, AfError> {
    let mut raw = Vec::new();
    while let Some(chunk) = next_chunk(&mut body, path).await? {
        raw.extend_from_slice(&chunk);
        if raw.len() > cap {
            return Err(AfError::new(
                ErrorCode::HostUnreachable,
                format!("{path}: the host's answer is larger than {cap} bytes"),
            ));
        }
    }
    Ok(raw)
}

/// The JSON of a short answer (`Null` when it is not JSON) and its status.
async fn short_answer(resp: hyper::Response<Incoming>, path: &str) -> (u16, Value) {
    let status = resp.status().as_u16();
    let raw = read_capped(resp.into_body(), MAX_ANSWER_BYTES, path).await;
    let body = raw
        .ok()
        .and_then(|raw| serde_json::from_slice(&raw).ok())
        .unwrap_or(Value::Null);
    (status, body)
}

fn timed_out(path: &str, timeout: Duration) -> AfError {
    AfError::new(
        ErrorCode::HostUnreachable,
        format!(
            "the transfer {path} did not finish within {} ms",
            timeout.as_millis()
        ),
    )
    .with_hint("raise timeout_ms for large files")
}

/// `GET path` and hand the body to `sink` chunk by chunk (at most `max_bytes`, 0 = no
/// bound), all within `timeout`. A non-2xx answer is the host's stable error.
pub async fn download_to(
    endpoint: &Endpoint,
    path: &str,
    token: Option<&str>,
    timeout: Duration,
    max_bytes: u64,
    mut sink: impl FnMut(&[u8]) -> Result<(), AfError>,
) -> Result<Received, AfError> {
    let run = async {
        let req = build(endpoint, "GET", path, token, None)?;
        let resp = connect::send(endpoint, req).await?;
        if !resp.status().is_success() {
            let (status, body) = short_answer(resp, path).await;
            return Err(refusal(status, &body, path));
        }
        let mut body = resp.into_body();
        let mut total = 0u64;
        while let Some(chunk) = next_chunk(&mut body, path).await? {
            total += chunk.len() as u64;
            if max_bytes > 0 && total > max_bytes {
                return Ok(Received::TooLarge);
            }
            sink(&chunk)?;
        }
        Ok(Received::Complete(total))
    };
    tokio::time::timeout(timeout, run)
        .await
        .map_err(|_| timed_out(path, timeout))?
}

/// `POST path` with the `len` bytes of `file` as the body, within `timeout`; the host's
/// JSON answer, or its stable error.
pub async fn upload_file(
    endpoint: &Endpoint,
    path: &str,
    token: Option<&str>,
    timeout: Duration,
    file: &Path,
    len: u64,
) -> Result<Value, AfError> {
    let f = tokio::fs::File::open(file).await.map_err(|e| {
        AfError::invalid(format!("file {}: {e}", file.display())).with_field("file")
    })?;
    let chunks = futures_util::StreamExt::map(crate::fsutil::file_chunks(f, len, CHUNK), |r| {
        r.map(Frame::data)
    });
    let body = BodyExt::boxed_unsync(StreamBody::new(chunks));
    let run = async {
        let req = build(
            endpoint,
            "POST",
            path,
            token,
            Some(("application/octet-stream", len, body)),
        )?;
        let resp = connect::send(endpoint, req).await?;
        let (status, answer) = short_answer(resp, path).await;
        if !(200..300).contains(&status) {
            Err(refusal(status, &answer, path))
        } else if answer.is_object() {
            Ok(answer)
        } else {
            Err(AfError::new(
                ErrorCode::HostUnreachable,
                format!("{path}: the host's answer is not JSON"),
            ))
        }
    };
    tokio::time::timeout(timeout, run)
        .await
        .map_err(|_| timed_out(path, timeout))?
}
