//! `Runtime.evaluate` with by-value results and exception text.

use std::time::Duration;

use serde_json::{json, Value};

use crate::error::AfError;
use crate::sdk::cdp::CdpConnection;

/// The outcome of one evaluation: the value, or the page's exception text.
pub type Evaluated = Result<Value, String>;

/// Evaluate `expression` in the page; a thrown exception is `Ok(Err(text))`.
pub async fn evaluate(
    conn: &CdpConnection,
    session: &str,
    expression: &str,
    await_promise: bool,
    timeout: Duration,
) -> Result<Evaluated, AfError> {
    let r = conn
        .send(
            Some(session),
            "Runtime.evaluate",
            json!({
                "expression": expression,
                "awaitPromise": await_promise,
                "returnByValue": true,
                "userGesture": false,
            }),
            timeout,
        )
        .await?;
    if let Some(d) = r.get("exceptionDetails") {
        let text = d["exception"]["description"]
            .as_str()
            .or_else(|| d["text"].as_str())
            .unwrap_or("exception")
            .to_string();
        return Ok(Err(text));
    }
    Ok(Ok(r["result"]["value"].clone()))
}
