//! A browser fetch's outcome: the page's facts from the network log, or a download's.

use std::time::Instant;

use serde_json::json;

use super::drive::Run;
use super::session::{lock, Shared};
use super::{capture_budget, download, ms_since};
use crate::error::{ErrorCode, Warning};
use crate::sdk::challenge;
use crate::sdk::fetch::outcome::{DownloadOutcome, FetchOutcome, Trace};
use crate::sdk::fetch::outdir::OutDir;
use crate::sdk::fetch::takeover_hint;
use crate::sdk::fetch::FetchRequest;
use crate::sdk::request::Artifact;

/// The files a fetch wrote and the body's size.
pub(super) struct Files {
    pub files: Vec<(Artifact, std::path::PathBuf)>,
    pub body_bytes: u64,
    pub body_truncated: bool,
}

/// The outcome of a navigation that became a download: no page to capture (the tab stays
/// on its previous document), so no page artifacts; the download's facts once it settled.
/// The bytes are still on the host; the caller moves them (`sdk::transfer`).
pub(super) async fn download_outcome(
    run: &Run<'_>,
    out: &OutDir,
    trace: &mut Trace,
) -> FetchOutcome {
    let (download, warning) = settled_download(run, trace).await;
    let none = Files {
        files: Vec::new(),
        body_bytes: 0,
        body_truncated: false,
    };
    let warnings = warning.into_iter().collect();
    let mut o = outcome(
        run.req,
        run.state,
        run.request_id,
        out,
        none,
        None,
        warnings,
    );
    o.download = download;
    o
}

/// Wait for the tab's download to settle (leaving a share of the time for moving its
/// bytes): its facts, and a warning when it did not complete.
pub(super) async fn settled_download(
    run: &Run<'_>,
    trace: &mut Trace,
) -> (Option<DownloadOutcome>, Option<Warning>) {
    let (req, state, deadline) = (run.req, run.state, run.deadline);
    let started = Instant::now();
    let settle_by = deadline
        .checked_sub(capture_budget(req.timeout))
        .unwrap_or(deadline)
        .max(Instant::now());
    let seen = download::settle(state, settle_by).await;
    trace.timing("download", ms_since(started));
    trace.set("navigation", json!("download"));
    let warning = match &seen {
        None => Some(Warning::artifact(
            "download",
            ErrorCode::ArtifactCaptureFailed,
            "the navigation became a download, but the browser reported none",
        )),
        Some(d) if d.state == "inProgress" => Some(Warning::artifact(
            "download",
            ErrorCode::ArtifactCaptureTimeout,
            format!(
                "the download was still in progress at the deadline ({} of {} bytes)",
                d.received_bytes, d.total_bytes
            ),
        )),
        Some(d) if d.state != "completed" => Some(Warning::artifact(
            "download",
            ErrorCode::ArtifactCaptureFailed,
            format!("the browser ended the download as {}", d.state),
        )),
        Some(_) => None,
    };
    let download = seen.map(|facts| DownloadOutcome {
        facts,
        file: None,
        size_bytes: 0,
    });
    (download, warning)
}

/// The outcome from the network log's main document and what was written.
pub(super) fn outcome(
    req: &FetchRequest,
    state: &Shared,
    request_id: &str,
    out: &OutDir,
    written: Files,
    rendered_html: Option<&str>,
    mut warnings: Vec<Warning>,
) -> FetchOutcome {
    let (final_url, status, headers, mime, redirects) = {
        let st = lock(state);
        match st.network.document() {
            Some(d) => (
                d.url.clone(),
                d.status().unwrap_or(0),
                d.response_headers(),
                d.mime_type(),
                st.network.document_redirects(),
            ),
            None => (req.url.to_string(), 0, Vec::new(), None, 0),
        }
    };
    let content_type = headers
        .iter()
        .find(|(n, _)| n == "content-type")
        .map(|(_, v)| v.clone())
        .or(mime);
    let mut page_kind = None;
    let mut next_action = None;
    if let Some(c) = challenge::classify(status, &headers, rendered_html.unwrap_or("")) {
        let (kind, warning, next) = takeover_hint::challenge_facts(&c, req.url.as_str());
        page_kind = Some(kind);
        warnings.push(warning);
        next_action = Some(next);
    }
    FetchOutcome {
        request_id: request_id.to_string(),
        url: req.url.to_string(),
        final_url,
        status,
        content_type,
        render_used: "browser",
        tab_id: None,
        out_dir: out.path().to_path_buf(),
        files: written.files,
        body_bytes: written.body_bytes,
        body_truncated: written.body_truncated,
        redirects,
        page_kind,
        next_action,
        warnings,
        download: None,
        trace: Trace::new(request_id),
        screenshot: None,
    }
}
