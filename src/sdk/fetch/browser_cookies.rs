//! The browser's cookies around a browser fetch: read back for the jar merge, and the
//! fetch's own `cookies` (sent for this fetch only) taken out of a browser that outlives it.

use serde_json::{json, Value};

use crate::error::AfError;
use crate::sdk::cdp::CdpConnection;
use crate::sdk::cookies::{Cookie, SameSite};
use crate::sdk::fetch::FetchRequest;

/// Whether the browser's cookie `c` is one of the fetch's own `cookies` as installed: those
/// are sent for this fetch only and never stored, as on the HTTP path. One the page or a
/// response changed (another value) is the site's, and is stored.
pub(super) fn is_request_cookie(c: &Cookie, own: &[Cookie]) -> bool {
    own.iter().any(|o| {
        o.name == c.name
            && o.value == c.value
            && o.domain
                .trim_start_matches('.')
                .eq_ignore_ascii_case(&c.domain)
    })
}

/// Cookies the browser holds that apply to `final_url`'s host (for the jar merge-back).
pub(super) async fn read_browser_cookies(
    conn: &CdpConnection,
    context: Option<&str>,
    final_url: &str,
    timeout: std::time::Duration,
) -> Result<Vec<Cookie>, AfError> {
    let url = url::Url::parse(final_url).map_err(|e| AfError::invalid(e.to_string()))?;
    let host = url.host_str().unwrap_or("").to_ascii_lowercase();
    let params = match context {
        Some(id) => json!({"browserContextId": id}),
        None => json!({}),
    };
    let v = conn
        .send(None, "Storage.getCookies", params, timeout)
        .await?;
    let now = crate::sdk::cookies::now_unix();
    Ok(v.get("cookies")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|c| from_cdp(c, now))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
        .into_iter()
        .filter(|c| crate::sdk::cookies::matching::domain_matches(&host, &c.domain))
        .collect())
}

fn from_cdp(c: &Value, now: i64) -> Option<Cookie> {
    let s = |k: &str| c.get(k).and_then(Value::as_str).map(String::from);
    let raw_domain = s("domain")?;
    let host_only = !raw_domain.starts_with('.');
    let expires = c
        .get("expires")
        .and_then(Value::as_f64)
        .filter(|e| *e > 0.0 && c.get("session") != Some(&json!(true)));
    Some(Cookie {
        name: s("name")?,
        value: s("value").unwrap_or_default(),
        domain: raw_domain.trim_start_matches('.').to_ascii_lowercase(),
        host_only,
        path: s("path").unwrap_or_else(|| "/".into()),
        secure: c.get("secure").and_then(Value::as_bool).unwrap_or(false),
        http_only: c.get("httpOnly").and_then(Value::as_bool).unwrap_or(false),
        same_site: s("sameSite").and_then(|v| SameSite::parse(&v)),
        expires_at_unix: expires.map(|e| e as i64),
        created_at_unix: now,
    })
}

/// Expire the fetch's own `cookies` in a browser that serves other fetches (a host's, not
/// this fetch's inline or isolated one), where they would otherwise be sent again. Only
/// those still as installed go: a value the site set since is the site's cookie.
pub(super) async fn forget_request_cookies(
    conn: &CdpConnection,
    context: Option<&str>,
    req: &FetchRequest,
    timeout: std::time::Duration,
) {
    if req.cookies.is_empty() {
        return;
    }
    let scope = match context {
        Some(id) => json!({"browserContextId": id}),
        None => json!({}),
    };
    let Ok(v) = conn
        .send(None, "Storage.getCookies", scope.clone(), timeout)
        .await
    else {
        return;
    };
    let now = crate::sdk::cookies::now_unix();
    let expired: Vec<Value> = v
        .get("cookies")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| from_cdp(c, now))
        .filter(|c| is_request_cookie(c, &req.cookies))
        .map(|c| {
            let mut p = crate::sdk::browser::navigate::cookie_param(&c, req);
            // An expiry in the past deletes the stored cookie of that name, domain and path.
            p["expires"] = json!(1);
            p
        })
        .collect();
    if expired.is_empty() {
        return;
    }
    let mut params = scope;
    params["cookies"] = json!(expired);
    let _ = conn.send(None, "Storage.setCookies", params, timeout).await;
}
