//! [`FetchSpec::validate`]: the one place a fetch request is checked.
//!
//! Headers and the refused header names, method and body, cookies, `tab`, user agent,
//! limits, URL and option conflicts are all decided here, for the CLI, the SDK builder and
//! MCP alike. Errors name the spec field (`AfError::field`); each front end turns the field
//! into its own hint (the CLI into a flag name).

use std::path::PathBuf;
use std::time::Duration;

use crate::error::AfError;
use crate::profile::{Backend, ProfileName};
use crate::sdk::cookies::parse::parse_cli_cookie;
use crate::sdk::cookies::Cookie;
use crate::sdk::fetch::options::{self, HeaderPair, RequestBody, TransportOptions};
use crate::sdk::fetch::spec::FetchSpec;
use crate::sdk::fetch::takeover;
use crate::sdk::fetch::{BrowserOptions, FetchRequest, MAX_RETRIES};
use crate::sdk::request::{Artifact, NetworkBodies, RenderMode, Wait, MAX_WAIT_MS};
use crate::sdk::tab_id::TabId;

/// Largest accepted `timeout_ms` (24 hours).
pub const MAX_TIMEOUT_MS: u64 = 24 * 60 * 60 * 1000;
/// Largest accepted `backoff_ms`.
pub const MAX_BACKOFF_MS: u64 = 60_000;
/// Largest accepted `network_body_max_bytes` (1 GiB).
pub const MAX_NETWORK_BODY_BYTES: u64 = 1 << 30;
/// Longest accepted user agent.
const MAX_USER_AGENT_BYTES: usize = 4096;
/// Longest accepted `evaluate_after_wait` script (1 MiB).
const MAX_SCRIPT_BYTES: usize = 1 << 20;

/// Attach the spec field an error is about.
fn on(field: &'static str) -> impl Fn(AfError) -> AfError {
    move |e| e.with_field(field)
}

fn invalid(field: &'static str, message: impl Into<String>) -> AfError {
    AfError::invalid(message).with_field(field)
}

/// How the page is rendered and what is written: the first group of checked options.
struct Rendering {
    render: RenderMode,
    wait: Wait,
    want: Option<Vec<Artifact>>,
    network_bodies: Option<NetworkBodies>,
}

/// The request line and what travels with it.
struct RequestLine {
    method: String,
    headers: Vec<HeaderPair>,
    body: Option<RequestBody>,
}

/// Bounds on the attempts.
struct Limits {
    timeout: Duration,
    retry: u32,
    backoff: Duration,
}

impl FetchSpec {
    /// Check every option and turn the spec into the request the pipeline runs.
    ///
    /// `data: "@file"` is read here (and `"@-"` reads standard input), so a request that
    /// validates has its whole body. `takeover` without `profile` gets its site profile here,
    /// the one place it is derived.
    pub fn validate(self) -> Result<FetchRequest, AfError> {
        let url = options::parse_target_url(&self.url).map_err(on("url"))?;
        let rendering = self.rendering()?;
        let line = self.request_line()?;
        let (cookies, cookie_jar) = self.cookies(&url)?;
        let limits = self.limits()?;
        let browser = self.browser_options(&url, rendering.wait, rendering.network_bodies)?;
        let browser_family = self
            .browser
            .as_deref()
            .map(Backend::parse)
            .transpose()
            .map_err(on("browser"))?;
        let transport = self.transport()?;
        let max_pdf_pages = self
            .max_pdf_pages
            .unwrap_or(crate::sdk::documents::pdf::DEFAULT_MAX_PAGES);
        if max_pdf_pages == 0 {
            return Err(invalid("max_pdf_pages", "max_pdf_pages must be at least 1"));
        }
        Ok(FetchRequest {
            method: line.method,
            headers: line.headers,
            body: line.body,
            cookies,
            user_agent: self.user_agent,
            render: rendering.render,
            want: rendering.want,
            http_default_want: None,
            out_dir: self.out,
            out_root: None,
            cookie_jar,
            implicit_jar: !self.no_cookie_jar,
            retry: limits.retry,
            backoff: limits.backoff,
            transport,
            timeout: limits.timeout,
            max_response_bytes: self
                .max_response_bytes
                .unwrap_or(super::DEFAULT_MAX_RESPONSE_BYTES),
            no_network_redact: self.no_network_redact,
            documents: crate::sdk::documents::DocumentOptions {
                max_pdf_pages,
                accept_markdown: self.accept_markdown,
            },
            browser_bin: self.browser_bin,
            browser_family,
            browser,
            ..FetchRequest::get(url)
        })
    }

    /// `render`, `wait`, `want` and `network_bodies`, and what `render: none` refuses.
    fn rendering(&self) -> Result<Rendering, AfError> {
        let render: RenderMode = match &self.render {
            Some(r) => r.parse().map_err(on("render"))?,
            None => RenderMode::Auto,
        };
        let wait: Wait = match &self.wait {
            Some(w) => w.parse().map_err(on("wait"))?,
            None => Wait::Auto,
        };
        let mut want = self
            .want
            .as_deref()
            .map(Artifact::parse_list)
            .transpose()
            .map_err(on("want"))?;
        // `lean.md` refers to `links.json` by index and to `content.md` by line (what it
        // folds): without them it would lose links and folded blocks.
        if let Some(w) = want.as_mut() {
            if w.contains(&Artifact::Lean) {
                for a in [Artifact::Links, Artifact::Content] {
                    if !w.contains(&a) {
                        w.push(a);
                    }
                }
            }
        }
        let network_bodies = self
            .network_bodies
            .as_deref()
            .map(str::parse::<NetworkBodies>)
            .transpose()
            .map_err(on("network_bodies"))?;
        self.check_render_none(render, want.as_deref())?;
        Ok(Rendering {
            render,
            wait,
            want,
            network_bodies,
        })
    }

    /// Method, body, headers and user agent.
    fn request_line(&self) -> Result<RequestLine, AfError> {
        let body = self.body()?;
        let method = match &self.method {
            Some(m) => options::parse_method(m).map_err(on("method"))?,
            None if body.is_some() => "POST".to_string(),
            None => "GET".to_string(),
        };
        if body.is_some() && (method == "HEAD" || method == "GET" && !self.form.is_empty()) {
            return Err(invalid(
                "method",
                format!("method {method} cannot carry a request body"),
            ));
        }
        let headers = self
            .header
            .iter()
            .map(|h| HeaderPair::parse(h))
            .collect::<Result<Vec<_>, _>>()
            .map_err(on("header"))?;
        if let Some(ua) = &self.user_agent {
            if ua.chars().any(char::is_control) || ua.len() > MAX_USER_AGENT_BYTES {
                return Err(invalid(
                    "user_agent",
                    "user_agent has control characters or is longer than 4096 bytes",
                ));
            }
        }
        Ok(RequestLine {
            method,
            headers,
            body,
        })
    }

    /// The cookies to send (checked against `url`) and the jar file, if any.
    fn cookies(&self, url: &url::Url) -> Result<(Vec<Cookie>, Option<PathBuf>), AfError> {
        let now = crate::sdk::cookies::now_unix();
        let cookies = self
            .cookie
            .iter()
            .map(|c| parse_cli_cookie(c, url, now))
            .collect::<Result<Vec<_>, _>>()
            .map_err(on("cookie"))?;
        if self.no_cookie_jar && self.cookie_jar.is_some() {
            return Err(invalid(
                "no_cookie_jar",
                "cookie_jar and no_cookie_jar cannot be combined",
            ));
        }
        let cookie_jar = match (&self.cookie_jar, self.no_cookie_jar) {
            (Some(p), false) if p.as_os_str().is_empty() => {
                return Err(invalid("cookie_jar", "cookie_jar is empty"))
            }
            (Some(p), false) => Some(crate::fsutil::absolute(p)),
            _ => None,
        };
        Ok((cookies, cookie_jar))
    }

    /// `timeout_ms`, `retry` and `backoff_ms`, defaults filled in.
    fn limits(&self) -> Result<Limits, AfError> {
        let timeout_ms = self.timeout_ms.unwrap_or(crate::sdk::defaults::TIMEOUT_MS);
        if timeout_ms == 0 || timeout_ms > MAX_TIMEOUT_MS {
            return Err(invalid(
                "timeout_ms",
                format!("timeout_ms must be between 1 and {MAX_TIMEOUT_MS}"),
            ));
        }
        let retry = self.retry.unwrap_or(0);
        if retry > MAX_RETRIES {
            return Err(invalid("retry", format!("retry is at most {MAX_RETRIES}")));
        }
        let backoff_ms = self.backoff_ms.unwrap_or(crate::sdk::defaults::BACKOFF_MS);
        if backoff_ms > MAX_BACKOFF_MS {
            return Err(invalid(
                "backoff_ms",
                format!("backoff_ms is at most {MAX_BACKOFF_MS}"),
            ));
        }
        Ok(Limits {
            timeout: Duration::from_millis(timeout_ms),
            retry,
            backoff: Duration::from_millis(backoff_ms),
        })
    }

    /// The options a browser applies, defaults filled in; `takeover` without `profile`
    /// gets the URL's site profile.
    fn browser_options(
        &self,
        url: &url::Url,
        wait: Wait,
        network_bodies: Option<NetworkBodies>,
    ) -> Result<BrowserOptions, AfError> {
        let defaults = BrowserOptions::default();
        let network_body_max_bytes = self
            .network_body_max_bytes
            .unwrap_or(defaults.network_body_max_bytes);
        if network_body_max_bytes > MAX_NETWORK_BODY_BYTES {
            return Err(invalid(
                "network_body_max_bytes",
                format!("network_body_max_bytes is at most {MAX_NETWORK_BODY_BYTES}"),
            ));
        }
        for (field, v) in [
            ("readiness_idle_ms", self.readiness_idle_ms),
            ("readiness_stable_ms", self.readiness_stable_ms),
            ("readiness_budget_ms", self.readiness_budget_ms),
            ("stall_cutoff_ms", self.stall_cutoff_ms),
        ] {
            if v.is_some_and(|v| v > MAX_WAIT_MS) {
                return Err(invalid(field, format!("{field} is at most {MAX_WAIT_MS}")));
            }
        }
        if self.out.as_ref().is_some_and(|o| o.as_os_str().is_empty()) {
            return Err(invalid("out", "out is empty"));
        }
        let tab = self
            .tab
            .as_deref()
            .map(TabId::parse_fetch_tab)
            .transpose()?;
        let (profile, profile_derived) = self.profile(url)?;
        if let Some(js) = &self.evaluate_after_wait {
            if js.len() > MAX_SCRIPT_BYTES {
                return Err(invalid(
                    "evaluate_after_wait",
                    "evaluate_after_wait is longer than 1 MiB",
                ));
            }
        }
        let screenshot_format = self.screenshot()?;
        let dialog_accept = match self.dialog.as_deref() {
            None | Some("dismiss") => false,
            Some("accept") => true,
            Some(other) => {
                return Err(invalid(
                    "dialog",
                    format!("dialog must be accept or dismiss, not {other:?}"),
                ))
            }
        };
        Ok(BrowserOptions {
            wait,
            tab,
            takeover: self.takeover,
            profile,
            profile_derived,
            evaluate_after_wait: self.evaluate_after_wait.clone(),
            network_bodies,
            network_body_max_bytes,
            readiness_idle_ms: self.readiness_idle_ms.unwrap_or(defaults.readiness_idle_ms),
            readiness_stable_ms: self
                .readiness_stable_ms
                .unwrap_or(defaults.readiness_stable_ms),
            readiness_idle_evidence: self.readiness_stable_ms.is_none(),
            readiness_budget_ms: self
                .readiness_budget_ms
                .unwrap_or(defaults.readiness_budget_ms),
            stall_cutoff_ms: self.stall_cutoff_ms.unwrap_or(defaults.stall_cutoff_ms),
            readiness_min_text_bytes: self
                .readiness_min_text_bytes
                .unwrap_or(defaults.readiness_min_text_bytes),
            capture_ws: self.capture_ws,
            capture_sse: self.capture_sse,
            dialog_accept,
            screenshot_format,
            screenshot_quality: self.screenshot_quality,
            screenshot_max_height: self.screenshot_max_height,
            ..defaults
        })
    }

    /// The profile and whether it was derived: `profile` as given, or for `takeover` the
    /// URL's site ([`takeover::site_profile`]); the one place that decides it.
    fn profile(&self, url: &url::Url) -> Result<(Option<String>, bool), AfError> {
        match &self.profile {
            Some(p) => {
                ProfileName::parse(p).map_err(on("profile"))?;
                Ok((Some(p.clone()), false))
            }
            None if self.takeover => Ok((Some(takeover::site_profile(url)?), true)),
            None => Ok((None, false)),
        }
    }

    /// `screenshot_format` (its canonical name), `screenshot_quality` and
    /// `screenshot_max_height`.
    fn screenshot(&self) -> Result<&'static str, AfError> {
        let format = match self.screenshot_format.as_deref() {
            None | Some("png") => "png",
            Some("jpeg" | "jpg") => "jpeg",
            Some("webp") => "webp",
            Some(other) => {
                return Err(invalid(
                    "screenshot_format",
                    format!("screenshot_format must be png, jpeg or webp, not {other:?}"),
                ))
            }
        };
        if let Some(q) = self.screenshot_quality {
            if format == "png" {
                return Err(invalid(
                    "screenshot_quality",
                    "screenshot_quality applies to jpeg and webp only (png is lossless)",
                ));
            }
            if !(1..=100).contains(&q) {
                return Err(invalid(
                    "screenshot_quality",
                    "screenshot_quality is between 1 and 100",
                ));
            }
        }
        if self.screenshot_max_height == Some(0) {
            return Err(invalid(
                "screenshot_max_height",
                "screenshot_max_height is at least 1",
            ));
        }
        Ok(format)
    }

    /// Proxy, CA certificate and TLS checking.
    fn transport(&self) -> Result<TransportOptions, AfError> {
        let transport = TransportOptions {
            proxy_url: self
                .proxy_url
                .as_ref()
                .map(|p| options::parse_proxy_url(p.expose()))
                .transpose()
                .map_err(on("proxy_url"))?,
            ca_cert: self.ca_cert.clone(),
            tls_insecure: self.tls_insecure,
            egress: None,
        };
        if transport
            .ca_cert
            .as_ref()
            .is_some_and(|p| p.as_os_str().is_empty())
        {
            return Err(invalid("ca_cert", "ca_cert is empty"));
        }
        Ok(transport)
    }

    /// The request body from `data`, `data_bytes` or `form` (at most one of them).
    fn body(&self) -> Result<Option<RequestBody>, AfError> {
        let given = [
            self.data.is_some(),
            self.data_bytes.is_some(),
            !self.form.is_empty(),
        ];
        if given.iter().filter(|g| **g).count() > 1 {
            return Err(invalid("form", "data and form cannot be combined"));
        }
        if let Some(bytes) = &self.data_bytes {
            return Ok(Some(RequestBody::Bytes(bytes.clone())));
        }
        if let Some(d) = &self.data {
            return options::read_data(d)
                .map(|b| Some(RequestBody::Bytes(b)))
                .map_err(on("data"));
        }
        if self.form.is_empty() {
            return Ok(None);
        }
        let fields = self
            .form
            .iter()
            .map(|f| options::parse_form_field(f))
            .collect::<Result<_, _>>()
            .map_err(on("form"))?;
        Ok(Some(RequestBody::Form(fields)))
    }

    /// `render: none` never starts a browser, so every browser-only option is refused out
    /// loud rather than accepted and ignored.
    fn check_render_none(
        &self,
        render: RenderMode,
        want: Option<&[Artifact]>,
    ) -> Result<(), AfError> {
        if render != RenderMode::None {
            return Ok(());
        }
        if let Some(a) = want.into_iter().flatten().find(|a| a.browser_only()) {
            return Err(invalid(
                "want",
                format!(
                    "want {} needs a browser, but render none never starts one",
                    a.as_str()
                ),
            ));
        }
        let browser_only: [(&'static str, bool); 19] = [
            ("screenshot_format", self.screenshot_format.is_some()),
            ("screenshot_quality", self.screenshot_quality.is_some()),
            (
                "screenshot_max_height",
                self.screenshot_max_height.is_some(),
            ),
            ("dialog", self.dialog.is_some()),
            ("profile", self.profile.is_some()),
            ("takeover", self.takeover),
            ("tab", self.tab.is_some()),
            ("evaluate_after_wait", self.evaluate_after_wait.is_some()),
            ("capture_ws", self.capture_ws),
            ("capture_sse", self.capture_sse),
            ("network_bodies", self.network_bodies.is_some()),
            (
                "network_body_max_bytes",
                self.network_body_max_bytes.is_some(),
            ),
            ("wait", self.wait.is_some()),
            ("readiness_idle_ms", self.readiness_idle_ms.is_some()),
            ("readiness_stable_ms", self.readiness_stable_ms.is_some()),
            ("readiness_budget_ms", self.readiness_budget_ms.is_some()),
            (
                "readiness_min_text_bytes",
                self.readiness_min_text_bytes.is_some(),
            ),
            ("browser", self.browser.is_some()),
            ("browser_bin", self.browser_bin.is_some()),
        ];
        match browser_only.into_iter().find(|(_, set)| *set) {
            Some((field, _)) => Err(invalid(
                field,
                format!("{field} needs a browser render, but render is none"),
            )
            .with_hint("drop render none, or drop this option")),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests;
