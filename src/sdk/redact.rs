//! Redaction of credential-bearing headers and URL userinfo in network logs.

use crate::envelope::REDACTED;

/// Whether a header carries credentials and is redacted by default.
pub fn is_sensitive_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    matches!(
        n.as_str(),
        "cookie" | "set-cookie" | "authorization" | "proxy-authorization" | "x-api-key" | "api-key"
    ) || n.contains("token")
        || n.contains("secret")
        || n.contains("password")
}

/// Header pairs with sensitive values replaced by `"***"` (unless `redact` is false).
pub fn headers(
    pairs: &[(String, String)],
    redact: bool,
) -> serde_json::Map<String, serde_json::Value> {
    let mut out = serde_json::Map::new();
    for (name, value) in pairs {
        let value = if redact && is_sensitive_header(name) {
            REDACTED.to_string()
        } else {
            value.clone()
        };
        // Repeated headers (Set-Cookie) are joined with newlines, as CDP reports them.
        match out.get_mut(name) {
            Some(serde_json::Value::String(existing)) => {
                existing.push('\n');
                existing.push_str(&value);
            }
            _ => {
                out.insert(name.clone(), serde_json::Value::String(value));
            }
        }
    }
    out
}

/// A URL with any password in its userinfo replaced by `***`; also when the text does not
/// parse as a URL (what an error message about a malformed URL quotes).
pub fn url(raw: &str) -> String {
    match url::Url::parse(raw) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some(REDACTED));
            u.to_string()
        }
        Ok(_) => raw.to_string(),
        Err(_) => unparsed_url(raw),
    }
}

/// [`url`] for text that is not a URL: the authority's userinfo (between `://` and the last
/// `@` before the path) keeps its user, and its password becomes `***`.
fn unparsed_url(raw: &str) -> String {
    let Some(scheme_end) = raw.find("://").map(|i| i + 3) else {
        return raw.to_string();
    };
    let rest = &raw[scheme_end..];
    let authority_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some(at) = rest[..authority_len].rfind('@') else {
        return raw.to_string();
    };
    match rest[..at].find(':') {
        Some(colon) => format!(
            "{}{}:{REDACTED}{}",
            &raw[..scheme_end],
            &rest[..colon],
            &rest[at..]
        ),
        None => raw.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sensitive_names() {
        for n in [
            "Cookie",
            "set-cookie",
            "Authorization",
            "X-CSRF-Token",
            "x-client-secret",
        ] {
            assert!(is_sensitive_header(n), "{n}");
        }
        for n in ["content-type", "accept", "user-agent"] {
            assert!(!is_sensitive_header(n), "{n}");
        }
    }

    #[test]
    fn headers_redacted_and_joined() {
        let pairs = vec![
            ("set-cookie".to_string(), "a=1".to_string()),
            ("set-cookie".to_string(), "b=2".to_string()),
            ("content-type".to_string(), "text/html".to_string()),
        ];
        let m = headers(&pairs, true);
        assert_eq!(m["set-cookie"], "***\n***");
        assert_eq!(m["content-type"], "text/html");
        assert_eq!(headers(&pairs, false)["set-cookie"], "a=1\nb=2");
    }

    #[test]
    fn url_password_redacted() {
        assert_eq!(url("http://u:pw@h/x"), "http://u:***@h/x");
        assert_eq!(url("http://h/x"), "http://h/x");
        // Not a URL at all (a bad port, an unclosed bracket): the password still goes.
        assert_eq!(url("http://u:pw@h:99999/x"), "http://u:***@h:99999/x");
        assert_eq!(url("socks5://u:p@ss:w@[::1"), "socks5://u:***@[::1");
        assert_eq!(url("http://u@[::1"), "http://u@[::1");
        assert_eq!(url("no scheme u:pw@h"), "no scheme u:pw@h");
    }
}
