//! The SDK entry point: a [`Client`] for one browser host, with one lazily opened CDP
//! WebSocket reused across calls until [`Client::close`].

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::Mutex;

use crate::error::{AfError, ErrorCode};
use crate::sdk::cdp::CdpConnection;
use crate::sdk::endpoint::Endpoint;
use crate::sdk::host_http;
use crate::sdk::launcher::{BrowserLauncher, LaunchSpec, LaunchedBrowser};
use crate::sdk::secret::Secret;
use crate::sdk::tab_id::TabId;

/// Default bound for control calls and CDP commands.
pub const DEFAULT_TIMEOUT: Duration = crate::sdk::defaults::TIMEOUT;

/// How long closing a connection may wait for its last frames to be written.
const CLOSE_WRITTEN_BOUND: Duration = Duration::from_secs(2);

/// A client of one browser host.
pub struct Client {
    endpoint: Endpoint,
    token: Option<Secret>,
    timeout: Duration,
    profile: Option<String>,
    request_id: Option<String>,
    /// The lazily opened CDP connection; shared with the clients of this client's fetches.
    cdp: Arc<Mutex<Option<Arc<CdpConnection>>>>,
    /// False for a [`Client::sharing_connection`] view, which must not close it.
    owns_connection: bool,
    /// A throwaway browser this client owns (see [`Client::launch`]); stopped on close.
    inline: std::sync::Mutex<Option<Box<dyn LaunchedBrowser>>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("endpoint", &self.endpoint)
            .field("token_secret", &self.token.as_ref().map(|_| "***"))
            .finish()
    }
}

/// One page target as `afhttp tabs list` reports it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Tab {
    /// CDP target id.
    pub tab_id: String,
    /// Target type (`page`, …).
    #[serde(rename = "type")]
    pub kind: String,
    /// Current URL.
    pub url: String,
    /// Current title.
    pub title: String,
}

impl Client {
    /// A client for `endpoint_url` (nothing is opened until the first call).
    pub fn connect(endpoint_url: &str) -> Result<Client, AfError> {
        Ok(Client::new(Endpoint::parse(endpoint_url)?))
    }

    /// A client for a parsed endpoint.
    pub fn new(endpoint: Endpoint) -> Client {
        Client {
            endpoint,
            token: None,
            timeout: DEFAULT_TIMEOUT,
            profile: None,
            request_id: None,
            cdp: Arc::new(Mutex::new(None)),
            owns_connection: true,
            inline: std::sync::Mutex::new(None),
        }
    }

    /// Start a throwaway browser with `launcher` (its defaults: browser, family, direct
    /// traffic) and return a client for it that owns it; [`Client::close`] stops it.
    /// `afhttp::host::inline::InlineLauncher` starts a private host in this process.
    pub async fn launch(launcher: &dyn BrowserLauncher) -> Result<Client, AfError> {
        let transport = crate::sdk::fetch::TransportOptions::default();
        let spec = LaunchSpec {
            browser_bin: None,
            family: None,
            transport: &transport,
        };
        let host = launcher.launch(spec).await?;
        let mut client = Client::new(host.endpoint().clone());
        if let Some(conn) = host.connection() {
            client = client.with_connection(conn);
        }
        if let Ok(mut slot) = client.inline.lock() {
            *slot = Some(host);
        }
        Ok(client)
    }

    /// Start from an open CDP connection instead of opening one on first use (an in-process
    /// host's own connection to its browser); a closed one is replaced as usual.
    pub fn with_connection(mut self, conn: Arc<CdpConnection>) -> Client {
        self.cdp = Arc::new(Mutex::new(Some(conn)));
        self
    }

    /// Use a bearer token.
    pub fn with_token(mut self, token: Option<Secret>) -> Client {
        self.token = token;
        self
    }

    /// Ask the host to run its browser under persistent profile `name` when the CDP
    /// connection opens (`?profile=` on `/cdp`).
    pub fn with_profile(mut self, name: Option<String>) -> Client {
        self.profile = name;
        self
    }

    /// Tag the CDP connection with a fetch's request id, so the host's logs carry it.
    pub fn with_request_id(mut self, request_id: Option<String>) -> Client {
        self.request_id = request_id;
        self
    }

    /// Bound for control calls and CDP commands.
    pub fn with_timeout(mut self, timeout: Duration) -> Client {
        self.timeout = timeout;
        self
    }

    /// The endpoint.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The bearer token, if any.
    pub fn token(&self) -> Option<&str> {
        self.token.as_ref().map(Secret::expose)
    }

    /// The bound for control calls and CDP commands.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// `client.fetch(url)…send()`: the CLI's `fetch` against this client's host.
    pub fn fetch(&self, url: &str) -> crate::sdk::builder::FetchBuilder<'_> {
        crate::sdk::builder::FetchBuilder::new(self, url)
    }

    /// `client.cdp(method).tab(id).params(json)…send()`: one raw CDP call.
    pub fn cdp(&self, method: &str) -> crate::sdk::builder::CdpBuilder<'_> {
        crate::sdk::builder::CdpBuilder::new(self, method)
    }

    /// A view of this client that uses (and opens, if needed) the same CDP connection but
    /// never closes it: what a fetch built from this client runs on.
    pub fn sharing_connection(&self) -> Client {
        Client {
            endpoint: self.endpoint.clone(),
            token: self.token.clone(),
            timeout: self.timeout,
            profile: self.profile.clone(),
            request_id: self.request_id.clone(),
            cdp: Arc::clone(&self.cdp),
            owns_connection: false,
            inline: std::sync::Mutex::new(None),
        }
    }

    /// `GET /recent-requests`: the host's last request records (`--recent-requests-cap`).
    pub async fn recent_requests(&self) -> Result<Value, AfError> {
        Ok(self.get("/recent-requests").await?.body)
    }

    /// `GET /stalled-hosts`: the third-party hosts (`host[:port]`) that stalled in this host's
    /// recent fetches, each with the age of its last report in ms, and the ones that answered
    /// (without an age: an older host lists none). A host without the route (an older one)
    /// is an error.
    pub async fn stalled_hosts(&self) -> Result<(Vec<(String, u64)>, Vec<String>), AfError> {
        let doc = self.get("/stalled-hosts").await?.body;
        let stalled = host_http::shape::stalled_hosts(&doc, "hosts");
        let answered = host_http::shape::stalled_hosts(&doc, "answered");
        Ok((stalled, answered.into_iter().map(|(h, _)| h).collect()))
    }

    /// `POST /stalled-hosts`: report third-party hosts a fetch cut for stalling, so the host's
    /// next fetches block them from the start, and the ones that answered its probe, so they
    /// are not probed again.
    pub async fn report_stalled_hosts(
        &self,
        hosts: &[String],
        answered: &[String],
    ) -> Result<(), AfError> {
        let body = serde_json::json!({ "hosts": hosts, "answered": answered });
        host_http::request(
            &self.endpoint,
            "POST",
            "/stalled-hosts",
            self.token.as_ref().map(Secret::expose),
            Some(&body),
            self.timeout,
        )
        .await
        .map(|_| ())
    }

    /// `GET /health`: the host's health document (only `{"status": ...}` for an anonymous
    /// caller of a `--health-public minimal` host). Anything else answering there is
    /// `invalid_endpoint`.
    pub async fn health(&self) -> Result<Value, AfError> {
        host_http::shape::health(self.get("/health").await?)
    }

    /// `GET /health?ready`: the health document only when the host is ready (`status: ok`);
    /// a host that answers but is starting or degraded is a retryable `cdp_unavailable`.
    pub async fn health_ready(&self) -> Result<Value, AfError> {
        match self.get("/health?ready").await {
            Ok(resp) => host_http::shape::health(resp),
            Err(e) if e.code == ErrorCode::CdpUnavailable => Err(AfError::new(
                ErrorCode::CdpUnavailable,
                "the host answers but is not ready (/health?ready answered 503)",
            )
            .with_hint(
                "the plain health check (`afhttp health`) shows its status (starting or degraded)",
            )),
            Err(e) => Err(e),
        }
    }

    /// `GET /capabilities`; an answer that is not a capabilities document is
    /// `invalid_endpoint`.
    pub async fn capabilities(&self) -> Result<Value, AfError> {
        host_http::shape::capabilities(self.get("/capabilities").await?)
    }

    /// `GET path` on the host with this client's token and timeout.
    async fn get(&self, path: &str) -> Result<host_http::HostResponse, AfError> {
        host_http::request(
            &self.endpoint,
            "GET",
            path,
            self.token.as_ref().map(Secret::expose),
            None,
            self.timeout,
        )
        .await
    }

    /// `POST /takeover/handoff`: mint a short-lived, single-use takeover URL for a human
    /// (`ttl_s` 60-3600, default 900). The result holds `takeover_url` (carrying a `handoff`
    /// id, never the token), `expires_at_rfc3339`, `ttl_s`, `scope` and `provider`.
    ///
    /// A unix-socket endpoint is `invalid_endpoint`: a browser cannot open that URL.
    pub async fn takeover_handoff(&self, ttl_s: Option<u64>) -> Result<Value, AfError> {
        if matches!(self.endpoint, Endpoint::Unix(_)) {
            return Err(AfError::new(
                ErrorCode::InvalidEndpoint,
                "a takeover URL needs a TCP endpoint that a browser can open, not a unix socket",
            )
            .with_hint("listen on tcp:HOST:PORT and pass that endpoint"));
        }
        let body = serde_json::json!({ "ttl_s": ttl_s });
        let mut doc = host_http::request(
            &self.endpoint,
            "POST",
            "/takeover/handoff",
            self.token.as_ref().map(Secret::expose),
            Some(&body),
            self.timeout,
        )
        .await?
        .body;
        let path = doc
            .get("takeover_path")
            .and_then(Value::as_str)
            .filter(|p| p.starts_with("/takeover/"))
            .ok_or_else(|| {
                AfError::new(
                    ErrorCode::HostUnreachable,
                    "the host's handoff answer has no takeover_path",
                )
            })?;
        let url = format!("{}{path}", self.endpoint.http_base());
        if let Value::Object(map) = &mut doc {
            map.remove("code");
            map.remove("takeover_path");
            map.insert("takeover_url".into(), Value::String(url));
        }
        Ok(doc)
    }

    /// The cached CDP connection, opened on first use (and reopened if it closed).
    pub async fn cdp_connection(&self) -> Result<Arc<CdpConnection>, AfError> {
        let mut guard = self.cdp.lock().await;
        if let Some(conn) = guard.as_ref().filter(|c| !c.is_closed()) {
            return Ok(conn.clone());
        }
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        if let Some(p) = &self.profile {
            query.append_pair("profile", p);
        }
        if let Some(id) = &self.request_id {
            query.append_pair("request_id", id);
        }
        let query = query.finish();
        let path = if query.is_empty() {
            "/cdp".to_string()
        } else {
            format!("/cdp?{query}")
        };
        let conn = CdpConnection::connect(
            &self.endpoint,
            &path,
            self.token.as_ref().map(Secret::expose),
            self.timeout,
        )
        .await?;
        *guard = Some(conn.clone());
        Ok(conn)
    }

    /// Send one raw CDP method to the browser target, or to tab `tab` through a temporary
    /// flattened session that is detached afterwards (what [`Client::cdp`] sends).
    pub async fn cdp_call(
        &self,
        method: &str,
        params: Value,
        tab: Option<&str>,
    ) -> Result<Value, AfError> {
        let tab = tab.map(TabId::parse).transpose()?;
        let conn = self.cdp_connection().await?;
        let Some(tab) = tab.as_ref().map(TabId::as_str) else {
            return conn.send(None, method, params, self.timeout).await;
        };
        let attached = conn
            .send(
                None,
                "Target.attachToTarget",
                json!({"targetId": tab, "flatten": true}),
                self.timeout,
            )
            .await
            .map_err(|e| tab_error(e, tab))?;
        let session = attached
            .get("sessionId")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                AfError::new(
                    ErrorCode::CdpUnavailable,
                    "attachToTarget returned no sessionId",
                )
            })?
            .to_string();
        let result = conn
            .send(Some(&session), method, params, self.timeout)
            .await;
        let _ = conn
            .send(
                None,
                "Target.detachFromTarget",
                json!({"sessionId": session}),
                self.timeout,
            )
            .await;
        result
    }

    /// Page targets of the browser.
    pub async fn tabs(&self) -> Result<Vec<Tab>, AfError> {
        let targets = self.cdp_call("Target.getTargets", json!({}), None).await?;
        let list = targets
            .get("targetInfos")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        Ok(list
            .iter()
            .filter(|t| t.get("type").and_then(Value::as_str) == Some("page"))
            .map(|t| Tab {
                tab_id: str_field(t, "targetId"),
                kind: str_field(t, "type"),
                url: str_field(t, "url"),
                title: str_field(t, "title"),
            })
            .collect())
    }

    /// Attach the driver-side `file` to the `<input type=file>` that `selector` (CSS, or an
    /// observation.json `host >> shadow >> inner` / `iframe >> frame >> inner` chain) names in
    /// tab `tab`. The bytes move to the host over its listener, so the host may be remote.
    pub async fn upload(
        &self,
        tab: &str,
        selector: &str,
        file: &std::path::Path,
    ) -> Result<crate::sdk::transfer::upload::Uploaded, AfError> {
        use crate::sdk::transfer::upload::{self, LocalFile, Selector};
        let tab = TabId::parse(tab)?;
        let selector = Selector::parse(selector)?;
        let file = LocalFile::check(file)?;
        upload::upload(self, tab.as_str(), &selector, &file, self.timeout).await
    }

    /// Close tab `tab`.
    pub async fn close_tab(&self, tab: &str) -> Result<(), AfError> {
        let tab = TabId::parse(tab)?;
        self.cdp_call(
            "Target.closeTarget",
            json!({"targetId": tab.as_str()}),
            None,
        )
        .await
        .map_err(|e| tab_error(e, tab.as_str()))?;
        Ok(())
    }

    /// Close the cached CDP connection, and stop an inline host this client owns
    /// (optional; dropping the client does both, less gracefully).
    pub async fn close(&self) {
        if !self.owns_connection {
            return;
        }
        if let Some(conn) = self.cdp.lock().await.take() {
            // A command posted without waiting for its answer (a tab's close after the
            // answer) still reaches the host before this process exits.
            conn.close_written(CLOSE_WRITTEN_BOUND).await;
        }
        let host = self.inline.lock().ok().and_then(|mut h| h.take());
        if let Some(h) = host {
            h.stop().await;
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if !self.owns_connection {
            return;
        }
        if let Ok(mut guard) = self.cdp.try_lock() {
            if let Some(conn) = guard.take() {
                conn.close();
            }
        }
    }
}

fn str_field(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

fn tab_error(e: AfError, tab: &str) -> AfError {
    if e.code == ErrorCode::ArtifactCaptureFailed || e.code == ErrorCode::InvalidArgument {
        AfError::invalid(format!("no tab {tab:?} on this host ({})", e.message))
            .with_hint("list tabs with `afhttp tabs list`")
    } else {
        e
    }
}
