//! Writing `text.txt`, `content.md`, `content.json`, `lean.md` and `links.json` from a
//! projection the driver made:
//! the HTTP path's HTML or document projection, and a document's main response on the
//! browser path (so both paths write the same files from the same bytes).

use std::path::PathBuf;

use crate::error::{AfError, ErrorCode, Warning};
use crate::sdk::content_type;
use crate::sdk::documents;
use crate::sdk::fetch::outdir::OutDir;
use crate::sdk::fetch::FetchRequest;
use crate::sdk::html;
use crate::sdk::request::Artifact;

/// The projection artifacts, in the order they are written.
pub const PROJECTIONS: [Artifact; 5] = [
    Artifact::Text,
    Artifact::Content,
    Artifact::ContentJson,
    Artifact::Lean,
    Artifact::Links,
];

/// The projection artifacts the HTTP path writes for `req`.
pub fn wanted_http(req: &FetchRequest) -> Vec<Artifact> {
    PROJECTIONS
        .into_iter()
        .filter(|a| req.wants_http(*a))
        .collect()
}

/// Write the `wanted` projections: from the parsed HTML when there is one, else from the
/// document projection; a document without one gives each wanted artifact its warning.
/// `projected_prefix` is the number of body bytes projected when that was only a prefix.
#[allow(clippy::too_many_arguments)]
pub fn write(
    wanted: &[Artifact],
    out: &mut OutDir,
    final_url: &url::Url,
    ct: Option<&str>,
    parsed: Option<&html::ParsedHtml>,
    document: Option<documents::Projected>,
    projected_prefix: Option<usize>,
    files: &mut Vec<(Artifact, PathBuf)>,
    warnings: &mut Vec<Warning>,
) -> Result<(), AfError> {
    if wanted.is_empty() {
        return Ok(());
    }
    let projection = match (parsed, document) {
        (Some(doc), _) => doc.project(final_url),
        (
            None,
            Some(documents::Projected {
                projection: Some(p),
                ..
            }),
        ) => p,
        (None, d) => {
            let (code, why) = d.and_then(|d| d.unavailable).unwrap_or_else(|| {
                (
                    ErrorCode::ArtifactEmpty,
                    format!(
                        "no text to project from a {} body",
                        content_type::essence(ct)
                    ),
                )
            });
            for a in wanted {
                warnings.push(Warning::artifact(a.as_str(), code, why.clone()));
            }
            return Ok(());
        }
    };
    // The bytes actually projected: the in-memory prefix, or less when
    // --max-response-bytes cut the body first.
    if let Some(bytes) = projected_prefix {
        for a in wanted {
            warnings.push(Warning::artifact(
                a.as_str(),
                ErrorCode::NetworkBodyTruncated,
                format!("projected from the first {bytes} bytes of the body"),
            ));
        }
    }
    let lean = wanted
        .iter()
        .any(|a| matches!(a, Artifact::Lean | Artifact::Links))
        .then(|| projection.lean(final_url));
    for &a in wanted {
        let bytes = match (a, &lean) {
            (Artifact::Text, _) => projection.text.clone().into_bytes(),
            (Artifact::Content, _) => projection.content_md.clone().into_bytes(),
            (Artifact::Lean, Some(l)) => l.md.clone().into_bytes(),
            (Artifact::Links, Some(l)) => pretty(&l.links),
            _ => pretty(&projection.content_json),
        };
        // An empty link table is a fact, not an empty projection.
        if a != Artifact::Links && bytes.iter().all(u8::is_ascii_whitespace) {
            warnings.push(Warning::artifact(
                a.as_str(),
                ErrorCode::ArtifactEmpty,
                "the projection is empty",
            ));
        }
        let p = out.write(&a.file_name(), &bytes)?;
        files.push((a, p));
    }
    Ok(())
}

/// Pretty JSON with a trailing newline.
pub fn pretty(v: &serde_json::Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(v).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}
