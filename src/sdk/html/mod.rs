//! Mechanical HTML projection for HTTP responses: visible text, `content.md` and
//! `content.json`, with no readability heuristics.

use url::Url;

/// The three text artifacts projected from one HTML document.
#[derive(Debug, Clone, Default)]
pub struct Projection {
    /// Visible text, in document order (`text.txt`).
    pub text: String,
    /// Composed markdown view (`content.md`).
    pub content_md: String,
    /// Structured form of the content (`content.json`).
    pub content_json: serde_json::Value,
}

/// Project `html` (already decoded to a string) fetched from `base`.
pub fn project(html: &str, base: &Url) -> Projection {
    let _ = (html, base);
    Projection::default()
}
