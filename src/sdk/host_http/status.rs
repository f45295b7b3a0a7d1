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

/// The stable error for a host's non-2xx answer: its `code` field first, then the status
/// (a 404 route means the endpoint is not a host).
pub(crate) fn refusal(status: u16, body: &Value, path: &str) -> AfError {
    let message = body.get("message").and_then(Value::as_str).unwrap_or("");
    let code = match (status, body.get("code").and_then(Value::as_str)) {
        (401, _) | (_, Some("unauthorized")) => ErrorCode::Unauthorized,
        (_, Some("takeover_unavailable")) => ErrorCode::TakeoverUnavailable,
        (_, Some("host_busy")) | (429, _) => ErrorCode::HostBusy,
        (_, Some("cdp_unavailable")) | (503, _) => ErrorCode::CdpUnavailable,
        (_, Some("invalid_argument")) | (400, _) => ErrorCode::InvalidArgument,
        (404, _) => ErrorCode::InvalidEndpoint,
        _ => ErrorCode::HostUnreachable,
    };
    let mut e = AfError::new(code, format!("{path}: host answered {status} {message}"));
    if code == ErrorCode::Unauthorized {
        e = e.with_hint("pass --token-secret, set AFHTTP_TOKEN_SECRET, or --token-secret-file");
    }
    e
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
    }
}
