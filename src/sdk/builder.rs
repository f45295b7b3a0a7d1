//! The SDK's call builders (spec §13): `client.fetch(url)…send()` and
//! `client.cdp(method)…send()`, plus [`FetchCookie`] for cookies set in code.
//!
//! They only assemble the same [`FetchRequest`] the CLI builds and run the same pipeline
//! ([`crate::sdk::fetch::fetch_with`]); a fetch reuses its client's CDP connection.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use crate::error::AfError;
use crate::sdk::client::Client;
use crate::sdk::fetch::browser_path::BrowserSlot;
use crate::sdk::fetch::{FetchFailure, FetchOutcome, FetchSpec};
use crate::sdk::request::{Artifact, NetworkBodies, RenderMode, Wait};
use crate::sdk::secret::Secret;

/// `SameSite` of a [`FetchCookie`].
pub use crate::sdk::cookies::SameSite as FetchCookieSameSite;

/// A cookie to install before the request, as `--cookie` would.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchCookie {
    name: String,
    value: String,
    path: Option<String>,
    domain: Option<String>,
    secure: bool,
    http_only: bool,
    same_site: Option<FetchCookieSameSite>,
    max_age_s: Option<i64>,
}

impl FetchCookie {
    /// Start a cookie from `(name, value)`: host-only for the request URL, path `/`.
    pub fn build(name_value: (impl Into<String>, impl Into<String>)) -> FetchCookieBuilder {
        FetchCookieBuilder(FetchCookie {
            name: name_value.0.into(),
            value: name_value.1.into(),
            path: None,
            domain: None,
            secure: false,
            http_only: false,
            same_site: None,
            max_age_s: None,
        })
    }

    /// The `--cookie` form of this cookie, so one parser validates both ways in. A `;` in
    /// any part would smuggle attributes through that form, so it is refused here.
    fn to_spec(&self) -> Result<String, AfError> {
        let parts = [
            Some(&self.name),
            Some(&self.value),
            self.path.as_ref(),
            self.domain.as_ref(),
        ];
        if parts.into_iter().flatten().any(|p| p.contains(';')) {
            return Err(AfError::invalid(format!(
                "cookie {:?}: a name, value, path or domain cannot contain ';'",
                self.name
            )));
        }
        let mut spec = format!("{}={}", self.name, self.value);
        if let Some(p) = &self.path {
            spec.push_str(&format!("; Path={p}"));
        }
        if let Some(d) = &self.domain {
            spec.push_str(&format!("; Domain={d}"));
        }
        if self.secure {
            spec.push_str("; Secure");
        }
        if self.http_only {
            spec.push_str("; HttpOnly");
        }
        if let Some(s) = self.same_site {
            spec.push_str(&format!("; SameSite={}", s.as_str()));
        }
        if let Some(age) = self.max_age_s {
            spec.push_str(&format!("; Max-Age={age}"));
        }
        Ok(spec)
    }
}

/// Builds a [`FetchCookie`].
#[derive(Debug, Clone)]
pub struct FetchCookieBuilder(FetchCookie);

impl FetchCookieBuilder {
    /// `Path`.
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.0.path = Some(path.into());
        self
    }
    /// `Domain` (a domain cookie; it must domain-match the request host).
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.0.domain = Some(domain.into());
        self
    }
    /// `Secure`.
    pub fn secure(mut self, secure: bool) -> Self {
        self.0.secure = secure;
        self
    }
    /// `HttpOnly`.
    pub fn http_only(mut self, http_only: bool) -> Self {
        self.0.http_only = http_only;
        self
    }
    /// `SameSite`.
    pub fn same_site(mut self, same_site: FetchCookieSameSite) -> Self {
        self.0.same_site = Some(same_site);
        self
    }
    /// `Max-Age` in seconds.
    pub fn max_age_s(mut self, seconds: i64) -> Self {
        self.0.max_age_s = Some(seconds);
        self
    }
    /// The cookie.
    pub fn build(self) -> FetchCookie {
        self.0
    }
}

/// `client.fetch(url)`: set options, then [`FetchBuilder::send`].
///
/// Every setter fills the same [`FetchSpec`] the CLI's flags fill, and `send` runs the same
/// [`FetchSpec::validate`], so a bad value fails here with the code the CLI would give.
#[derive(Debug)]
#[must_use = "a fetch does nothing until .send().await"]
pub struct FetchBuilder<'c> {
    client: &'c Client,
    spec: FetchSpec,
    /// The first error a setter met (a cookie that cannot be written as `--cookie`).
    error: Option<AfError>,
    /// The egress policy the fetch's own connections obey (see
    /// [`FetchRequest::with_egress_policy`](crate::sdk::fetch::FetchRequest::with_egress_policy)).
    egress: Option<crate::sdk::egress::Policy>,
}

impl<'c> FetchBuilder<'c> {
    pub(crate) fn new(client: &'c Client, url: &str) -> FetchBuilder<'c> {
        FetchBuilder {
            client,
            spec: FetchSpec {
                timeout_ms: Some(client.timeout().as_millis().min(u128::from(u64::MAX)) as u64),
                ..FetchSpec::new(url)
            },
            error: None,
            egress: None,
        }
    }

    fn edit(mut self, f: impl FnOnce(&mut FetchSpec)) -> Self {
        f(&mut self.spec);
        self
    }

    /// Replace the whole request specification (the URL included), e.g. one an MCP client
    /// or a config file supplied.
    pub fn spec(self, spec: FetchSpec) -> Self {
        self.edit(|s| *s = spec)
    }
    /// `--render`.
    pub fn render(self, mode: RenderMode) -> Self {
        self.edit(|s| s.render = Some(mode.as_str().to_string()))
    }
    /// `--wait`.
    pub fn wait(self, wait: Wait) -> Self {
        self.edit(|s| s.wait = Some(wait.to_string()))
    }
    /// `--dialog accept`: accept JavaScript dialogs instead of dismissing them.
    pub fn accept_dialogs(self) -> Self {
        self.edit(|s| s.dialog = Some("accept".into()))
    }
    /// `--user-agent`.
    pub fn user_agent(self, ua: impl Into<String>) -> Self {
        let ua = ua.into();
        self.edit(|s| s.user_agent = Some(ua))
    }
    /// One request header (`--header NAME:VALUE`).
    pub fn header(self, name: impl Into<String>, value: impl Into<String>) -> Self {
        let h = format!("{}:{}", name.into(), value.into());
        self.edit(|s| s.header.push(h))
    }
    /// A cookie as `name=value` for the request host (`--cookie name=value`).
    pub fn cookie(self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.cookie_full(FetchCookie::build((name, value)).build())
    }
    /// A cookie with attributes.
    pub fn cookie_full(mut self, cookie: FetchCookie) -> Self {
        match cookie.to_spec() {
            Ok(c) => self.spec.cookie.push(c),
            Err(e) => {
                self.error.get_or_insert(e.with_field("cookie"));
            }
        }
        self
    }
    /// `--method` (e.g. `POST`) without a body.
    pub fn method(self, method: impl Into<String>) -> Self {
        let method = method.into();
        self.edit(|s| s.method = Some(method))
    }
    /// `--form`: urlencoded text fields (method POST unless set).
    pub fn form(self, fields: impl IntoIterator<Item = (String, String)>) -> Self {
        let fields: Vec<String> = fields
            .into_iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        self.edit(|s| s.form.extend(fields))
    }
    /// `--method` and a raw body (`--data`, any bytes).
    pub fn body(self, method: impl Into<String>, body: impl Into<Vec<u8>>) -> Self {
        let (method, body) = (method.into(), body.into());
        self.edit(|s| {
            s.method = Some(method);
            s.data_bytes = Some(body);
        })
    }
    /// `--evaluate-after-wait`.
    pub fn evaluate_after_wait(self, js: impl Into<String>) -> Self {
        let js = js.into();
        self.edit(|s| s.evaluate_after_wait = Some(js))
    }
    /// `--timeout-ms` (default: the client's timeout).
    pub fn timeout(self, timeout: Duration) -> Self {
        let ms = timeout.as_millis().min(u128::from(u64::MAX)) as u64;
        self.edit(|s| s.timeout_ms = Some(ms))
    }
    /// `--want`.
    pub fn want(self, artifacts: impl IntoIterator<Item = Artifact>) -> Self {
        let want: Vec<&str> = artifacts.into_iter().map(Artifact::as_str).collect();
        self.edit(|s| s.want = Some(want.join(",")))
    }
    /// `--network-bodies`.
    pub fn network_bodies(self, mode: NetworkBodies) -> Self {
        self.edit(|s| s.network_bodies = Some(mode.as_str().to_string()))
    }
    /// `--network-body-max-bytes`.
    pub fn network_body_max_bytes(self, bytes: u64) -> Self {
        self.edit(|s| s.network_body_max_bytes = Some(bytes))
    }
    /// `--max-response-bytes` (0 = unlimited).
    pub fn max_response_bytes(self, bytes: u64) -> Self {
        self.edit(|s| s.max_response_bytes = Some(bytes))
    }
    /// `--readiness-idle-ms`, `--readiness-stable-ms` and `--readiness-min-text-bytes`.
    pub fn readiness(self, idle_ms: u64, stable_ms: u64, min_text_bytes: u64) -> Self {
        self.edit(|s| {
            s.readiness_idle_ms = Some(idle_ms);
            s.readiness_stable_ms = Some(stable_ms);
            s.readiness_min_text_bytes = Some(min_text_bytes);
        })
    }
    /// `--readiness-budget-ms`: how long `auto`, `idle` and `load` waits may take after the
    /// main document arrived.
    pub fn readiness_budget_ms(self, ms: u64) -> Self {
        self.edit(|s| s.readiness_budget_ms = Some(ms))
    }
    /// `--stall-cutoff-ms`: how long a request to another site may go without a response
    /// before it is cut (0 = never cut).
    pub fn stall_cutoff_ms(self, ms: u64) -> Self {
        self.edit(|s| s.stall_cutoff_ms = Some(ms))
    }
    /// `--capture-ws` and `--capture-sse` (sensitive).
    pub fn capture_streams(self, websocket: bool, sse: bool) -> Self {
        self.edit(|s| {
            s.capture_ws = websocket;
            s.capture_sse = sse;
        })
    }
    /// `--no-network-redact` (sensitive): keep credential headers in network.json.
    pub fn no_network_redact(self) -> Self {
        self.edit(|s| s.no_network_redact = true)
    }
    /// `--tab new|<id>`.
    pub fn tab(self, tab: impl Into<String>) -> Self {
        let tab = tab.into();
        self.edit(|s| s.tab = Some(tab))
    }
    /// `--profile`: run on the host's persistent profile `name` (switching it if needed).
    pub fn profile(self, name: impl Into<String>) -> Self {
        let name = name.into();
        self.edit(|s| s.profile = Some(name))
    }
    /// `--takeover`: keep the tab for a human; without `.profile()` the host switches to the
    /// URL's site profile. `next_action` says when a human is needed.
    pub fn takeover(self) -> Self {
        self.edit(|s| s.takeover = true)
    }
    /// `--out`.
    pub fn out_dir(self, dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        self.edit(|s| s.out = Some(dir))
    }
    /// `--cookie-jar`.
    pub fn cookie_jar(self, path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        self.edit(|s| s.cookie_jar = Some(path))
    }
    /// `--retry` and `--backoff-ms`.
    pub fn retry(self, n: u32, backoff: Duration) -> Self {
        let ms = backoff.as_millis().min(u128::from(u64::MAX)) as u64;
        self.edit(|s| {
            s.retry = Some(n);
            s.backoff_ms = Some(ms);
        })
    }
    /// `--proxy-url` (http, https, socks5, socks5h; credentials allowed).
    pub fn proxy_url(self, url: impl Into<String>) -> Self {
        let url = crate::sdk::secret::Secret::new(url);
        self.edit(|s| s.proxy_url = Some(url))
    }
    /// `--ca-cert`: extra PEM CA certificate(s) to trust.
    pub fn ca_cert(self, path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        self.edit(|s| s.ca_cert = Some(path))
    }
    /// `--tls-insecure`: accept any certificate.
    pub fn tls_insecure(self) -> Self {
        self.edit(|s| s.tls_insecure = true)
    }
    /// `--deny-private-networks` / `--egress-allow`: refuse the addresses `policy` denies on
    /// this fetch's plain-HTTP step, every redirect hop included (`egress_denied`).
    pub fn egress_policy(mut self, policy: crate::sdk::egress::Policy) -> Self {
        self.egress = Some(policy);
        self
    }

    /// Validate and run the fetch against the client's host; browser work shares the
    /// client's CDP connection (a `.profile()` or `.takeover()` fetch opens its own, since it
    /// may switch the browser).
    pub async fn send(self) -> Result<FetchOutcome, FetchFailure> {
        if let Some(e) = self.error {
            return Err(FetchFailure::bare(e));
        }
        let mut req = self.spec.validate().map_err(FetchFailure::bare)?;
        if let Some(policy) = self.egress {
            req = req.with_egress_policy(policy);
        }
        let replay = vec![
            "--endpoint-url".into(),
            self.client.endpoint().to_flag_value(),
        ];
        let req = req.on_host(
            self.client.endpoint().clone(),
            self.client.token().map(Secret::new),
            replay,
        );
        let slot = if req.browser.profile.is_some() || req.browser.takeover {
            BrowserSlot::default()
        } else {
            BrowserSlot::sharing(self.client.sharing_connection())
        };
        crate::sdk::fetch::fetch_with(req, slot).await
    }
}

/// `client.cdp(method)`: set `.tab()` / `.params()`, then [`CdpBuilder::send`].
#[derive(Debug)]
#[must_use = "a CDP call does nothing until .send().await"]
pub struct CdpBuilder<'c> {
    client: &'c Client,
    method: String,
    params: Value,
    tab: Option<String>,
}

impl<'c> CdpBuilder<'c> {
    pub(crate) fn new(client: &'c Client, method: &str) -> CdpBuilder<'c> {
        CdpBuilder {
            client,
            method: method.to_string(),
            params: Value::Object(serde_json::Map::new()),
            tab: None,
        }
    }
    /// Send to this tab (a temporary flattened session) instead of the browser target.
    pub fn tab(mut self, tab: impl Into<String>) -> Self {
        self.tab = Some(tab.into());
        self
    }
    /// The method's parameters (default `{}`).
    pub fn params(mut self, params: Value) -> Self {
        self.params = params;
        self
    }
    /// Send it; the raw CDP result.
    pub async fn send(self) -> Result<Value, AfError> {
        self.client
            .cdp_call(&self.method, self.params, self.tab.as_deref())
            .await
    }
}

/// Validate a `Domain.method` name (the CLI's `cdp` and the MCP `cdp` tool).
pub fn validate_cdp_method(m: &str) -> Result<(), AfError> {
    let mut parts = m.split('.');
    let ok = matches!((parts.next(), parts.next(), parts.next()), (Some(d), Some(n), None)
        if !d.is_empty() && !n.is_empty()
            && d.chars().all(|c| c.is_ascii_alphanumeric())
            && n.chars().all(|c| c.is_ascii_alphanumeric()));
    if ok {
        Ok(())
    } else {
        Err(AfError::invalid(format!(
            "{m:?} is not a CDP method (Domain.method)"
        )))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::sdk::cookies::parse::parse_cli_cookie;
    use url::Url;

    #[test]
    fn cookies_take_the_flag_syntax_and_its_validation() {
        let url = Url::parse("http://app.example.com/a").unwrap();
        let c = FetchCookie::build(("session", "abc"))
            .path("/")
            .http_only(true)
            .same_site(FetchCookieSameSite::Lax)
            .build();
        let parsed = parse_cli_cookie(&c.to_spec().unwrap(), &url, 0).unwrap();
        assert_eq!(
            (parsed.name.as_str(), parsed.value.as_str()),
            ("session", "abc")
        );
        assert!(parsed.http_only && parsed.host_only);
        let bad = FetchCookie::build(("a", "b")).domain("other.org").build();
        assert!(parse_cli_cookie(&bad.to_spec().unwrap(), &url, 0).is_err());
        let smuggled = FetchCookie::build(("a", "b; Path=/x")).build();
        assert!(smuggled.to_spec().is_err());
    }
}
