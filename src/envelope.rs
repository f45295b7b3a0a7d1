//! The one AFDATA protocol-v1 event every command prints.
//!
//! Success: `{"kind":"result","result":{"code":"fetch",...},"trace":{...}}`.
//! Failure: `{"kind":"error","error":{"code","message","retryable","hint"?},"trace":{...}}`.

use serde_json::{json, Map, Value};

use crate::error::AfError;

/// The value printed in place of any field whose name ends in `_secret`.
pub const REDACTED: &str = "***";

/// A finished command's event, before it is printed.
#[derive(Debug, Clone)]
pub struct Event {
    body: Value,
}

impl Event {
    /// A success event. `result` must be a JSON object; `code` is inserted first.
    pub fn result(code: &str, result: Value, trace: Option<Value>) -> Self {
        let mut obj = Map::new();
        obj.insert("code".into(), Value::String(code.to_string()));
        if let Value::Object(fields) = result {
            for (k, v) in fields {
                if k != "code" {
                    obj.insert(k, v);
                }
            }
        }
        let mut body = json!({"kind": "result", "result": Value::Object(obj)});
        if let Some(trace) = trace {
            body["trace"] = trace;
        }
        Event { body }
    }

    /// A failure event.
    pub fn error(err: &AfError, trace: Option<Value>) -> Self {
        let mut e = json!({
            "code": err.code.as_str(),
            "message": err.message,
            "retryable": err.retryable(),
        });
        if let Some(hint) = &err.hint {
            e["hint"] = Value::String(hint.clone());
        }
        let mut body = json!({"kind": "error", "error": e});
        if let Some(trace) = trace {
            body["trace"] = trace;
        }
        Event { body }
    }

    /// Set `trace` unless the event already carries one.
    pub fn with_trace_default(mut self, trace: Value) -> Self {
        if self.body.get("trace").is_none() {
            self.body["trace"] = trace;
        }
        self
    }

    /// Whether this is an error event.
    pub fn is_error(&self) -> bool {
        self.body.get("kind").and_then(Value::as_str) == Some("error")
    }

    /// The event as JSON, with `_secret` fields redacted unless `reveal_secrets`.
    pub fn to_json(&self, reveal_secrets: bool) -> Value {
        let mut v = self.body.clone();
        if !reveal_secrets {
            redact_secrets(&mut v);
        }
        v
    }

    /// The event as one newline-terminated line.
    pub fn to_line(&self, reveal_secrets: bool) -> String {
        let mut s = self.to_json(reveal_secrets).to_string();
        s.push('\n');
        s
    }
}

/// Replace the value of every object field whose name ends in `_secret` with `"***"`.
pub fn redact_secrets(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (k, val) in map.iter_mut() {
                if k.ends_with("_secret") && !val.is_null() {
                    *val = Value::String(REDACTED.into());
                } else {
                    redact_secrets(val);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_secrets),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn result_has_code_first_and_trace() {
        let e = Event::result(
            "fetch",
            json!({"status": 200, "code": "x"}),
            Some(json!({"a": 1})),
        );
        let line = e.to_line(false);
        assert!(line.starts_with(r#"{"kind":"result","result":{"code":"fetch","status":200}"#));
        assert!(line.ends_with("}\n"));
        assert!(!e.is_error());
    }

    #[test]
    fn error_shape() {
        let err = AfError::new(ErrorCode::TlsError, "bad cert").with_hint("use --ca-cert");
        let v = Event::error(&err, None).to_json(false);
        assert_eq!(v["error"]["code"], "tls_error");
        assert_eq!(v["error"]["retryable"], false);
        assert_eq!(v["error"]["hint"], "use --ca-cert");
    }

    #[test]
    fn secrets_redacted_deeply_unless_revealed() {
        let e = Event::result(
            "x",
            json!({"token_secret": "abc", "nested": [{"api_secret": "k", "keep": 1}]}),
            None,
        );
        let v = e.to_json(false);
        assert_eq!(v["result"]["token_secret"], "***");
        assert_eq!(v["result"]["nested"][0]["api_secret"], "***");
        assert_eq!(v["result"]["nested"][0]["keep"], 1);
        assert_eq!(e.to_json(true)["result"]["token_secret"], "abc");
    }
}
