//! Navigation: request setup (headers, user agent, cookies), GET or body-carrying methods
//! through `Fetch.continueRequest`, and `errorText` → stable codes.

use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Map, Value};
use tokio::sync::mpsc;

use super::document::{self, MainDocument};
use crate::error::{AfError, ErrorCode, Warning};
use crate::sdk::cdp::CdpConnection;
use crate::sdk::fetch::{FetchRequest, FormValue, RequestBody};

/// The identity a tab was given.
#[derive(Debug)]
pub struct Prepared {
    /// `trace.user_agent`.
    pub trace: Value,
    /// The override's parameters, when the tab's identity is not the browser's own: its
    /// service and shared workers need them too.
    pub worker_override: Option<Value>,
}

/// Install the request's headers and cookies on the session (its identity is
/// [`identity`]'s).
pub async fn install_request_state(
    conn: &CdpConnection,
    session: &str,
    req: &FetchRequest,
    t: Duration,
) -> Result<(), AfError> {
    let s = Some(session);
    let headers = async {
        if req.headers.is_empty() {
            return Ok(Value::Null);
        }
        let mut headers = Map::new();
        for h in &req.headers {
            headers.insert(h.name.clone(), json!(h.value));
        }
        conn.send(
            s,
            "Network.setExtraHTTPHeaders",
            json!({ "headers": headers }),
            t,
        )
        .await
    };
    let cookies = async {
        if req.cookies.is_empty() {
            return Ok(Value::Null);
        }
        let cookies: Vec<Value> = req.cookies.iter().map(|c| cookie_param(c, req)).collect();
        conn.send(s, "Network.setCookies", json!({ "cookies": cookies }), t)
            .await
    };
    let (headers, cookies) = tokio::join!(headers, cookies);
    headers?;
    cookies?;
    Ok(())
}

/// The browser's `Browser.getVersion` answer; `Null` when the backend does not answer it
/// (then a tab keeps the browser's own identity).
pub async fn browser_version(conn: &CdpConnection, t: Duration) -> Value {
    conn.send(None, "Browser.getVersion", json!({}), t)
        .await
        .unwrap_or(Value::Null)
}

/// The tab's identity ([`super::identity`]): the browser's own User-Agent without its
/// headless token (or `--user-agent`) with matching client hints. (`navigator.webdriver` is
/// the launch's `--disable-blink-features=AutomationControlled`.)
pub async fn identity(
    conn: &CdpConnection,
    session: &str,
    req: &FetchRequest,
    version: &Value,
    t: Duration,
) -> Result<Prepared, AfError> {
    let s = Some(session);
    let brand = super::identity::family_brand(req.browser_family.map(|b| b.as_str()));
    let plan = super::identity::plan(
        version["userAgent"].as_str().unwrap_or(""),
        version["product"].as_str().unwrap_or(""),
        req.user_agent.as_deref(),
        brand,
    );
    let mut worker_override = None;
    if let Some(ua) = &plan.user_agent {
        let mut params = json!({ "userAgent": ua });
        if let Some(m) = &plan.metadata {
            params["userAgentMetadata"] = m.clone();
        }
        conn.send(s, "Emulation.setUserAgentOverride", params.clone(), t)
            .await?;
        worker_override = Some(params);
    }
    Ok(Prepared {
        trace: plan.trace,
        worker_override,
    })
}

/// One `Network.CookieParam`: host-only cookies are set by URL so they stay host-only.
pub fn cookie_param(c: &crate::sdk::cookies::Cookie, req: &FetchRequest) -> Value {
    let mut p = json!({
        "name": c.name,
        "value": c.value,
        "path": c.path,
        "secure": c.secure,
        "httpOnly": c.http_only,
    });
    if c.host_only {
        let scheme = if c.secure { "https" } else { req.url.scheme() };
        let port = req
            .url
            .port()
            .filter(|_| req.url.host_str() == Some(c.domain.as_str()))
            .map(|p| format!(":{p}"))
            .unwrap_or_default();
        p["url"] = json!(format!("{scheme}://{}{port}{}", c.domain, c.path));
    } else {
        p["domain"] = json!(format!(".{}", c.domain));
    }
    if let Some(ss) = c.same_site {
        p["sameSite"] = json!(ss.as_str());
    }
    if let Some(at) = c.expires_at_unix {
        p["expires"] = json!(at);
    }
    p
}

/// The body bytes and the content type to send with them.
pub fn encode_body(req: &FetchRequest) -> Result<Option<(Vec<u8>, String)>, AfError> {
    let explicit = req
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-type"))
        .map(|h| h.value.clone());
    let Some(body) = &req.body else {
        return Ok(None);
    };
    let (bytes, ct) = match body {
        RequestBody::Bytes(b) => (b.clone(), "application/x-www-form-urlencoded".to_string()),
        RequestBody::Form(fields) if !body.is_multipart() => {
            let mut ser = url::form_urlencoded::Serializer::new(String::new());
            for (k, v) in fields {
                if let FormValue::Text(t) = v {
                    ser.append_pair(k, t);
                }
            }
            (
                ser.finish().into_bytes(),
                "application/x-www-form-urlencoded".to_string(),
            )
        }
        RequestBody::Form(fields) => multipart(fields)?,
    };
    Ok(Some((bytes, explicit.unwrap_or(ct))))
}

fn multipart(fields: &[(String, FormValue)]) -> Result<(Vec<u8>, String), AfError> {
    let boundary = format!("afhttp-{}", uuid::Uuid::new_v4().simple());
    let mut out = Vec::new();
    for (name, value) in fields {
        out.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        let name = name.replace('"', "%22");
        match value {
            FormValue::Text(t) => {
                out.extend_from_slice(
                    format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes(),
                );
                out.extend_from_slice(t.as_bytes());
            }
            FormValue::File(path) => {
                let bytes = std::fs::read(path).map_err(|e| AfError::io(path.display(), &e))?;
                let file = path
                    .file_name()
                    .map(|f| f.to_string_lossy().replace('"', "%22"))
                    .unwrap_or_default();
                out.extend_from_slice(
                    format!("Content-Disposition: form-data; name=\"{name}\"; filename=\"{file}\"\r\nContent-Type: application/octet-stream\r\n\r\n").as_bytes(),
                );
                out.extend_from_slice(&bytes);
            }
        }
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    Ok((out, format!("multipart/form-data; boundary={boundary}")))
}

/// What a navigation ended with.
#[derive(Debug, Default)]
pub struct Navigated {
    /// The navigation became a download (not an error: the browser aborts the navigation
    /// with `net::ERR_ABORTED` and saves the response on the host).
    pub download: bool,
    /// The main response was a document, read before the browser saw it.
    pub document: Option<MainDocument>,
    /// Why a main response that is not HTML was not read.
    pub warning: Option<Warning>,
}

/// Continue every `Fetch.requestPaused` left on `paused` after [`navigate`] returned (a
/// subframe document paused while the patterns were being narrowed). Never returns: the
/// fetch ends it (a closed channel means the session ended, which the fetch reports).
pub async fn continue_strays(
    conn: &CdpConnection,
    session: &str,
    paused: &mut mpsc::UnboundedReceiver<Value>,
) -> std::convert::Infallible {
    const T: Duration = Duration::from_secs(5);
    while let Some(ev) = paused.recv().await {
        document::continue_paused(conn, session, &ev, T).await;
    }
    std::future::pending().await
}

/// Navigate the tab to the request URL. The main frame's document request and response pass
/// through `Fetch`: a body-carrying request is rewritten there, and a response that is not
/// HTML is read as it came ([`super::document`]).
pub async fn navigate(
    conn: &CdpConnection,
    session: &str,
    main_frame: &str,
    req: &FetchRequest,
    paused: &mut mpsc::UnboundedReceiver<Value>,
    t: Duration,
) -> Result<Navigated, AfError> {
    let s = Some(session);
    let body = encode_body(req)?;
    let rewrite = req.method != "GET" || body.is_some();
    let held = super::stall_hold::patterns(req);
    let mut patterns = vec![document::response_pattern()];
    patterns.extend(held.iter().cloned());
    if rewrite {
        patterns.push(
            json!({"urlPattern": "*", "resourceType": "Document", "requestStage": "Request"}),
        );
    }
    conn.send(s, "Fetch.enable", json!({ "patterns": patterns }), t)
        .await?;
    let nav = conn.send(s, "Page.navigate", json!({"url": req.url.as_str()}), t);
    let intercept = async {
        let mut rewritten = !rewrite;
        loop {
            let Some(ev) = tokio::time::timeout(t, paused.recv()).await.ok().flatten() else {
                return Err(AfError::new(
                    ErrorCode::NavigationTimeout,
                    "the document response never arrived",
                ));
            };
            if document::is_response_stage(&ev) {
                if document::is_main_response(&ev, main_frame) {
                    return document::take(conn, session, &ev, t).await;
                }
                document::continue_paused(conn, session, &ev, t).await;
            } else if !rewritten && ev["frameId"].as_str() == Some(main_frame) {
                rewritten = true;
                conn.send(
                    s,
                    "Fetch.continueRequest",
                    rewritten_request(&ev, req, body.as_ref()),
                    t,
                )
                .await?;
            } else {
                document::continue_paused(conn, session, &ev, t).await;
            }
        }
    };
    // Page.navigate answers only after the main response is continued, unless the
    // navigation fails before it; then the interception is abandoned.
    let (nav, intercepted) = {
        tokio::pin!(nav);
        tokio::pin!(intercept);
        tokio::select! {
            biased;
            r = &mut intercept => (nav.await, Some(r)),
            n = &mut nav => (n, None),
        }
    };
    // Scripts and stylesheets stay paused for the stall cut; nothing else.
    let _ = match held.is_empty() {
        true => conn.send(s, "Fetch.disable", json!({}), t).await,
        false => {
            let held = json!({ "patterns": held });
            conn.send(s, "Fetch.enable", held, t).await
        }
    };
    // `Page.navigate` answers once the main document's response commits; no answer in time
    // means the document never arrived, which is what `navigation_timeout` is for.
    let result = nav.map_err(|e| {
        if e.code == ErrorCode::CdpTimeout {
            let url = crate::sdk::redact::url(req.url.as_str());
            AfError::new(
                ErrorCode::NavigationTimeout,
                format!(
                    "the main document of {url} did not arrive within {} ms",
                    t.as_millis()
                ),
            )
            .with_hint(crate::sdk::defaults::TIMEOUT_HINT)
            .with_field("timeout_ms")
        } else {
            e
        }
    })?;
    let taken = intercepted.transpose()?.unwrap_or_default();
    let (document, warning) = (taken.document, taken.warning);
    if result["isDownload"].as_bool() == Some(true) {
        return Ok(Navigated {
            download: true,
            document,
            warning,
        });
    }
    match result["errorText"].as_str() {
        Some(text) if !text.is_empty() => match error_code(text) {
            // A document read before the browser aborted its viewer or download still counts.
            Some(_) if document.is_some() => Ok(Navigated {
                download: text.contains("ERR_ABORTED"),
                document,
                warning,
            }),
            Some(code) => {
                let url = crate::sdk::redact::url(req.url.as_str());
                let e = AfError::new(code, format!("navigation to {url} failed: {text}"));
                Err(if text.contains("ERR_TUNNEL_CONNECTION_FAILED") {
                    e.with_hint(
                        "the host's proxy could not open a tunnel: the target may be refused by \
                         its egress policy (private or link-local address), unreachable, or \
                         its proxy (`afhttp host --proxy-url`) failed",
                    )
                } else {
                    e
                })
            }
            None => Ok(Navigated {
                download: false,
                document,
                warning,
            }),
        },
        _ => Ok(Navigated {
            download: false,
            document,
            warning,
        }),
    }
}

/// `Fetch.continueRequest` parameters for the paused main request, with the request's
/// method and body.
fn rewritten_request(ev: &Value, req: &FetchRequest, body: Option<&(Vec<u8>, String)>) -> Value {
    let mut headers: Vec<Value> = Vec::new();
    if let Some(map) = ev["request"]["headers"].as_object() {
        for (k, v) in map {
            if !k.eq_ignore_ascii_case("content-type") {
                headers.push(json!({"name": k, "value": v}));
            }
        }
    }
    let mut params = json!({"requestId": ev["requestId"], "method": req.method});
    if let Some((bytes, ct)) = body {
        headers.push(json!({"name": "Content-Type", "value": ct}));
        params["postData"] = json!(base64::engine::general_purpose::STANDARD.encode(bytes));
    }
    params["headers"] = json!(headers);
    params
}

/// The host's egress proxy answered the document instead of the target (see
/// `host::egress`): its `x-afhttp-egress` header (on a 403/502 of its own) names why.
pub fn egress_refusal(status: u16, headers: &[(String, String)], url: &str) -> Option<AfError> {
    let get = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    let code = match (status, get("x-afhttp-egress")?) {
        (403, "denied") => ErrorCode::EgressDenied,
        (502, "dns") => ErrorCode::DnsResolutionFailed,
        (502, "unreachable") => ErrorCode::TargetUnreachable,
        _ => return None,
    };
    let detail = get("x-afhttp-egress-detail").unwrap_or("refused by the host's proxy");
    let url = crate::sdk::redact::url(url);
    let mut e = AfError::new(code, format!("navigation to {url} failed: {detail}"));
    if code == ErrorCode::EgressDenied {
        e = e.with_hint(
            "the host refuses this address; its operator can add an exception \
             (`afhttp host --egress-allow`), or fetch it from the driver with render none",
        );
    }
    Some(e)
}

/// The `errorText` of a navigation the browser aborted because the machine's network
/// changed (interfaces or addresses), not because of the target.
pub const NETWORK_CHANGED: &str = "net::ERR_NETWORK_CHANGED";

/// Whether a navigation failed only because the machine's network changed under it.
pub fn network_changed(e: &AfError) -> bool {
    e.code == ErrorCode::TargetUnreachable && e.message.ends_with(NETWORK_CHANGED)
}

/// The stable code for a `Page.navigate` `errorText`; `None` when the page still loaded
/// (an HTTP error status with an empty body).
pub fn error_code(text: &str) -> Option<ErrorCode> {
    let t = text.trim_start_matches("net::");
    Some(match t {
        "ERR_HTTP_RESPONSE_CODE_FAILURE" => return None,
        "ERR_NAME_NOT_RESOLVED" | "ERR_NAME_RESOLUTION_FAILED" => ErrorCode::DnsResolutionFailed,
        "ERR_TIMED_OUT" | "ERR_CONNECTION_TIMED_OUT" => ErrorCode::NavigationTimeout,
        t if t.starts_with("ERR_CERT_") || t.starts_with("ERR_SSL_") => ErrorCode::TlsError,
        _ => ErrorCode::TargetUnreachable,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_navigation_aborted_by_a_network_change_is_tried_again() {
        let failed = |text: &str| {
            AfError::new(
                error_code(text).unwrap(),
                format!("navigation to http://a.test/ failed: {text}"),
            )
        };
        assert!(network_changed(&failed("net::ERR_NETWORK_CHANGED")));
        assert!(!network_changed(&failed("net::ERR_CONNECTION_REFUSED")));
        assert!(!network_changed(&failed("net::ERR_NAME_NOT_RESOLVED")));
    }

    #[test]
    fn error_texts() {
        assert_eq!(
            error_code("net::ERR_NAME_NOT_RESOLVED"),
            Some(ErrorCode::DnsResolutionFailed)
        );
        assert_eq!(
            error_code("net::ERR_CERT_AUTHORITY_INVALID"),
            Some(ErrorCode::TlsError)
        );
        assert_eq!(
            error_code("net::ERR_CONNECTION_REFUSED"),
            Some(ErrorCode::TargetUnreachable)
        );
        assert_eq!(
            error_code("net::ERR_TIMED_OUT"),
            Some(ErrorCode::NavigationTimeout)
        );
        assert_eq!(
            error_code("net::ERR_ABORTED"),
            Some(ErrorCode::TargetUnreachable)
        );
        assert_eq!(error_code("net::ERR_HTTP_RESPONSE_CODE_FAILURE"), None);
    }

    #[test]
    fn bodies() {
        let mut req = FetchRequest::get(url::Url::parse("http://h:8080/p").unwrap());
        assert!(encode_body(&req).unwrap().is_none());
        req.body = Some(RequestBody::Form(vec![(
            "a b".into(),
            FormValue::Text("c&d".into()),
        )]));
        let (b, ct) = encode_body(&req).unwrap().unwrap();
        assert_eq!(b, b"a+b=c%26d");
        assert_eq!(ct, "application/x-www-form-urlencoded");
    }
}
