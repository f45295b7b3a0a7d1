//! PDF: text in reading order (a form feed between pages), one `## Page N` section per page,
//! and the document's facts. The parser runs in its own small executable,
//! [`READER_EXE`] (`src/bin/afhttp-pdf-reader.rs`), found next to the running one, under hard
//! limits ([`MEMORY_BASE_BYTES`], [`CPU_SECONDS`], [`WALL_BUDGET`]); a file that breaks them or
//! the parser ends with a warning and the body alone. This side only reads its JSON report.

#[cfg(feature = "pdf")]
mod device;
#[cfg(feature = "pdf")]
pub mod layout;
#[cfg(feature = "pdf")]
pub mod reader;
#[cfg(feature = "pdf")]
mod structure;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

pub use super::outcome::DEFAULT_MAX_PAGES;
use super::outcome::{DocumentOptions, Projected};
use crate::error::{ErrorCode, Warning};
use crate::sdk::html::Projection;

/// Address space the reader may use besides three times the file's size.
pub const MEMORY_BASE_BYTES: u64 = 512 << 20;
/// CPU seconds the reader may use.
pub const CPU_SECONDS: u64 = 20;
/// Wall-clock time the reader may take (less when the fetch has less left).
pub const WALL_BUDGET: Duration = Duration::from_secs(25);
/// The reader's executable, installed next to `afhttp` (and in the image beside it):
/// `afhttp-pdf-reader FILE MAX_PAGES AS_BYTES CPU_SECONDS` prints one JSON report.
pub const READER_EXE: &str = "afhttp-pdf-reader";

/// The reader's address-space limit for a file of `size` bytes.
pub fn memory_limit(size: u64) -> u64 {
    MEMORY_BASE_BYTES.saturating_add(size.saturating_mul(3))
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
        Err((code, why)) => Projected::none(code, why),
    }
}

/// The reader next to the running executable; `backend_unsupported` when it is not there
/// (an SDK-only program that does not ship it).
fn reader_exe() -> Result<PathBuf, (ErrorCode, String)> {
    let exe = std::env::current_exe().map_err(|e| {
        (
            ErrorCode::ArtifactCaptureFailed,
            format!("cannot locate the running executable to find {READER_EXE}: {e}"),
        )
    })?;
    let reader = exe.with_file_name(READER_EXE);
    if reader.is_file() {
        Ok(reader)
    } else {
        Err((
            ErrorCode::BackendUnsupported,
            format!(
                "no PDF reader: {} is not installed (it ships with the afhttp binary, feature `pdf`)",
                reader.display()
            ),
        ))
    }
}

async fn run_reader(
    path: &Path,
    max_pages: u32,
    wall: Duration,
) -> Result<Value, (ErrorCode, String)> {
    let exe = reader_exe()?;
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let mem = memory_limit(size);
    let child = tokio::process::Command::new(exe)
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

/// A page whose glyphs are more than this share unmapped is left out of the text.
pub const LEFT_OUT_SHARE: f64 = 0.5;
/// `text_unreliable` is given when more than this share of a document's glyphs is unmapped
/// (or a page is left out).
pub const UNRELIABLE_SHARE: f64 = 0.05;

/// One page of the reader's report, with the verdict on its text.
struct PageFacts<'a> {
    number: u64,
    text: &'a str,
    glyphs: u64,
    unmapped: u64,
    images: u64,
    left_out: bool,
}

impl<'a> PageFacts<'a> {
    fn of(page: &'a Value) -> PageFacts<'a> {
        let glyphs = page["glyphs"].as_u64().unwrap_or(0);
        let unmapped = page["unmapped"].as_u64().unwrap_or(0);
        PageFacts {
            number: page["number"].as_u64().unwrap_or(0),
            text: page["text"].as_str().unwrap_or_default(),
            glyphs,
            unmapped,
            images: page["images"].as_u64().unwrap_or(0),
            left_out: glyphs > 0 && unmapped as f64 > LEFT_OUT_SHARE * glyphs as f64,
        }
    }

    /// The text this page contributes.
    fn shown(&self) -> &'a str {
        if self.left_out {
            ""
        } else {
            self.text
        }
    }
}

/// "1, 2, 5" (at most 20, then "and N more").
fn page_list(pages: &[u64]) -> String {
    let mut s: Vec<String> = pages.iter().take(20).map(u64::to_string).collect();
    if pages.len() > 20 {
        s.push(format!("and {} more", pages.len() - 20));
    }
    s.join(", ")
}

/// `trace.document` for any report the reader gave, read or not: the reader's own peak RSS
/// is the only fair figure for it (the parent cannot measure an exited child's memory).
fn reader_trace(r: &Value, pages_read: usize) -> Value {
    json!({
        "type": "pdf",
        "reader": "hayro (child process)",
        "page_count": r["page_count"],
        "pages_read": pages_read,
        "peak_rss_kib": r["peak_rss_kib"],
    })
}

/// Turn the reader's report into the projections and warnings.
pub fn from_report(r: &Value, url: &url::Url, opts: DocumentOptions) -> Projected {
    let unread = |code, why: String| Projected {
        trace: Some(reader_trace(r, 0)),
        ..Projected::none(code, why)
    };
    if let Some(e) = r["error"].as_str() {
        return unread(ErrorCode::ArtifactCaptureFailed, e.to_string());
    }
    if r["needs_password"].as_bool() == Some(true) {
        return unread(
            ErrorCode::PdfEncrypted,
            "the PDF is encrypted with a user password (or a method the reader lacks); only the body is written".to_string(),
        );
    }
    let empty = Vec::new();
    let raw_pages = r["pages"].as_array().unwrap_or(&empty);
    let pages: Vec<PageFacts> = raw_pages.iter().map(PageFacts::of).collect();
    let outline = r["outline"].as_array().unwrap_or(&empty);
    let title = r["info"]["title"].as_str();

    let text = pages
        .iter()
        .map(PageFacts::shown)
        .collect::<Vec<_>>()
        .join("\u{c}");
    let has_text_layer = pages.iter().any(|p| !p.shown().trim().is_empty());
    let mut md = String::new();
    if let Some(t) = title {
        md.push_str(&format!("# {t}\n\n"));
    }
    let mut pages_json = Vec::new();
    let mut links_json = Vec::new();
    for (p, raw) in pages.iter().zip(raw_pages) {
        let headings: Vec<(u64, &str)> = outline
            .iter()
            .filter(|o| o["page"].as_u64() == Some(p.number))
            .map(|o| {
                (
                    o["level"].as_u64().unwrap_or(1),
                    o["title"].as_str().unwrap_or_default(),
                )
            })
            .collect();
        md.push_str(&page_section(p.number, p.shown(), &headings));
        let links: Vec<&str> = raw["links"]
            .as_array()
            .map(|l| l.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if !links.is_empty() {
            md.push_str("Links:\n");
            for l in &links {
                md.push_str(&format!("- <{l}>\n"));
                links_json.push(json!({"page": p.number, "uri": l}));
            }
            md.push('\n');
        }
        pages_json.push(json!({
            "number": p.number,
            "text_bytes": p.shown().len(),
            "has_text": !p.shown().trim().is_empty(),
            "glyphs": p.glyphs,
            "unmapped_glyphs": p.unmapped,
            "left_out": p.left_out,
        }));
    }
    let (warnings, unreliable) = warnings(r, &pages, opts);
    let content_json = json!({
        "schema_version": 1,
        "url": url.as_str(),
        "type": "pdf",
        "content_type": "application/pdf",
        "title": title,
        "text_bytes": text.len(),
        "page_count": r["page_count"].as_u64().unwrap_or(0),
        "pages_read": pages.len(),
        "pages": pages_json,
        "info": r["info"],
        "outline": outline,
        "links": links_json,
        "encrypted": r["encrypted"].as_bool().unwrap_or(false),
        "has_text_layer": has_text_layer,
        "truncated": r["truncated"].as_bool().unwrap_or(false),
        "damaged": warnings.iter().any(|w| w.code == ErrorCode::DocumentDamaged),
        "text_unreliable": unreliable,
    });
    let trace = reader_trace(r, pages.len());
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

/// The document's warnings, and the `text_unreliable` facts (`null` when the text is sound).
fn warnings(r: &Value, pages: &[PageFacts], opts: DocumentOptions) -> (Vec<Warning>, Value) {
    let mut out = Vec::new();
    let page_count = r["page_count"].as_u64().unwrap_or(0);
    if r["truncated"].as_bool() == Some(true) {
        out.push(Warning::general(
            ErrorCode::DocumentTruncated,
            format!(
                "read {} of {page_count} pages (max_pdf_pages {})",
                pages.len(),
                opts.max_pdf_pages
            ),
        ));
    }
    if let Some(w) = damaged(r, pages) {
        out.push(w);
    }
    let unreliable = unreliable(pages);
    if let Some((w, _)) = &unreliable {
        out.push(w.clone());
    }
    // Pages that draw images and have no text of their own (not the ones left out above).
    let scanned: Vec<u64> = pages
        .iter()
        .filter(|p| p.images > 0 && !p.left_out && p.text.trim().is_empty())
        .map(|p| p.number)
        .collect();
    if !scanned.is_empty() {
        out.push(Warning::general(
            ErrorCode::NoTextLayer,
            format!(
                "page(s) {} of {} draw images but have no text layer (scanned?); afhttp does no OCR",
                page_list(&scanned),
                pages.len()
            ),
        ));
    }
    (out, unreliable.map(|(_, v)| v).unwrap_or(Value::Null))
}

/// `document_damaged`: the cross-reference table was rebuilt, pages named in the page tree
/// are missing, or a page's content could not be read.
fn damaged(r: &Value, pages: &[PageFacts]) -> Option<Warning> {
    let mut why = Vec::new();
    if r["damaged"].as_bool() == Some(true) {
        why.push(
            "its cross-reference table is broken and was rebuilt by scanning the file".to_string(),
        );
    }
    let found = r["page_count"].as_u64().unwrap_or(0);
    if let Some(declared) = r["declared_page_count"].as_u64().filter(|d| *d > found) {
        why.push(format!(
            "{} of the {declared} pages its page tree names are missing",
            declared - found
        ));
    }
    let unreadable: Vec<u64> = pages
        .iter()
        .zip(r["pages"].as_array().into_iter().flatten())
        .filter(|(_, raw)| raw["unreadable"].as_bool() == Some(true))
        .map(|(p, _)| p.number)
        .collect();
    if !unreadable.is_empty() {
        why.push(format!(
            "the content of page(s) {} cannot be read",
            page_list(&unreadable)
        ));
    }
    (!why.is_empty()).then(|| {
        Warning::general(
            ErrorCode::DocumentDamaged,
            format!(
                "the PDF is damaged: {}; the text is what could be read",
                why.join("; ")
            ),
        )
    })
}

/// `text_unreliable`: more than [`UNRELIABLE_SHARE`] of the glyphs have no Unicode value, or
/// a page is mostly unmapped (and so left out).
fn unreliable(pages: &[PageFacts]) -> Option<(Warning, Value)> {
    let glyphs: u64 = pages.iter().map(|p| p.glyphs).sum();
    let unmapped: u64 = pages.iter().map(|p| p.unmapped).sum();
    let left_out: Vec<u64> = pages
        .iter()
        .filter(|p| p.left_out)
        .map(|p| p.number)
        .collect();
    let share = if glyphs == 0 {
        0.0
    } else {
        unmapped as f64 / glyphs as f64
    };
    if left_out.is_empty() && share <= UNRELIABLE_SHARE {
        return None;
    }
    let gaps: Vec<u64> = pages
        .iter()
        .filter(|p| p.unmapped > 0 && !p.left_out)
        .map(|p| p.number)
        .collect();
    let mut msg = format!(
        "{:.0}% of the glyphs ({unmapped} of {glyphs}) have no Unicode mapping (a font without ToUnicode or glyph names)",
        share * 100.0
    );
    if !left_out.is_empty() {
        msg.push_str(&format!(
            "; page(s) {} are mostly unmapped and left out of the text",
            page_list(&left_out)
        ));
    }
    if !gaps.is_empty() {
        msg.push_str(&format!("; page(s) {} have gaps", page_list(&gaps)));
    }
    let facts = json!({
        "unmapped_glyphs": unmapped,
        "glyphs": glyphs,
        "unmapped_share": (share * 1000.0).round() / 1000.0,
        "pages_left_out": left_out,
        "pages_with_gaps": gaps,
    });
    Some((Warning::general(ErrorCode::TextUnreliable, msg), facts))
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
            &json!({"needs_password": true, "peak_rss_kib": 4321}),
            &url,
            DocumentOptions::default(),
        );
        assert_eq!(
            locked.unavailable.map(|u| u.0),
            Some(ErrorCode::PdfEncrypted)
        );
        // An unread document still says what reading it cost (the corpus bench's figure).
        let trace = locked.trace.unwrap();
        assert_eq!(
            (trace["peak_rss_kib"].as_u64(), trace["pages_read"].as_u64()),
            (Some(4321), Some(0))
        );
    }

    #[test]
    fn unmapped_pages_are_left_out_and_said() {
        let page = |n: u64, text: &str, glyphs: u64, unmapped: u64, images: u64| json!({"number": n, "text": text, "glyphs": glyphs, "unmapped": unmapped, "images": images, "links": []});
        let r = json!({
            "page_count": 4, "declared_page_count": 5, "damaged": true,
            "pages": [
                page(1, "Real words here\n", 15, 0, 0),
                page(2, "x\n", 40, 39, 0),
                page(3, "", 0, 0, 2),
                page(4, "Some wrds\n", 10, 2, 0),
            ],
            "info": {}, "outline": [],
        });
        let url = url::Url::parse("http://h.test/a.pdf").unwrap();
        let p = from_report(&r, &url, DocumentOptions::default());
        let proj = p.projection.unwrap();
        assert_eq!(proj.text, "Real words here\n\u{c}\u{c}\u{c}Some wrds\n");
        let codes: Vec<ErrorCode> = p.warnings.iter().map(|w| w.code).collect();
        assert_eq!(
            codes,
            [
                ErrorCode::DocumentDamaged,
                ErrorCode::TextUnreliable,
                ErrorCode::NoTextLayer
            ]
        );
        assert!(
            p.warnings[0].message.contains("1 of the 5 pages"),
            "{}",
            p.warnings[0].message
        );
        let unreliable = &p.warnings[1].message;
        assert!(
            unreliable.starts_with("63% of the glyphs (41 of 65)"),
            "{unreliable}"
        );
        assert!(
            unreliable.contains("page(s) 2 are mostly unmapped"),
            "{unreliable}"
        );
        assert!(unreliable.contains("page(s) 4 have gaps"), "{unreliable}");
        assert!(
            p.warnings[2].message.starts_with("page(s) 3 of 4 "),
            "{}",
            p.warnings[2].message
        );
        assert_eq!(
            proj.content_json["text_unreliable"]["pages_left_out"],
            json!([2])
        );
        assert_eq!(proj.content_json["pages"][1]["left_out"], true);
        assert_eq!(proj.content_json["damaged"], true);
        // A sound document has none of these.
        let fine = json!({"page_count": 1, "pages": [page(1, "Fine\n", 4, 0, 1)]});
        let p = from_report(&fine, &url, DocumentOptions::default());
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    }
}
