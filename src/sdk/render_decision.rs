//! The `--render auto` decision (DESIGN.md "HTTP first, for real"): escalate to a browser
//! only on a mechanical reason, recorded in `trace.escalation_reason`.

use serde_json::{json, Value};

use crate::sdk::challenge::Challenge;
use crate::sdk::fetch::FetchRequest;
use crate::sdk::html::ShellFacts;
use crate::sdk::request::{Artifact, RenderMode};

/// Visible text (bytes) below which a scripted page may be an empty application shell.
pub const SHELL_TEXT_BYTES: usize = 200;

/// A mechanical reason to render in a browser instead of trusting the HTTP response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EscalationReason {
    /// `--render always`.
    RenderAlways,
    /// `fetch --profile NAME`: the host's browser under that profile holds the session.
    ProfileRequested(String),
    /// `fetch --takeover`: the tab a human may take over lives in the host's browser.
    Takeover,
    /// `fetch --tab ID|new`: the tab lives in a browser.
    Tab(String),
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
            EscalationReason::ProfileRequested(_) => "profile_requested",
            EscalationReason::Takeover => "takeover",
            EscalationReason::Tab(_) => "tab",
            EscalationReason::BrowserOnlyArtifact(_) => "browser_only_artifact",
            EscalationReason::EmptyHtmlShell(_) => "empty_html_shell",
            EscalationReason::ChallengeMarkers(_) => "challenge_markers",
            EscalationReason::WallStatus(_) => "wall_status",
        }
    }

    /// Whether the reason was known before any request was sent (so no HTTP attempt sent
    /// the request before the browser did).
    pub fn before_request(&self) -> bool {
        !matches!(
            self,
            EscalationReason::EmptyHtmlShell(_)
                | EscalationReason::ChallengeMarkers(_)
                | EscalationReason::WallStatus(_)
        )
    }

    /// JSON form for the trace: `{code, detail}`.
    pub fn to_json(&self) -> Value {
        let detail = match self {
            EscalationReason::RenderAlways => "render always".to_string(),
            EscalationReason::ProfileRequested(p) => format!("profile {p}"),
            EscalationReason::Takeover => "takeover".to_string(),
            EscalationReason::Tab(t) => format!("tab {t}"),
            EscalationReason::BrowserOnlyArtifact(a) => format!("want {}", a.as_str()),
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

impl ResponseFacts<'_> {
    /// Whether the body is HTML: an HTML `Content-Type`, or a missing or generic one and
    /// bytes that start like an HTML document (`sdk::documents::classify`).
    pub fn is_html(&self) -> bool {
        crate::sdk::documents::classify(self.content_type, self.body_text.as_bytes())
            == crate::sdk::documents::DocKind::Html
    }
}

/// Every reason known before the request is sent, in the order they win: `render
/// always`, a browser-only artifact under `auto`, `takeover`, `tab`, then `profile` (a
/// takeover's site profile, derived by `validate()`, is recorded as the takeover).
pub fn before_request(req: &FetchRequest) -> Option<EscalationReason> {
    let want = req.want.as_deref().unwrap_or_default();
    let browser = &req.browser;
    match req.render {
        RenderMode::None => return None,
        RenderMode::Always => return Some(EscalationReason::RenderAlways),
        RenderMode::Auto => {}
    }
    if let Some(a) = want.iter().find(|a| a.browser_only()) {
        return Some(EscalationReason::BrowserOnlyArtifact(*a));
    }
    if browser.takeover {
        return Some(EscalationReason::Takeover);
    }
    if let Some(tab) = &browser.tab {
        return Some(EscalationReason::Tab(tab.clone()));
    }
    browser
        .profile
        .clone()
        .map(EscalationReason::ProfileRequested)
}

/// Decide after the HTTP response under `--render auto`; `None` means HTTP is enough.
///
/// Parses `facts.body_text` when the shell check needs it; use [`after_response_with`] to
/// pass facts from a parse already made.
pub fn after_response(render: RenderMode, facts: &ResponseFacts<'_>) -> Option<EscalationReason> {
    after_response_with(render, facts, None)
}

/// [`after_response`] with precomputed [`ShellFacts`] (from `ParsedHtml::shell_facts`).
///
/// Order: challenge markers, then a wall status (403/429/503) with an HTML body, then an
/// empty application shell in a 2xx HTML body. Non-HTML bodies, redirects and 404s never
/// escalate on shell grounds.
pub fn after_response_with(
    render: RenderMode,
    facts: &ResponseFacts<'_>,
    shell: Option<&ShellFacts>,
) -> Option<EscalationReason> {
    if render != RenderMode::Auto {
        return None;
    }
    // No content-based reason escalates a document that is not HTML (a PDF, JSON, a feed...):
    // a browser would only show it in a viewer.
    if !facts.is_html() {
        return None;
    }
    if let Some(c) = facts.challenge {
        return Some(EscalationReason::ChallengeMarkers(c.clone()));
    }
    let html = !facts.body_text.trim().is_empty();
    if html && matches!(facts.status, 403 | 429 | 503) {
        return Some(EscalationReason::WallStatus(facts.status));
    }
    if !html || !(200..300).contains(&facts.status) {
        return None;
    }
    let computed;
    let shell = match shell {
        Some(s) => s,
        None => {
            computed = crate::sdk::html::shell_facts(facts.body_text);
            &computed
        }
    };
    empty_shell(shell).map(EscalationReason::EmptyHtmlShell)
}

/// The shell rule: little visible text AND (scripts, an empty mount node, or a
/// `<noscript>` saying JavaScript is required). Returns the detail naming the facts.
pub fn empty_shell(s: &ShellFacts) -> Option<String> {
    if s.visible_text_bytes >= SHELL_TEXT_BYTES {
        return None;
    }
    if s.script_count == 0 && s.empty_mount.is_none() && !s.noscript_requires_js {
        return None;
    }
    let mut detail = format!(
        "visible_text_bytes={} scripts={}",
        s.visible_text_bytes, s.script_count
    );
    if let Some(m) = &s.empty_mount {
        detail.push_str(&format!(" empty_mount={m}"));
    }
    if s.noscript_requires_js {
        detail.push_str(" noscript_requires_js=true");
    }
    Some(detail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sdk::challenge::{classify, tests::fixture};

    fn html_page(name: &str) -> &'static str {
        match name {
            "react" => include_str!("../../tests/fixtures/html/react_shell.html"),
            "vue" => include_str!("../../tests/fixtures/html/vue_shell.html"),
            "next" => include_str!("../../tests/fixtures/html/next_shell.html"),
            "angular" => include_str!("../../tests/fixtures/html/angular_shell.html"),
            "spinner" => include_str!("../../tests/fixtures/html/loading_spinner_shell.html"),
            "tiny" => include_str!("../../tests/fixtures/html/tiny_static.html"),
            _ => include_str!("../../tests/fixtures/html/article.html"),
        }
    }

    fn decide(status: u16, ct: Option<&str>, body: &str) -> Option<EscalationReason> {
        let headers: Vec<(String, String)> = ct
            .map(|c| vec![("content-type".to_string(), c.to_string())])
            .unwrap_or_default();
        let challenge = classify(status, &headers, body);
        let facts = ResponseFacts {
            status,
            content_type: ct,
            body_text: body,
            challenge: challenge.as_ref(),
        };
        after_response(RenderMode::Auto, &facts)
    }

    const HTML: Option<&str> = Some("text/html; charset=utf-8");

    fn decided(spec: crate::sdk::fetch::FetchSpec) -> Option<EscalationReason> {
        before_request(&spec.validate().unwrap())
    }

    fn spec(render: &str, want: &str) -> crate::sdk::fetch::FetchSpec {
        crate::sdk::fetch::FetchSpec {
            render: Some(render.into()),
            want: (!want.is_empty()).then(|| want.into()),
            ..crate::sdk::fetch::FetchSpec::new("https://shop.example.co.uk/cart")
        }
    }

    #[test]
    fn before_request_branches() {
        use crate::sdk::fetch::FetchSpec;
        assert_eq!(
            decided(spec("always", "")),
            Some(EscalationReason::RenderAlways)
        );
        assert_eq!(decided(spec("auto", "body,text")), None);
        assert_eq!(decided(spec("none", "body,text")), None);
        assert_eq!(
            decided(spec("auto", "text,screenshot,console")),
            Some(EscalationReason::BrowserOnlyArtifact(Artifact::Screenshot))
        );
        // Takeover, tab and profile are decided here too, in that order: a takeover's
        // derived site profile reads as the takeover.
        let takeover = FetchSpec {
            takeover: true,
            tab: Some("T1".into()),
            ..spec("auto", "")
        };
        assert_eq!(decided(takeover), Some(EscalationReason::Takeover));
        let tab = FetchSpec {
            tab: Some("new".into()),
            profile: Some("work".into()),
            ..spec("auto", "")
        };
        assert_eq!(decided(tab), Some(EscalationReason::Tab("new".into())));
        let profile = FetchSpec {
            profile: Some("work".into()),
            ..spec("auto", "")
        };
        assert_eq!(
            decided(profile),
            Some(EscalationReason::ProfileRequested("work".into()))
        );
        assert!(EscalationReason::Takeover.before_request());
        assert!(!EscalationReason::WallStatus(403).before_request());
    }

    #[test]
    fn only_auto_decides_after_the_response() {
        let body = html_page("react");
        for mode in [RenderMode::None, RenderMode::Always] {
            let facts = ResponseFacts {
                status: 200,
                content_type: HTML,
                body_text: body,
                challenge: None,
            };
            assert_eq!(after_response(mode, &facts), None);
        }
    }

    #[test]
    fn application_shells_escalate_with_facts_in_the_detail() {
        let cases = [
            (
                "react",
                "visible_text_bytes=0 scripts=1 empty_mount=#root noscript_requires_js=true",
            ),
            ("vue", "visible_text_bytes=0 scripts=1 empty_mount=#app"),
            ("next", "visible_text_bytes=0 scripts=5 empty_mount=#__next"),
            (
                "angular",
                "visible_text_bytes=0 scripts=3 empty_mount=app-root",
            ),
            ("spinner", "visible_text_bytes=10 scripts=1"),
        ];
        for (name, detail) in cases {
            let r = decide(200, HTML, html_page(name));
            assert_eq!(
                r,
                Some(EscalationReason::EmptyHtmlShell(detail.into())),
                "{name}"
            );
            assert_eq!(
                r.map(|r| r.to_json()["code"].clone()),
                Some("empty_html_shell".into())
            );
        }
    }

    #[test]
    fn complete_pages_and_non_html_do_not_escalate() {
        assert_eq!(decide(200, HTML, html_page("tiny")), None);
        assert_eq!(decide(200, HTML, html_page("article")), None);
        assert_eq!(decide(200, HTML, ""), None);
        let react = html_page("react");
        for ct in ["application/json", "text/plain", "image/png"] {
            assert_eq!(decide(200, Some(ct), react), None, "{ct}");
            assert_eq!(decide(403, Some(ct), react), None, "{ct}");
        }
        assert_eq!(decide(200, Some("application/json"), "{\"a\":1}"), None);
        // Redirects and 404s never escalate on shell grounds.
        assert_eq!(decide(302, HTML, react), None);
        assert_eq!(decide(404, HTML, react), None);
    }

    #[test]
    fn missing_content_type_sniffs_html() {
        assert!(decide(200, None, html_page("react")).is_some());
        assert_eq!(decide(403, None, "forbidden"), None);
        assert_eq!(
            decide(403, None, "<!DOCTYPE html><p>no"),
            Some(EscalationReason::WallStatus(403))
        );
    }

    #[test]
    fn vendor_walls_escalate_as_challenges() {
        for name in [
            "cloudflare_just_a_moment",
            "cloudflare_iuam_503",
            "cloudflare_attention_required",
            "akamai_access_denied",
            "datadome_captcha",
            "perimeterx_press_hold",
            "hcaptcha_wall",
            "recaptcha_google_sorry",
            "aws_waf_challenge",
            "incapsula_incident",
            "vercel_checkpoint",
        ] {
            let (status, headers, body) = fixture(name);
            let challenge = classify(status, &headers, &body);
            let ct = headers
                .iter()
                .find(|(n, _)| n == "content-type")
                .map(|(_, v)| v.as_str());
            let facts = ResponseFacts {
                status,
                content_type: ct,
                body_text: &body,
                challenge: challenge.as_ref(),
            };
            let r = after_response(RenderMode::Auto, &facts);
            assert!(
                matches!(r, Some(EscalationReason::ChallengeMarkers(_))),
                "{name}: {r:?}"
            );
        }
    }

    #[test]
    fn plain_wall_statuses_escalate_without_being_challenges() {
        for (name, code) in [
            ("neg_nginx_403", 403),
            ("neg_apache_access_denied", 403),
            ("neg_maintenance_503", 503),
        ] {
            let (status, headers, body) = fixture(name);
            assert_eq!(classify(status, &headers, &body), None, "{name}");
            assert_eq!(
                decide(status, HTML, &body),
                Some(EscalationReason::WallStatus(code))
            );
        }
        let (status, _, body) = fixture("neg_rate_limit_429_json");
        assert_eq!(decide(status, Some("application/json"), &body), None);
    }

    #[test]
    fn precomputed_shell_facts_are_used() {
        let facts = ResponseFacts {
            status: 200,
            content_type: HTML,
            body_text: "<p>ignored</p>",
            challenge: None,
        };
        let shell = ShellFacts {
            visible_text_bytes: 3,
            script_count: 2,
            empty_mount: None,
            noscript_requires_js: false,
        };
        assert_eq!(
            after_response_with(RenderMode::Auto, &facts, Some(&shell)),
            Some(EscalationReason::EmptyHtmlShell(
                "visible_text_bytes=3 scripts=2".into()
            ))
        );
    }
}
