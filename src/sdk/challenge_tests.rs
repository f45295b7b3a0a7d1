//! Unit tests of the challenge markers against the fixtures in `tests/fixtures/challenges/`.
use super::*;

/// `(status, headers, body)` for `tests/fixtures/challenges/<name>.html` and its `.meta`
/// sidecar (`status: N`, `header: name: value`); no sidecar means 200 text/html.
pub(crate) fn fixture(name: &str) -> (u16, Vec<(String, String)>, String) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/challenges/");
    let body = std::fs::read_to_string(format!("{dir}{name}.html")).unwrap();
    let meta = std::fs::read_to_string(format!("{dir}{name}.meta")).unwrap_or_default();
    let mut status = 200;
    let mut headers = Vec::new();
    for line in meta.lines() {
        if let Some(s) = line.strip_prefix("status:") {
            status = s.trim().parse().unwrap();
        } else if let Some(h) = line.strip_prefix("header:") {
            let (n, v) = h.trim().split_once(':').unwrap();
            headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    if !headers.iter().any(|(n, _)| n == "content-type") {
        headers.push(("content-type".into(), "text/html".into()));
    }
    (status, headers, body)
}

fn classify_fixture(name: &str) -> Option<Challenge> {
    let (status, headers, body) = fixture(name);
    classify(status, &headers, &body)
}

const POSITIVES: &[(&str, PageKind, &str, &str)] = &[
    (
        "cloudflare_just_a_moment",
        SC,
        "cloudflare",
        "header cf-mitigated: challenge",
    ),
    (
        "cloudflare_iuam_503",
        SC,
        "cloudflare",
        "body contains _cf_chl_opt with status 503",
    ),
    (
        "cloudflare_attention_required",
        BW,
        "cloudflare",
        "title \"Attention Required! | Cloudflare\" with cf-error-details",
    ),
    (
        "akamai_access_denied",
        BW,
        "akamai",
        "body contains errors.edgesuite.net reference with \"Access Denied\"",
    ),
    (
        "datadome_captcha",
        SC,
        "datadome",
        "header x-datadome with status 403",
    ),
    (
        "perimeterx_press_hold",
        SC,
        "perimeterx",
        "body contains the px-captcha element",
    ),
    (
        "hcaptcha_wall",
        SC,
        "hcaptcha",
        "h-captcha widget with no input fields and visible_text_bytes=",
    ),
    (
        "recaptcha_google_sorry",
        SC,
        "recaptcha",
        "g-recaptcha widget with status 429",
    ),
    (
        "aws_waf_challenge",
        SC,
        "aws_waf",
        "header x-amzn-waf-action: challenge",
    ),
    (
        "incapsula_incident",
        BW,
        "imperva",
        "body contains _Incapsula_Resource with \"Incapsula incident ID\"",
    ),
    (
        "vercel_checkpoint",
        SC,
        "vercel",
        "header x-vercel-mitigated: challenge",
    ),
    (
        "cloudflare_turnstile_widget",
        SC,
        "cloudflare",
        "turnstile widget with no input fields and visible_text_bytes=",
    ),
    (
        "cloudflare_turnstile_just_a_moment",
        SC,
        "cloudflare",
        "turnstile widget with title \"Just a moment...\"",
    ),
    (
        "cloudflare_challenge_running_200",
        SC,
        "cloudflare",
        "challenge-running with /cdn-cgi/challenge-platform/ (status 200)",
    ),
];

const NEGATIVES: &[&str] = &[
    "neg_nginx_403",
    "neg_apache_access_denied",
    "neg_article_about_bots",
    "neg_login_with_recaptcha",
    "neg_maintenance_503",
    "neg_rate_limit_429_json",
    "neg_cloudflare_jsd_normal_page",
    "neg_perimeterx_sensor_normal_page",
    "neg_login_with_turnstile",
];

#[test]
fn positive_fixtures_match_the_expected_marker() {
    for (name, kind, vendor, marker) in POSITIVES {
        let c = classify_fixture(name).unwrap_or_else(|| panic!("{name} not classified"));
        assert_eq!(c.page_kind, *kind, "{name}: {c:?}");
        assert_eq!(c.vendor, *vendor, "{name}: {c:?}");
        assert!(c.marker.starts_with(marker), "{name}: {c:?}");
    }
}

#[test]
fn negative_fixtures_stay_unclassified() {
    for name in NEGATIVES {
        assert_eq!(classify_fixture(name), None, "{name}");
    }
}

#[test]
fn body_markers_work_without_the_headers() {
    let cases: &[(&str, &str)] = &[
        ("cloudflare_just_a_moment", "cloudflare"),
        ("datadome_captcha", "datadome"),
        ("aws_waf_challenge", "aws_waf"),
    ];
    for (name, vendor) in cases {
        let (status, _, body) = fixture(name);
        let c = classify(status, &[], &body).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(c.vendor, *vendor, "{name}: {c:?}");
        assert!(c.marker.starts_with("body"), "{name}: {c:?}");
    }
}

#[test]
fn same_bodies_with_status_200_and_no_headers_are_conservative() {
    // Status-gated markers must not fire on a 200 (the vendor text can be quoted).
    let (_, _, body) = fixture("aws_waf_challenge");
    assert_eq!(classify(200, &[], &body), None);
    let (_, _, body) = fixture("neg_perimeterx_sensor_normal_page");
    assert_eq!(classify(200, &[], &body), None);
    assert!(
        classify(403, &[], &body).is_some(),
        "_pxAppId with 403 is the block page"
    );
}

#[test]
fn markers_past_the_scan_limit_are_not_seen() {
    let mut body = "x".repeat(MAX_SCAN_BYTES);
    body.push_str("<div id=\"px-captcha\"></div>");
    assert_eq!(classify(403, &[], &body), None);
    let multibyte = "é".repeat(MAX_SCAN_BYTES);
    assert_eq!(classify(200, &[], &multibyte), None);
}

#[test]
fn every_positive_vendor_is_documented() {
    for (_, kind, vendor, _) in POSITIVES {
        assert!(
            markers()
                .iter()
                .any(|m| m.vendor == *vendor && m.page_kind == *kind),
            "{vendor} {kind:?}"
        );
    }
    assert_eq!(PageKind::BotWall.as_str(), "bot_wall");
    assert_eq!(
        serde_json::to_value(PageKind::SecurityChallenge).unwrap(),
        "security_challenge"
    );
}
