//! The reqwest client for one fetch: explicit proxy only, optional extra CA, redirects
//! handled by afhttp (so every hop is recorded and cookies apply per hop).

use std::sync::OnceLock;

use url::Url;

use crate::error::AfError;
use crate::sdk::fetch::TransportOptions;

/// The clients of one fetch. A plain-HTTP hop goes through a client built without the
/// trust store: loading the system's CA certificates (about 150 files here) and parsing
/// them was most of the HTTP path's fixed cost, and no byte of it serves an `http://`
/// URL. The TLS client is built the first time a hop needs it (an `https://` URL, or an
/// `https://` proxy), at once when the fetch itself starts there.
pub struct Clients {
    transport: TransportOptions,
    plain: reqwest::Client,
    tls: OnceLock<reqwest::Client>,
}

impl Clients {
    /// Check `transport` and build what the first hop, to `first`, needs.
    pub fn new(transport: &TransportOptions, first: &Url) -> Result<Self, AfError> {
        let plain = finish(configure(transport)?.tls_built_in_root_certs(false))?;
        let clients = Clients {
            transport: transport.clone(),
            plain,
            tls: OnceLock::new(),
        };
        clients.for_url(first)?;
        Ok(clients)
    }

    /// The client for a hop to `url`.
    pub fn for_url(&self, url: &Url) -> Result<&reqwest::Client, AfError> {
        if !needs_tls(&self.transport, url) {
            return Ok(&self.plain);
        }
        if let Some(c) = self.tls.get() {
            return Ok(c);
        }
        let built = build(&self.transport)?;
        Ok(self.tls.get_or_init(|| built))
    }
}

/// Whether a hop to `url` can meet TLS: an `https://` target or an `https://` proxy.
fn needs_tls(transport: &TransportOptions, url: &Url) -> bool {
    url.scheme() != "http"
        || transport
            .proxy_url
            .as_ref()
            .is_some_and(|p| p.expose_url().scheme() == "https")
}

/// The default User-Agent.
pub fn default_user_agent() -> String {
    format!("afhttp/{}", crate::VERSION)
}

/// Build the client with the trust store. Ambient `HTTP_PROXY`/`HTTPS_PROXY` are never honoured.
fn build(transport: &TransportOptions) -> Result<reqwest::Client, AfError> {
    finish(configure(transport)?)
}

fn finish(builder: reqwest::ClientBuilder) -> Result<reqwest::Client, AfError> {
    builder
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

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn via(proxy: &str) -> TransportOptions {
        TransportOptions {
            proxy_url: Some(crate::sdk::fetch::options::parse_proxy_url(proxy).unwrap()),
            ..TransportOptions::default()
        }
    }

    #[test]
    fn only_https_targets_and_https_proxies_need_the_trust_store() {
        let none = TransportOptions::default();
        assert!(!needs_tls(&none, &url("http://127.0.0.1/a")));
        assert!(needs_tls(&none, &url("https://127.0.0.1/a")));
        assert!(!needs_tls(&via("http://127.0.0.1:1"), &url("http://x/")));
        assert!(!needs_tls(&via("socks5h://127.0.0.1:1"), &url("http://x/")));
        assert!(needs_tls(&via("https://127.0.0.1:1"), &url("http://x/")));
        assert!(needs_tls(&via("http://127.0.0.1:1"), &url("https://x/")));
    }

    #[test]
    fn a_plain_fetch_builds_no_tls_client_until_a_hop_needs_one() {
        let none = TransportOptions::default();
        let c = Clients::new(&none, &url("http://127.0.0.1/")).unwrap();
        assert!(c.tls.get().is_none());
        c.for_url(&url("https://127.0.0.1/")).unwrap();
        assert!(c.tls.get().is_some());
        let c = Clients::new(&none, &url("https://127.0.0.1/")).unwrap();
        assert!(c.tls.get().is_some());
    }
}
