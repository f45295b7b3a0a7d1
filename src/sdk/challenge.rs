//! Conservative challenge markers (placeholder: filled in by the classification work).

use serde::Serialize;

/// What kind of interstitial a response is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PageKind {
    /// A bot wall that blocks automated clients.
    BotWall,
    /// A security challenge (captcha, JS challenge) the visitor must pass.
    SecurityChallenge,
}

/// A matched challenge: its kind, the vendor and the marker that matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Challenge {
    /// The page kind.
    pub page_kind: PageKind,
    /// Vendor whose interstitial matched (`cloudflare`, `akamai`, ...).
    pub vendor: &'static str,
    /// The mechanical marker that matched.
    pub marker: String,
}

/// Classify a response; `headers` are (lower-case name, value) pairs.
pub fn classify(status: u16, headers: &[(String, String)], body: &str) -> Option<Challenge> {
    let _ = (status, headers, body);
    None
}
