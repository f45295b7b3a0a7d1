//! Readers of codes: a result event's `warnings` (the codes, one warning's message), and the
//! `code` of an error body (a listener's refusal).

use serde_json::Value;

use super::events::{decode, Warning};

/// The codes of `r["warnings"]`, in order.
pub fn warning_codes(r: &Value) -> Vec<String> {
    warnings(r).into_iter().map(|w| w.code).collect()
}

/// The message of the warning with `code`; panics (naming the event) when there is none.
pub fn warning(r: &Value, code: &str) -> String {
    warnings(r)
        .into_iter()
        .find(|w| w.code == code)
        .unwrap_or_else(|| panic!("no {code} warning: {r}"))
        .message
}

/// `r["warnings"]`, typed.
fn warnings(r: &Value) -> Vec<Warning> {
    decode(&r["warnings"])
}

/// The `code` of a JSON error body (a listener's refusal: `{"code": …, "message": …}`); ""
/// when the body is not JSON or has none.
pub fn error_code(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v["code"].as_str().map(str::to_string))
        .unwrap_or_default()
}
