//! PDF: text in reading order (a form feed between pages), one `## Page N` section per page,
//! and the document's facts. The parser runs in a child process under hard limits
//! ([`MEMORY_BASE_BYTES`], [`CPU_SECONDS`], [`WALL_BUDGET`]); a file that breaks them or the
//! parser ends with a warning and the body alone.

#[cfg(feature = "cli")]
pub mod reader;

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use super::project::{DocumentOptions, Projected};
use crate::error::{ErrorCode, Warning};
use crate::sdk::html::Projection;

/// `--max-pdf-pages` default.
pub const DEFAULT_MAX_PAGES: u32 = 500;
/// Address space the reader may use besides three times the file's size.
pub const MEMORY_BASE_BYTES: u64 = 512 << 20;
/// CPU seconds the reader may use.
pub const CPU_SECONDS: u64 = 20;
/// Wall-clock time the reader may take (less when the fetch has less left).
pub const WALL_BUDGET: Duration = Duration::from_secs(25);
/// The hidden subcommand that runs [`reader::child_main`].
pub const CHILD_COMMAND: &str = "__pdf-text";

/// The reader's address-space limit for a file of `size` bytes.
pub fn memory_limit(size: u64) -> u64 {
    MEMORY_BASE_BYTES.saturating_add(size.saturating_mul(3))
}

fn failed(code: ErrorCode, why: String) -> Projected {
    Projected {
        unavailable: Some((code, why)),
        ..Projected::default()
    }
}

/// Run the reader on `path` and project its report.
pub async fn project(
    path: &Path,
    url: &url::Url,
    opts: DocumentOptions,
    budget: Duration,
) -> Projected {
    match run_reader(path, opts.max_pdf_pages, budget.min(WALL_BUDGET)).await {
        Ok(report) => from_report(&report, url, opts),
        Err((code, why)) => failed(code, why),
    }
}

#[cfg(not(feature = "cli"))]
async fn run_reader(_: &Path, _: u32, _: Duration) -> Result<Value, (ErrorCode, String)> {
    Err((
        ErrorCode::BackendUnsupported,
        "this build has no PDF reader (it comes with the afhttp binary, feature `cli`)".into(),
    ))
}

#[cfg(feature = "cli")]
async fn run_reader(
    path: &Path,
    max_pages: u32,
    wall: Duration,
) -> Result<Value, (ErrorCode, String)> {
    let exe = std::env::current_exe().map_err(|e| {
        (
            ErrorCode::ArtifactCaptureFailed,
            format!("cannot find the afhttp binary to read the PDF: {e}"),
        )
    })?;
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let mem = memory_limit(size);
    let child = tokio::process::Command::new(exe)
        .arg(CHILD_COMMAND)
        .arg(path)
        .arg(max_pages.to_string())
        .arg(mem.to_string())
        .arg(CPU_SECONDS.to_string())
        .env_clear()
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| {
            (
                ErrorCode::ArtifactCaptureFailed,
                format!("cannot start the PDF reader: {e}"),
            )
        })?;
    let out = match tokio::time::timeout(wall, child.wait_with_output()).await {
        Ok(Ok(out)) => out,
        Ok(Err(e)) => {
            return Err((
                ErrorCode::ArtifactCaptureFailed,
                format!("the PDF reader failed: {e}"),
            ))
        }
        // Dropping the future drops the child, which kills it.
        Err(_) => {
            return Err((
                ErrorCode::ArtifactCaptureTimeout,
                format!(
                    "the PDF reader was stopped after {} ms (its time budget)",
                    wall.as_millis()
                ),
            ))
        }
    };
    if !out.status.success() {
        use std::os::unix::process::ExitStatusExt;
        // The first line says why (Rust's allocator: "memory allocation of N bytes failed").
        let tail: String = String::from_utf8_lossy(&out.stderr)
            .lines()
            .next()
            .unwrap_or_default()
            .chars()
            .take(200)
            .collect();
        let why = match out.status.signal() {
            Some(libc::SIGXCPU) | Some(libc::SIGKILL) => format!("the PDF reader used up its {CPU_SECONDS} s of CPU"),
            Some(sig) => format!(
                "the PDF reader died (signal {sig}) within its budget of {} MiB: the file is malformed, nested too deeply or expands too far{}",
                mem >> 20,
                if tail.trim().is_empty() { String::new() } else { format!(" ({})", tail.trim()) }
            ),
            None => format!("the PDF reader failed: {}", tail.trim()),
        };
        return Err((ErrorCode::ArtifactCaptureFailed, why));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| {
        (
            ErrorCode::ArtifactCaptureFailed,
            format!("the PDF reader's report is unreadable: {e}"),
        )
    })
}

/// Turn the reader's report into the projections and warnings.
pub fn from_report(r: &Value, url: &url::Url, opts: DocumentOptions) -> Projected {
    if let Some(e) = r["error"].as_str() {
        return failed(ErrorCode::ArtifactCaptureFailed, e.to_string());
    }
    if r["needs_password"].as_bool() == Some(true) {
        return failed(
            ErrorCode::BackendUnsupported,
            "the PDF is encrypted with a user password; only the body is written".into(),
        );
    }
    let empty = Vec::new();
    let pages = r["pages"].as_array().unwrap_or(&empty);
    let outline = r["outline"].as_array().unwrap_or(&empty);
    let page_count = r["page_count"].as_u64().unwrap_or(0);
    let truncated = r["truncated"].as_bool().unwrap_or(false);
    let info = &r["info"];
    let title = info["title"].as_str();

    let texts: Vec<&str> = pages
        .iter()
        .map(|p| p["text"].as_str().unwrap_or_default())
        .collect();
    let text = texts.join("\u{c}");
    let has_text_layer = texts.iter().any(|t| !t.trim().is_empty());
    let mut md = String::new();
    if let Some(t) = title {
        md.push_str(&format!("# {t}\n\n"));
    }
    let mut pages_json = Vec::new();
    let mut links_json = Vec::new();
    for (page, page_text) in pages.iter().zip(&texts) {
        let n = page["number"].as_u64().unwrap_or(0);
        let headings: Vec<(u64, &str)> = outline
            .iter()
            .filter(|o| o["page"].as_u64() == Some(n))
            .map(|o| {
                (
                    o["level"].as_u64().unwrap_or(1),
                    o["title"].as_str().unwrap_or_default(),
                )
            })
            .collect();
        md.push_str(&page_section(n, page_text, &headings));
        let links: Vec<&str> = page["links"]
            .as_array()
            .map(|l| l.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if !links.is_empty() {
            md.push_str("Links:\n");
            for l in &links {
                md.push_str(&format!("- <{l}>\n"));
                links_json.push(json!({"page": n, "uri": l}));
            }
            md.push('\n');
        }
        pages_json.push(json!({"number": n, "text_bytes": page_text.len(), "has_text": !page_text.trim().is_empty()}));
    }
    let content_json = json!({
        "schema_version": 1,
        "url": url.as_str(),
        "type": "pdf",
        "content_type": "application/pdf",
        "title": title,
        "text_bytes": text.len(),
        "page_count": page_count,
        "pages_read": pages.len(),
        "pages": pages_json,
        "info": info,
        "outline": outline,
        "links": links_json,
        "encrypted": r["encrypted"].as_bool().unwrap_or(false),
        "has_text_layer": has_text_layer,
        "truncated": truncated,
    });
    let mut warnings = Vec::new();
    if truncated {
        warnings.push(Warning::general(
            ErrorCode::DocumentTruncated,
            format!(
                "read {} of {page_count} pages (--max-pdf-pages {})",
                pages.len(),
                opts.max_pdf_pages
            ),
        ));
    }
    if !has_text_layer && !pages.is_empty() {
        warnings.push(Warning::artifact(
            "text",
            ErrorCode::ArtifactEmpty,
            "the PDF has no text layer (scanned or image-only pages); afhttp does no OCR",
        ));
    }
    let trace = json!({
        "type": "pdf",
        "reader": "lopdf (child process)",
        "page_count": page_count,
        "pages_read": pages.len(),
        "peak_rss_kib": r["peak_rss_kib"],
    });
    Projected {
        projection: Some(Projection {
            text,
            content_md: md,
            content_json,
            lean: None,
        }),
        unavailable: None,
        warnings,
        trace: Some(trace),
    }
}

/// One `## Page N` section: a line equal to an outline title on this page becomes that
/// heading (level 1 → `###`); outline titles not found in the text head the section.
fn page_section(n: u64, text: &str, headings: &[(u64, &str)]) -> String {
    let mut s = format!("## Page {n}\n\n");
    let mut unused: Vec<(u64, &str)> = headings.to_vec();
    let mut body = String::new();
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(i) = unused.iter().position(|(_, h)| *h == t) {
            let (level, h) = unused.remove(i);
            body.push_str(&format!(
                "\n{} {h}\n\n",
                "#".repeat((level as usize + 2).min(6))
            ));
        } else {
            body.push_str(t);
            body.push('\n');
        }
    }
    for (level, h) in unused {
        s.push_str(&format!(
            "{} {h}\n\n",
            "#".repeat((level as usize + 2).min(6))
        ));
    }
    s.push_str(body.trim_start_matches('\n'));
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_to_projections() {
        let r = json!({
            "encrypted": false, "needs_password": false, "page_count": 3, "truncated": true,
            "pages": [
                {"number": 1, "text": "Intro\nHello world\n", "links": ["https://x.test/a"]},
                {"number": 2, "text": "", "links": []}
            ],
            "info": {"title": "Doc", "author": null},
            "outline": [{"level": 1, "title": "Intro", "page": 1}, {"level": 2, "title": "Elsewhere", "page": 2}],
        });
        let url = url::Url::parse("http://h.test/a.pdf").unwrap();
        let p = from_report(
            &r,
            &url,
            DocumentOptions {
                max_pdf_pages: 2,
                accept_markdown: false,
            },
        );
        let proj = p.projection.unwrap();
        assert_eq!(proj.text, "Intro\nHello world\n\u{c}");
        assert_eq!(
            proj.content_md,
            "# Doc\n\n## Page 1\n\n### Intro\n\nHello world\n\nLinks:\n- <https://x.test/a>\n\n## Page 2\n\n#### Elsewhere\n\n\n"
        );
        assert_eq!(proj.content_json["page_count"], 3);
        assert_eq!(proj.content_json["has_text_layer"], true);
        assert_eq!(proj.content_json["pages"][1]["has_text"], false);
        assert_eq!(p.warnings[0].code, ErrorCode::DocumentTruncated);
        let locked = from_report(
            &json!({"needs_password": true}),
            &url,
            DocumentOptions::default(),
        );
        assert_eq!(
            locked.unavailable.map(|u| u.0),
            Some(ErrorCode::BackendUnsupported)
        );
    }
}
