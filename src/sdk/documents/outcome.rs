//! What projecting a document takes and gives: the options of one fetch and the
//! [`Projected`] result. Its own module so that `project` (the dispatch) and each kind's
//! projector (`pdf`) both name it without naming each other.

use serde_json::Value;

use crate::error::{ErrorCode, Warning};
use crate::sdk::html::Projection;

/// `--max-pdf-pages` default.
pub const DEFAULT_MAX_PAGES: u32 = 500;

/// Per-fetch document options (`--max-pdf-pages`, `--accept-markdown`).
#[derive(Debug, Clone, Copy)]
pub struct DocumentOptions {
    /// Pages of a PDF read at most.
    pub max_pdf_pages: u32,
    /// Send `Accept: text/markdown` ahead of HTML.
    pub accept_markdown: bool,
}

impl Default for DocumentOptions {
    fn default() -> Self {
        DocumentOptions {
            max_pdf_pages: DEFAULT_MAX_PAGES,
            accept_markdown: false,
        }
    }
}

/// The `Accept` header `--accept-markdown` sends.
pub const ACCEPT_MARKDOWN: &str = "text/markdown, text/html;q=0.9, */*;q=0.8";

/// What projecting a document gave.
#[derive(Debug, Default)]
pub struct Projected {
    /// The three projections, when the type has them.
    pub projection: Option<Projection>,
    /// Why there is none: the code and reason given to every wanted projection.
    pub unavailable: Option<(ErrorCode, String)>,
    /// Warnings about the document itself (scanned PDF, page cap, ...).
    pub warnings: Vec<Warning>,
    /// Facts for `trace.document`.
    pub trace: Option<Value>,
}

impl Projected {
    /// No projection: every wanted one gets `code` and `why`.
    pub fn none(code: ErrorCode, why: impl Into<String>) -> Projected {
        Projected {
            unavailable: Some((code, why.into())),
            ..Projected::default()
        }
    }
}
