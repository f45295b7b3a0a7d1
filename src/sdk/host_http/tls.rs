//! rustls for `https://` and `wss://` host endpoints: the bundled web roots plus the system
//! store (`SSL_CERT_FILE` / `SSL_CERT_DIR` honoured), as the earlier reqwest client trusted.
//! The configuration is built once per process, and only when a TLS endpoint is used, so
//! plain and unix-socket calls never load the system store.

use std::sync::{Arc, OnceLock};

use rustls::pki_types::ServerName;
use rustls::ClientConfig;
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

fn config() -> Result<Arc<ClientConfig>, std::io::Error> {
    static CONFIG: OnceLock<Result<Arc<ClientConfig>, String>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let mut roots = rustls::RootCertStore::empty();
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            // Unreadable system certificates are skipped, as a browser would.
            roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let mut config = ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map_err(|e| e.to_string())?
                .with_root_certificates(roots)
                .with_no_client_auth();
            config.alpn_protocols = vec![b"http/1.1".to_vec()];
            Ok(Arc::new(config))
        })
        .clone()
        .map_err(std::io::Error::other)
}

/// The TLS handshake with `host` over `tcp`.
pub(super) async fn handshake(
    host: &str,
    tcp: TcpStream,
) -> Result<TlsStream<TcpStream>, std::io::Error> {
    let name = ServerName::try_from(host.to_string()).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{host:?} is not a TLS server name: {e}"),
        )
    })?;
    TlsConnector::from(config()?).connect(name, tcp).await
}

/// The rustls refusal inside `e`, if that is what failed.
pub(super) fn rustls_error(e: &std::io::Error) -> Option<&rustls::Error> {
    e.get_ref()?.downcast_ref::<rustls::Error>()
}
