//! The egress policy of the host's browser, enforced by a small forward proxy inside the
//! host (HTTP and CONNECT) that the browser is launched behind.
//!
//! Why a proxy: it sees every connection the browser makes (pages, workers, WebSockets,
//! downloads), it resolves names itself and connects to exactly the address it checked (a
//! DNS-rebinding answer cannot slip in between), and it does not depend on attaching to every
//! target over CDP in time. With `--proxy-url` the proxy chains to it after the check.

/// The policy itself lives in the SDK, so the plain-HTTP step enforces the same type.
pub use crate::sdk::egress as policy;
mod proxy;
mod upstream;

use std::net::SocketAddr;
use std::sync::Arc;

pub use crate::sdk::egress::{AllowRule, Category, Denial, Policy};
pub use upstream::Upstream;

use crate::error::AfError;

/// The response header naming the proxy's refusal: `denied`, `dns` or `unreachable`. The
/// driver turns a document answered with it into `egress_denied`, `dns_resolution_failed` or
/// `target_unreachable`.
pub const EGRESS_HEADER: &str = "x-afhttp-egress";
/// The response header with the refusal's detail (`169.254.169.254 is cloud_metadata`).
pub const EGRESS_DETAIL_HEADER: &str = "x-afhttp-egress-detail";

/// The response header carrying the server's `ip:port` on plain-HTTP responses the proxy
/// fetched directly (over https the tunnel is opaque and the browser reports the proxy).
pub const REMOTE_ADDRESS_HEADER: &str = "x-afhttp-remote-address";

/// A running egress proxy; it stops when dropped.
#[derive(Debug)]
pub struct EgressProxy {
    /// Where it listens (loopback, a free port).
    pub addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl EgressProxy {
    /// The `--proxy-server` value for the browser.
    pub fn proxy_url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for EgressProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Start the proxy on a free loopback port, enforcing `policy` and chaining to `upstream`
/// (a `--proxy-url`: `http://`, `https://`, `socks5://` or `socks5h://`; an `https://`
/// proxy's certificate may also be signed by `upstream_ca`, a PEM file).
pub async fn start(
    policy: Policy,
    upstream: Option<&str>,
    upstream_ca: Option<&std::path::Path>,
) -> Result<EgressProxy, AfError> {
    let upstream = upstream
        .map(|u| Upstream::parse(u, upstream_ca))
        .transpose()?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| AfError::io("cannot start the egress proxy", &e))?;
    let addr = listener
        .local_addr()
        .map_err(|e| AfError::io("cannot read the egress proxy's address", &e))?;
    let shared = Arc::new(proxy::Shared { policy, upstream });
    let task = tokio::spawn(proxy::accept_loop(listener, shared));
    Ok(EgressProxy { addr, task })
}
