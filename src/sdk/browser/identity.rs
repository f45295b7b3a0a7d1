//! The identity a tab presents: a headless Chromium-family browser sends the User-Agent and
//! client hints its headful self would send (no `HeadlessChrome` token), and
//! `navigator.webdriver` is false. `--user-agent` still overrides; a non-Chromium value
//! gets no Chromium client hints. Honest hygiene, not stealth: what still differs is listed
//! in `docs/reference.md`.

use serde_json::{json, Value};

/// What the tab will present, and the trace entry that says so.
#[derive(Debug, Clone, PartialEq)]
pub struct Identity {
    /// The `User-Agent` header and `navigator.userAgent`; `None` leaves the browser's own.
    pub user_agent: Option<String>,
    /// `Emulation.setUserAgentOverride`'s `userAgentMetadata` (client hints).
    pub metadata: Option<Value>,
    /// `trace.user_agent`.
    pub trace: Value,
}

/// The GREASE brand Chromium derives from its major version (the UA client hints
/// specification's arbitrary brand): `Not` + a character + `A` + a character + `Brand`.
fn grease_brand(major: u32) -> (String, &'static str) {
    const CHARS: [char; 11] = [' ', '(', ':', '-', '.', '/', ')', ';', '=', '?', '_'];
    const VERSIONS: [&str; 3] = ["8", "99", "24"];
    let c = |i: u32| CHARS[(i % 11) as usize];
    (
        format!("Not{}A{}Brand", c(major), c(major + 1)),
        VERSIONS[(major % 3) as usize],
    )
}

/// The brand list (`full`: with full versions) in Chromium's order for a browser without a
/// product brand of its own: the GREASE brand and `Chromium`, swapped on odd versions.
fn brands(major: u32, version: &str, brand: Option<&str>, full: bool) -> Vec<Value> {
    let (grease, grease_version) = grease_brand(major);
    let gv = if full {
        format!("{grease_version}.0.0.0")
    } else {
        grease_version.to_string()
    };
    let g = json!({"brand": grease, "version": gv});
    let chromium = json!({"brand": "Chromium", "version": version});
    match brand {
        None if major.is_multiple_of(2) => vec![g, chromium],
        None => vec![chromium, g],
        Some(b) => {
            const ORDERS: [[usize; 3]; 6] = [
                [0, 1, 2],
                [0, 2, 1],
                [1, 0, 2],
                [1, 2, 0],
                [2, 0, 1],
                [2, 1, 0],
            ];
            let order = ORDERS[(major % 6) as usize];
            let mut out = vec![Value::Null; 3];
            out[order[0]] = g;
            out[order[1]] = chromium;
            out[order[2]] = json!({"brand": b, "version": version});
            out
        }
    }
}

/// The Chromium version a User-Agent names (`Chrome/156.0.0.0` → `156.0.0.0`).
fn chrome_version(ua: &str) -> Option<&str> {
    let at = ua
        .find("HeadlessChrome/")
        .map(|i| i + "HeadlessChrome/".len())
        .or_else(|| ua.find("Chrome/").map(|i| i + "Chrome/".len()))?;
    let rest = &ua[at..];
    let end = rest.find(' ').unwrap_or(rest.len());
    Some(&rest[..end])
}

/// Client hints for a Chromium User-Agent: `full_version` is the browser's own (from its
/// product string) when known; the platform comes from the User-Agent's system part.
pub fn metadata(ua: &str, full_version: Option<&str>, brand: Option<&str>) -> Option<Value> {
    let version = chrome_version(ua)?;
    let major: u32 = version.split('.').next()?.parse().ok()?;
    let full = full_version
        .filter(|f| f.split('.').next() == Some(&major.to_string()))
        .unwrap_or(version);
    let (platform, arch, bitness) = if ua.contains("Android") {
        ("Android", "", "")
    } else if ua.contains("Windows") {
        ("Windows", "x86", "64")
    } else if ua.contains("Mac OS X") {
        ("macOS", "arm", "64")
    } else if ua.contains("CrOS") {
        ("Chrome OS", "x86", "64")
    } else {
        let arm = ua.contains("aarch64") || ua.contains("arm");
        ("Linux", if arm { "arm" } else { "x86" }, "64")
    };
    Some(json!({
        "brands": brands(major, &major.to_string(), brand, false),
        "fullVersionList": brands(major, full, brand, true),
        "fullVersion": full,
        "platform": platform,
        "platformVersion": "",
        "architecture": arch,
        "model": "",
        "mobile": ua.contains("Mobile"),
        "bitness": bitness,
        "wow64": false,
        "formFactors": [if ua.contains("Mobile") { "Mobile" } else { "Desktop" }],
    }))
}

/// The product brand of a browser family (`None`: Chromium itself, and families whose
/// brand is not known here).
pub fn family_brand(family: Option<&str>) -> Option<&'static str> {
    match family? {
        "chrome" | "google-chrome" => Some("Google Chrome"),
        "edge" | "msedge" => Some("Microsoft Edge"),
        "brave" => Some("Brave"),
        _ => None,
    }
}

/// Decide the identity from the browser's own User-Agent and product (`Browser.getVersion`)
/// and the `--user-agent` flag.
pub fn plan(browser_ua: &str, product: &str, flag: Option<&str>, brand: Option<&str>) -> Identity {
    let full = product.split('/').nth(1);
    if let Some(ua) = flag {
        let metadata = metadata(ua, None, brand);
        let trace = match &metadata {
            Some(_) => json!({"source": "flag", "client_hints": "sent"}),
            None => json!({"source": "flag", "client_hints": "not_sent",
                "reason": "user_agent names no Chromium version, so no Chromium client hints are sent"}),
        };
        return Identity {
            user_agent: Some(ua.to_string()),
            metadata,
            trace,
        };
    }
    if browser_ua.contains("HeadlessChrome/") {
        let ua = browser_ua.replace("HeadlessChrome/", "Chrome/");
        let metadata = metadata(&ua, full, brand);
        return Identity {
            user_agent: Some(ua),
            trace: json!({"source": "headful_equivalent", "client_hints": if metadata.is_some() { "sent" } else { "not_sent" }}),
            metadata,
        };
    }
    Identity {
        user_agent: None,
        metadata: None,
        trace: json!({"source": "browser", "client_hints": "browser"}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADLESS: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36";

    #[test]
    fn headless_chromium_presents_its_headful_self() {
        let id = plan(HEADLESS, "Chrome/156.0.8078.114", None, None);
        assert_eq!(
            id.user_agent.as_deref(),
            Some("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36")
        );
        let m = id.metadata.unwrap();
        // What headless Chromium 156 itself reports in navigator.userAgentData.
        assert_eq!(
            m["brands"],
            json!([{"brand": "Not:A-Brand", "version": "8"}, {"brand": "Chromium", "version": "156"}])
        );
        assert_eq!(
            m["fullVersionList"],
            json!([{"brand": "Not:A-Brand", "version": "8.0.0.0"}, {"brand": "Chromium", "version": "156.0.8078.114"}])
        );
        assert_eq!(m["platform"], "Linux");
        assert_eq!(m["architecture"], "x86");
        assert_eq!(m["mobile"], false);
        assert_eq!(id.trace["source"], "headful_equivalent");
    }

    #[test]
    fn a_flag_wins_and_a_non_chromium_agent_gets_no_hints() {
        let id = plan(HEADLESS, "Chrome/156.0.8078.114", Some("curl/8.0"), None);
        assert_eq!(id.user_agent.as_deref(), Some("curl/8.0"));
        assert!(id.metadata.is_none());
        assert_eq!(id.trace["client_hints"], "not_sent");
        let id = plan(
            HEADLESS,
            "Chrome/156.0.8078.114",
            Some("Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/141.0.0.0 Safari/537.36"),
            Some("Google Chrome"),
        );
        let m = id.metadata.unwrap();
        assert_eq!(m["platform"], "Windows");
        assert_eq!(m["brands"].as_array().unwrap().len(), 3);
        assert_eq!(m["fullVersion"], "141.0.0.0");
    }

    #[test]
    fn a_headful_or_other_browser_is_left_alone() {
        let ua = HEADLESS.replace("HeadlessChrome", "Chrome");
        let id = plan(&ua, "Chrome/156.0.8078.114", None, None);
        assert!(id.user_agent.is_none() && id.metadata.is_none());
        assert_eq!(grease_brand(157).0, "Not-A.Brand");
    }
}
