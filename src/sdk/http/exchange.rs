//! One HTTP attempt up to the final response's headers: redirects followed by hand so
//! each hop is recorded and cookies are stored and sent per hop, as a browser would.

use std::time::Instant;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use url::Url;

use crate::error::{AfError, ErrorCode};
use crate::sdk::cookies::jar::CookieJar;
use crate::sdk::cookies::matching::{select_for_url, SkippedCookie};
use crate::sdk::cookies::parse::parse_set_cookie;
use crate::sdk::cookies::Cookie;
use crate::sdk::fetch::{FetchRequest, FormValue, RequestBody, MAX_REDIRECTS};
use crate::sdk::http::errors;
use crate::sdk::secret::Secret;

/// One request/response pair of the redirect chain.
#[derive(Debug, Clone)]
pub struct Hop {
    /// The URL requested.
    pub url: Url,
    /// The method used for this hop.
    pub method: String,
    /// Headers afhttp set on the request.
    pub request_headers: Vec<(String, String)>,
    /// Request body size, when there was one.
    pub request_body_bytes: Option<u64>,
    /// Response status.
    pub status: u16,
    /// Reason phrase.
    pub status_text: String,
    /// `http/1.1`, `h2`, ...
    pub protocol: String,
    /// Response headers (lower-case names, in order).
    pub response_headers: Vec<(String, String)>,
    /// Peer address.
    pub remote_address: Option<String>,
    /// Milliseconds from fetch start when the request was sent.
    pub started_ms: f64,
    /// Milliseconds from fetch start when headers arrived.
    pub headers_ms: f64,
    /// Milliseconds from fetch start when the body finished.
    pub finished_ms: Option<f64>,
    /// Decoded body bytes read.
    pub body_bytes: Option<u64>,
}

/// Cookies in play during one fetch.
#[derive(Debug, Default)]
pub struct CookieState {
    /// The jar as loaded (plus cookies received so far).
    pub jar: CookieJar,
    /// `--cookie` values: sent when they match, never stored.
    pub extra: Vec<Cookie>,
    /// Cookies received from `Set-Cookie` during this fetch, in order.
    pub received: Vec<Cookie>,
    /// Cookies that matched but were not sent (Secure over http), deduplicated.
    pub skipped: Vec<SkippedCookie>,
}

impl CookieState {
    fn header_for(&mut self, url: &Url, now: i64) -> Option<String> {
        let mut all = self.jar.cookies.clone();
        all.extend(self.extra.iter().cloned());
        let selection = select_for_url(&all, url, now);
        for s in selection.skipped {
            if !self.skipped.iter().any(|k| k.name == s.name) {
                self.skipped.push(s);
            }
        }
        selection.header
    }

    fn receive(&mut self, headers: &[(String, String)], url: &Url, now: i64) {
        for (_, value) in headers.iter().filter(|(n, _)| n == "set-cookie") {
            if let Some(c) = parse_set_cookie(value, url, now) {
                self.jar.store(c.clone(), now);
                self.received.push(c);
            }
        }
    }
}

/// The final response (body unread) and the chain that led to it.
pub struct Exchange {
    /// Every hop, the final one last.
    pub hops: Vec<Hop>,
    /// The final response; its body is streamed by the caller.
    pub response: reqwest::Response,
}

/// A failed attempt with the hops completed before the failure.
pub struct ExchangeError {
    /// The stable error.
    pub error: AfError,
    /// Hops completed.
    pub hops: Vec<Hop>,
}

/// Current Unix time in seconds.
pub fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

fn ms_since(t0: Instant) -> f64 {
    (t0.elapsed().as_secs_f64() * 1000.0 * 10.0).round() / 10.0
}

/// Run the redirect chain for `req` and return the final response.
pub async fn run(
    clients: &super::client::Clients,
    req: &FetchRequest,
    cookies: &mut CookieState,
    t0: Instant,
) -> Result<Exchange, ExchangeError> {
    let mut hops: Vec<Hop> = Vec::new();
    let mut url = req.url.clone();
    let mut method = req.method.clone();
    let mut body = req.body.clone();
    let mut send_user_credentials = true;
    loop {
        if let Some(policy) = &req.transport.egress {
            let proxy = req.transport.proxy_url.as_ref().map(Secret::expose_url);
            if let Err(error) = super::guard::check_hop(policy, &url, proxy).await {
                return Err(ExchangeError { error, hops });
            }
        }
        let client = match clients.for_url(&url) {
            Ok(c) => c,
            Err(error) => return Err(ExchangeError { error, hops }),
        };
        let now = now_unix();
        let (request, sent_headers, body_bytes) = match build_request(
            client,
            req,
            &url,
            &method,
            body.as_ref(),
            cookies,
            now,
            send_user_credentials,
        )
        .await
        {
            Ok(r) => r,
            Err(error) => return Err(ExchangeError { error, hops }),
        };
        let started_ms = ms_since(t0);
        let response = match client.execute(request).await {
            Ok(r) => r,
            Err(e) => {
                let error = errors::map_reqwest(&e, &url, req.transport.proxy_url.is_some());
                return Err(ExchangeError { error, hops });
            }
        };
        let response_headers = header_pairs(response.headers());
        cookies.receive(&response_headers, &url, now_unix());
        let status = response.status();
        let hop = Hop {
            url: url.clone(),
            method: method.clone(),
            request_headers: sent_headers,
            request_body_bytes: body_bytes,
            status: status.as_u16(),
            status_text: status.canonical_reason().unwrap_or("").to_string(),
            protocol: protocol_name(response.version()),
            response_headers,
            remote_address: response.remote_addr().map(|a| a.to_string()),
            started_ms,
            headers_ms: ms_since(t0),
            finished_ms: None,
            body_bytes: None,
        };
        let next = redirect_target(&hop);
        let Some(next) = next else {
            hops.push(hop);
            return Ok(Exchange { hops, response });
        };
        // Drain the redirect body (bounded) so the hop is complete before moving on.
        let mut hop = hop;
        let drained = drain(response, &url).await;
        hop.finished_ms = Some(ms_since(t0));
        hop.body_bytes = drained.ok();
        hops.push(hop);
        if hops.len() > MAX_REDIRECTS {
            return Err(ExchangeError {
                error: AfError::new(
                    ErrorCode::RedirectLoop,
                    format!("more than {MAX_REDIRECTS} redirects, last to {next}"),
                ),
                hops,
            });
        }
        let status = status.as_u16();
        if status == 303 || ((status == 301 || status == 302) && method == "POST") {
            if method != "HEAD" {
                method = "GET".to_string();
            }
            body = None;
        }
        if next.origin() != url.origin() {
            send_user_credentials = false;
        }
        url = next;
    }
}

/// Headers as (lower-case name, lossy UTF-8 value) pairs, in order.
fn header_pairs(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

fn redirect_target(hop: &Hop) -> Option<Url> {
    if !matches!(hop.status, 301 | 302 | 303 | 307 | 308) {
        return None;
    }
    let location = hop
        .response_headers
        .iter()
        .find(|(n, _)| n == "location")
        .map(|(_, v)| v.as_str())?;
    let next = hop.url.join(location).ok()?;
    matches!(next.scheme(), "http" | "https").then_some(next)
}

async fn drain(mut response: reqwest::Response, url: &Url) -> Result<u64, AfError> {
    let mut total = 0u64;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| errors::map_reqwest(&e, url, false))?
    {
        total += chunk.len() as u64;
        if total > 1 << 20 {
            break;
        }
    }
    Ok(total)
}

fn protocol_name(v: reqwest::Version) -> String {
    match v {
        reqwest::Version::HTTP_09 => "http/0.9",
        reqwest::Version::HTTP_10 => "http/1.0",
        reqwest::Version::HTTP_11 => "http/1.1",
        reqwest::Version::HTTP_2 => "h2",
        reqwest::Version::HTTP_3 => "h3",
        _ => "unknown",
    }
    .to_string()
}

#[allow(clippy::too_many_arguments)]
async fn build_request(
    client: &reqwest::Client,
    req: &FetchRequest,
    url: &Url,
    method: &str,
    body: Option<&RequestBody>,
    cookies: &mut CookieState,
    now: i64,
    send_user_credentials: bool,
) -> Result<(reqwest::Request, Vec<(String, String)>, Option<u64>), AfError> {
    let m = reqwest::Method::from_bytes(method.as_bytes()).map_err(|_| {
        AfError::invalid(format!("method {method:?} is not valid")).with_field("method")
    })?;
    let mut headers = HeaderMap::new();
    let mut user_cookie: Option<String> = None;
    for h in &req.headers {
        let lower = h.name.to_ascii_lowercase();
        let credential = matches!(
            lower.as_str(),
            "authorization" | "proxy-authorization" | "cookie"
        );
        if credential && !send_user_credentials {
            continue;
        }
        if lower == "cookie" {
            user_cookie = Some(h.value.clone());
            continue;
        }
        let name = HeaderName::from_bytes(h.name.as_bytes()).map_err(|_| {
            AfError::invalid(format!("header name {:?} is not valid", h.name)).with_field("header")
        })?;
        let value = HeaderValue::from_str(&h.value).map_err(|_| {
            AfError::invalid(format!("header {}: the value is not valid", h.name))
                .with_field("header")
        })?;
        headers.append(name, value);
    }
    if let Some(ua) = &req.user_agent {
        let v = HeaderValue::from_str(ua).map_err(|_| {
            AfError::invalid("user_agent is not a valid header value").with_field("user_agent")
        })?;
        headers.insert(reqwest::header::USER_AGENT, v);
    }
    let jar_cookie = cookies.header_for(url, now);
    let cookie = match (user_cookie, jar_cookie) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or(b),
    };
    if let Some(c) = cookie {
        let v = HeaderValue::from_str(&c)
            .map_err(|_| AfError::invalid("a cookie value is not a valid header value"))?;
        headers.insert(reqwest::header::COOKIE, v);
    }
    let mut rb = client.request(m, url.clone()).headers(headers);
    let mut body_bytes = None;
    match body {
        None => {}
        Some(RequestBody::Bytes(bytes)) => {
            if !req
                .headers
                .iter()
                .any(|h| h.name.eq_ignore_ascii_case("content-type"))
            {
                rb = rb.header(
                    reqwest::header::CONTENT_TYPE,
                    "application/x-www-form-urlencoded",
                );
            }
            body_bytes = Some(bytes.len() as u64);
            rb = rb.body(bytes.clone());
        }
        Some(form @ RequestBody::Form(fields)) if !form.is_multipart() => {
            let mut ser = url::form_urlencoded::Serializer::new(String::new());
            for (k, v) in fields {
                if let FormValue::Text(t) = v {
                    ser.append_pair(k, t);
                }
            }
            let encoded = ser.finish();
            body_bytes = Some(encoded.len() as u64);
            rb = rb
                .header(
                    reqwest::header::CONTENT_TYPE,
                    "application/x-www-form-urlencoded",
                )
                .body(encoded);
        }
        Some(RequestBody::Form(fields)) => {
            let mut form = reqwest::multipart::Form::new();
            for (k, v) in fields {
                form = match v {
                    FormValue::Text(t) => form.text(k.clone(), t.clone()),
                    FormValue::File(path) => {
                        let bytes = tokio::fs::read(path).await.map_err(|e| {
                            AfError::invalid(format!("form {k}=@{}: {e}", path.display()))
                                .with_field("form")
                        })?;
                        let name = path
                            .file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_else(|| "file".into());
                        form.part(
                            k.clone(),
                            reqwest::multipart::Part::bytes(bytes).file_name(name),
                        )
                    }
                };
            }
            rb = rb.multipart(form);
        }
    }
    let request = rb
        .build()
        .map_err(|e| AfError::invalid(format!("cannot build the request: {e}")))?;
    let mut sent = header_pairs(request.headers());
    if !sent.iter().any(|(n, _)| n == "user-agent") {
        sent.push(("user-agent".into(), super::client::default_user_agent()));
    }
    if let Some(host) = url.host_str() {
        let host = match url.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_string(),
        };
        sent.insert(0, ("host".into(), host));
    }
    Ok((request, sent, body_bytes))
}
