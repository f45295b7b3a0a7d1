//! Turning text into [`Cookie`]s: the strict `--cookie` flag syntax and the lenient
//! RFC 6265 §5.2/§5.3 `Set-Cookie` storage algorithm of a user agent.

use url::Url;

use super::date::parse_cookie_date;
use super::matching::{default_path, domain_matches, is_ip_host, path_matches, request_host};
use super::{Cookie, SameSite};
use crate::error::AfError;

/// Longest cookie value `--cookie` accepts, and the `Set-Cookie` name+value limit (RFC 6265bis).
pub const MAX_VALUE_BYTES: usize = 4096;
/// Longest `Domain`/`Path` attribute value honoured (RFC 6265bis §5.6).
const MAX_ATTRIBUTE_BYTES: usize = 1024;

/// The attributes `--cookie` understands, for error messages.
const KNOWN_ATTRIBUTES: &str = "Path, Domain, Secure, HttpOnly, SameSite, Expires, Max-Age";

/// Parse a `--cookie 'name=value[; Path=/; Domain=...; Secure; HttpOnly; SameSite=Lax;
/// Expires=...; Max-Age=N]'` value for a request to `url`.
///
/// Everything questionable is `invalid_argument`: control characters anywhere, a malformed or
/// separator-bearing name, a value over 4096 bytes, unknown attributes or SameSite values,
/// unparseable dates, a Domain the URL host does not domain-match (or a public suffix), a Path
/// the URL path does not path-match, and an expiry already in the past. Messages never echo
/// the value. A Secure cookie for an `http://` URL is accepted; it is skipped when sending.
pub fn parse_cli_cookie(spec: &str, url: &Url, now_unix: i64) -> Result<Cookie, AfError> {
    if let Some(c) = spec.chars().find(|c| c.is_control()) {
        return Err(AfError::invalid(format!(
            "cookie contains the control character U+{:04X}; control characters (CR, LF, \
             NUL, DEL, ...) are not allowed anywhere in a cookie",
            u32::from(c)
        )));
    }
    let host = request_host(url)
        .filter(|_| matches!(url.scheme(), "http" | "https" | "ws" | "wss"))
        .ok_or_else(|| AfError::invalid("cookie needs an http(s) URL with a host"))?;
    let (pair, attrs) = spec.split_once(';').unwrap_or((spec, ""));
    let (name, value) = pair.split_once('=').ok_or_else(|| {
        AfError::invalid("cookie must start with name=value (no '=' found)")
            .with_hint("example: 'session=abc123; Path=/'")
    })?;
    let (name, value) = (trim_wsp(name), trim_wsp(value));
    if name.is_empty() {
        return Err(AfError::invalid("cookie has an empty name"));
    }
    if let Some(c) = name.chars().find(|&c| !is_token_char(c)) {
        return Err(AfError::invalid(format!(
            "cookie name {name:?} contains {c:?}; names may not contain whitespace, \
             separators ()<>@,;:\\\"/[]?={{}} or non-ASCII characters"
        )));
    }
    if value.len() > MAX_VALUE_BYTES {
        return Err(AfError::invalid(format!(
            "cookie {name} has a {}-byte value; the limit is {MAX_VALUE_BYTES} bytes",
            value.len()
        )));
    }

    let mut a = Attributes::default();
    for av in attrs.split(';') {
        let (key, val, has_value) = split_attribute(av);
        if key.is_empty() && !has_value {
            continue; // tolerate "a=b;" and "a=b; ; Path=/"
        }
        let bad = |what: &str| AfError::invalid(format!("cookie {name}: {what}"));
        match key.to_ascii_lowercase().as_str() {
            "expires" => {
                let at = parse_cookie_date(val)
                    .ok_or_else(|| bad(&format!("cannot parse Expires date {val:?}")))?;
                a.expires = Some(at);
            }
            "max-age" => {
                let delta = parse_max_age(val)
                    .ok_or_else(|| bad(&format!("Max-Age {val:?} is not an integer")))?;
                a.max_age = Some(delta);
            }
            "domain" if val.is_empty() => return Err(bad("Domain is empty")),
            "domain" => a.domain = Some(val.to_string()),
            "path" if !val.starts_with('/') => {
                return Err(bad(&format!("Path {val:?} must start with '/'")))
            }
            "path" => a.path = Some(val.to_string()),
            "secure" | "httponly" if has_value => {
                return Err(bad(&format!("{key} takes no value")))
            }
            "secure" => a.secure = true,
            "httponly" => a.http_only = true,
            "samesite" => {
                a.same_site = Some(SameSite::parse(val).ok_or_else(|| {
                    bad(&format!(
                        "SameSite {val:?} is not one of Strict, Lax or None"
                    ))
                })?);
            }
            _ => {
                return Err(bad(&format!(
                    "unknown attribute {key:?} (known: {KNOWN_ATTRIBUTES})"
                )))
            }
        }
    }

    let (domain, host_only) = resolve_domain(&host, a.domain.as_deref()).map_err(|refusal| {
        let attr = a.domain.as_deref().unwrap_or_default();
        let why = match refusal {
            DomainRefusal::Unparseable => format!("Domain {attr:?} is not a valid host name"),
            DomainRefusal::PublicSuffix => {
                format!("Domain {attr:?} is a public suffix; cookies cannot be scoped to it")
            }
            DomainRefusal::Mismatch => {
                format!("Domain {attr:?} does not domain-match the URL host {host}")
            }
        };
        AfError::invalid(format!("cookie {name}: {why}"))
            .with_hint("omit Domain to scope the cookie to the URL host")
    })?;
    let path = match a.path.take() {
        Some(p) if !path_matches(url.path(), &p) => {
            return Err(AfError::invalid(format!(
                "cookie {name}: Path {p:?} does not path-match the URL path {:?}",
                url.path()
            ))
            .with_hint("omit Path, or use a prefix of the URL path such as Path=/"));
        }
        Some(p) => p,
        None => default_path(url),
    };
    let expires_at_unix = a.expiry(now_unix);
    if expires_at_unix.is_some_and(|at| at <= now_unix) {
        return Err(AfError::invalid(format!(
            "cookie {name} is already expired (Expires/Max-Age in the past), so it would \
             never be sent"
        )));
    }
    Ok(Cookie {
        name: name.to_string(),
        value: value.to_string(),
        domain,
        host_only,
        path,
        secure: a.secure,
        http_only: a.http_only,
        same_site: a.same_site,
        expires_at_unix,
        created_at_unix: now_unix,
    })
}

/// Parse one `Set-Cookie` header received for `request_url` (RFC 6265 §5.2 and §5.3).
///
/// `None` means the user agent must ignore the header: no `=`, an empty name, control
/// characters, name+value over 4096 bytes, a Domain the host does not domain-match or that is a
/// public suffix, a non-http(s) URL, a Secure cookie from an insecure origin, or a broken
/// `__Secure-`/`__Host-` prefix (the last three as RFC 6265bis and browsers do). A cookie whose
/// Max-Age is zero/negative or whose Expires is past comes back with `expires_at_unix` at or
/// before `now_unix`: storing it deletes the matching jar entry.
pub fn parse_set_cookie(header: &str, request_url: &Url, now_unix: i64) -> Option<Cookie> {
    // RFC 6265bis §5.6: control characters other than HTAB void the whole header.
    if header.chars().any(|c| c.is_control() && c != '\t') {
        return None;
    }
    let secure_origin = match request_url.scheme() {
        "https" | "wss" => true,
        "http" | "ws" => false,
        _ => return None,
    };
    let host = request_host(request_url)?;
    let (pair, attrs) = header.split_once(';').unwrap_or((header, ""));
    let (name, value) = pair.split_once('=')?;
    let (name, value) = (trim_wsp(name), trim_wsp(value));
    if name.is_empty() || name.len() + value.len() > MAX_VALUE_BYTES {
        return None;
    }

    // Later attributes override earlier ones (§5.3: "the last attribute ... with name").
    let mut a = Attributes::default();
    for av in attrs.split(';') {
        let (key, val, _) = split_attribute(av);
        match key.to_ascii_lowercase().as_str() {
            "expires" => {
                if let Some(at) = parse_cookie_date(val) {
                    a.expires = Some(at);
                }
            }
            "max-age" => {
                if let Some(delta) = parse_max_age(val) {
                    a.max_age = Some(delta);
                }
            }
            // An empty Domain is ignored (§5.2.3 SHOULD); oversized ones too (6265bis).
            "domain" if !val.is_empty() && val.len() <= MAX_ATTRIBUTE_BYTES => {
                a.domain = Some(val.to_string());
            }
            "path" if val.len() <= MAX_ATTRIBUTE_BYTES => {
                // §5.2.4: a Path not starting with '/' means the default path.
                a.path = val.starts_with('/').then(|| val.to_string());
            }
            "secure" => a.secure = true,
            "httponly" => a.http_only = true,
            // Unknown SameSite values mean "unset" (6265bis), still overriding earlier ones.
            "samesite" => a.same_site = SameSite::parse(val),
            _ => {}
        }
    }

    let (domain, host_only) = resolve_domain(&host, a.domain.as_deref()).ok()?;
    let path = a.path.take().unwrap_or_else(|| default_path(request_url));
    if a.secure && !secure_origin {
        return None;
    }
    if has_prefix(name, "__Secure-") && !a.secure {
        return None;
    }
    if has_prefix(name, "__Host-") && !(a.secure && host_only && path == "/") {
        return None;
    }
    Some(Cookie {
        name: name.to_string(),
        value: value.to_string(),
        domain,
        host_only,
        path,
        secure: a.secure,
        http_only: a.http_only,
        same_site: a.same_site,
        expires_at_unix: a.expiry(now_unix),
        created_at_unix: now_unix,
    })
}

/// Attribute values collected while parsing; later ones replace earlier ones.
#[derive(Default)]
struct Attributes {
    expires: Option<i64>,
    max_age: Option<i64>,
    domain: Option<String>,
    path: Option<String>,
    secure: bool,
    http_only: bool,
    same_site: Option<SameSite>,
}

impl Attributes {
    /// §5.3 step 3: Max-Age wins over Expires; Max-Age <= 0 means "already expired".
    fn expiry(&self, now_unix: i64) -> Option<i64> {
        match self.max_age {
            Some(delta) if delta <= 0 => Some(now_unix.saturating_sub(1).min(0)),
            Some(delta) => Some(now_unix.saturating_add(delta)),
            None => self.expires,
        }
    }
}

/// Why a Domain attribute cannot scope a cookie.
enum DomainRefusal {
    Unparseable,
    PublicSuffix,
    Mismatch,
}

/// §5.3 steps 4–6: the cookie's domain and host-only flag for request host `host`.
///
/// IP hosts and a Domain equal to a public-suffix host yield host-only cookies, as browsers do.
fn resolve_domain(host: &str, attr: Option<&str>) -> Result<(String, bool), DomainRefusal> {
    let Some(attr) = attr else {
        return Ok((host.to_string(), true));
    };
    let bare = attr.strip_prefix('.').unwrap_or(attr);
    let domain = url::Host::parse(bare)
        .map_err(|_| DomainRefusal::Unparseable)?
        .to_string();
    if is_ip_host(host) || is_ip_host(&domain) {
        return if domain == host {
            Ok((domain, true))
        } else {
            Err(DomainRefusal::Mismatch)
        };
    }
    if psl::suffix_str(&domain) == Some(domain.as_str()) {
        return if domain == host {
            Ok((domain, true))
        } else {
            Err(DomainRefusal::PublicSuffix)
        };
    }
    if !domain_matches(host, &domain) {
        return Err(DomainRefusal::Mismatch);
    }
    Ok((domain, false))
}

/// §5.2.2 Max-Age syntax: an optional `-` then digits only; huge values saturate.
fn parse_max_age(val: &str) -> Option<i64> {
    let digits = val.strip_prefix('-').unwrap_or(val);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(val.parse::<i64>().unwrap_or(if val.starts_with('-') {
        i64::MIN
    } else {
        i64::MAX
    }))
}

/// Split `key[=value]` and trim both; the flag says whether an `=` was present.
fn split_attribute(av: &str) -> (&str, &str, bool) {
    match av.split_once('=') {
        Some((k, v)) => (trim_wsp(k), trim_wsp(v), true),
        None => (trim_wsp(av), "", false),
    }
}

/// Trim the RFC 6265 WSP set (space and horizontal tab) only.
fn trim_wsp(s: &str) -> &str {
    s.trim_matches(|c| c == ' ' || c == '\t')
}

/// RFC 2616 token characters: visible ASCII minus separators.
fn is_token_char(c: char) -> bool {
    c.is_ascii_graphic() && !"()<>@,;:\\\"/[]?={}".contains(c)
}

/// Case-insensitive cookie-name prefix test (RFC 6265bis §4.1.3).
fn has_prefix(name: &str, prefix: &str) -> bool {
    name.get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
