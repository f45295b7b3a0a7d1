//! The `--render auto` decision (placeholder: filled in by the classification work).

use serde_json::{json, Value};

use crate::sdk::challenge::Challenge;
use crate::sdk::request::{Artifact, RenderMode};

/// A mechanical reason to render in a browser instead of trusting the HTTP response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EscalationReason {
    /// `--render always`.
    RenderAlways,
    /// A requested artifact only a browser produces.
    BrowserOnlyArtifact(Artifact),
    /// The HTML is an empty application shell (detail says which facts).
    EmptyHtmlShell(String),
    /// Conservative challenge markers matched.
    ChallengeMarkers(Challenge),
    /// A status CDNs use for walls, with an HTML body.
    WallStatus(u16),
}

impl EscalationReason {
    /// Stable reason code for `trace.escalation_reason.code`.
    pub fn code(&self) -> &'static str {
        match self {
            EscalationReason::RenderAlways => "render_always",
            EscalationReason::BrowserOnlyArtifact(_) => "browser_only_artifact",
            EscalationReason::EmptyHtmlShell(_) => "empty_html_shell",
            EscalationReason::ChallengeMarkers(_) => "challenge_markers",
            EscalationReason::WallStatus(_) => "wall_status",
        }
    }

    /// JSON form for the trace: `{code, detail}`.
    pub fn to_json(&self) -> Value {
        let detail = match self {
            EscalationReason::RenderAlways => "--render always".to_string(),
            EscalationReason::BrowserOnlyArtifact(a) => format!("--want {}", a.as_str()),
            EscalationReason::EmptyHtmlShell(d) => d.clone(),
            EscalationReason::ChallengeMarkers(c) => format!("{}: {}", c.vendor, c.marker),
            EscalationReason::WallStatus(s) => format!("status {s} with an HTML body"),
        };
        json!({"code": self.code(), "detail": detail})
    }
}

/// Facts about the HTTP response the decision looks at.
#[derive(Debug, Clone)]
pub struct ResponseFacts<'a> {
    /// HTTP status of the final response.
    pub status: u16,
    /// `Content-Type` of the final response.
    pub content_type: Option<&'a str>,
    /// The decoded body text (may be a prefix of a large body).
    pub body_text: &'a str,
    /// The challenge classification, if any.
    pub challenge: Option<&'a Challenge>,
}

/// Decide before any request: `always`, or a browser-only artifact under `auto`.
pub fn before_request(render: RenderMode, want: &[Artifact]) -> Option<EscalationReason> {
    let _ = (render, want);
    None
}

/// Decide after the HTTP response under `--render auto`; `None` means HTTP is enough.
pub fn after_response(render: RenderMode, facts: &ResponseFacts<'_>) -> Option<EscalationReason> {
    let _ = (render, facts);
    None
}
