//! The documents an afhttp host answers `/health` and `/capabilities` with, checked, so that
//! another service answering at the endpoint (its own `{"status":"ok"}`, an HTML page) is
//! `invalid_endpoint` rather than a result relabelled `health`.

use serde_json::Value;

use super::HostResponse;
use crate::error::{AfError, ErrorCode};

/// The response header a host puts on its anonymous `/health` answer (`--health-public
/// minimal`), whose body is only `{"status": ...}` and so cannot say what answered.
pub const MINIMAL_HEALTH_HEADER: &str = "afhttp-health";
/// [`MINIMAL_HEALTH_HEADER`]'s value.
pub const MINIMAL_HEALTH_VALUE: &str = "minimal";

/// The statuses `/health` reports.
pub const HEALTH_STATUSES: [&str; 3] = ["ok", "starting", "degraded"];

fn not_a_host(route: &str, why: &str) -> AfError {
    AfError::new(
        ErrorCode::InvalidEndpoint,
        format!("the endpoint answered {route}, but not as an afhttp host: {why}"),
    )
    .with_hint("check endpoint_url: it must name an `afhttp host` listener")
}

fn code_is(body: &Value, code: &str) -> bool {
    body.get("code").and_then(Value::as_str) == Some(code)
}

fn known_status(body: &Value) -> bool {
    body.get("status")
        .and_then(Value::as_str)
        .is_some_and(|s| HEALTH_STATUSES.contains(&s))
}

/// The `/health` document, if `resp` is one: the full document (`code` `health` and a
/// known `status`), or the minimal `{"status": ...}` a host marks with
/// [`MINIMAL_HEALTH_HEADER`].
pub fn health(resp: HostResponse) -> Result<Value, AfError> {
    let minimal = resp
        .headers
        .get(MINIMAL_HEALTH_HEADER)
        .is_some_and(|v| v.as_bytes() == MINIMAL_HEALTH_VALUE.as_bytes());
    let body = resp.body;
    if minimal && known_status(&body) {
        return Ok(body);
    }
    if !body.is_object() {
        return Err(not_a_host("/health", "the answer is not a JSON object"));
    }
    if !code_is(&body, "health") || !known_status(&body) {
        return Err(not_a_host(
            "/health",
            "the document lacks `code: health` or a known `status`",
        ));
    }
    Ok(body)
}

/// The `/capabilities` document, if `resp` is one (`code` `capabilities`).
pub fn capabilities(resp: HostResponse) -> Result<Value, AfError> {
    let body = resp.body;
    if !body.is_object() {
        return Err(not_a_host(
            "/capabilities",
            "the answer is not a JSON object",
        ));
    }
    if !code_is(&body, "capabilities") {
        return Err(not_a_host(
            "/capabilities",
            "the document lacks `code: capabilities`",
        ));
    }
    Ok(body)
}

/// The hosts of a `/stalled-hosts` document (`code` `stalled_hosts`) under `key` (`hosts`:
/// stalled, `answered`) with the age of each host's last report in ms; anything else gives
/// none.
pub fn stalled_hosts(body: &Value, key: &str) -> Vec<(String, u64)> {
    if !code_is(body, "stalled_hosts") {
        return Vec::new();
    }
    body.get(key)
        .and_then(Value::as_array)
        .map(|hosts| {
            hosts
                .iter()
                .filter_map(|h| {
                    let host = h.get("host")?.as_str()?.to_string();
                    Some((host, h.get("age_ms").and_then(Value::as_u64).unwrap_or(0)))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn resp(body: Value, minimal: bool) -> HostResponse {
        let mut headers = hyper::HeaderMap::new();
        if minimal {
            headers.insert(
                MINIMAL_HEALTH_HEADER,
                hyper::header::HeaderValue::from_static(MINIMAL_HEALTH_VALUE),
            );
        }
        HostResponse {
            status: 200,
            headers,
            body,
        }
    }

    #[test]
    fn health_documents() {
        let full = json!({"code": "health", "status": "ok", "version": "0.1.0"});
        assert!(health(resp(full, false)).is_ok());
        assert!(health(resp(json!({"status": "starting"}), true)).is_ok());
        for (body, minimal) in [
            (json!({"status": "ok"}), false),
            (json!({"status": "green"}), true),
            (json!({"code": "health", "status": "green"}), false),
            (
                json!({"code": "other", "status": "ok", "version": "1"}),
                false,
            ),
            (Value::Null, false),
            (Value::Null, true),
            (json!([1]), false),
        ] {
            let e = health(resp(body.clone(), minimal)).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidEndpoint, "{body} {minimal}");
        }
    }

    #[test]
    fn capabilities_documents() {
        let caps = json!({"code": "capabilities", "backend": {"family": "chromium"}});
        assert!(capabilities(resp(caps, false)).is_ok());
        for body in [
            json!({"status": "ok"}),
            json!({"code": "health", "status": "ok"}),
            Value::Null,
        ] {
            let e = capabilities(resp(body.clone(), false)).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidEndpoint, "{body}");
        }
    }
}
