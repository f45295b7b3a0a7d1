//! Conservative challenge markers: mechanical evidence that a response is a vendor's
//! interstitial rather than the target page (spec §2 allows exactly this much).
//!
//! Every rule pairs a vendor-specific string with a second fact (a status, a title, a
//! header) wherever the string alone also occurs on ordinary pages: Cloudflare's bot
//! script puts `/cdn-cgi/challenge-platform/` on normal pages, HUMAN's sensor puts
//! `window._pxAppId` there, and login forms embed reCAPTCHA. [`markers`] documents the rules.

use serde::Serialize;

use crate::sdk::html::ParsedHtml;

/// Bytes of body scanned; interstitials are small and put their markers up front.
pub const MAX_SCAN_BYTES: usize = 256 * 1024;

/// Visible text below which a page that is mostly a captcha widget counts as a wall.
const WIDGET_WALL_TEXT_BYTES: usize = 1024;

/// What kind of interstitial a response is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PageKind {
    /// A bot wall that blocks automated clients.
    BotWall,
    /// A security challenge (captcha, JS challenge) the visitor must pass.
    SecurityChallenge,
}

impl PageKind {
    /// The snake_case string (`bot_wall`, `security_challenge`).
    pub fn as_str(self) -> &'static str {
        match self {
            PageKind::BotWall => "bot_wall",
            PageKind::SecurityChallenge => "security_challenge",
        }
    }
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

/// Documentation of one marker rule, for `docs/reference.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MarkerDoc {
    /// Vendor name as it appears in [`Challenge::vendor`].
    pub vendor: &'static str,
    /// The page kind the rule yields.
    pub page_kind: PageKind,
    /// What must be present for the rule to match.
    pub marker: &'static str,
}

const SC: PageKind = PageKind::SecurityChallenge;
const BW: PageKind = PageKind::BotWall;

const MARKERS: &[MarkerDoc] = &[
    MarkerDoc { vendor: "cloudflare", page_kind: SC, marker: "header `cf-mitigated: challenge`" },
    MarkerDoc { vendor: "vercel", page_kind: SC, marker: "header `x-vercel-mitigated: challenge`" },
    MarkerDoc { vendor: "aws_waf", page_kind: SC, marker: "header `x-amzn-waf-action: challenge` or `captcha`" },
    MarkerDoc { vendor: "datadome", page_kind: SC, marker: "header `x-datadome` with status 403" },
    MarkerDoc { vendor: "cloudflare", page_kind: SC, marker: "body contains `_cf_chl_opt` with status 403/429/503 or title \"Just a moment...\"" },
    MarkerDoc { vendor: "cloudflare", page_kind: SC, marker: "title \"Just a moment...\" and body contains `/cdn-cgi/challenge-platform/`" },
    MarkerDoc { vendor: "cloudflare", page_kind: SC, marker: "body contains `id=\"challenge-running\"` and `/cdn-cgi/challenge-platform/` (any status, 200 included)" },
    MarkerDoc { vendor: "cloudflare", page_kind: SC, marker: "a Turnstile widget (`cf-turnstile` or `challenges.cloudflare.com/turnstile`) with title \"Just a moment...\", or with no input fields and under 1024 bytes of visible text (a login form with Turnstile is not classified)" },
    MarkerDoc { vendor: "cloudflare", page_kind: SC, marker: "title \"Attention Required! | Cloudflare\" with a captcha widget (`cf_captcha_kind`, `h-captcha`, `g-recaptcha`)" },
    MarkerDoc { vendor: "cloudflare", page_kind: BW, marker: "`cf-error-details` with title \"Attention Required! | Cloudflare\", \"Sorry, you have been blocked\" or \"used Cloudflare to restrict access\"" },
    MarkerDoc { vendor: "akamai", page_kind: BW, marker: "body contains an `errors.edgesuite.net` reference (plain or `&#46;`-encoded) and \"Access Denied\"" },
    MarkerDoc { vendor: "datadome", page_kind: SC, marker: "body contains `captcha-delivery.com` with status 403 or the `var dd={` bootstrap" },
    MarkerDoc { vendor: "perimeterx", page_kind: SC, marker: "body contains the `px-captcha` element (`id=\"px-captcha\"`)" },
    MarkerDoc { vendor: "perimeterx", page_kind: SC, marker: "body contains `window._pxAppId` with status 403" },
    MarkerDoc { vendor: "imperva", page_kind: BW, marker: "body contains `_Incapsula_Resource` and \"Incapsula incident ID\"" },
    MarkerDoc { vendor: "aws_waf", page_kind: SC, marker: "body loads `awswaf.com/.../challenge.js` or `captcha.js` with status 202/403/405" },
    MarkerDoc { vendor: "recaptcha", page_kind: SC, marker: "`g-recaptcha` / reCAPTCHA script with status 403/429/503, or with no input fields and under 1024 bytes of visible text" },
    MarkerDoc { vendor: "hcaptcha", page_kind: SC, marker: "`h-captcha` / hCaptcha script with status 403/429/503, or with no input fields and under 1024 bytes of visible text" },
];

/// Every marker rule, in the order they are tried (headers first).
pub fn markers() -> &'static [MarkerDoc] {
    MARKERS
}

/// What a rule sees: status, headers and the lower-cased body prefix.
struct Input<'a> {
    status: u16,
    headers: &'a [(String, String)],
    body: &'a str,
    lower: String,
    title: Option<String>,
}

impl Input<'_> {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim())
    }

    fn has(&self, needle: &str) -> bool {
        self.lower.contains(needle)
    }

    fn title_is(&self, t: &str) -> bool {
        self.title.as_deref() == Some(t)
    }

    fn wall_status(&self) -> bool {
        matches!(self.status, 403 | 429 | 503)
    }
}

fn hit(page_kind: PageKind, vendor: &'static str, marker: impl Into<String>) -> Option<Challenge> {
    Some(Challenge {
        page_kind,
        vendor,
        marker: marker.into(),
    })
}

/// Classify a response; `headers` are (lower-case name, value) pairs.
pub fn classify(status: u16, headers: &[(String, String)], body: &str) -> Option<Challenge> {
    let body = prefix(body, MAX_SCAN_BYTES);
    let lower = body.to_ascii_lowercase();
    let title = raw_title(&lower);
    let input = Input {
        status,
        headers,
        body,
        lower,
        title,
    };
    header_rules(&input)
        .or_else(|| cloudflare(&input))
        .or_else(|| akamai(&input))
        .or_else(|| datadome(&input))
        .or_else(|| perimeterx(&input))
        .or_else(|| imperva(&input))
        .or_else(|| aws_waf(&input))
        .or_else(|| captcha_widget(&input))
}

fn header_rules(i: &Input<'_>) -> Option<Challenge> {
    if i.header("cf-mitigated")
        .is_some_and(|v| v.eq_ignore_ascii_case("challenge"))
    {
        return hit(SC, "cloudflare", "header cf-mitigated: challenge");
    }
    if i.header("x-vercel-mitigated")
        .is_some_and(|v| v.eq_ignore_ascii_case("challenge"))
    {
        return hit(SC, "vercel", "header x-vercel-mitigated: challenge");
    }
    if let Some(v) = i.header("x-amzn-waf-action") {
        let v = v.to_ascii_lowercase();
        if v == "challenge" || v == "captcha" {
            return hit(SC, "aws_waf", format!("header x-amzn-waf-action: {v}"));
        }
    }
    if i.status == 403 && i.header("x-datadome").is_some() {
        return hit(SC, "datadome", "header x-datadome with status 403");
    }
    None
}

fn cloudflare(i: &Input<'_>) -> Option<Challenge> {
    let just_a_moment = i.title_is("just a moment...") || i.title_is("just a moment…");
    if i.has("_cf_chl_opt") {
        if i.wall_status() {
            return hit(
                SC,
                "cloudflare",
                format!("body contains _cf_chl_opt with status {}", i.status),
            );
        }
        if just_a_moment {
            return hit(
                SC,
                "cloudflare",
                "body contains _cf_chl_opt with title \"Just a moment...\"",
            );
        }
    }
    if i.has("/cdn-cgi/challenge-platform/")
        && (i.has("id=\"challenge-running\"") || i.has("id='challenge-running'"))
    {
        return hit(
            SC,
            "cloudflare",
            format!(
                "challenge-running with /cdn-cgi/challenge-platform/ (status {})",
                i.status
            ),
        );
    }
    if i.has("cf-turnstile") || i.has("challenges.cloudflare.com/turnstile") {
        if just_a_moment {
            return hit(
                SC,
                "cloudflare",
                "turnstile widget with title \"Just a moment...\"",
            );
        }
        if let Some(text_bytes) = widget_alone(i) {
            return hit(
                SC,
                "cloudflare",
                format!(
                    "turnstile widget with no input fields and visible_text_bytes={text_bytes}"
                ),
            );
        }
    }
    if just_a_moment && i.has("/cdn-cgi/challenge-platform/") {
        return hit(
            SC,
            "cloudflare",
            "title \"Just a moment...\" with /cdn-cgi/challenge-platform/",
        );
    }
    let attention = i.title_is("attention required! | cloudflare");
    if attention
        && ["cf_captcha_kind", "h-captcha", "g-recaptcha"]
            .iter()
            .any(|w| i.has(w))
    {
        return hit(
            SC,
            "cloudflare",
            "title \"Attention Required! | Cloudflare\" with a captcha widget",
        );
    }
    if i.has("cf-error-details") {
        if attention {
            return hit(
                BW,
                "cloudflare",
                "title \"Attention Required! | Cloudflare\" with cf-error-details",
            );
        }
        if i.has("sorry, you have been blocked") {
            return hit(
                BW,
                "cloudflare",
                "cf-error-details with \"Sorry, you have been blocked\"",
            );
        }
        if i.has("used cloudflare to restrict access") {
            return hit(
                BW,
                "cloudflare",
                "cf-error-details with \"used Cloudflare to restrict access\"",
            );
        }
    }
    None
}

fn akamai(i: &Input<'_>) -> Option<Challenge> {
    let reference = i.has("errors.edgesuite.net") || i.has("errors&#46;edgesuite&#46;net");
    if reference && i.has("access denied") {
        return hit(
            BW,
            "akamai",
            "body contains errors.edgesuite.net reference with \"Access Denied\"",
        );
    }
    None
}

fn datadome(i: &Input<'_>) -> Option<Challenge> {
    if !i.has("captcha-delivery.com") {
        return None;
    }
    if i.status == 403 {
        return hit(
            SC,
            "datadome",
            "body contains captcha-delivery.com with status 403",
        );
    }
    if i.has("var dd={") || i.has("var dd = {") {
        return hit(
            SC,
            "datadome",
            "body contains captcha-delivery.com with the var dd={ bootstrap",
        );
    }
    None
}

fn perimeterx(i: &Input<'_>) -> Option<Challenge> {
    if ["id=\"px-captcha\"", "id='px-captcha'", "id=px-captcha"]
        .iter()
        .any(|w| i.has(w))
    {
        return hit(SC, "perimeterx", "body contains the px-captcha element");
    }
    if i.status == 403 && i.has("window._pxappid") {
        return hit(
            SC,
            "perimeterx",
            "body contains window._pxAppId with status 403",
        );
    }
    None
}

fn imperva(i: &Input<'_>) -> Option<Challenge> {
    if i.has("_incapsula_resource") && i.has("incapsula incident id") {
        return hit(
            BW,
            "imperva",
            "body contains _Incapsula_Resource with \"Incapsula incident ID\"",
        );
    }
    None
}

fn aws_waf(i: &Input<'_>) -> Option<Challenge> {
    let script = i.has("awswaf.com") && (i.has("/challenge.js") || i.has("/captcha.js"));
    if script && matches!(i.status, 202 | 403 | 405) {
        return hit(
            SC,
            "aws_waf",
            format!(
                "body loads awswaf.com challenge script with status {}",
                i.status
            ),
        );
    }
    None
}

fn captcha_widget(i: &Input<'_>) -> Option<Challenge> {
    let (vendor, widget) = if i.has("h-captcha") || i.has("hcaptcha.com/1/api.js") {
        ("hcaptcha", "h-captcha")
    } else if i.has("g-recaptcha")
        || i.has("google.com/recaptcha/")
        || i.has("recaptcha.net/recaptcha/")
    {
        ("recaptcha", "g-recaptcha")
    } else {
        return None;
    };
    if i.wall_status() {
        return hit(
            SC,
            vendor,
            format!("{widget} widget with status {}", i.status),
        );
    }
    widget_alone(i).and_then(|text_bytes| {
        hit(
            SC,
            vendor,
            format!("{widget} widget with no input fields and visible_text_bytes={text_bytes}"),
        )
    })
}

/// The visible text bytes when the page is essentially just a widget (no input fields, little
/// text); `None` otherwise. Only called once a widget marker matched, since it parses.
fn widget_alone(i: &Input<'_>) -> Option<usize> {
    let doc = ParsedHtml::parse(i.body);
    let text_bytes = doc.text().trim().len();
    (doc.user_input_count() == 0 && text_bytes < WIDGET_WALL_TEXT_BYTES).then_some(text_bytes)
}

/// The longest prefix of `s` of at most `max` bytes that ends on a char boundary.
fn prefix(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The first `<title>` text, whitespace-collapsed, from the lower-cased body.
fn raw_title(lower: &str) -> Option<String> {
    let start = lower.find("<title")?;
    let open_end = start + lower[start..].find('>')? + 1;
    let close = open_end + lower[open_end..].find("</title")?;
    let t: Vec<&str> = lower[open_end..close].split_whitespace().collect();
    Some(t.join(" ").replace("&amp;", "&"))
}

#[cfg(test)]
#[path = "challenge_tests.rs"]
pub(crate) mod tests;

#[cfg(test)]
mod doc_tests {
    #[test]
    fn reference_lists_every_marker_vendor() {
        let doc = include_str!("../../docs/reference.md");
        let section = doc.split("## Challenge markers").nth(1).unwrap();
        for m in super::markers() {
            assert!(
                section.contains(&format!("| {} | {} |", m.vendor, m.page_kind.as_str())),
                "{}",
                m.vendor
            );
        }
    }
}
