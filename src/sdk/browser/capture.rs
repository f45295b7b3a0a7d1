//! Artifact captures after readiness. Each capture fails alone, as a warning.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};

use super::assets;
use super::content;
use super::eval::evaluate;
use super::network;
use super::session::{lock, Shared};
use crate::error::{AfError, ErrorCode, Warning};
use crate::sdk::cdp::CdpConnection;
use crate::sdk::fetch::outdir::OutDir;
use crate::sdk::fetch::FetchRequest;
use crate::sdk::request::Artifact;

/// Longest wait for announced `responseReceivedExtraInfo` events before `network.json`.
const EXTRA_INFO_GRACE: Duration = Duration::from_millis(500);

/// Tallest full-page screenshot taken (GPU texture limits make taller ones fail).
pub const MAX_SCREENSHOT_HEIGHT: f64 = 16384.0;

/// What the captures produced.
#[derive(Debug, Default)]
pub struct Captured {
    /// Written artifacts.
    pub files: Vec<(Artifact, PathBuf)>,
    /// Per-artifact warnings.
    pub warnings: Vec<Warning>,
    /// Bytes in the body file.
    pub body_bytes: u64,
    /// Whether the body was cut at `max_response_bytes`.
    pub body_truncated: bool,
    /// The serialized DOM, when it could be read (used for classification too).
    pub rendered_html: Option<String>,
    /// The screenshot's facts for the result, when one was written.
    pub screenshot: Option<Value>,
    /// When each artifact's capture ended (`trace.captured_at_ms`).
    pub taken: Vec<(Artifact, Instant)>,
}

/// Pretty JSON with a trailing newline.
pub fn pretty(v: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(v).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// Longest any one capture call may take.
const MAX_CALL: Duration = Duration::from_secs(30);

/// How long a screenshot or PDF of a document that has not finished parsing may wait for a
/// frame.
const INCOMPLETE_PAINT_WAIT: Duration = Duration::from_secs(2);

pub(super) struct Ctx<'a> {
    pub(super) conn: &'a CdpConnection,
    pub(super) session: &'a str,
    /// Every capture call ends by then; a call still unanswered is an
    /// `artifact_capture_timeout` warning for its artifact, not a failed fetch.
    until: Instant,
}

impl Ctx<'_> {
    /// The time the next call may take (at least 100 ms, so it can still be answered).
    pub(super) fn t(&self) -> Duration {
        self.until
            .saturating_duration_since(Instant::now())
            .clamp(Duration::from_millis(100), MAX_CALL)
    }

    pub(super) async fn eval(&self, expr: &str, await_promise: bool) -> Result<Value, AfError> {
        match evaluate(self.conn, self.session, expr, await_promise, self.t()).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(exception)) => Err(AfError::new(
                ErrorCode::ArtifactCaptureFailed,
                format!("the page threw: {exception}"),
            )),
            Err(e) => Err(e),
        }
    }

    async fn layout_metrics(&self) -> Result<Value, AfError> {
        self.conn
            .send(
                Some(self.session),
                "Page.getLayoutMetrics",
                json!({}),
                self.t(),
            )
            .await
    }
}

/// `read`'s result when `wanted` (futures do nothing until awaited).
async fn when<T>(wanted: bool, read: impl std::future::Future<Output = T>) -> Option<T> {
    if wanted {
        Some(read.await)
    } else {
        None
    }
}

/// A read [`capture_all`] prefetched, or `again` when there is none (an artifact it did not
/// expect).
async fn prefetched_or<T>(
    prefetched: &mut Option<T>,
    again: impl std::future::Future<Output = T>,
) -> T {
    match prefetched.take() {
        Some(r) => r,
        None => again.await,
    }
}

pub(super) fn failed(a: Artifact, why: impl Into<String>) -> Warning {
    Warning::artifact(a.as_str(), ErrorCode::ArtifactCaptureFailed, why)
}

/// The warning for a capture call that failed: `artifact_capture_timeout` when it was not
/// answered in time, `artifact_capture_failed` otherwise.
pub(super) fn failed_by(a: Artifact, e: &AfError) -> Warning {
    let code = if e.code == ErrorCode::CdpTimeout {
        ErrorCode::ArtifactCaptureTimeout
    } else {
        ErrorCode::ArtifactCaptureFailed
    };
    Warning::artifact(a.as_str(), code, e.message.clone())
}

/// Capture every artifact in `want`, each call ending by `until`; only I/O errors writing
/// files fail the fetch. `body` is written whenever a main response arrived, wanted or not,
/// unless `body_written` (a document's body, written from its intercepted bytes).
#[allow(clippy::too_many_arguments)]
pub async fn capture_all(
    conn: &CdpConnection,
    session: &str,
    state: &Shared,
    req: &FetchRequest,
    out: &mut OutDir,
    request_id: &str,
    want: &[Artifact],
    body_written: bool,
    until: Instant,
    incomplete: bool,
) -> Result<Captured, AfError> {
    let cx = Ctx {
        conn,
        session,
        until,
    };
    // A document still parsing may have nothing to paint yet (its body is behind a blocked
    // script): the browser produces no frame to capture, so waiting longer only delays the
    // result. Painting captures go last, so the other artifacts are taken by then.
    let paint_cx = || Ctx {
        conn,
        session,
        until: match incomplete {
            true => until.min(Instant::now() + INCOMPLETE_PAINT_WAIT),
            false => until,
        },
    };
    let mut c = Captured::default();
    // The page reads go out together: the browser answers one session's commands in order,
    // so each sees the page as it would one after another, without a round trip each. None
    // of them changes the page.
    let wanted = |a: Artifact| want.contains(&a);
    let (html, mut text, mut metrics, mut observation) = tokio::join!(
        cx.eval(assets::RENDERED_HTML, false),
        when(wanted(Artifact::Text), cx.eval(assets::BODY_TEXT, false)),
        when(wanted(Artifact::Screenshot), cx.layout_metrics()),
        when(
            wanted(Artifact::Observation),
            cx.eval(assets::OBSERVATION_JS, false)
        ),
    );
    if let Ok(Value::String(h)) = &html {
        c.rendered_html = Some(h.clone());
    }
    // DESIGN.md "Artifacts": the body is written whenever a main response arrived.
    let implicit_body = !want.contains(&Artifact::Body);
    let order = (implicit_body && !body_written)
        .then_some(Artifact::Body)
        .into_iter();
    // The captures that wait for the browser to paint a frame go last: on a page that
    // cannot paint, they run out of time without taking the others' with them.
    let paints = |a: &Artifact| matches!(a, Artifact::Screenshot | Artifact::Pdf);
    let painted = want.iter().copied().filter(paints);
    for a in order
        .chain(want.iter().copied().filter(|a| !paints(a)))
        .chain(painted)
    {
        let r = match a {
            Artifact::Body => body(&cx, state, req, out, &mut c, implicit_body).await,
            Artifact::RenderedHtml => match &html {
                Ok(Value::String(h)) => write(out, &mut c, a, &a.file_name(), h.as_bytes()),
                Ok(_) => Ok(Some(failed(a, "the page has no document"))),
                Err(e) => Ok(Some(failed_by(a, e))),
            },
            Artifact::Text => {
                match prefetched_or(&mut text, cx.eval(assets::BODY_TEXT, false)).await {
                    Ok(v) => {
                        let text = v.as_str().unwrap_or_default();
                        let w = write(out, &mut c, a, &a.file_name(), text.as_bytes())?;
                        Ok(w.or_else(|| text_size_warning(text)))
                    }
                    Err(e) => Ok(Some(failed_by(a, &e))),
                }
            }
            Artifact::Content | Artifact::ContentJson | Artifact::Lean | Artifact::Links => {
                content::capture(&cx, out, &mut c, a, want).await
            }
            Artifact::Screenshot => {
                let metrics = prefetched_or(&mut metrics, cx.layout_metrics()).await;
                screenshot(&paint_cx(), &req.browser, metrics, out, &mut c).await
            }
            Artifact::Pdf => super::print::pdf(&paint_cx(), out, &mut c).await,
            Artifact::Network => network(&cx, state, req, out, request_id, &mut c).await,
            Artifact::Console => {
                let entries = lock(state).console.clone();
                let doc = json!({"schema_version": 1, "entries": entries});
                write(out, &mut c, a, &a.file_name(), &pretty(&doc))
            }
            Artifact::Observation => {
                match prefetched_or(&mut observation, cx.eval(assets::OBSERVATION_JS, false)).await
                {
                    Ok(v) => {
                        // A titled page without controls is a plain document, not an empty capture.
                        let empty = v["nodes"].as_array().is_none_or(Vec::is_empty)
                            && v["title"].as_str().is_none_or(|t| t.trim().is_empty());
                        let w = write(out, &mut c, a, &a.file_name(), &pretty(&v))?;
                        Ok(w.or_else(|| {
                            empty.then(|| {
                                Warning::artifact(
                                    a.as_str(),
                                    ErrorCode::ObservationEmpty,
                                    "the page has no title and no interactive elements",
                                )
                            })
                        }))
                    }
                    Err(e) => Ok(Some(failed_by(a, &e))),
                }
            }
            Artifact::Storage => match cx.eval(assets::STORAGE_JS, true).await {
                Ok(v) => write(out, &mut c, a, &a.file_name(), &pretty(&v)),
                Err(e) => Ok(Some(failed_by(a, &e))),
            },
        };
        if let Some(w) = r? {
            c.warnings.push(w);
        }
        c.taken.push((a, Instant::now()));
    }
    Ok(c)
}

/// Below this many bytes of visible text (trimmed), a rendered page's `text` gets an
/// `artifact_tiny` warning: what a loading shell or a bare error page shows.
pub const TINY_TEXT_BYTES: usize = 64;

/// `artifact_empty` for a rendered page without visible text, `artifact_tiny` for one with
/// less than [`TINY_TEXT_BYTES`] of it.
fn text_size_warning(text: &str) -> Option<Warning> {
    let n = text.trim().len();
    if n == 0 {
        return Some(Warning::artifact(
            "text",
            ErrorCode::ArtifactEmpty,
            "the page has no visible text",
        ));
    }
    (n < TINY_TEXT_BYTES).then(|| {
        Warning::artifact(
            "text",
            ErrorCode::ArtifactTiny,
            format!(
                "the rendered page has only {n} bytes of visible text (below {TINY_TEXT_BYTES})"
            ),
        )
    })
}

/// Write one artifact file and record it; `Ok(None)` on success.
pub(super) fn write(
    out: &mut OutDir,
    c: &mut Captured,
    a: Artifact,
    name: &str,
    bytes: &[u8],
) -> Result<Option<Warning>, AfError> {
    let p = out.write(name, bytes)?;
    c.files.push((a, p));
    Ok(None)
}

async fn body(
    cx: &Ctx<'_>,
    state: &Shared,
    req: &FetchRequest,
    out: &mut OutDir,
    c: &mut Captured,
    implicit: bool,
) -> Result<Option<Warning>, AfError> {
    let a = Artifact::Body;
    let doc = lock(state).network.document().map(|d| {
        (
            d.cdp_request_id.clone(),
            d.mime_type(),
            d.response_headers(),
        )
    });
    let Some((id, mime, headers)) = doc else {
        // Not asked for and nothing arrived: nothing to report.
        return Ok((!implicit).then(|| failed(a, "no main document response was seen")));
    };
    let r = cx
        .conn
        .send(
            Some(cx.session),
            "Network.getResponseBody",
            json!({"requestId": id}),
            cx.t(),
        )
        .await;
    let r = match r {
        Ok(r) => r,
        Err(e) => return Ok(Some(failed_by(a, &e))),
    };
    let raw = r["body"].as_str().unwrap_or_default();
    let mut bytes = if r["base64Encoded"].as_bool().unwrap_or(false) {
        match base64::engine::general_purpose::STANDARD.decode(raw) {
            Ok(b) => b,
            Err(e) => return Ok(Some(failed(a, format!("undecodable body: {e}")))),
        }
    } else {
        raw.as_bytes().to_vec()
    };
    let ct = headers
        .iter()
        .find(|(n, _)| n == "content-type")
        .map(|(_, v)| v.clone())
        .or(mime);
    let cap = req.max_response_bytes;
    let mut warning = None;
    if cap > 0 && bytes.len() as u64 > cap {
        bytes.truncate(usize::try_from(cap).unwrap_or(usize::MAX));
        c.body_truncated = true;
        warning = Some(Warning::artifact(
            a.as_str(),
            ErrorCode::NetworkBodyTruncated,
            format!("the body was cut at max_response_bytes ({cap})"),
        ));
    }
    c.body_bytes = bytes.len() as u64;
    let name = a.file_name_for(None, ct.as_deref());
    write(out, c, a, &name, &bytes)?;
    Ok(warning)
}

/// `network.json`, with the bodies `--network-bodies` (or its `--wait auto` default) selects.
async fn network(
    cx: &Ctx<'_>,
    state: &Shared,
    req: &FetchRequest,
    out: &mut OutDir,
    request_id: &str,
    c: &mut Captured,
) -> Result<Option<Warning>, AfError> {
    let (mode, defaulted) = network::bodies::mode(&req.browser);
    let max = req.browser.network_body_max_bytes;
    // Bodies share the capture budget with the other artifacts: at most 10 s of it.
    let budget = cx.t().min(Duration::from_secs(10));
    let bodies =
        network::bodies::capture(cx.conn, cx.session, state, out, mode, max, budget).await?;
    // A response's wire headers (`set-cookie` among them) come in an event of their own that
    // can trail it: the announced ones get a moment before the log is written.
    let waiting = Instant::now();
    while lock(state).network.awaiting_extra_info() > 0 && waiting.elapsed() < EXTRA_INFO_GRACE {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let capture = json!({
        "bodies": mode,
        "bodies_defaulted": defaulted,
        "body_max_bytes": max,
        "websocket_frames": req.browser.capture_ws,
        "event_source_messages": req.browser.capture_sse,
    });
    let mut doc = lock(state)
        .network
        .to_json(!req.no_network_redact, &bodies.records, capture);
    doc["request_id"] = json!(request_id);
    c.warnings.extend(bodies.warnings);
    write(
        out,
        c,
        Artifact::Network,
        &Artifact::Network.file_name(),
        &pretty(&doc),
    )
}

async fn screenshot(
    cx: &Ctx<'_>,
    opts: &crate::sdk::fetch::BrowserOptions,
    metrics: Result<Value, AfError>,
    out: &mut OutDir,
    c: &mut Captured,
) -> Result<Option<Warning>, AfError> {
    let a = Artifact::Screenshot;
    let s = Some(cx.session);
    let m = match metrics {
        Ok(m) => m,
        Err(e) => return Ok(Some(failed_by(a, &e))),
    };
    let size = if m["cssContentSize"].is_object() {
        &m["cssContentSize"]
    } else {
        &m["contentSize"]
    };
    let width = size["width"].as_f64().unwrap_or(0.0).ceil().max(1.0);
    let height = size["height"].as_f64().unwrap_or(0.0).ceil().max(1.0);
    let limit = opts
        .screenshot_max_height
        .map_or(MAX_SCREENSHOT_HEIGHT, |h| {
            f64::from(h).min(MAX_SCREENSHOT_HEIGHT)
        });
    let clipped = height > limit;
    let captured_height = height.min(limit);
    // A page that fits the viewport is captured as it is on screen: capturing beyond the
    // viewport makes the browser resize, lay out and paint the page again for the same pixels.
    let viewport = &m["cssLayoutViewport"];
    let fits = viewport["clientWidth"]
        .as_f64()
        .zip(viewport["clientHeight"].as_f64())
        .is_some_and(|(w, h)| width <= w && captured_height <= h);
    // `optimizeForSpeed` picks faster (still lossless) PNG compression: the same pixels in a
    // somewhat larger file, for much less of the renderer's CPU, which parallel fetches share.
    let format = opts.screenshot_format;
    let mut params = json!({
        "format": format,
        "optimizeForSpeed": true,
        "captureBeyondViewport": !fits,
        "clip": {"x": 0, "y": 0, "width": width, "height": captured_height, "scale": 1},
    });
    if let Some(q) = opts.screenshot_quality {
        params["quality"] = json!(q);
    }
    let r = match cx
        .conn
        .send(s, "Page.captureScreenshot", params, cx.t())
        .await
    {
        Ok(r) => r,
        Err(e) => return Ok(Some(failed_by(a, &e))),
    };
    let png = match base64::engine::general_purpose::STANDARD
        .decode(r["data"].as_str().unwrap_or_default())
    {
        Ok(b) if !b.is_empty() => b,
        Ok(_) => return Ok(Some(failed(a, "the browser returned an empty image"))),
        Err(e) => return Ok(Some(failed(a, format!("undecodable image: {e}")))),
    };
    write(out, c, a, &a.file_name_for(Some(format), None), &png)?;
    c.screenshot = Some(json!({
        "format": format,
        "width": width,
        "height": height,
        "captured_height": captured_height,
        "clipped": clipped,
        "bytes": png.len(),
    }));
    // Clipping the user asked for is a fact in the result, not a failure.
    let asked = opts
        .screenshot_max_height
        .is_some_and(|h| f64::from(h) < MAX_SCREENSHOT_HEIGHT);
    Ok((clipped && !asked).then(|| {
        Warning::artifact(
            a.as_str(),
            ErrorCode::ArtifactCaptureFailed,
            format!("partial: the page is {height} px tall; the screenshot stops at {MAX_SCREENSHOT_HEIGHT} px"),
        )
    }))
}
