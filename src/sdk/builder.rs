//! The SDK's call builders (spec §13): `client.fetch(url)…send()` and
//! `client.cdp(method)…send()`, plus [`FetchCookie`] for cookies set in code.
//!
//! They only assemble the same [`FetchRequest`] the CLI builds and run the same pipeline
//! ([`crate::sdk::fetch::fetch_with`]); a fetch reuses its client's CDP connection.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use url::Url;

use crate::error::AfError;
use crate::sdk::client::Client;
use crate::sdk::cookies::parse::parse_cli_cookie;
use crate::sdk::fetch::browser_path::BrowserSlot;
use crate::sdk::fetch::{
    FetchFailure, FetchOutcome, FetchRequest, FormValue, HeaderPair, RequestBody,
};
use crate::sdk::request::{Artifact, NetworkBodies, RenderMode, Wait};

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
#[derive(Debug)]
#[must_use = "a fetch does nothing until .send().await"]
pub struct FetchBuilder<'c> {
    client: &'c Client,
    req: Result<FetchRequest, AfError>,
    cookies: Vec<FetchCookie>,
}

impl<'c> FetchBuilder<'c> {
    pub(crate) fn new(client: &'c Client, url: &str) -> FetchBuilder<'c> {
        let req = Url::parse(url)
            .map_err(|e| AfError::invalid(format!("URL {url:?}: {e}")))
            .and_then(|u| match u.scheme() {
                "http" | "https" => Ok(u),
                other => Err(AfError::invalid(format!(
                    "URL scheme {other:?} is not fetched; use http or https"
                ))),
            })
            .map(|u| {
                let mut req = FetchRequest::get(u);
                req.timeout = client.timeout();
                req
            });
        FetchBuilder {
            client,
            req,
            cookies: Vec::new(),
        }
    }

    fn edit(mut self, f: impl FnOnce(&mut FetchRequest)) -> Self {
        if let Ok(req) = &mut self.req {
            f(req);
        }
        self
    }

    /// `--render`.
    pub fn render(self, mode: RenderMode) -> Self {
        self.edit(|r| r.render = mode)
    }
    /// `--wait`.
    pub fn wait(self, wait: Wait) -> Self {
        self.edit(|r| r.browser.wait = wait)
    }
    /// `--user-agent`.
    pub fn user_agent(self, ua: impl Into<String>) -> Self {
        let ua = ua.into();
        self.edit(|r| r.user_agent = Some(ua))
    }
    /// One request header (`--header`).
    pub fn header(self, name: impl Into<String>, value: impl Into<String>) -> Self {
        let h = HeaderPair {
            name: name.into(),
            value: value.into(),
        };
        self.edit(|r| r.headers.push(h))
    }
    /// A cookie as `name=value` for the request host (`--cookie name=value`).
    pub fn cookie(self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.cookie_full(FetchCookie::build((name, value)).build())
    }
    /// A cookie with attributes.
    pub fn cookie_full(mut self, cookie: FetchCookie) -> Self {
        self.cookies.push(cookie);
        self
    }
    /// `--method` (e.g. `POST`) without a body.
    pub fn method(self, method: impl Into<String>) -> Self {
        let method = method.into().to_ascii_uppercase();
        self.edit(|r| r.method = method)
    }
    /// `--form`: urlencoded text fields (method POST unless set).
    pub fn form(self, fields: impl IntoIterator<Item = (String, String)>) -> Self {
        let fields = fields
            .into_iter()
            .map(|(k, v)| (k, FormValue::Text(v)))
            .collect();
        self.edit(|r| {
            if r.method == "GET" {
                r.method = "POST".into();
            }
            r.body = Some(RequestBody::Form(fields));
        })
    }
    /// `--method` and a raw body (`--data`).
    pub fn body(self, method: impl Into<String>, body: impl Into<Vec<u8>>) -> Self {
        let (method, body) = (method.into().to_ascii_uppercase(), body.into());
        self.edit(|r| {
            r.method = method;
            r.body = Some(RequestBody::Bytes(body));
        })
    }
    /// `--evaluate-after-wait`.
    pub fn evaluate_after_wait(self, js: impl Into<String>) -> Self {
        let js = js.into();
        self.edit(|r| r.browser.evaluate_after_wait = Some(js))
    }
    /// `--timeout-ms` (default: the client's timeout).
    pub fn timeout(self, timeout: Duration) -> Self {
        self.edit(|r| r.timeout = timeout)
    }
    /// `--want`.
    pub fn want(self, artifacts: impl IntoIterator<Item = Artifact>) -> Self {
        let want: Vec<Artifact> = artifacts.into_iter().collect();
        self.edit(|r| r.want = Some(want))
    }
    /// `--network-bodies`.
    pub fn network_bodies(self, mode: NetworkBodies) -> Self {
        self.edit(|r| r.browser.network_bodies = Some(mode))
    }
    /// `--tab new|<id>`.
    pub fn tab(self, tab: impl Into<String>) -> Self {
        let tab = tab.into();
        self.edit(|r| r.browser.tab = Some(tab))
    }
    /// `--profile`: run on the host's persistent profile `name` (switching it if needed).
    pub fn profile(self, name: impl Into<String>) -> Self {
        let name = name.into();
        self.edit(|r| r.browser.profile = Some(name))
    }
    /// `--takeover`: keep the tab for a human; without `.profile()` the host switches to the
    /// URL's site profile. `next_action` says when a human is needed.
    pub fn takeover(self) -> Self {
        self.edit(|r| r.browser.takeover = true)
    }
    /// `--out`.
    pub fn out_dir(self, dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        self.edit(|r| r.out_dir = Some(dir))
    }
    /// `--cookie-jar`.
    pub fn cookie_jar(self, path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        self.edit(|r| r.cookie_jar = Some(path))
    }
    /// `--retry`.
    pub fn retry(self, n: u32) -> Self {
        self.edit(|r| r.retry = n.min(crate::sdk::fetch::MAX_RETRIES))
    }

    /// Run the fetch against the client's host; browser work shares the client's CDP
    /// connection (a `.profile()` or `.takeover()` fetch opens its own, since it may switch the
    /// browser).
    pub async fn send(self) -> Result<FetchOutcome, FetchFailure> {
        let mut req = self.req.map_err(FetchFailure::bare)?;
        let now = crate::sdk::cookies::now_unix();
        for c in &self.cookies {
            let cookie = c
                .to_spec()
                .and_then(|spec| parse_cli_cookie(&spec, &req.url, now))
                .map_err(FetchFailure::bare)?;
            req.cookies.push(cookie);
        }
        req.endpoint = Some(self.client.endpoint().clone());
        req.token = self.client.token().map(String::from);
        req.browser.replay_args = vec![
            "--endpoint-url".into(),
            self.client.endpoint().to_flag_value(),
        ];
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

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
