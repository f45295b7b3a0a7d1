//! `content.md`, `content.json`, `lean.md` and `links.json` on the browser path. Page-side JavaScript
//! (`assets/js/flatten.js`) only hands the rendered DOM over, open shadow roots and
//! same-origin frames flattened in; the HTTP path's projection (`sdk::html`) makes both
//! files from it, so the two paths share one projection and one schema.

use serde_json::Value;
use url::Url;

use super::assets;
use super::capture::{failed_by, pretty, write, Captured, Ctx};
use crate::error::{AfError, ErrorCode, Warning};
use crate::sdk::fetch::outdir::OutDir;
use crate::sdk::request::Artifact;

fn is_content(a: &Artifact) -> bool {
    matches!(
        a,
        Artifact::Content | Artifact::ContentJson | Artifact::Lean | Artifact::Links
    )
}

/// Capture the content projections (`content`, `content_json`, `lean`, `links`): one
/// flattening and one projection serve them all,
/// run when the first of the two in `want` comes up (`a`).
pub(super) async fn capture(
    cx: &Ctx<'_>,
    out: &mut OutDir,
    c: &mut Captured,
    a: Artifact,
    want: &[Artifact],
) -> Result<Option<Warning>, AfError> {
    if want.iter().find(|x| is_content(x)) != Some(&a) {
        return Ok(None);
    }
    let wanted: Vec<Artifact> = want.iter().copied().filter(is_content).collect();
    let fail = |c: &mut Captured, e: &AfError| {
        for x in &wanted {
            c.warnings.push(failed_by(*x, e));
        }
    };
    let v = match cx.eval(assets::FLATTEN_JS, false).await {
        Ok(v) => v,
        Err(e) => {
            fail(c, &e);
            return Ok(None);
        }
    };
    let html = v["html"].as_str().unwrap_or_default().to_string();
    let Some(url) = v["url"].as_str().and_then(|u| Url::parse(u).ok()) else {
        fail(
            c,
            &AfError::new(ErrorCode::ArtifactCaptureFailed, "the page has no URL"),
        );
        return Ok(None);
    };
    let chars = html.len();
    // Parsing a large document is CPU work: off the runtime's threads.
    let page_url = url.clone();
    let projected =
        tokio::task::spawn_blocking(move || crate::sdk::html::project(&html, &url)).await;
    let projection = match projected {
        Ok(p) => p,
        Err(e) => {
            fail(
                c,
                &AfError::new(ErrorCode::ArtifactCaptureFailed, e.to_string()),
            );
            return Ok(None);
        }
    };
    if v["truncated"] == Value::Bool(true) {
        for x in &wanted {
            c.warnings.push(Warning::artifact(
                x.as_str(),
                ErrorCode::NetworkBodyTruncated,
                format!("projected from the first {chars} bytes of the flattened DOM"),
            ));
        }
    }
    let lean = projection.lean(&page_url);
    for x in wanted {
        let bytes = match x {
            Artifact::Content => projection.content_md.as_bytes().to_vec(),
            Artifact::Lean => lean.md.as_bytes().to_vec(),
            Artifact::Links => pretty(&lean.links),
            _ => pretty(&projection.content_json),
        };
        write(out, c, x, &x.file_name(), &bytes)?;
        if matches!(x, Artifact::Content | Artifact::Lean)
            && projection.content_md.trim().is_empty()
        {
            c.warnings.push(Warning::artifact(
                x.as_str(),
                ErrorCode::ArtifactEmpty,
                "the composed view is empty",
            ));
        }
    }
    Ok(None)
}
