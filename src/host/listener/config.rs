//! Listener configuration: where to listen, the token, health exposure, allowed Host names.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

use subtle::ConstantTimeEq;

use crate::error::AfError;
use crate::sdk::secret::Secret;

/// Default `--upload-max-bytes`.
pub const DEFAULT_UPLOAD_MAX_BYTES: u64 = 100 * 1024 * 1024;
/// The default `--listen` value.
pub const DEFAULT_LISTEN: &str = "tcp:127.0.0.1:9222";

/// Where the listener accepts connections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListenAddr {
    /// A TCP socket address (`tcp:HOST:PORT`; port 0 picks a free port).
    Tcp(SocketAddr),
    /// A unix socket path (`unix:/path`).
    Unix(PathBuf),
}

impl ListenAddr {
    /// Parse `tcp:HOST:PORT` (HOST an IP literal, `[v6]`, or `localhost`) or `unix:/path`.
    ///
    /// An empty string means [`DEFAULT_LISTEN`]; anything else malformed is `invalid_argument`,
    /// its message quoting the input with escapes so control characters never reach a terminal.
    pub fn parse(raw: &str) -> Result<ListenAddr, AfError> {
        let raw = raw.trim();
        let raw = if raw.is_empty() { DEFAULT_LISTEN } else { raw };
        let hint = "use tcp:HOST:PORT (e.g. tcp:127.0.0.1:9222) or unix:/absolute/path";
        if let Some(path) = raw.strip_prefix("unix:") {
            if path.is_empty() || !path.starts_with('/') {
                return Err(AfError::invalid(format!(
                    "--listen {raw:?}: the unix socket path must be absolute"
                ))
                .with_hint(hint));
            }
            return Ok(ListenAddr::Unix(PathBuf::from(path)));
        }
        let Some(rest) = raw.strip_prefix("tcp:") else {
            return Err(AfError::invalid(format!(
                "--listen {raw:?}: expected a tcp: or unix: address"
            ))
            .with_hint(hint));
        };
        let bad = || AfError::invalid(format!("--listen {raw:?}: not a HOST:PORT")).with_hint(hint);
        let (host, port) = rest.rsplit_once(':').ok_or_else(bad)?;
        let port: u16 = port.parse().map_err(|_| bad())?;
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        let ip: IpAddr = if host.eq_ignore_ascii_case("localhost") {
            IpAddr::from([127, 0, 0, 1])
        } else {
            host.parse().map_err(|_| {
                AfError::invalid(format!(
                    "--listen {raw:?}: the host must be an IP address or localhost"
                ))
                .with_hint(hint)
            })?
        };
        Ok(ListenAddr::Tcp(SocketAddr::new(ip, port)))
    }

    /// Whether only this machine can connect: a loopback TCP address or a unix socket.
    pub fn is_loopback(&self) -> bool {
        match self {
            ListenAddr::Tcp(addr) => addr.ip().is_loopback(),
            ListenAddr::Unix(_) => true,
        }
    }
}

impl std::fmt::Display for ListenAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ListenAddr::Tcp(addr) => write!(f, "tcp:{addr}"),
            ListenAddr::Unix(path) => write!(f, "unix:{}", path.display()),
        }
    }
}

/// The host's long-lived token: a [`Secret`] known not to be blank. Never printed: `Debug`
/// and `Display` are the secret's (`***`).
#[derive(Clone)]
pub struct TokenSecret(Secret);

impl TokenSecret {
    /// Wrap a token; an empty or whitespace-only token is `invalid_argument`.
    pub fn new(token: impl Into<Secret>) -> Result<TokenSecret, AfError> {
        let token = token.into();
        if token.is_blank() {
            return Err(AfError::invalid("the token secret is empty"));
        }
        Ok(TokenSecret(token))
    }

    /// Compare `candidate` with the token in constant time (for equal lengths).
    pub fn matches(&self, candidate: &str) -> bool {
        let ours = self.0.expose().as_bytes();
        let theirs = candidate.as_bytes();
        // Length is not secret; the content comparison does not short-circuit.
        ours.len() == theirs.len() && bool::from(ours.ct_eq(theirs))
    }

    /// The token itself, for the host to hand to a local child or write to its token file.
    pub fn expose(&self) -> &str {
        self.0.expose()
    }

    /// The token as the SDK's secret (what the host's own clients send).
    pub fn secret(&self) -> &Secret {
        &self.0
    }
}

impl std::fmt::Debug for TokenSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.0, f)
    }
}

impl std::fmt::Display for TokenSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

/// Everything the listener needs to know besides the host's live view.
#[derive(Debug, Clone)]
pub struct ListenerConfig {
    /// Where to listen.
    pub listen: ListenAddr,
    /// The token; `None` is allowed only on a loopback or unix listener.
    pub token: Option<TokenSecret>,
    /// Serve `/health` (`--no-health` sets this to false and removes the route).
    pub health: bool,
    /// `--health-public minimal`: unauthenticated `/health` gets only `{"status": ...}`.
    pub health_public_minimal: bool,
    /// Extra Host names accepted on requests without a bearer header (`--allowed-host`).
    pub allowed_hosts: Vec<String>,
    /// How long a profile switch waits for the other `/cdp` clients before closing them.
    pub profile_switch_wait: std::time::Duration,
    /// Peers besides loopback whose `X-Forwarded-Proto` is believed (`--trusted-proxy`).
    pub trusted_proxies: Vec<(std::net::IpAddr, u8)>,
    /// `--ephemeral-only`: no persistent profile may be opened (a stateless fleet member).
    pub ephemeral_only: bool,
    /// Largest file `POST /uploads` accepts (`--upload-max-bytes`).
    pub upload_max_bytes: u64,
    /// Most `/cdp` and `/cdp/page/*` clients at once (`--max-clients`); one more is
    /// `host_busy`.
    pub max_clients: usize,
    /// Most page targets (tabs) at once (`--max-tabs`); a `Target.createTarget` beyond it is
    /// `host_busy`.
    pub max_tabs: usize,
    /// This machine's hostname (read once), one of the Host names `/mcp` accepts.
    pub machine_hostname: String,
    /// Ready tabs kept for fetches (`--tab-pool`; 0: none), see [`super::tab_pool`].
    pub tab_pool: usize,
    /// Whether the pool also keeps ready isolated tabs (each in a browser context of its own).
    pub tab_pool_isolated: bool,
}

/// The default `--tab-pool`: two ready tabs. Measured against none with one release build in
/// one run (issue 26, docs/design.md "Ready tabs"): `tab_open` 45-48 ms median against 85-95,
/// every page but the tall one faster. Its tabs are kept out of the `--max-tabs` count and
/// `tabs_active` at every moment (refilling, taken, closing).
pub const DEFAULT_TAB_POOL: usize = 2;

/// The default `--max-clients`: each in-flight fetch holds one CDP client.
pub const DEFAULT_MAX_CLIENTS: usize = 16;
/// The default `--max-tabs`.
pub const DEFAULT_MAX_TABS: usize = 32;

impl ListenerConfig {
    /// A tokenless loopback configuration on `listen` with health on and private.
    pub fn new(listen: ListenAddr) -> ListenerConfig {
        ListenerConfig {
            listen,
            token: None,
            health: true,
            health_public_minimal: false,
            allowed_hosts: Vec::new(),
            trusted_proxies: Vec::new(),
            profile_switch_wait: std::time::Duration::from_secs(15),
            ephemeral_only: false,
            upload_max_bytes: DEFAULT_UPLOAD_MAX_BYTES,
            max_clients: DEFAULT_MAX_CLIENTS,
            max_tabs: DEFAULT_MAX_TABS,
            machine_hostname: crate::profile::this_hostname(),
            tab_pool: DEFAULT_TAB_POOL,
            tab_pool_isolated: true,
        }
    }

    /// Refuse a non-loopback TCP listener without a token.
    pub fn validate(&self) -> Result<(), AfError> {
        if self.token.is_none() && !self.listen.is_loopback() {
            return Err(AfError::invalid(format!(
                "refusing to listen on {} without a token",
                self.listen
            ))
            .with_hint(
                "set --token-secret or --token-secret-file (or AFHTTP_TOKEN_SECRET), \
                 or listen on 127.0.0.1 or a unix socket",
            ));
        }
        Ok(())
    }

    /// What `/health` and `/capabilities` report as `role`: `ephemeral` for an
    /// `--ephemeral-only` host, `persistent` for one that may hold profiles.
    pub fn role(&self) -> &'static str {
        if self.ephemeral_only {
            "ephemeral"
        } else {
            "persistent"
        }
    }

    /// Whether `host` (a Host header's name, without port) is named by `--allowed-host`.
    pub fn host_allowed(&self, host: &str) -> bool {
        self.allowed_hosts.iter().any(|h| {
            h.trim_end_matches('.')
                .eq_ignore_ascii_case(host.trim_end_matches('.'))
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn parses_tcp_unix_and_default() {
        assert_eq!(
            ListenAddr::parse("").unwrap(),
            ListenAddr::Tcp("127.0.0.1:9222".parse().unwrap())
        );
        assert_eq!(
            ListenAddr::parse("tcp:0.0.0.0:80").unwrap(),
            ListenAddr::Tcp("0.0.0.0:80".parse().unwrap())
        );
        assert_eq!(
            ListenAddr::parse("tcp:[::1]:9").unwrap(),
            ListenAddr::Tcp("[::1]:9".parse().unwrap())
        );
        assert_eq!(
            ListenAddr::parse("tcp:localhost:1").unwrap(),
            ListenAddr::Tcp("127.0.0.1:1".parse().unwrap())
        );
        assert_eq!(
            ListenAddr::parse("unix:/run/a.sock").unwrap(),
            ListenAddr::Unix("/run/a.sock".into())
        );
        assert!(ListenAddr::parse("unix:/x").unwrap().is_loopback());
        assert!(!ListenAddr::parse("tcp:0.0.0.0:1").unwrap().is_loopback());
        assert!(ListenAddr::parse("tcp:[::1]:1").unwrap().is_loopback());
        assert_eq!(ListenAddr::parse("unix:/a").unwrap().to_string(), "unix:/a");
    }

    /// Regression (fuzz target `endpoint`): the input was echoed raw, so `--listen` with an
    /// escape sequence or NUL put control characters into the error message.
    #[test]
    fn refusal_messages_escape_control_characters() {
        for bad in ["\0", "tcp:\u{1b}[31mred:1", "unix:\u{7}", "tcp:a\nb:1"] {
            let err = ListenAddr::parse(bad).unwrap_err();
            assert!(
                !err.message.chars().any(char::is_control),
                "{:?}",
                err.message
            );
        }
    }

    #[test]
    fn rejects_malformed_addresses() {
        for bad in [
            "9222",
            "tcp:",
            "tcp:127.0.0.1",
            "tcp:127.0.0.1:99999",
            "tcp:example.com:80",
            "unix:",
            "unix:relative.sock",
            "http://127.0.0.1:9222",
        ] {
            let err = ListenAddr::parse(bad).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidArgument, "{bad}");
            assert!(err.hint.is_some(), "{bad}");
        }
    }

    #[test]
    fn token_is_redacted_and_compared_exactly() {
        let t = TokenSecret::new("s3cret-token").unwrap();
        assert_eq!(format!("{t:?}"), "***");
        assert_eq!(t.to_string(), "***");
        let cfg = ListenerConfig {
            token: Some(t.clone()),
            ..ListenerConfig::new(ListenAddr::parse("").unwrap())
        };
        assert!(!format!("{cfg:?}").contains("s3cret"));
        assert!(t.matches("s3cret-token"));
        assert!(!t.matches("s3cret-tokeN"));
        assert!(!t.matches("s3cret-token "));
        assert!(!t.matches(""));
        assert!(TokenSecret::new("  ").is_err());
    }

    #[test]
    fn non_loopback_needs_a_token() {
        let mut cfg = ListenerConfig::new(ListenAddr::parse("tcp:0.0.0.0:9222").unwrap());
        let err = cfg.validate().unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument);
        assert!(err.hint.is_some());
        cfg.token = Some(TokenSecret::new("t").unwrap());
        cfg.validate().unwrap();
        ListenerConfig::new(ListenAddr::parse("").unwrap())
            .validate()
            .unwrap();
        ListenerConfig::new(ListenAddr::parse("unix:/tmp/x.sock").unwrap())
            .validate()
            .unwrap();
    }
}
