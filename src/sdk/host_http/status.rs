//! The one status check: a host's non-2xx answer as a stable error code.

use serde_json::Value;

use crate::error::{AfError, ErrorCode};

/// `Ok` for a 2xx `status`; otherwise the host's [`refusal`].
pub(crate) fn check(status: u16, body: &Value, path: &str) -> Result<(), AfError> {
    if (200..300).contains(&status) {
        Ok(())
    } else {
        Err(refusal(status, body, path))
    }
}

/// The stable error for a host's non-2xx answer, the one decoder of a refusal for control
/// calls and `/cdp` handshakes alike: the body's `code` when it is a stable error code,
/// else the listener's 403 codes (`forbidden_host`, `forbidden_origin`: the request was not
/// let in, which no retry changes), else the status (a 404 route means the endpoint is not
/// a host).
pub(crate) fn refusal(status: u16, body: &Value, path: &str) -> AfError {
    let message = body.get("message").and_then(Value::as_str).unwrap_or("");
    let said = body.get("code").and_then(Value::as_str);
    let known = said.and_then(|c| ErrorCode::ALL.iter().copied().find(|k| k.as_str() == c));
    let code = known.unwrap_or(match (status, said) {
        (401 | 403, _) | (_, Some("forbidden_host" | "forbidden_origin")) => {
            ErrorCode::Unauthorized
        }
        (429, _) => ErrorCode::HostBusy,
        (503, _) => ErrorCode::CdpUnavailable,
        (400, _) => ErrorCode::InvalidArgument,
        (404, _) => ErrorCode::InvalidEndpoint,
        _ => ErrorCode::HostUnreachable,
    });
    let e = AfError::new(code, format!("{path}: host answered {status} {message}"));
    match (code, said) {
        (ErrorCode::Unauthorized, Some("forbidden_host")) => e.with_hint(
            "the host lets a request without its token in only by IP, localhost or a name it \
             allows: send token_secret, or reach it by IP",
        ),
        (ErrorCode::Unauthorized, _) => e.with_hint("set token_secret to the host's token"),
        (ErrorCode::HostBusy, _) => e.with_hint("retry after a backoff"),
        _ => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn code(status: u16, body: Value) -> Option<ErrorCode> {
        check(status, &body, "/x").err().map(|e| e.code)
    }

    #[test]
    fn statuses_map_to_codes() {
        assert_eq!(code(200, Value::Null), None);
        assert_eq!(code(204, Value::Null), None);
        assert_eq!(code(401, Value::Null), Some(ErrorCode::Unauthorized));
        assert_eq!(
            code(403, json!({"code": "unauthorized"})),
            Some(ErrorCode::Unauthorized)
        );
        assert_eq!(
            code(404, json!({"code": "takeover_unavailable"})),
            Some(ErrorCode::TakeoverUnavailable)
        );
        assert_eq!(code(429, Value::Null), Some(ErrorCode::HostBusy));
        assert_eq!(
            code(503, json!({"code": "host_busy"})),
            Some(ErrorCode::HostBusy)
        );
        assert_eq!(code(503, Value::Null), Some(ErrorCode::CdpUnavailable));
        assert_eq!(code(400, Value::Null), Some(ErrorCode::InvalidArgument));
        assert_eq!(code(404, Value::Null), Some(ErrorCode::InvalidEndpoint));
        assert_eq!(code(500, Value::Null), Some(ErrorCode::HostUnreachable));
        let e = check(503, &json!({"code": "cdp_unavailable"}), "/cdp").unwrap_err();
        assert!(e.retryable());
        let e = check(401, &json!({"message": "bad token"}), "/health").unwrap_err();
        assert!(e.message.contains("401 bad token") && e.hint.is_some());
        assert_eq!(
            code(409, json!({"code": "profile_locked"})),
            Some(ErrorCode::ProfileLocked)
        );
    }

    /// A listener that refuses the request's Host (403 `forbidden_host`) on a control call
    /// said "not let in", which no retry changes: it used to read as a retryable
    /// `host_unreachable`.
    #[test]
    fn a_refused_host_header_is_not_a_retryable_unreachable_host() {
        for body in [
            json!({"code": "forbidden_host", "message": "use an IP"}),
            json!({"code": "forbidden_origin", "message": "cross-origin"}),
            Value::Null,
        ] {
            let e = check(403, &body, "/health").unwrap_err();
            assert_eq!(e.code, ErrorCode::Unauthorized, "{body}");
            assert!(!e.retryable(), "{body}");
            assert!(e.hint.is_some(), "{body}");
        }
    }
}
