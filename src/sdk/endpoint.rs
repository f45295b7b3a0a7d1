//! `--endpoint-url` parsing: the listener's base URL, from which `/cdp`, `/health`,
//! `/capabilities` and `/takeover/handoff` are derived.

use std::path::PathBuf;

use url::Url;

use crate::error::{AfError, ErrorCode};

/// Where a browser host listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// TCP: `http://` or `ws://` (plain) and `https://` or `wss://` (TLS) are equivalent.
    Tcp {
        /// Whether to use TLS.
        tls: bool,
        /// Host name or IP literal (IPv6 without brackets).
        host: String,
        /// Port.
        port: u16,
    },
    /// A unix socket path.
    Unix(PathBuf),
}

impl Endpoint {
    /// Parse an endpoint URL; anything malformed is `invalid_endpoint`.
    pub fn parse(raw: &str) -> Result<Endpoint, AfError> {
        let bad = |why: &str| {
            AfError::new(ErrorCode::InvalidEndpoint, format!("endpoint_url: {why}"))
                .with_field("endpoint_url")
                .with_hint(
                "use ws://HOST:PORT, wss://HOST:PORT, http://HOST:PORT, https://HOST:PORT or unix:/path",
            )
        };
        if raw.is_empty() {
            return Err(bad("empty"));
        }
        if raw.len() > 2048 || raw.chars().any(char::is_control) {
            return Err(bad("too long or contains control characters"));
        }
        if let Some(path) = raw.strip_prefix("unix:") {
            let path = path.strip_prefix("//").unwrap_or(path);
            if !path.starts_with('/') {
                return Err(bad("unix: needs an absolute socket path"));
            }
            if path.split('/').any(|c| c == "..") {
                return Err(bad("unix: socket path must not contain `..`"));
            }
            return Ok(Endpoint::Unix(PathBuf::from(path)));
        }
        let url = Url::parse(raw).map_err(|e| bad(&format!("not a URL ({e})")))?;
        let tls = match url.scheme() {
            "ws" | "http" => false,
            "wss" | "https" => true,
            other => return Err(bad(&format!("unsupported scheme {other:?}"))),
        };
        if !url.username().is_empty() || url.password().is_some() {
            return Err(bad(
                "credentials in the URL are not accepted; use token_secret",
            ));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(bad("a query or fragment is not accepted; use token_secret"));
        }
        if !matches!(url.path(), "" | "/" | "/cdp") {
            return Err(bad("the path must be empty or /cdp"));
        }
        let host = match url.host() {
            Some(url::Host::Ipv6(ip)) => ip.to_string(),
            Some(h) => h.to_string(),
            None => return Err(bad("missing host")),
        };
        let port = url
            .port_or_known_default()
            .ok_or_else(|| bad("missing port"))?;
        Ok(Endpoint::Tcp { tls, host, port })
    }

    /// The HTTP base URL (`http://host:port`) for control routes; unix sockets use `http://localhost`.
    pub fn http_base(&self) -> String {
        match self {
            Endpoint::Tcp { tls, host, port } => {
                let scheme = if *tls { "https" } else { "http" };
                if host.contains(':') {
                    format!("{scheme}://[{host}]:{port}")
                } else {
                    format!("{scheme}://{host}:{port}")
                }
            }
            Endpoint::Unix(_) => "http://localhost".to_string(),
        }
    }

    /// The endpoint as an `--endpoint-url` value that parses back to it.
    pub fn to_flag_value(&self) -> String {
        match self {
            Endpoint::Tcp { .. } => self.http_base(),
            Endpoint::Unix(p) => format!("unix:{}", p.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_value_round_trips() {
        for raw in ["ws://h:1", "https://[::1]:8443", "unix:/run/a.sock"] {
            let e = Endpoint::parse(raw).unwrap();
            assert_eq!(Endpoint::parse(&e.to_flag_value()).unwrap(), e);
        }
    }

    #[test]
    fn accepted_forms() {
        assert_eq!(
            Endpoint::parse("ws://localhost:9222").unwrap(),
            Endpoint::Tcp {
                tls: false,
                host: "localhost".into(),
                port: 9222
            }
        );
        assert_eq!(
            Endpoint::parse("https://h.example:8443/cdp").unwrap(),
            Endpoint::Tcp {
                tls: true,
                host: "h.example".into(),
                port: 8443
            }
        );
        assert_eq!(
            Endpoint::parse("unix:/run/afhttp/work.sock").unwrap(),
            Endpoint::Unix("/run/afhttp/work.sock".into())
        );
        assert_eq!(
            Endpoint::parse("ws://[::1]:9222").unwrap().http_base(),
            "http://[::1]:9222"
        );
    }

    #[test]
    fn refused_forms() {
        for bad in [
            "",
            "ftp://x:1",
            "ws://",
            "unix:relative.sock",
            "unix:/a/../b",
            "ws://u:p@h:1",
            "ws://h:1/other",
            "ws://h:1/?token_secret=x",
            "ws://h:1\n",
            "localhost:9222",
        ] {
            let e = Endpoint::parse(bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidEndpoint, "{bad:?}");
        }
    }
}
