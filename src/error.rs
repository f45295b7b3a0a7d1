//! Stable error codes and the error type every layer returns.
//!
//! Agents match on [`ErrorCode`] strings only; messages are for humans and may change.

use serde::Serialize;

/// Every stable error and warning code afhttp can emit.
///
/// The string form (snake_case) is the contract; `docs/reference.md` documents each one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorCode {
    // Transport / navigation.
    NavigationTimeout,
    HostUnreachable,
    DnsResolutionFailed,
    TargetUnreachable,
    TlsError,
    TabCrashed,
    BrowserLaunchFailed,
    RedirectLoop,
    CdpUnavailable,
    CdpTimeout,
    HostBusy,
    /// The host's egress policy refused the target address (private, loopback, link-local
    /// or cloud metadata).
    EgressDenied,
    // Per-artifact, readiness and classification warnings.
    BackendUnsupported,
    ArtifactCaptureFailed,
    ArtifactCaptureTimeout,
    NetworkBodyTruncated,
    NetworkNotIdle,
    PendingXhrAtCapture,
    ArtifactEmpty,
    ArtifactTiny,
    BotWallDetected,
    SecurityChallengeDetected,
    ObservationEmpty,
    ReadinessTimeout,
    CookieSkipped,
    /// A document was read only in part (`--max-pdf-pages`).
    DocumentTruncated,
    /// A PDF needs a user password: no text is read.
    PdfEncrypted,
    /// PDF pages that draw images but no text (scanned): no OCR.
    NoTextLayer,
    /// Glyphs of a PDF have no Unicode mapping: the text has gaps, mostly unmapped pages are
    /// left out.
    TextUnreliable,
    /// A PDF is damaged: what could be read is given.
    DocumentDamaged,
    /// The page opened a JavaScript dialog (alert, confirm, prompt, beforeunload); the fetch
    /// answered it and went on.
    DialogHandled,
    /// Requests to another site than the page's had no response within the stall window
    /// (`--stall-cutoff-ms`) and were cut, as a content blocker would.
    ThirdPartyCut,
    /// Capture happened before the document finished parsing.
    DocumentIncomplete,
    // Configuration / profile / local.
    InvalidArgument,
    SelectorNotFound,
    InvalidEndpoint,
    RenderUnavailable,
    Unauthorized,
    IoError,
    ProfileNotFound,
    ProfileLocked,
    ProfileInvalidName,
    ProfileDeleteLocked,
    ProfileMismatch,
    ContainerEngineUnavailable,
    HostVersionMismatch,
    TakeoverUnavailable,
}

impl ErrorCode {
    /// Every code, in documentation order.
    pub const ALL: &'static [ErrorCode] = &[
        ErrorCode::NavigationTimeout,
        ErrorCode::HostUnreachable,
        ErrorCode::DnsResolutionFailed,
        ErrorCode::TargetUnreachable,
        ErrorCode::TlsError,
        ErrorCode::TabCrashed,
        ErrorCode::BrowserLaunchFailed,
        ErrorCode::RedirectLoop,
        ErrorCode::CdpUnavailable,
        ErrorCode::CdpTimeout,
        ErrorCode::HostBusy,
        ErrorCode::EgressDenied,
        ErrorCode::BackendUnsupported,
        ErrorCode::ArtifactCaptureFailed,
        ErrorCode::ArtifactCaptureTimeout,
        ErrorCode::NetworkBodyTruncated,
        ErrorCode::NetworkNotIdle,
        ErrorCode::PendingXhrAtCapture,
        ErrorCode::ArtifactEmpty,
        ErrorCode::ArtifactTiny,
        ErrorCode::BotWallDetected,
        ErrorCode::SecurityChallengeDetected,
        ErrorCode::ObservationEmpty,
        ErrorCode::ReadinessTimeout,
        ErrorCode::CookieSkipped,
        ErrorCode::DocumentTruncated,
        ErrorCode::PdfEncrypted,
        ErrorCode::NoTextLayer,
        ErrorCode::TextUnreliable,
        ErrorCode::DocumentDamaged,
        ErrorCode::DialogHandled,
        ErrorCode::ThirdPartyCut,
        ErrorCode::DocumentIncomplete,
        ErrorCode::InvalidArgument,
        ErrorCode::SelectorNotFound,
        ErrorCode::InvalidEndpoint,
        ErrorCode::RenderUnavailable,
        ErrorCode::Unauthorized,
        ErrorCode::IoError,
        ErrorCode::ProfileNotFound,
        ErrorCode::ProfileLocked,
        ErrorCode::ProfileInvalidName,
        ErrorCode::ProfileDeleteLocked,
        ErrorCode::ProfileMismatch,
        ErrorCode::ContainerEngineUnavailable,
        ErrorCode::HostVersionMismatch,
        ErrorCode::TakeoverUnavailable,
    ];

    /// The stable snake_case string of this code.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::NavigationTimeout => "navigation_timeout",
            ErrorCode::HostUnreachable => "host_unreachable",
            ErrorCode::DnsResolutionFailed => "dns_resolution_failed",
            ErrorCode::TargetUnreachable => "target_unreachable",
            ErrorCode::TlsError => "tls_error",
            ErrorCode::TabCrashed => "tab_crashed",
            ErrorCode::BrowserLaunchFailed => "browser_launch_failed",
            ErrorCode::RedirectLoop => "redirect_loop",
            ErrorCode::CdpUnavailable => "cdp_unavailable",
            ErrorCode::CdpTimeout => "cdp_timeout",
            ErrorCode::HostBusy => "host_busy",
            ErrorCode::EgressDenied => "egress_denied",
            ErrorCode::BackendUnsupported => "backend_unsupported",
            ErrorCode::ArtifactCaptureFailed => "artifact_capture_failed",
            ErrorCode::ArtifactCaptureTimeout => "artifact_capture_timeout",
            ErrorCode::NetworkBodyTruncated => "network_body_truncated",
            ErrorCode::NetworkNotIdle => "network_not_idle",
            ErrorCode::PendingXhrAtCapture => "pending_xhr_at_capture",
            ErrorCode::ArtifactEmpty => "artifact_empty",
            ErrorCode::ArtifactTiny => "artifact_tiny",
            ErrorCode::BotWallDetected => "bot_wall_detected",
            ErrorCode::SecurityChallengeDetected => "security_challenge_detected",
            ErrorCode::ObservationEmpty => "observation_empty",
            ErrorCode::ReadinessTimeout => "readiness_timeout",
            ErrorCode::CookieSkipped => "cookie_skipped",
            ErrorCode::DocumentTruncated => "document_truncated",
            ErrorCode::PdfEncrypted => "pdf_encrypted",
            ErrorCode::NoTextLayer => "no_text_layer",
            ErrorCode::TextUnreliable => "text_unreliable",
            ErrorCode::DocumentDamaged => "document_damaged",
            ErrorCode::DialogHandled => "dialog_handled",
            ErrorCode::ThirdPartyCut => "third_party_cut",
            ErrorCode::DocumentIncomplete => "document_incomplete",
            ErrorCode::InvalidArgument => "invalid_argument",
            ErrorCode::SelectorNotFound => "selector_not_found",
            ErrorCode::InvalidEndpoint => "invalid_endpoint",
            ErrorCode::RenderUnavailable => "render_unavailable",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::IoError => "io_error",
            ErrorCode::ProfileNotFound => "profile_not_found",
            ErrorCode::ProfileLocked => "profile_locked",
            ErrorCode::ProfileInvalidName => "profile_invalid_name",
            ErrorCode::ProfileDeleteLocked => "profile_delete_locked",
            ErrorCode::ProfileMismatch => "profile_mismatch",
            ErrorCode::ContainerEngineUnavailable => "container_engine_unavailable",
            ErrorCode::HostVersionMismatch => "host_version_mismatch",
            ErrorCode::TakeoverUnavailable => "takeover_unavailable",
        }
    }

    /// Whether retrying the same command unchanged may succeed.
    pub fn retryable(self) -> bool {
        matches!(
            self,
            ErrorCode::NavigationTimeout
                | ErrorCode::HostUnreachable
                | ErrorCode::DnsResolutionFailed
                | ErrorCode::TargetUnreachable
                | ErrorCode::TabCrashed
                | ErrorCode::CdpUnavailable
                | ErrorCode::CdpTimeout
                | ErrorCode::HostBusy
        )
    }

    /// Whether the code appears as a per-artifact warning rather than a failed command.
    pub fn is_warning(self) -> bool {
        matches!(
            self,
            ErrorCode::BackendUnsupported
                | ErrorCode::ArtifactCaptureFailed
                | ErrorCode::ArtifactCaptureTimeout
                | ErrorCode::NetworkBodyTruncated
                | ErrorCode::NetworkNotIdle
                | ErrorCode::PendingXhrAtCapture
                | ErrorCode::ArtifactEmpty
                | ErrorCode::ArtifactTiny
                | ErrorCode::BotWallDetected
                | ErrorCode::SecurityChallengeDetected
                | ErrorCode::ObservationEmpty
                | ErrorCode::ReadinessTimeout
                | ErrorCode::CookieSkipped
                | ErrorCode::DocumentTruncated
                | ErrorCode::PdfEncrypted
                | ErrorCode::NoTextLayer
                | ErrorCode::TextUnreliable
                | ErrorCode::DocumentDamaged
                | ErrorCode::DialogHandled
                | ErrorCode::ThirdPartyCut
                | ErrorCode::DocumentIncomplete
        )
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error with a stable code, a human message and an optional hint for the next step.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{code}: {message}")]
pub struct AfError {
    /// The stable code agents branch on.
    pub code: ErrorCode,
    /// Human-readable detail; not part of the contract.
    pub message: String,
    /// What to do next, when there is something useful to say.
    pub hint: Option<String>,
    /// The request field the error is about (`header`, `timeout_ms`, ...), when it is about
    /// one; front ends turn it into their own name for it (the CLI: a flag).
    pub field: Option<String>,
}

impl AfError {
    /// A new error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        AfError {
            code,
            message: message.into(),
            hint: None,
            field: None,
        }
    }

    /// Attach a hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Name the request field the error is about.
    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// Shorthand for an `invalid_argument` error.
    pub fn invalid(message: impl Into<String>) -> Self {
        AfError::new(ErrorCode::InvalidArgument, message)
    }

    /// An `io_error` naming what was being done and the OS error.
    pub fn io(context: impl std::fmt::Display, err: &std::io::Error) -> Self {
        AfError::new(ErrorCode::IoError, format!("{context}: {err}"))
    }

    /// Whether retrying may help (from the code).
    pub fn retryable(&self) -> bool {
        self.code.retryable()
    }
}

/// A non-fatal problem attached to an otherwise successful result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// The artifact concerned, when the warning is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub artifact: Option<String>,
    /// Stable code.
    pub code: ErrorCode,
    /// Human-readable detail.
    pub message: String,
}

impl Warning {
    /// A warning about one artifact.
    pub fn artifact(artifact: &str, code: ErrorCode, message: impl Into<String>) -> Self {
        Warning {
            artifact: Some(artifact.to_string()),
            code,
            message: message.into(),
        }
    }

    /// A warning not tied to an artifact.
    pub fn general(code: ErrorCode, message: impl Into<String>) -> Self {
        Warning {
            artifact: None,
            code,
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_unique_snake_case_and_match_serde() {
        let mut seen = std::collections::HashSet::new();
        for code in ErrorCode::ALL {
            let s = code.as_str();
            assert!(seen.insert(s), "duplicate {s}");
            assert!(s.chars().all(|c| c.is_ascii_lowercase() || c == '_'));
            assert_eq!(serde_json::to_value(code).unwrap(), serde_json::json!(s));
        }
    }

    #[test]
    fn spec_retryability() {
        assert!(ErrorCode::NavigationTimeout.retryable());
        assert!(!ErrorCode::TlsError.retryable());
        assert!(!ErrorCode::IoError.retryable());
        assert!(ErrorCode::HostBusy.retryable());
    }
}

#[cfg(test)]
mod doc_tests {
    use super::ErrorCode;

    #[test]
    fn reference_documents_every_code() {
        let doc = include_str!("../docs/reference.md");
        for code in ErrorCode::ALL {
            assert!(
                doc.contains(&format!("| `{}` |", code.as_str())),
                "docs/reference.md lacks {code}"
            );
        }
    }
}
