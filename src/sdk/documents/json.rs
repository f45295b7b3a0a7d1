//! JSON: pretty-printed text and the shape of the parsed value.

use serde_json::{json, Value};

/// Keys listed in `content.json` `shape.keys`.
const MAX_KEYS: usize = 200;

/// Whether a sniffed prefix parses as JSON, or is a JSON document cut by the prefix.
pub fn looks_like_json(start: &[u8]) -> bool {
    let mut de = serde_json::Deserializer::from_slice(start).into_iter::<serde::de::IgnoredAny>();
    match de.next() {
        Some(Ok(_)) => true,
        Some(Err(e)) => e.is_eof(),
        None => false,
    }
}

/// The shape of a value: its type, and top-level keys or array length.
pub fn shape(v: &Value) -> Value {
    match v {
        Value::Object(m) => json!({
            "type": "object",
            "key_count": m.len(),
            "keys": m.keys().take(MAX_KEYS).collect::<Vec<_>>(),
        }),
        Value::Array(a) => json!({"type": "array", "length": a.len()}),
        Value::String(_) => json!({"type": "string"}),
        Value::Number(_) => json!({"type": "number"}),
        Value::Bool(_) => json!({"type": "boolean"}),
        Value::Null => json!({"type": "null"}),
    }
}

/// `(text, content_md, facts)`: pretty JSON, fenced in markdown; `json_valid` false and the
/// text as served when it does not parse.
pub fn project(text: &str) -> (String, String, Value) {
    match serde_json::from_str::<Value>(text) {
        Ok(v) => {
            let mut pretty = serde_json::to_string_pretty(&v).unwrap_or_default();
            pretty.push('\n');
            let md = format!("```json\n{pretty}```\n");
            (pretty, md, json!({"json_valid": true, "shape": shape(&v)}))
        }
        Err(e) => (
            text.to_string(),
            format!("```\n{}\n```\n", text.trim_end()),
            json!({"json_valid": false, "parse_error": e.to_string()}),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_pretty_text() {
        let (text, md, facts) = project("{\"b\":1,\"a\":[1,2]}");
        assert_eq!(text, "{\n  \"b\": 1,\n  \"a\": [\n    1,\n    2\n  ]\n}\n");
        assert!(md.starts_with("```json\n{"));
        assert_eq!(facts["shape"]["keys"], json!(["b", "a"]));
        let (_, _, facts) = project("[1,2,3]");
        assert_eq!(facts["shape"], json!({"type": "array", "length": 3}));
        let (text, _, facts) = project("{oops");
        assert_eq!(
            (text.as_str(), &facts["json_valid"]),
            ("{oops", &json!(false))
        );
        assert!(looks_like_json(b"{\"a\": [1, 2"));
        assert!(!looks_like_json(b"[section]\nk=v"));
    }
}
