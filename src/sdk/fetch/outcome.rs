//! What a fetch returns: the typed outcome or failure, each with its trace.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::error::{AfError, Warning};
use crate::sdk::browser::download::TabDownload;
use crate::sdk::challenge::PageKind;
use crate::sdk::request::Artifact;

/// The `trace` of a fetch: decisions, attempts, timings, cookie jar, sensitive flags.
#[derive(Debug, Clone)]
pub struct Trace {
    fields: Map<String, Value>,
    attempts: Vec<Value>,
    timings: Map<String, Value>,
    /// Whether a browser sent the page request (`Page.navigate` went out), so an escalated
    /// request really went out a second time.
    browser_sent: bool,
}

impl Trace {
    /// A new trace for `request_id`.
    pub fn new(request_id: &str) -> Trace {
        let mut fields = Map::new();
        fields.insert("request_id".into(), json!(request_id));
        Trace {
            fields,
            attempts: Vec::new(),
            timings: Map::new(),
            browser_sent: false,
        }
    }

    /// Note that a browser sent the page request.
    pub fn browser_request_sent(&mut self) {
        self.browser_sent = true;
    }

    /// Whether a browser sent the page request during this fetch.
    pub fn browser_sent(&self) -> bool {
        self.browser_sent
    }

    /// A top-level field, if set.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.fields.get(key)
    }

    /// Set a top-level field.
    pub fn set(&mut self, key: &str, value: Value) {
        self.fields.insert(key.to_string(), value);
    }

    /// Record one attempt's end.
    pub fn attempt(&mut self, number: u32, elapsed_ms: f64, error: Option<&AfError>) {
        let mut a = json!({"attempt": number, "elapsed_ms": round1(elapsed_ms)});
        if let Some(e) = error {
            a["error"] =
                json!({"code": e.code.as_str(), "message": e.message, "retryable": e.retryable()});
        }
        self.attempts.push(a);
    }

    /// Record a stage timing in milliseconds.
    pub fn timing(&mut self, stage: &str, ms: f64) {
        self.timings.insert(stage.to_string(), json!(round1(ms)));
    }

    /// The trace as JSON.
    pub fn to_json(&self) -> Value {
        let mut v = Value::Object(self.fields.clone());
        v["attempts"] = Value::Array(self.attempts.clone());
        v["timings_ms"] = Value::Object(self.timings.clone());
        v
    }
}

/// Round to one decimal place.
pub fn round1(ms: f64) -> f64 {
    (ms * 10.0).round() / 10.0
}

/// A successful fetch.
#[derive(Debug, Clone)]
pub struct FetchOutcome {
    /// Unique id of this fetch (also the default artifact directory name).
    pub request_id: String,
    /// The URL requested.
    pub url: String,
    /// The URL of the final response after redirects.
    pub final_url: String,
    /// Final HTTP status (4xx/5xx are results, not errors).
    pub status: u16,
    /// Final `Content-Type`.
    pub content_type: Option<String>,
    /// `http` or `browser`.
    pub render_used: &'static str,
    /// The browser tab used (browser path only).
    pub tab_id: Option<String>,
    /// The artifact directory.
    pub out_dir: PathBuf,
    /// Written artifacts with absolute paths.
    pub files: Vec<(Artifact, PathBuf)>,
    /// Bytes written to the body file.
    pub body_bytes: u64,
    /// Whether the body was cut at `--max-response-bytes`.
    pub body_truncated: bool,
    /// Number of redirects followed.
    pub redirects: usize,
    /// Challenge classification.
    pub page_kind: Option<PageKind>,
    /// What the agent should do next when the target content is unverified.
    pub next_action: Option<Value>,
    /// Non-fatal problems.
    pub warnings: Vec<Warning>,
    /// When the navigation became a download: what the browser saved, and where its bytes
    /// landed on the driver.
    pub download: Option<DownloadOutcome>,
    /// The trace.
    pub trace: Trace,
    /// The screenshot's facts (`format`, `width`, `height`, `captured_height`, `clipped`,
    /// `bytes`), when one was written.
    pub screenshot: Option<Value>,
}

impl FetchOutcome {
    /// The path of one artifact, if written.
    pub fn file(&self, artifact: Artifact) -> Option<&Path> {
        self.files
            .iter()
            .find(|(a, _)| *a == artifact)
            .map(|(_, p)| p.as_path())
    }

    /// The `result` object (without `code`). A password in the URLs' userinfo is printed as
    /// `***`, as in network.json: results end up in agents' logs.
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "request_id": self.request_id,
            "url": crate::sdk::redact::url(&self.url),
            "final_url": crate::sdk::redact::url(&self.final_url),
            "status": self.status,
        });
        if let Some(ct) = &self.content_type {
            v["content_type"] = json!(ct);
        }
        v["render"] = json!(self.render_used);
        if let Some(tab) = &self.tab_id {
            v["tab_id"] = json!(tab);
        }
        v["out_dir"] = json!(self.out_dir);
        for (artifact, path) in &self.files {
            v[format!("{}_file", artifact.as_str())] = json!(path);
        }
        if let Some(d) = &self.download {
            if let Some(file) = &d.file {
                v["download_file"] = json!(file);
            }
            v["download"] = d.to_json();
        }
        v["body_bytes"] = json!(self.body_bytes);
        if self.body_truncated {
            v["body_truncated"] = json!(true);
        }
        v["redirects"] = json!(self.redirects);
        if let Some(kind) = self.page_kind {
            v["page_kind"] = json!(kind);
        }
        if let Some(next) = &self.next_action {
            v["next_action"] = next.clone();
        }
        if let Some(shot) = &self.screenshot {
            v["screenshot"] = shot.clone();
        }
        v["warnings"] = json!(self.warnings);
        v
    }
}

/// A navigation that became a download.
#[derive(Debug, Clone)]
pub struct DownloadOutcome {
    /// What the browser reported.
    pub facts: TabDownload,
    /// The copy on the driver's disk (`download_file`), once the bytes moved.
    pub file: Option<PathBuf>,
    /// Bytes in that copy.
    pub size_bytes: u64,
}

impl DownloadOutcome {
    /// `result.download`.
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "id": self.facts.guid,
            "suggested_filename": self.facts.suggested_filename,
            "url": self.facts.url,
            "state": self.facts.state,
            "total_bytes": self.facts.total_bytes,
        });
        if self.file.is_some() {
            v["size_bytes"] = json!(self.size_bytes);
        }
        v
    }
}

/// A failed fetch: the stable error and the trace of the stage it reached.
#[derive(Debug, Clone)]
pub struct FetchFailure {
    /// The error.
    pub error: AfError,
    /// The trace.
    pub trace: Trace,
}

impl FetchFailure {
    /// A failure before the fetch started (a bad argument): an empty trace.
    pub fn bare(error: AfError) -> FetchFailure {
        FetchFailure {
            error,
            trace: Trace::new(""),
        }
    }
}
