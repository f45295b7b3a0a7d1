//! Mapping transport failures to stable codes.

use crate::error::{AfError, ErrorCode};

/// Map a reqwest error for `url` to a stable code; `via_proxy` adjusts the hint.
pub fn map_reqwest(err: &reqwest::Error, url: &url::Url, via_proxy: bool) -> AfError {
    let chain = source_chain(err);
    let lower = chain.to_ascii_lowercase();
    let host = url.host_str().unwrap_or("");
    if let Some(refused) = crate::sdk::egress::refusal_in(err) {
        // The refused name is the target's, or a proxy's (whose port the URL does not know).
        let port = url
            .port_or_known_default()
            .filter(|_| refused.host.eq_ignore_ascii_case(host));
        return crate::sdk::egress::denied_error(&refused.host, port, &refused.denial);
    }
    if err.is_timeout() {
        return AfError::new(
            ErrorCode::NavigationTimeout,
            format!("timed out talking to {host}: {chain}"),
        );
    }
    if lower.contains("dns error")
        || lower.contains("failed to lookup address")
        || lower.contains("name or service not known")
        || lower.contains("no address associated")
        || lower.contains("temporary failure in name resolution")
    {
        return AfError::new(
            ErrorCode::DnsResolutionFailed,
            format!("cannot resolve {host}: {chain}"),
        )
        .with_hint("check the host name; retry if the resolver is flaky");
    }
    if is_tls_failure(err) {
        return AfError::new(
            ErrorCode::TlsError,
            format!("TLS with {host} failed: {chain}"),
        )
        .with_hint(
            "set ca_cert to a PEM file to trust a private CA, or tls_insecure to skip verification",
        )
        // The field lets a front end name its own option (the CLI adds `--ca-cert`).
        .with_field("ca_cert");
    }
    let mut e = if err.is_body() || err.is_decode() {
        AfError::new(
            ErrorCode::TargetUnreachable,
            format!("the connection to {host} dropped mid-response: {chain}"),
        )
    } else {
        AfError::new(
            ErrorCode::TargetUnreachable,
            format!("cannot reach {host}: {chain}"),
        )
    };
    if via_proxy {
        e = e.with_hint("the request went through proxy_url; check that the proxy is up");
    }
    e
}

/// Whether a rustls error is anywhere in `err`'s source chain (a certificate the client
/// refused, or a handshake with something that does not speak TLS, such as a plain-HTTP
/// server answering a ClientHello). Decided by type, not by message text. An `io::Error`
/// hides the error it wraps from `source()`, so its inner error is looked at too.
pub fn is_tls_failure(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = cur {
        if e.is::<rustls::Error>() {
            return true;
        }
        if let Some(inner) = e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            if is_tls_failure(inner) {
                return true;
            }
        }
        cur = e.source();
    }
    false
}

/// An I/O error while streaming a body.
pub fn body_io(err: &std::io::Error, url: &url::Url) -> AfError {
    AfError::new(
        ErrorCode::TargetUnreachable,
        format!(
            "the connection to {} dropped mid-response: {err}",
            url.host_str().unwrap_or("")
        ),
    )
}

/// The error and its sources as one line.
pub fn source_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![err.to_string()];
    let mut cur = err.source();
    while let Some(s) = cur {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        cur = s.source();
    }
    parts.join(": ")
}
