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
}

/// Stream `response` into `out/<name>`; `max_bytes` 0 means unlimited; `keep_text`
/// keeps a prefix in memory for the text projections.
pub async fn capture(
    mut response: reqwest::Response,
    out: &mut OutDir,
    name: &str,
    max_bytes: u64,
    keep_text: bool,
    url: &Url,
) -> Result<BodyCapture, AfError> {
    let mut file = out.stream(name)?;
    let mut cap = BodyCapture {
        prefix_complete: true,
        ..BodyCapture::default()
    };
    loop {
        let chunk = match response.chunk().await {
            Ok(Some(c)) => c,
            Ok(None) => break,
            Err(e) => return Err(errors::map_reqwest(&e, url, false)),
        };
        let mut slice: &[u8] = &chunk;
        if max_bytes > 0 && cap.bytes + slice.len() as u64 > max_bytes {
            slice = &slice[..(max_bytes - cap.bytes) as usize];
            cap.truncated = true;
        }
        file.write_all(slice)?;
        cap.bytes += slice.len() as u64;
        if keep_text {
            let room = TEXT_PREFIX_LIMIT.saturating_sub(cap.text_prefix.len());
            if slice.len() > room {
                cap.prefix_complete = false;
            }
            cap.text_prefix
                .extend_from_slice(&slice[..slice.len().min(room)]);
        }
        if cap.truncated {
            cap.prefix_complete = false;
            break;
        }
    }
    drop(response);
    let path = file.commit()?;
    out.committed(path.clone());
    cap.path = Some(path);
    Ok(cap)
}

/// Map an I/O error while streaming (kept for callers that read raw streams).
pub fn stream_error(err: &std::io::Error, url: &Url) -> AfError {
    errors::body_io(err, url)
}
