//! Copy a completed browser download from the host (`GET /downloads/{id}`) into the fetch's
//! artifact directory, as `download/<suggested name>`.

use std::time::Duration;

use crate::error::{AfError, ErrorCode, Warning};
use crate::sdk::client::Client;
use crate::sdk::fetch::outcome::DownloadOutcome;
use crate::sdk::fetch::outdir::OutDir;
use crate::sdk::host_http::{self, Received};

/// The artifact subdirectory downloads are copied into.
pub const DOWNLOAD_DIR: &str = "download";

fn warning(code: ErrorCode, message: impl Into<String>) -> Warning {
    Warning::artifact("download", code, message)
}

/// Move `d`'s bytes from the host into `out` (at most `max_bytes`, 0 = no bound) and fill
/// in `d.file`. Host-side problems are a `download` warning; only writing locally fails.
pub async fn copy_to_driver(
    client: &Client,
    d: &mut DownloadOutcome,
    out: &mut OutDir,
    max_bytes: u64,
    timeout: Duration,
) -> Result<Option<Warning>, AfError> {
    if !super::is_guid(&d.facts.guid) {
        return Ok(Some(warning(
            ErrorCode::ArtifactCaptureFailed,
            format!(
                "the browser gave the download an unexpected id {:?}",
                d.facts.guid
            ),
        )));
    }
    let name = super::safe_file_name(&d.facts.suggested_filename);
    let mut file = out.stream_in(DOWNLOAD_DIR, &name)?;
    let path = format!("/downloads/{}", d.facts.guid);
    let got = host_http::download_to(
        client.endpoint(),
        &path,
        client.token(),
        timeout,
        max_bytes,
        |chunk| file.write_all(chunk),
    )
    .await;
    match got {
        Ok(Received::Complete(n)) => {
            let written = file.commit()?;
            out.committed(written.clone());
            d.file = Some(written);
            d.size_bytes = n;
            Ok(None)
        }
        Ok(Received::TooLarge) => Ok(Some(warning(
            ErrorCode::ArtifactCaptureFailed,
            format!("the download is larger than max_response_bytes ({max_bytes}); not copied"),
        ))),
        Err(e) if e.code == ErrorCode::IoError => Err(e),
        Err(e) => Ok(Some(warning(
            ErrorCode::ArtifactCaptureFailed,
            format!(
                "the download could not be copied from the host: {}",
                e.message
            ),
        ))),
    }
}
