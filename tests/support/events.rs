//! The event envelope as a test reads it: `Deserialize` types of the test suite's own, not
//! the production structs, so a renamed or retyped field fails here as it would fail an
//! agent. Only the fields the contract promises are typed; the rest stay JSON.

use serde::Deserialize;
use serde_json::Value;

/// An `error` event's `error`: a stable code, a message, whether a retry can help, and
/// perhaps a hint.
#[derive(Debug, Clone, Deserialize)]
pub struct ErrorBody {
    /// The stable error code (`docs/reference.md`).
    pub code: String,
    /// What happened, for a human or an agent.
    pub message: String,
    /// Whether the same call may succeed later.
    pub retryable: bool,
    /// What to do about it, when there is something.
    #[serde(default)]
    pub hint: Option<String>,
}

impl std::fmt::Display for ErrorBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} (retryable: {})",
            self.code, self.message, self.retryable
        )?;
        match &self.hint {
            Some(hint) => write!(f, "; hint: {hint}"),
            None => Ok(()),
        }
    }
}

/// One entry of a result's `warnings`.
#[derive(Debug, Clone, Deserialize)]
pub struct Warning {
    /// The stable warning code.
    pub code: String,
    /// What happened.
    pub message: String,
    /// The artifact it is about, when it is about one.
    #[serde(default)]
    pub artifact: Option<String>,
}

/// A `fetch` result: the facts every fetch reports.
#[derive(Debug, Clone, Deserialize)]
pub struct FetchResult {
    /// Always `fetch`.
    pub code: String,
    /// The URL answered, after redirects.
    pub final_url: String,
    /// The HTTP status of the final response (a 404 is a result, not an error).
    pub status: u16,
    /// `http` or `browser`: which path produced the artifacts.
    pub render: String,
    /// What went partly wrong; empty when nothing did.
    #[serde(default)]
    pub warnings: Vec<Warning>,
}

/// `value` as a `T`, or a panic naming the type and showing the JSON.
pub fn decode<T: serde::de::DeserializeOwned>(value: &Value) -> T {
    serde_json::from_value(value.clone()).unwrap_or_else(|e| {
        panic!(
            "not a {}: {e}\n{value}",
            std::any::type_name::<T>().rsplit("::").next().unwrap_or("")
        )
    })
}

/// An MCP tool answer's `structuredContent` (the CLI's event) as a `fetch` result, typed.
pub fn tool_fetch(structured: &Value) -> FetchResult {
    decode(&structured["result"])
}

/// An MCP tool error's `structuredContent` (the CLI's error event) as its `error`, typed.
pub fn tool_error(structured: &Value) -> ErrorBody {
    decode(&structured["error"])
}
