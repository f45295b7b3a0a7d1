//! Readers of codes: a result event's `warnings` (the codes, one warning's message), and the
//! `code` of an error body (a listener's refusal).

use serde_json::Value;

/// The codes of `r["warnings"]`, in order.
pub fn warning_codes(r: &Value) -> Vec<String> {
    r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap().to_string())
        .collect()
}

/// The message of the warning with `code`; panics (naming the event) when there is none.
pub fn warning(r: &Value, code: &str) -> String {
    r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == code)
        .and_then(|w| w["message"].as_str())
        .unwrap_or_else(|| panic!("no {code} warning: {r}"))
        .to_string()
}

/// The `code` of a JSON error body (a listener's refusal: `{"code": …, "message": …}`); ""
/// when the body is not JSON or has none.
pub fn error_code(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v["code"].as_str().map(str::to_string))
        .unwrap_or_default()
}
