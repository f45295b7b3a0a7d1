//! Target `pdf_text`: the PDF reader (hayro) on arbitrary bytes, in-process, and the
//! projection of its report. In a fetch the reader runs in a child process under hard limits,
//! so a crash there costs one warning; here a panic is a finding to fix or to contain.

use serde_json::Value;
use url::Url;

use crate::sdk::documents::pdf::{self, reader};
use crate::sdk::documents::DocumentOptions;

/// Pages read per input: small, so one input stays fast.
pub const MAX_PAGES: u32 = 8;

/// Read, project, and check the invariants.
// Harness code: the URL is a constant that parses.
#[allow(clippy::expect_used)]
pub fn pdf_text(data: &[u8]) {
    let report = reader::read(data.to_vec(), MAX_PAGES);
    let url = Url::parse("https://example.com/doc.pdf").expect("constant URL parses");
    let opts = DocumentOptions {
        max_pdf_pages: MAX_PAGES,
        accept_markdown: false,
    };
    let pages = report["pages"].as_array().map_or(0, Vec::len);
    assert!(pages <= MAX_PAGES as usize, "read {pages} pages");
    if let Some(count) = report["page_count"].as_u64() {
        assert!(pages as u64 <= count, "{pages} pages of {count}");
    }
    let p = pdf::from_report(&report, &url, opts);
    match (&p.projection, &p.unavailable) {
        (Some(proj), None) => {
            // One section per page read, a form feed between pages.
            assert_eq!(
                proj.content_md.matches("\n## Page ").count()
                    + usize::from(proj.content_md.starts_with("## Page ")),
                pages
            );
            assert_eq!(proj.text.matches('\u{c}').count(), pages.saturating_sub(1));
            assert_eq!(proj.content_json["pages_read"], Value::from(pages));
            let bytes = serde_json::to_vec(&proj.content_json).unwrap_or_default();
            let back: Option<Value> = serde_json::from_slice(&bytes).ok();
            assert_eq!(back.as_ref(), Some(&proj.content_json));
        }
        (None, Some(_)) => {}
        other => unreachable!("a projection or a reason, not {other:?}"),
    }
}
