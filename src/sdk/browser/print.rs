//! The `pdf` artifact: the rendered page printed by the browser (`Page.printToPDF`).

use base64::Engine as _;
use serde_json::json;

use super::capture::{failed, failed_by, write, Captured, Ctx};
use crate::error::{AfError, Warning};
use crate::sdk::fetch::outdir::OutDir;
use crate::sdk::request::Artifact;

/// Print the page to `page.pdf`: background graphics on, and the page's own `@page` size
/// when its CSS gives one (the browser's default paper otherwise).
pub(super) async fn pdf(
    cx: &Ctx<'_>,
    out: &mut OutDir,
    c: &mut Captured,
) -> Result<Option<Warning>, AfError> {
    let a = Artifact::Pdf;
    let params = json!({
        "printBackground": true,
        "preferCSSPageSize": true,
        "transferMode": "ReturnAsBase64",
    });
    let r = match cx
        .conn
        .send(Some(cx.session), "Page.printToPDF", params, cx.t())
        .await
    {
        Ok(r) => r,
        Err(e) => return Ok(Some(failed_by(a, &e))),
    };
    let bytes = match base64::engine::general_purpose::STANDARD
        .decode(r["data"].as_str().unwrap_or_default())
    {
        Ok(b) => b,
        Err(e) => return Ok(Some(failed(a, format!("undecodable PDF: {e}")))),
    };
    if !bytes.starts_with(b"%PDF-") {
        return Ok(Some(failed(a, "the browser returned no PDF")));
    }
    write(out, c, a, &a.file_name(), &bytes)
}
