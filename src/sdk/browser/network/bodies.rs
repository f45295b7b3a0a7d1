//! Response and post-data bodies for `network.json`: which entries `--network-bodies` selects,
//! how the browser is told to keep them, and fetching them after `loadingFinished` with
//! bounded concurrency, count and time. Every per-entry problem is a warning.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use base64::Engine as _;
use futures_util::stream::{self, StreamExt};
use serde_json::{json, Value};

use super::entry::State;
use super::{hints, is_xhr, Entry};
use crate::error::{AfError, ErrorCode, Warning};
use crate::sdk::browser::session::{lock, Shared};
use crate::sdk::cdp::CdpConnection;
use crate::sdk::content_type;
use crate::sdk::fetch::outdir::OutDir;
use crate::sdk::fetch::BrowserOptions;
use crate::sdk::request::{NetworkBodies, Wait};

/// Directory (inside `--out`) the bodies go to.
pub const DIR: &str = "network-bodies";
/// Bodies fetched at once.
const CONCURRENCY: usize = 4;
/// Most bodies fetched per fetch; the rest are skipped with one warning.
const MAX_BODIES: usize = 500;
/// Largest body the browser is asked to retain, whatever the cap.
const MAX_RETAINED: u64 = 256 * 1024 * 1024;
/// Individual warnings before the rest are summed up in one.
const MAX_WARNINGS: usize = 10;
/// Longest post data kept inline in `requestWillBeSent` (enough for GraphQL hints).
pub const MAX_INLINE_POST_DATA: u64 = 64 * 1024;

/// What body capture did for one entry.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BodyRecord {
    /// Path relative to the out dir (`network-bodies/<id>.<ext>`), when written.
    pub file: Option<String>,
    /// `captured`, `truncated`, `failed` or `skipped`.
    pub status: &'static str,
    /// `utf8` or `base64` (the file holds base64 of the bytes).
    pub encoding: Option<&'static str>,
    /// Body bytes written (before base64).
    pub bytes_written: u64,
    /// Body bytes the browser had, when known.
    pub original_bytes: Option<u64>,
    /// Cut at `--network-body-max-bytes`.
    pub truncated: bool,
    /// Why it failed or was skipped.
    pub error: Option<String>,
    /// Whether a JSON (by MIME type or GraphQL) body parsed; `None` when not checked.
    pub json_valid: Option<bool>,
    /// Path of the captured post data, relative to the out dir.
    pub post_data_file: Option<String>,
}

/// The body mode in effect: an explicit `--network-bodies`, else `xhr` under `--wait auto`
/// and `off` otherwise. The flag says whether the default applied.
pub fn mode(opts: &BrowserOptions) -> (NetworkBodies, bool) {
    match opts.network_bodies {
        Some(m) => (m, false),
        None if matches!(opts.wait, Wait::Auto) => (NetworkBodies::Xhr, true),
        None => (NetworkBodies::Off, true),
    }
}

/// Largest body the browser keeps for `getResponseBody`: twice the cap, so a body somewhat
/// over the cap can still be cut and saved, within [1 MiB, 256 MiB].
pub fn retained_limit(max_bytes: u64) -> u64 {
    if max_bytes == 0 {
        return MAX_RETAINED;
    }
    max_bytes.saturating_mul(2).clamp(1024 * 1024, MAX_RETAINED)
}

/// `Network.enable` parameters: bodies must be retained when they will be asked for.
pub fn enable_params(mode: NetworkBodies, max_bytes: u64) -> Value {
    let mut p = json!({"maxPostDataSize": MAX_INLINE_POST_DATA});
    if mode != NetworkBodies::Off {
        let resource = retained_limit(max_bytes);
        p["maxResourceBufferSize"] = json!(resource);
        p["maxTotalBufferSize"] = json!((resource * 4).clamp(200 * 1000 * 1000, 1 << 30));
    }
    p
}

/// Whether `mode` selects `e`. Redirect hops carry no body; WebSocket and preflight
/// entries have none to fetch.
pub fn selects(mode: NetworkBodies, e: &Entry) -> bool {
    if e.redirected_to.is_some() || matches!(e.resource_type.as_str(), "WebSocket" | "Preflight") {
        return false;
    }
    match mode {
        NetworkBodies::Off => false,
        NetworkBodies::Xhr => is_xhr(&e.resource_type) || e.resource_type == "EventSource",
        NetworkBodies::All => true,
    }
}

/// A file name part safe on any file system, from an entry id.
pub fn file_stem(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// How bytes go to disk: UTF-8 text as is, anything else as base64 text.
/// Returns (file bytes, encoding, bytes kept, truncated). `max` 0 means no cap.
pub fn encode_for_file(bytes: &[u8], max: u64) -> (Vec<u8>, &'static str, usize, bool) {
    let cap = if max == 0 {
        bytes.len()
    } else {
        usize::try_from(max).unwrap_or(usize::MAX).min(bytes.len())
    };
    let truncated = cap < bytes.len();
    match std::str::from_utf8(bytes) {
        Ok(text) => {
            let mut end = cap;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            (bytes[..end].to_vec(), "utf8", end, truncated)
        }
        Err(_) => {
            let b64 = base64::engine::general_purpose::STANDARD.encode(&bytes[..cap]);
            (b64.into_bytes(), "base64", cap, truncated)
        }
    }
}

#[derive(Debug, Clone)]
struct Candidate {
    id: String,
    cdp_id: String,
    url: String,
    state: State,
    mime: Option<String>,
    decoded_bytes: u64,
    graphql: bool,
    post_present: bool,
    post_bytes: Option<Vec<u8>>,
    post_type: Option<String>,
}

/// One candidate after its CDP calls.
struct Fetched {
    c: Candidate,
    body: Result<Vec<u8>, String>,
    post: Option<Vec<u8>>,
}

/// Everything body capture produced.
#[derive(Debug, Default)]
pub struct Bodies {
    /// Per entry id.
    pub records: HashMap<String, BodyRecord>,
    /// Per-entry warnings (`artifact: "network"`).
    pub warnings: Vec<Warning>,
}

/// Fetch and write the bodies `mode` selects, within `budget`. Only I/O errors writing files
/// fail; everything else is recorded per entry and warned about.
pub async fn capture(
    conn: &CdpConnection,
    session: &str,
    state: &Shared,
    out: &mut OutDir,
    mode: NetworkBodies,
    max_bytes: u64,
    budget: Duration,
) -> Result<Bodies, AfError> {
    let mut result = Bodies::default();
    if mode == NetworkBodies::Off {
        return Ok(result);
    }
    let candidates: Vec<Candidate> = lock(state)
        .network
        .entries()
        .iter()
        .filter(|e| selects(mode, e))
        .map(|e| Candidate {
            id: e.id.clone(),
            cdp_id: e.cdp_request_id.clone(),
            url: crate::sdk::redact::url(&e.url),
            state: e.state,
            mime: e.mime_type(),
            decoded_bytes: e.decoded_bytes,
            graphql: e.graphql.is_some(),
            post_present: e.post.present,
            post_bytes: e.post.bytes.clone(),
            post_type: e.post.content_type.clone(),
        })
        .collect();
    let deadline = Instant::now() + budget;
    let limit = retained_limit(max_bytes);
    let mut to_fetch = Vec::new();
    let mut notes = Notes::default();
    for c in candidates {
        let skip = |why: &str| BodyRecord {
            status: "skipped",
            error: Some(why.to_string()),
            ..BodyRecord::default()
        };
        let rec = match c.state {
            State::Pending | State::Responded => skip("not finished at capture"),
            State::Failed => skip("the request failed"),
            // Chromium did not keep it, so there is nothing to ask for.
            State::Finished if c.decoded_bytes > limit => {
                notes.truncated(
                    &c,
                    format!(
                        "the body ({} bytes) is larger than the {limit} bytes the browser keeps; not saved",
                        c.decoded_bytes
                    ),
                );
                BodyRecord {
                    status: "truncated",
                    truncated: true,
                    original_bytes: Some(c.decoded_bytes),
                    error: Some(format!(
                        "larger than the browser's retained-body limit ({limit} bytes)"
                    )),
                    ..BodyRecord::default()
                }
            }
            State::Finished if to_fetch.len() >= MAX_BODIES => {
                notes.over_count += 1;
                skip("over the per-fetch body count")
            }
            State::Finished => {
                to_fetch.push(c);
                continue;
            }
        };
        result.records.insert(c.id.clone(), rec);
    }
    let fetched: Vec<Fetched> = stream::iter(to_fetch)
        .map(|c| async move {
            let body = get_body(conn, session, &c.cdp_id, deadline).await;
            let post = match (&c.post_bytes, c.post_present) {
                (Some(b), _) => Some(b.clone()),
                (None, true) => get_post_data(conn, session, &c.cdp_id, deadline).await,
                (None, false) => None,
            };
            Fetched { c, body, post }
        })
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await;
    for Fetched { c, body, post } in fetched {
        let stem = file_stem(&c.id);
        let mut rec = match body {
            Err(e) => {
                notes.failed(&c, &e);
                BodyRecord {
                    status: "failed",
                    error: Some(e),
                    ..BodyRecord::default()
                }
            }
            Ok(bytes) => {
                let (file_bytes, encoding, kept, truncated) = encode_for_file(&bytes, max_bytes);
                let ext = content_type::extension(c.mime.as_deref());
                let name = match encoding {
                    "utf8" => format!("{stem}.{ext}"),
                    _ => format!("{stem}.{ext}.b64"),
                };
                out.write_in(DIR, &name, &file_bytes)?;
                if truncated {
                    notes.truncated(
                        &c,
                        format!(
                            "the body ({} bytes) was cut at network_body_max_bytes ({max_bytes})",
                            bytes.len()
                        ),
                    );
                }
                let json_like = c.graphql || c.mime.as_deref().is_some_and(hints::is_json_mime);
                BodyRecord {
                    file: Some(format!("{DIR}/{name}")),
                    status: if truncated { "truncated" } else { "captured" },
                    encoding: Some(encoding),
                    bytes_written: kept as u64,
                    original_bytes: Some(bytes.len() as u64),
                    truncated,
                    json_valid: (json_like && !truncated).then(|| hints::json_valid(&bytes)),
                    ..BodyRecord::default()
                }
            }
        };
        if let Some(post) = post.filter(|p| !p.is_empty()) {
            let (file_bytes, encoding, _, _) = encode_for_file(&post, max_bytes);
            let ext = content_type::extension(c.post_type.as_deref());
            let name = match encoding {
                "utf8" => format!("{stem}.post.{ext}"),
                _ => format!("{stem}.post.{ext}.b64"),
            };
            out.write_in(DIR, &name, &file_bytes)?;
            rec.post_data_file = Some(format!("{DIR}/{name}"));
        }
        result.records.insert(c.id, rec);
    }
    result.warnings = notes.into_warnings(max_bytes);
    Ok(result)
}

fn remaining(deadline: Instant) -> Option<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    (!left.is_zero()).then_some(left)
}

async fn get_body(
    conn: &CdpConnection,
    session: &str,
    cdp_id: &str,
    deadline: Instant,
) -> Result<Vec<u8>, String> {
    let t = remaining(deadline).ok_or("no time left in the capture budget")?;
    let r = conn
        .send(
            Some(session),
            "Network.getResponseBody",
            json!({"requestId": cdp_id}),
            t,
        )
        .await
        .map_err(|e| e.message)?;
    let raw = r["body"].as_str().unwrap_or_default();
    if r["base64Encoded"].as_bool().unwrap_or(false) {
        base64::engine::general_purpose::STANDARD
            .decode(raw)
            .map_err(|e| format!("undecodable body: {e}"))
    } else {
        Ok(raw.as_bytes().to_vec())
    }
}

async fn get_post_data(
    conn: &CdpConnection,
    session: &str,
    cdp_id: &str,
    deadline: Instant,
) -> Option<Vec<u8>> {
    let t = remaining(deadline)?;
    let r = conn
        .send(
            Some(session),
            "Network.getRequestPostData",
            json!({"requestId": cdp_id}),
            t,
        )
        .await
        .ok()?;
    r["postData"].as_str().map(|s| s.as_bytes().to_vec())
}

/// Per-entry warnings, the first few in full and the rest counted.
#[derive(Default)]
struct Notes {
    truncated: Vec<String>,
    failed: Vec<String>,
    over_count: usize,
}

impl Notes {
    fn truncated(&mut self, c: &Candidate, why: String) {
        self.truncated.push(format!("{} ({}): {why}", c.id, c.url));
    }

    fn failed(&mut self, c: &Candidate, why: &str) {
        self.failed
            .push(format!("{} ({}): body not captured: {why}", c.id, c.url));
    }

    fn into_warnings(self, max_bytes: u64) -> Vec<Warning> {
        let mut out = Vec::new();
        let mut push = |code: ErrorCode, list: Vec<String>, what: &str| {
            let n = list.len();
            for m in list.into_iter().take(MAX_WARNINGS) {
                out.push(Warning::artifact("network", code, m));
            }
            if n > MAX_WARNINGS {
                out.push(Warning::artifact(
                    "network",
                    code,
                    format!("{} more {what}", n - MAX_WARNINGS),
                ));
            }
        };
        push(
            ErrorCode::NetworkBodyTruncated,
            self.truncated,
            &format!("bodies cut at network_body_max_bytes ({max_bytes})"),
        );
        push(
            ErrorCode::ArtifactCaptureFailed,
            self.failed,
            "bodies could not be captured",
        );
        if self.over_count > 0 {
            out.push(Warning::artifact(
                "network",
                ErrorCode::ArtifactCaptureFailed,
                format!(
                    "{} bodies skipped: at most {MAX_BODIES} are captured per fetch",
                    self.over_count
                ),
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_cut_on_a_char_boundary_and_binary_is_base64() {
        let (b, enc, kept, cut) = encode_for_file("héllo".as_bytes(), 2);
        assert_eq!((b.as_slice(), enc, kept, cut), (&b"h"[..], "utf8", 1, true));
        let bin = [0xff_u8, 0, 1, 2, 3, 4];
        let (b, enc, kept, cut) = encode_for_file(&bin, 3);
        assert_eq!((enc, kept, cut), ("base64", 3, true));
        assert_eq!(b, b"/wAB");
        let (_, _, kept, cut) = encode_for_file(&bin, 0);
        assert_eq!((kept, cut), (6, false));
    }

    #[test]
    fn mode_defaults_follow_the_wait() {
        let mut o = BrowserOptions::default();
        assert_eq!(mode(&o), (NetworkBodies::Xhr, true));
        o.wait = Wait::Load;
        assert_eq!(mode(&o), (NetworkBodies::Off, true));
        o.network_bodies = Some(NetworkBodies::All);
        assert_eq!(mode(&o), (NetworkBodies::All, false));
    }

    #[test]
    fn selection() {
        let mut e = Entry {
            resource_type: "XHR".into(),
            ..Entry::default()
        };
        assert!(selects(NetworkBodies::Xhr, &e));
        assert!(!selects(NetworkBodies::Off, &e));
        e.redirected_to = Some("x.r1".into());
        assert!(!selects(NetworkBodies::All, &e));
        let doc = Entry {
            resource_type: "Document".into(),
            ..Entry::default()
        };
        assert!(!selects(NetworkBodies::Xhr, &doc));
        assert!(selects(NetworkBodies::All, &doc));
    }

    #[test]
    fn limits_and_names() {
        assert_eq!(retained_limit(10 << 20), 20 << 20);
        assert_eq!(retained_limit(10), 1 << 20);
        assert_eq!(retained_limit(0), MAX_RETAINED);
        assert_eq!(file_stem("12.3/..\\x"), "12.3_.._x");
        assert!(enable_params(NetworkBodies::Off, 1)
            .get("maxResourceBufferSize")
            .is_none());
    }
}
