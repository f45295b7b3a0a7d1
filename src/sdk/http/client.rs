//! The reqwest client for one fetch: explicit proxy only, optional extra CA, redirects
//! handled by afhttp (so every hop is recorded and cookies apply per hop).

use crate::error::AfError;
use crate::sdk::fetch::TransportOptions;

/// The default User-Agent.
pub fn default_user_agent() -> String {
    format!("afhttp/{}", crate::VERSION)
}

/// Build the client. Ambient `HTTP_PROXY`/`HTTPS_PROXY` are never honoured.
pub fn build(transport: &TransportOptions) -> Result<reqwest::Client, AfError> {
    configure(transport)?
        .build()
        .map_err(|e| AfError::invalid(format!("cannot configure the HTTP client: {e}")))
}

/// Refuse what [`build`] would refuse (proxy URL, CA file) without building the client:
/// building loads the system trust store, which a fetch that goes straight to a browser
/// never uses.
pub fn check(transport: &TransportOptions) -> Result<(), AfError> {
    configure(transport).map(drop)
}

fn configure(transport: &TransportOptions) -> Result<reqwest::ClientBuilder, AfError> {
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .user_agent(default_user_agent())
        .gzip(true)
        .brotli(true)
        .deflate(true)
        .zstd(true)
        .tcp_nodelay(true)
        .pool_max_idle_per_host(0);
    if let Some(proxy) = &transport.proxy_url {
        let p = reqwest::Proxy::all(proxy.expose_url().as_str())
            .map_err(|e| AfError::invalid(format!("proxy_url: {e}")).with_field("proxy_url"))?;
        builder = builder.proxy(p);
    }
    if let Some(path) = &transport.ca_cert {
        let pem = std::fs::read(path).map_err(|e| {
            AfError::invalid(format!("ca_cert {}: cannot read ({e})", path.display()))
                .with_field("ca_cert")
        })?;
        let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
            AfError::invalid(format!(
                "ca_cert {}: not a PEM certificate ({e})",
                path.display()
            ))
            .with_field("ca_cert")
        })?;
        if certs.is_empty() {
            return Err(AfError::invalid(format!(
                "ca_cert {}: no PEM certificate found",
                path.display()
            ))
            .with_field("ca_cert"));
        }
        for cert in certs {
            builder = builder.add_root_certificate(cert);
        }
    }
    if transport.tls_insecure {
        builder = builder.danger_accept_invalid_certs(true);
    }
    if let Some(policy) = &transport.egress {
        // Every name the client resolves (the target, or a proxy) passes the policy, and
        // the client connects only to the addresses that did.
        let resolver = super::guard::PolicyResolver::new(policy.clone());
        builder = builder.dns_resolver(std::sync::Arc::new(resolver));
    }
    Ok(builder)
}
