//! Where a browser fetch's `text.txt`, `content.md` and `content.json` come from.
//!
//! Normally from the rendered page. When the rendered document is incomplete (capture came
//! before it finished parsing: `document_incomplete`) or shows no text at all, and the HTML
//! the site served has more text than the page showed, the three files are projected from
//! the served body instead, through the same projection the HTTP path uses;
//! `trace.text_source` says which (`rendered` or `served_html`).

use serde_json::{json, Value};

use super::capture::Captured;
use crate::error::{AfError, ErrorCode, Warning};
use crate::sdk::content_type;
use crate::sdk::fetch::outdir::OutDir;
use crate::sdk::fetch::projections::{self, PROJECTIONS};
use crate::sdk::html;
use crate::sdk::request::Artifact;

/// The page facts the choice depends on.
pub struct Page<'a> {
    /// The document had not finished parsing at capture.
    pub incomplete: bool,
    /// The document's URL (links in `content.md` resolve against it).
    pub url: &'a str,
    /// The main response's `Content-Type`.
    pub content_type: Option<&'a str>,
}

/// Choose the text source, rewrite the projection files when it is the served HTML, and
/// return `trace.text_source` with the `document_incomplete` warning when the document was
/// incomplete.
pub async fn choose(
    page: &Page<'_>,
    want: &[Artifact],
    captured: &mut Captured,
    out: &mut OutDir,
) -> Result<(Value, Option<Warning>), AfError> {
    let wanted: Vec<Artifact> = PROJECTIONS
        .into_iter()
        .filter(|a| want.contains(a))
        .collect();
    let rendered_empty = captured.warnings.iter().any(|w| {
        w.code == ErrorCode::ArtifactEmpty && matches!(w.artifact.as_deref(), Some("text"))
    });
    if wanted.is_empty() || !(page.incomplete || rendered_empty) {
        return Ok((json!("rendered"), incomplete_warning(page, "")));
    }
    let rendered_len = file_of(captured, Artifact::Text)
        .and_then(|p| std::fs::read_to_string(p).ok())
        .map_or(0, |t| t.trim().len());
    let served = served_projection(page, captured).await;
    let served_len = served.as_ref().map_or(0, |p| p.text.trim().len());
    let Some(projection) = served.filter(|_| served_len > rendered_len) else {
        let why = match served_len {
            _ if !is_html(page) => {
                "; the served body is not HTML, so the text is what was rendered"
            }
            0 => {
                "; the served HTML has no text either (the page builds it with script), so \
                 the text is what was rendered"
            }
            _ => "; the rendered text is kept (the served HTML has no more)",
        };
        return Ok((json!("rendered"), incomplete_warning(page, why)));
    };
    let url = url::Url::parse(page.url).map_err(|e| {
        AfError::new(
            ErrorCode::ArtifactCaptureFailed,
            format!("the document URL does not parse: {e}"),
        )
    })?;
    let mut files = Vec::new();
    let mut warnings = Vec::new();
    let document = crate::sdk::documents::Projected {
        projection: Some(projection),
        unavailable: None,
        warnings: Vec::new(),
        trace: None,
    };
    projections::write(
        &wanted,
        out,
        &url,
        page.content_type,
        None,
        Some(document),
        None,
        &mut files,
        &mut warnings,
    )?;
    // The served text replaces the rendered one: its emptiness warnings no longer hold.
    captured.warnings.retain(|w| {
        !(matches!(w.code, ErrorCode::ArtifactEmpty | ErrorCode::ArtifactTiny)
            && wanted
                .iter()
                .any(|a| w.artifact.as_deref() == Some(a.as_str())))
    });
    captured.warnings.extend(warnings);
    for (a, p) in files {
        if file_of(captured, a).is_none() {
            captured.files.push((a, p));
        }
    }
    let why = format!(
        "; text.txt and content.md are projected from the served HTML instead \
         ({served_len} bytes of text against {rendered_len} rendered; trace.text_source)"
    );
    Ok((json!("served_html"), incomplete_warning(page, &why)))
}

fn file_of(c: &Captured, a: Artifact) -> Option<&std::path::Path> {
    c.files
        .iter()
        .find(|(x, _)| *x == a)
        .map(|(_, p)| p.as_path())
}

fn is_html(page: &Page<'_>) -> bool {
    page.content_type.is_none_or(|ct| {
        crate::sdk::documents::declared(Some(ct)) == Some(crate::sdk::documents::DocKind::Html)
    })
}

/// The served body's projection (the HTTP path's); `None` when there is no HTML body.
async fn served_projection(page: &Page<'_>, c: &Captured) -> Option<html::Projection> {
    if !is_html(page) {
        return None;
    }
    let bytes = std::fs::read(file_of(c, Artifact::Body)?).ok()?;
    let ct = page.content_type.map(String::from);
    let url = url::Url::parse(page.url).ok()?;
    // Parsing is CPU work, and the parsed document stays on one thread.
    tokio::task::spawn_blocking(move || {
        let text = content_type::decode_text(&bytes, ct.as_deref());
        html::ParsedHtml::parse(&text).project(&url)
    })
    .await
    .ok()
}

fn incomplete_warning(page: &Page<'_>, why: &str) -> Option<Warning> {
    page.incomplete.then(|| {
        Warning::general(
            ErrorCode::DocumentIncomplete,
            format!("capture came before the document finished parsing (readyState loading){why}"),
        )
    })
}
