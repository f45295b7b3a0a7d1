//! Result shapes shared by the tools: input schemas from Rust types, and afhttp errors as
//! MCP tool errors (`isError`) carrying the stable code, `retryable` and `hint`.

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use serde_json::Value;

use crate::envelope::Event;
use crate::error::AfError;

/// The JSON Schema of `T` as a tool's input schema object.
pub fn schema_object<T: schemars::JsonSchema>() -> Arc<JsonObject> {
    let schema = schemars::schema_for!(T);
    let mut object = match serde_json::to_value(schema) {
        Ok(Value::Object(o)) => o,
        _ => JsonObject::new(),
    };
    // MCP wants an object schema even for a tool without arguments.
    object
        .entry("type")
        .or_insert_with(|| Value::String("object".into()));
    Arc::new(object)
}

/// A tool error: the CLI's error event as `structuredContent` (plus `field`, the argument it
/// is about, when known), and one text block naming the code, whether a retry can help, and
/// the hint. The argument takes the place of the CLI's flag in the hint.
pub fn tool_error(err: &AfError, trace: Option<Value>) -> CallToolResult {
    let mut err = err.clone();
    if let Some(field) = &err.field {
        err.hint = Some(match err.hint.take() {
            Some(h) => format!("{h} (argument {field})"),
            None => format!("check the argument {field}"),
        });
    }
    let mut event = Event::error(&err, trace).to_json(false);
    if let (Some(field), Some(Value::Object(e))) = (&err.field, event.get_mut("error")) {
        e.insert("field".into(), Value::String(field.clone()));
    }
    let mut text = format!(
        "error {}: {}\nretryable: {}",
        err.code.as_str(),
        err.message,
        err.retryable()
    );
    if let Some(hint) = &err.hint {
        text.push_str(&format!("\nhint: {hint}"));
    }
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    result.structured_content = Some(event);
    result
}

/// A tool success: `text` for the model, the CLI's result event as `structuredContent`,
/// and in `_meta` the text's size as the budget counts it (`afhttp/text_tokens`: o200k_base
/// tokens; `afhttp/text_chars`: UTF-16 code units), for a client or a bench to check.
pub fn tool_success(text: String, event: &Event, mut extra: Vec<ContentBlock>) -> CallToolResult {
    let mut meta = JsonObject::new();
    meta.insert(
        "afhttp/text_tokens".into(),
        super::budget::tokens(&text).into(),
    );
    meta.insert(
        "afhttp/text_chars".into(),
        super::budget::chars(&text).into(),
    );
    let mut content = vec![ContentBlock::text(text)];
    content.append(&mut extra);
    let mut result = CallToolResult::success(content);
    result.structured_content = Some(event.to_json(false));
    result.meta = Some(rmcp::model::MetaObject(meta));
    result
}

/// The first `max` bytes of `s`, never splitting a character.
pub fn cut_at_char(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_never_splits_a_character() {
        assert_eq!(cut_at_char("héllo", 2), "h");
        assert_eq!(cut_at_char("héllo", 3), "hé");
        assert_eq!(cut_at_char("abc", 10), "abc");
    }
}
