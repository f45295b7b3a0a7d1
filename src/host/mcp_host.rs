//! The host's `/mcp`: an MCP server whose fetches run on this host, through its own `/cdp`
//! (so they take a client slot, lease tabs and switch profiles exactly as a remote driver's
//! would), with the same `FetchSpec::validate()`. They write into the host's output area
//! (`$XDG_DATA_HOME/afhttp/mcp-out`), which the host prunes by time to live and size.

use std::time::Duration;

/// How the host serves `/mcp` (`None` in [`super::run::HostOptions`]: not at all).
#[derive(Debug, Clone)]
pub struct McpHostOptions {
    /// How long an output directory is kept after its last write.
    pub output_ttl: Duration,
    /// Cap of the whole output area in bytes (0: none); the oldest directories go first.
    pub output_max_bytes: u64,
    /// List and serve the `cdp` tool.
    pub allow_cdp: bool,
    /// Text budget of one tool result, in o200k_base tokens.
    pub text_budget_tokens: usize,
    /// Text budget of one tool result, in characters (UTF-16 code units).
    pub text_budget_chars: usize,
    /// Largest screenshot put inline, in bytes (0: never).
    pub image_max_bytes: u64,
}

#[cfg(feature = "mcp")]
pub use served::{attach, McpLink};

#[cfg(feature = "mcp")]
mod served {
    use std::sync::{Arc, OnceLock};

    use serde_json::{json, Value};

    use super::McpHostOptions;
    use crate::error::{AfError, ErrorCode};
    use crate::host::listener::{ListenerState, TokenSecret};
    use crate::host::log::{log, Level};
    use crate::mcp::area::{self, ArtifactArea};
    use crate::mcp::budget::Budget;
    use crate::mcp::{AfhttpMcp, McpConfig};
    use crate::sdk::client::Client;
    use crate::sdk::endpoint::Endpoint;
    use crate::sdk::secret::Secret;
    use crate::sdk::target::{HostTarget, Target};

    /// What the host keeps of its `/mcp` once the listener is bound.
    pub struct McpLink {
        /// The server's one target, this host (set once, when the listener is bound).
        own: Arc<OnceLock<HostTarget>>,
        /// The host's token, which the server's own calls send.
        token: Option<Secret>,
        area: Arc<ArtifactArea>,
        served: bool,
        /// The results' limits, for the ready document.
        limits: Value,
    }

    impl McpLink {
        /// Point the server's fetches at the bound listener (`tcp:IP:PORT` or `unix:/path`;
        /// a wildcard address is reached on loopback), start the pruner and describe `/mcp`
        /// for the ready document.
        pub fn bound(&self, local: &str) -> Result<(tokio::task::JoinHandle<()>, Value), AfError> {
            let url = match local.strip_prefix("tcp:") {
                Some(addr) => {
                    let addr: std::net::SocketAddr = addr.parse().map_err(|_| {
                        AfError::new(ErrorCode::IoError, format!("bound address {local}"))
                    })?;
                    let ip = match addr.ip() {
                        ip if !ip.is_unspecified() => ip,
                        std::net::IpAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                        std::net::IpAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
                    };
                    format!("ws://{}", std::net::SocketAddr::new(ip, addr.port()))
                }
                None => local.to_string(),
            };
            let _ = self.own.set(HostTarget {
                endpoint: Endpoint::parse(&url)?,
                token: self.token.clone(),
                replay_args: Vec::new(),
            });
            let pruner = area::spawn_pruner(Arc::clone(&self.area), |pruned| {
                log(
                    Level::Info,
                    "mcp outputs pruned",
                    json!({"removed": pruned.removed.len(), "bytes": pruned.bytes}),
                )
            });
            let doc = json!({
                "path": "/mcp",
                "served": self.served,
                "transport": "streamable_http",
                "output_dir": self.area.root(),
                "output_ttl_s": self.area.ttl().as_secs(),
                "output_max_bytes": self.area.max_bytes(),
                "limits": self.limits,
            });
            Ok((pruner, doc))
        }
    }

    /// Give `state` an `/mcp` server per `opts`, over this host's own listener with `token`;
    /// its fetches' plain-HTTP step obeys `egress`, the policy the host's browser runs
    /// behind (its egress proxy), so both steps pass the same one. `env` (the front end's
    /// snapshot) locates the output area and the profile store.
    pub fn attach(
        state: ListenerState,
        opts: &McpHostOptions,
        token: Option<&TokenSecret>,
        egress: Option<crate::sdk::egress::Policy>,
        env: &crate::env::Snapshot,
    ) -> (ListenerState, Result<McpLink, AfError>) {
        // No usable output area (no data directory, a foreign one): the host still starts,
        // without `/mcp`, and says why in its ready document.
        let opened = crate::profile::mcp_outputs_root(env)
            .and_then(|root| ArtifactArea::open(&root, opts.output_ttl, opts.output_max_bytes));
        let area = match opened {
            Ok(area) => Arc::new(area),
            Err(e) => return (state, Err(e)),
        };
        // The target is resolved once, at bind; every tool reaches it, fetches included.
        let own: Arc<OnceLock<HostTarget>> = Arc::new(OnceLock::new());
        let token: Option<Secret> = token.map(|t| t.secret().clone());
        let client = {
            let own = Arc::clone(&own);
            move || -> Result<Client, AfError> {
                let t = own.get().cloned().ok_or_else(not_ready)?;
                Ok(Client::new(t.endpoint).with_token(t.token))
            }
        };
        let fetch_own = Arc::clone(&own);
        let profile_store = crate::profile::profiles_root(env).ok();
        let client_for_docs = client.clone();
        let config = McpConfig {
            text_budget: Budget {
                tokens: opts.text_budget_tokens,
                chars: opts.text_budget_chars,
            },
            image_max_bytes: opts.image_max_bytes,
            resolve_fetch: Arc::new(move |spec| {
                let mut request = spec.validate()?;
                if let Some(root) = &profile_store {
                    request = request.with_profile_store(root.clone());
                }
                let target = fetch_own.get().cloned().ok_or_else(not_ready)?;
                Ok(request.with_target(Target::Host(target)))
            }),
            resolve_client: Arc::new(move || client_for_docs().map(Some)),
            resolve_host: Arc::new(client),
            allow_cdp: opts.allow_cdp,
            egress,
        };
        let server = AfhttpMcp::new(config).with_area(Arc::clone(&area));
        let served = token.is_some();
        let limits = json!({
            "text_budget_tokens": opts.text_budget_tokens,
            "text_budget_chars": opts.text_budget_chars,
            "image_max_bytes": opts.image_max_bytes,
        });
        let state = state.with_mcp(Arc::new(crate::mcp::http::endpoint(server)));
        (
            state,
            Ok(McpLink {
                own,
                token,
                area,
                served,
                limits,
            }),
        )
    }

    fn not_ready() -> AfError {
        AfError::new(
            ErrorCode::CdpUnavailable,
            "the host's listener is not bound yet",
        )
    }
}
