//! An NSS certificate database that makes an inline browser trust one extra CA (`ca_cert`).
//!
//! Chromium on Linux verifies with its own root store plus the trust anchors the user added
//! to the NSS database in `$HOME/.pki/nssdb`; it has no switch that takes a CA file. So the
//! inline browser gets a private `HOME` whose database holds the given CA (and only it), made
//! with NSS's `certutil` (Debian `libnss3-tools`). The browser lives for one fetch; nothing
//! is added to any other trust store.

use std::path::Path;
use std::time::Duration;

use crate::error::{AfError, ErrorCode};

/// How long one `certutil` call may take (it only writes a few small files).
const CERTUTIL_DEADLINE: Duration = Duration::from_secs(20);

/// Create `home/.pki/nssdb` trusting every certificate of the PEM bundle `ca` as a CA for
/// TLS servers. A file without a certificate is `invalid_argument` (field `ca_cert`); no
/// `certutil` is `browser_launch_failed` with an install hint.
pub async fn trust_ca(home: &Path, ca: &Path) -> Result<(), AfError> {
    let pem = std::fs::read_to_string(ca).map_err(|e| {
        AfError::invalid(format!("ca_cert {}: cannot read ({e})", ca.display()))
            .with_field("ca_cert")
    })?;
    let certs = pem_certificates(&pem);
    if certs.is_empty() {
        return Err(AfError::invalid(format!(
            "ca_cert {}: no PEM certificate found",
            ca.display()
        ))
        .with_field("ca_cert"));
    }
    let db = home.join(".pki").join("nssdb");
    std::fs::create_dir_all(&db)
        .map_err(|e| AfError::io("create the inline browser's NSS database", &e))?;
    let db_arg = format!("sql:{}", db.display());
    certutil(&["-N", "-d", &db_arg, "--empty-password"]).await?;
    for (i, cert) in certs.iter().enumerate() {
        let file = home.join(format!("ca-{i}.pem"));
        std::fs::write(&file, cert)
            .map_err(|e| AfError::io("write the CA for the NSS database", &e))?;
        let file_arg = file.display().to_string();
        let nickname = format!("afhttp-ca-{i}");
        certutil(&[
            "-A", "-d", &db_arg, "-n", &nickname, "-t", "C,,", "-a", "-i", &file_arg,
        ])
        .await?;
    }
    Ok(())
}

/// Each `BEGIN CERTIFICATE` block of a PEM bundle, markers included.
fn pem_certificates(pem: &str) -> Vec<String> {
    const BEGIN: &str = "-----BEGIN CERTIFICATE-----";
    const END: &str = "-----END CERTIFICATE-----";
    let mut out = Vec::new();
    let mut rest = pem;
    while let Some(start) = rest.find(BEGIN) {
        let Some(len) = rest[start..].find(END) else {
            break;
        };
        let end = start + len + END.len();
        out.push(format!("{}\n", &rest[start..end]));
        rest = &rest[end..];
    }
    out
}

async fn certutil(args: &[&str]) -> Result<(), AfError> {
    let missing = |what: String| {
        AfError::new(ErrorCode::BrowserLaunchFailed, what).with_hint(
            "ca_cert on the inline browser needs NSS's certutil (Debian: apt-get install libnss3-tools)",
        )
    };
    let child = tokio::process::Command::new("certutil")
        .args(args)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = match tokio::time::timeout(CERTUTIL_DEADLINE, child).await {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => return Err(missing(format!("cannot run certutil: {e}"))),
        Err(_) => return Err(missing("certutil did not finish in time".to_string())),
    };
    if output.status.success() {
        return Ok(());
    }
    Err(AfError::invalid(format!(
        "certutil refused the ca_cert ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr).trim()
    ))
    .with_field("ca_cert"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundle_splits_into_certificates() {
        let one = "-----BEGIN CERTIFICATE-----\nAAA\n-----END CERTIFICATE-----";
        let pem = format!("junk\n{one}\n# comment\n{one}\ntrailing");
        assert_eq!(
            pem_certificates(&pem),
            vec![format!("{one}\n"), format!("{one}\n")]
        );
        assert!(pem_certificates("-----BEGIN CERTIFICATE-----\nAAA").is_empty());
    }
}
