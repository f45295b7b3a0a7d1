//! Chaining the egress proxy to a `--proxy-url`: an HTTP proxy (CONNECT, or absolute-form
//! requests), the same over TLS (`https://`), or a SOCKS5 proxy.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use rustls::pki_types::ServerName;
use rustls::ClientConfig;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::error::AfError;

/// A byte stream to the proxy or through it: plain TCP, or TLS to an `https://` proxy.
pub(super) trait ProxyIo: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> ProxyIo for T {}
/// An owned [`ProxyIo`].
pub(super) type ProxyStream = Box<dyn ProxyIo>;

/// TLS to an `https://` proxy: its name and the roots it is checked against.
#[derive(Clone)]
pub struct ProxyTls {
    name: ServerName<'static>,
    config: Arc<ClientConfig>,
}

/// How long reaching the upstream proxy and its answer may take.
const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(15);

/// The proxy the egress proxy forwards through.
#[derive(Clone)]
pub enum Upstream {
    /// `http://[user:pass@]host:port`, or `https://` (then `tls` is set).
    Http {
        /// `host:port` of the proxy.
        authority: String,
        /// `Basic …` credentials from the URL's userinfo.
        auth: Option<String>,
        /// TLS to the proxy itself, for `https://`.
        tls: Option<ProxyTls>,
    },
    /// `socks5://` (names resolved here) or `socks5h://` (names resolved by the proxy).
    Socks5 {
        /// `host:port` of the proxy.
        authority: String,
        /// Username and password from the URL's userinfo.
        auth: Option<(String, String)>,
        /// Whether the proxy resolves names (`socks5h`).
        remote_dns: bool,
    },
}

impl std::fmt::Debug for Upstream {
    // Never print credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Upstream::Http {
                authority,
                tls: Some(_),
                ..
            } => write!(f, "Https({authority})"),
            Upstream::Http { authority, .. } => write!(f, "Http({authority})"),
            Upstream::Socks5 { authority, .. } => write!(f, "Socks5({authority})"),
        }
    }
}

/// Where to connect through the upstream: the checked address, or the name when this host
/// could not resolve it (the upstream's own network then decides).
pub(super) enum Dest<'a> {
    Addr(std::net::SocketAddr),
    Name(&'a str, u16),
}

impl Upstream {
    /// Parse a `--proxy-url` for chaining; an `https://` proxy's certificate is checked
    /// against the web roots, the system store and `extra_ca` (a PEM file, the fetch's
    /// `--ca-cert`).
    pub fn parse(raw: &str, extra_ca: Option<&Path>) -> Result<Upstream, AfError> {
        let secret = crate::sdk::fetch::options::parse_proxy_url(raw)?;
        let url = secret.expose_url();
        let host = url.host_str().unwrap_or_default();
        let creds = (!url.username().is_empty()).then(|| {
            (
                percent_decode(url.username()),
                percent_decode(url.password().unwrap_or_default()),
            )
        });
        let basic = |(u, p): (String, String)| {
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"))
            )
        };
        match url.scheme() {
            "http" => Ok(Upstream::Http {
                authority: format!("{host}:{}", url.port().unwrap_or(80)),
                auth: creds.map(basic),
                tls: None,
            }),
            "https" => Ok(Upstream::Http {
                authority: format!("{host}:{}", url.port().unwrap_or(443)),
                auth: creds.map(basic),
                tls: Some(proxy_tls(
                    host.trim_start_matches('[').trim_end_matches(']'),
                    extra_ca,
                )?),
            }),
            "socks5" | "socks5h" => Ok(Upstream::Socks5 {
                authority: format!("{host}:{}", url.port().unwrap_or(1080)),
                auth: creds,
                remote_dns: url.scheme() == "socks5h",
            }),
            other => Err(AfError::invalid(format!(
                "--proxy-url {other}:// cannot be chained behind the egress policy"
            ))
            .with_hint(
                "use an http://, https:// or socks5:// proxy, or run without --egress-policy",
            )),
        }
    }

    /// Whether a name this host cannot resolve may still be handed to the upstream.
    pub(super) fn resolves_names(&self) -> bool {
        !matches!(
            self,
            Upstream::Socks5 {
                remote_dns: false,
                ..
            }
        )
    }

    /// An HTTP upstream's `Proxy-Authorization` value.
    pub(super) fn http_auth(&self) -> Option<&str> {
        match self {
            Upstream::Http { auth, .. } => auth.as_deref(),
            Upstream::Socks5 { .. } => None,
        }
    }

    /// A connection to the proxy itself (TLS already done for an `https://` proxy).
    pub(super) async fn connect_proxy(&self) -> std::io::Result<ProxyStream> {
        let (authority, tls) = match self {
            Upstream::Http { authority, tls, .. } => (authority, tls.as_ref()),
            Upstream::Socks5 { authority, .. } => (authority, None),
        };
        let tcp = timed(TcpStream::connect(authority.as_str())).await?;
        // Small request/response heads: no Nagle delay towards the proxy either.
        let _ = tcp.set_nodelay(true);
        match tls {
            None => Ok(Box::new(tcp)),
            Some(t) => {
                let connector = tokio_rustls::TlsConnector::from(t.config.clone());
                Ok(Box::new(
                    timed(connector.connect(t.name.clone(), tcp)).await?,
                ))
            }
        }
    }

    /// A byte stream to `dest` through the proxy (HTTP CONNECT, or SOCKS5 CONNECT).
    pub(super) async fn tunnel(&self, dest: &Dest<'_>) -> std::io::Result<ProxyStream> {
        let mut s = self.connect_proxy().await?;
        match self {
            Upstream::Http { auth, .. } => {
                let target = match dest {
                    Dest::Addr(a) => a.to_string(),
                    Dest::Name(h, p) => format!("{h}:{p}"),
                };
                let mut head = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n");
                if let Some(a) = auth {
                    head.push_str(&format!("Proxy-Authorization: {a}\r\n"));
                }
                head.push_str("\r\n");
                s.write_all(head.as_bytes()).await?;
                let answer = timed(read_head(&mut s)).await?;
                let ok = answer
                    .split_whitespace()
                    .nth(1)
                    .is_some_and(|code| code.starts_with('2'));
                if !ok {
                    return Err(refused("the upstream proxy refused the tunnel"));
                }
            }
            Upstream::Socks5 { auth, .. } => timed(socks5(&mut s, auth.as_ref(), dest)).await?,
        }
        Ok(s)
    }
}

/// The TLS configuration for an `https://` proxy named `host`.
fn proxy_tls(host: &str, extra_ca: Option<&Path>) -> Result<ProxyTls, AfError> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::CertificateDer;
    let name = ServerName::try_from(host.to_string()).map_err(|e| {
        AfError::invalid(format!(
            "proxy_url host {host:?} is not a TLS server name: {e}"
        ))
        .with_field("proxy_url")
    })?;
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    // Unreadable system certificates are skipped, as a browser would.
    roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    if let Some(path) = extra_ca {
        let bad = |e: &dyn std::fmt::Display| {
            AfError::invalid(format!("ca_cert {}: {e}", path.display())).with_field("ca_cert")
        };
        let certs = CertificateDer::pem_file_iter(path)
            .map_err(|e| bad(&e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| bad(&e))?;
        let (added, _) = roots.add_parsable_certificates(certs);
        if added == 0 {
            return Err(bad(&"no certificate in the file"));
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| AfError::invalid(format!("TLS to the proxy: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(ProxyTls {
        name,
        config: Arc::new(config),
    })
}

/// Decode `%XX` escapes (userinfo as the URL parser keeps it).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b[i], hex) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

async fn timed<T>(f: impl std::future::Future<Output = std::io::Result<T>>) -> std::io::Result<T> {
    tokio::time::timeout(UPSTREAM_TIMEOUT, f)
        .await
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))?
}

fn refused(why: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::ConnectionRefused, why.to_string())
}

/// Read an HTTP response head byte by byte (nothing past it may be consumed: the tunnel's
/// first bytes follow).
async fn read_head(s: &mut ProxyStream) -> std::io::Result<String> {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > 16 * 1024 {
            return Err(refused("the upstream proxy's answer is too long"));
        }
        head.push(s.read_u8().await?);
    }
    Ok(String::from_utf8_lossy(&head).into_owned())
}

/// The SOCKS5 handshake (RFC 1928, RFC 1929 for username/password) and CONNECT.
async fn socks5(
    s: &mut ProxyStream,
    auth: Option<&(String, String)>,
    dest: &Dest<'_>,
) -> std::io::Result<()> {
    let method = if auth.is_some() { 2 } else { 0 };
    s.write_all(&[5, 1, method]).await?;
    let mut reply = [0u8; 2];
    s.read_exact(&mut reply).await?;
    if reply != [5, method] {
        return Err(refused(
            "the SOCKS5 proxy refused the authentication method",
        ));
    }
    if let Some((user, pass)) = auth {
        let (u, p) = (user.as_bytes(), pass.as_bytes());
        if u.len() > 255 || p.len() > 255 {
            return Err(refused("SOCKS5 credentials are too long"));
        }
        let mut msg = vec![1, u.len() as u8];
        msg.extend_from_slice(u);
        msg.push(p.len() as u8);
        msg.extend_from_slice(p);
        s.write_all(&msg).await?;
        s.read_exact(&mut reply).await?;
        if reply[1] != 0 {
            return Err(refused("the SOCKS5 proxy refused the credentials"));
        }
    }
    let mut req = vec![5, 1, 0];
    let port = match dest {
        Dest::Addr(std::net::SocketAddr::V4(a)) => {
            req.push(1);
            req.extend_from_slice(&a.ip().octets());
            a.port()
        }
        Dest::Addr(std::net::SocketAddr::V6(a)) => {
            req.push(4);
            req.extend_from_slice(&a.ip().octets());
            a.port()
        }
        Dest::Name(h, p) => {
            if h.len() > 255 {
                return Err(refused("the host name is too long for SOCKS5"));
            }
            req.push(3);
            req.push(h.len() as u8);
            req.extend_from_slice(h.as_bytes());
            *p
        }
    };
    req.extend_from_slice(&port.to_be_bytes());
    s.write_all(&req).await?;
    let mut head = [0u8; 4];
    s.read_exact(&mut head).await?;
    if head[1] != 0 {
        return Err(refused("the SOCKS5 proxy could not connect"));
    }
    let rest = match head[3] {
        1 => 4 + 2,
        4 => 16 + 2,
        3 => usize::from(s.read_u8().await?) + 2,
        _ => return Err(refused("the SOCKS5 proxy answered garbage")),
    };
    let mut skip = vec![0u8; rest];
    s.read_exact(&mut skip).await?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_hides_credentials() {
        let u = Upstream::parse("http://alice:s%40cret@proxy.lan:3128", None).unwrap();
        assert_eq!(format!("{u:?}"), "Http(proxy.lan:3128)");
        let expected = base64::engine::general_purpose::STANDARD.encode("alice:s@cret");
        assert_eq!(u.http_auth(), Some(format!("Basic {expected}").as_str()));
        assert!(u.resolves_names());
        let s = Upstream::parse("socks5://127.0.0.1", None).unwrap();
        assert_eq!(format!("{s:?}"), "Socks5(127.0.0.1:1080)");
        assert!(!s.resolves_names());
        assert!(Upstream::parse("socks5h://h:1", None)
            .unwrap()
            .resolves_names());
        let t = Upstream::parse("https://bob:pw@proxy.lan", None).unwrap();
        assert_eq!(format!("{t:?}"), "Https(proxy.lan:443)");
        assert!(t.http_auth().is_some_and(|a| a.starts_with("Basic ")));
        assert!(Upstream::parse("ftp://h:1", None).is_err());
        let e = Upstream::parse("https://h:1", Some(Path::new("/nonexistent/ca.pem")))
            .err()
            .unwrap();
        assert_eq!(e.field.as_deref(), Some("ca_cert"));
    }
}
