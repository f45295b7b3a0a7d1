//! Streaming the final response body to `body.<ext>` without holding it in memory.

use std::path::PathBuf;

use url::Url;

use crate::error::AfError;
use crate::sdk::fetch::outdir::OutDir;
use crate::sdk::http::errors;

/// How much of a textual body is kept in memory for classification and projections.
pub const TEXT_PREFIX_LIMIT: usize = 16 * 1024 * 1024;

/// What streaming the body produced.
#[derive(Debug, Default)]
pub struct BodyCapture {
    /// The committed `body.<ext>`.
    pub path: Option<PathBuf>,
    /// Bytes written to the file.
    pub bytes: u64,
    /// Whether `--max-response-bytes` cut the body short.
    pub truncated: bool,
    /// The first bytes of a textual body (up to [`TEXT_PREFIX_LIMIT`]).
    pub text_prefix: Vec<u8>,
    /// Whether `text_prefix` holds the whole body.
    pub prefix_complete: bool,
    /// The body's first bytes (up to [`HEAD_BYTES`]), kept whatever its type.
    pub head: Vec<u8>,
}

/// How many leading bytes are seen before the body file is named (sniffing).
pub const HEAD_BYTES: usize = 1024;

/// Stream `response` into `out/<name>`; `max_bytes` 0 means unlimited. `pick` sees the
/// body's first bytes (up to [`HEAD_BYTES`]) and returns the file name and whether a prefix
/// is kept in memory for the text projections.
pub async fn capture(
    mut response: reqwest::Response,
    out: &mut OutDir,
    pick: impl FnOnce(&[u8]) -> (String, bool),
    max_bytes: u64,
    url: &Url,
) -> Result<BodyCapture, AfError> {
    let mut cap = BodyCapture {
        prefix_complete: true,
        ..BodyCapture::default()
    };
    let mut pick = Some(pick);
    let mut sink: Option<(crate::fsutil::PrivateFile, bool)> = None;
    let mut ended = false;
    while !ended {
        let chunk = match response.chunk().await {
            Ok(Some(c)) => c,
            Ok(None) => {
                ended = true;
                bytes::Bytes::new()
            }
            Err(e) => return Err(errors::map_reqwest(&e, url, false)),
        };
        let mut slice: &[u8] = &chunk;
        if max_bytes > 0 && cap.bytes + slice.len() as u64 > max_bytes {
            slice = &slice[..(max_bytes - cap.bytes) as usize];
            cap.truncated = true;
            ended = true;
        }
        // The head is gathered before the file exists: its name depends on the bytes.
        if sink.is_none() {
            let room = HEAD_BYTES - cap.head.len();
            let take = slice.len().min(room);
            cap.head.extend_from_slice(&slice[..take]);
            if cap.head.len() < HEAD_BYTES && !ended {
                cap.bytes += slice.len() as u64;
                continue;
            }
            let (name, keep_text) = match pick.take() {
                Some(p) => p(&cap.head),
                None => ("body.bin".to_string(), false),
            };
            let mut file = out.stream(&name)?;
            file.write_all(&cap.head)?;
            if keep_text {
                cap.text_prefix.extend_from_slice(&cap.head);
            }
            slice = &slice[take..];
            cap.bytes += take as u64;
            sink = Some((file, keep_text));
        }
        let Some((file, keep_text)) = sink.as_mut() else {
            continue;
        };
        file.write_all(slice)?;
        cap.bytes += slice.len() as u64;
        if *keep_text {
            let room = TEXT_PREFIX_LIMIT.saturating_sub(cap.text_prefix.len());
            if slice.len() > room {
                cap.prefix_complete = false;
            }
            cap.text_prefix
                .extend_from_slice(&slice[..slice.len().min(room)]);
        }
    }
    if cap.truncated {
        cap.prefix_complete = false;
    }
    drop(response);
    let Some((file, _)) = sink else {
        return Err(AfError::new(
            crate::error::ErrorCode::IoError,
            "the body was never opened",
        ));
    };
    let path = file.commit()?;
    out.committed(path.clone());
    cap.path = Some(path);
    Ok(cap)
}

/// Map an I/O error while streaming (kept for callers that read raw streams).
pub fn stream_error(err: &std::io::Error, url: &Url) -> AfError {
    errors::body_io(err, url)
}
