//! Redacted view of a profile's cookie jar for `afhttp profile cookies`.
//!
//! The jar format is owned by the SDK cookie code; this reads only the fields it reports and
//! never exposes a cookie value, only its length.

use std::fs;
use std::path::Path;

use serde::Deserialize;

use super::metadata::unix_to_rfc3339;
use crate::error::{AfError, ErrorCode};

#[derive(Deserialize)]
struct JarFile {
    schema_version: u32,
    #[serde(default)]
    cookies: Vec<JarCookie>,
}

#[derive(Deserialize)]
struct JarCookie {
    name: String,
    #[serde(default)]
    value: String,
    domain: String,
    #[serde(default)]
    host_only: bool,
    #[serde(default = "root_path")]
    path: String,
    #[serde(default)]
    secure: bool,
    #[serde(default)]
    http_only: bool,
    #[serde(default)]
    same_site: Option<String>,
    #[serde(default)]
    expires_at_unix: Option<i64>,
}

fn root_path() -> String {
    "/".to_string()
}

/// One cookie without its value.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RedactedCookie {
    /// Cookie name.
    pub name: String,
    /// Domain (without a leading dot).
    pub domain: String,
    /// Path.
    pub path: String,
    /// Sent only to the exact host that set it.
    pub host_only: bool,
    /// Sent only over https.
    pub secure: bool,
    /// Hidden from page scripts.
    pub http_only: bool,
    /// `Strict`, `Lax`, `None`, or null when unset.
    pub same_site: Option<String>,
    /// Expiry, or null for a session cookie.
    pub expires_at_rfc3339: Option<String>,
    /// Length of the value in bytes (the value itself is never shown).
    pub value_bytes: usize,
}

/// The redacted cookies of the jar at `jar_path`: `Ok(None)` when there is no jar,
/// `io_error` when it is unreadable or not a jar this build understands.
pub fn redacted_cookies(jar_path: &Path) -> Result<Option<Vec<RedactedCookie>>, AfError> {
    let bytes = match fs::read(jar_path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(AfError::io(format_args!("read {}", jar_path.display()), &e)),
    };
    // The serde error can quote input, so it is not included: it might contain a value.
    let jar: JarFile = serde_json::from_slice(&bytes).map_err(|e| {
        AfError::new(
            ErrorCode::IoError,
            format!(
                "{} is not a valid cookie jar (line {}, column {})",
                jar_path.display(),
                e.line(),
                e.column()
            ),
        )
    })?;
    if jar.schema_version != 1 {
        return Err(AfError::new(
            ErrorCode::IoError,
            format!(
                "{} has cookie jar schema_version {}, this afhttp reads 1",
                jar_path.display(),
                jar.schema_version
            ),
        ));
    }
    Ok(Some(
        jar.cookies
            .into_iter()
            .map(|c| RedactedCookie {
                value_bytes: c.value.len(),
                name: c.name,
                domain: c.domain,
                path: c.path,
                host_only: c.host_only,
                secure: c.secure,
                http_only: c.http_only,
                same_site: c.same_site,
                expires_at_rfc3339: c.expires_at_unix.and_then(unix_to_rfc3339),
            })
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_never_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let jar = tmp.path().join("cookies.jar.json");
        assert!(redacted_cookies(&jar).unwrap().is_none());
        fs::write(
            &jar,
            r#"{"schema_version":1,"cookies":[
              {"name":"sid","value":"s3cr3t-value","domain":"example.com","host_only":true,
               "path":"/","secure":true,"http_only":true,"same_site":"Lax",
               "expires_at_unix":1893456000,"created_at_unix":1700000000},
              {"name":"pref","value":"x","domain":"example.com","host_only":false,
               "path":"/a","secure":false,"http_only":false,"created_at_unix":1700000000}]}"#,
        )
        .unwrap();
        let got = redacted_cookies(&jar).unwrap().unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].value_bytes, 12);
        assert_eq!(
            got[0].expires_at_rfc3339.as_deref(),
            Some("2030-01-01T00:00:00Z")
        );
        assert_eq!(got[1].expires_at_rfc3339, None);
        assert!(!serde_json::to_string(&got).unwrap().contains("s3cr3t"));

        fs::write(
            &jar,
            br#"{"schema_version":1,"cookies":[{"name":"a","value":"s3cr3t"#,
        )
        .unwrap();
        let err = redacted_cookies(&jar).unwrap_err();
        assert_eq!(err.code, ErrorCode::IoError);
        assert!(!err.message.contains("s3cr3t"));
    }
}
