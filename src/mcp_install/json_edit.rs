//! Format-preserving edits of one member of a JSON file: `root[container][name]` is set or
//! removed by splicing text, so every other byte of the file (other servers, key order,
//! indentation, escapes, a trailing newline) stays exactly as it was.
//!
//! The file is first checked to be one valid JSON object by `serde_json`; the scanner here
//! only locates byte spans in text that is known to be valid.

use serde_json::Value;

use crate::error::AfError;

/// One member of an object: where its key starts and where its value starts and ends.
#[derive(Debug, Clone)]
struct Member {
    key: String,
    key_start: usize,
    value_start: usize,
    value_end: usize,
}

/// An object's members and the offset of its closing brace.
struct Object {
    members: Vec<Member>,
    close: usize,
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The end (exclusive) of the string starting at `i` (a `"`).
fn string_end(b: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// The end (exclusive) of the value starting at `i`.
fn value_end(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(b'"') => string_end(b, i),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = string_end(b, j);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            b.len()
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                j += 1;
            }
            j
        }
    }
}

/// The members of the object whose `{` is at `open`.
fn object_at(text: &str, open: usize) -> Result<Object, AfError> {
    let b = text.as_bytes();
    let mut members = Vec::new();
    let mut i = skip_ws(b, open + 1);
    loop {
        match b.get(i) {
            Some(b'}') => return Ok(Object { members, close: i }),
            Some(b'"') => {}
            _ => return Err(malformed()),
        }
        let key_end = string_end(b, i);
        let key: String = serde_json::from_str(&text[i..key_end]).map_err(|_| malformed())?;
        let colon = skip_ws(b, key_end);
        if b.get(colon) != Some(&b':') {
            return Err(malformed());
        }
        let value_start = skip_ws(b, colon + 1);
        let end = value_end(b, value_start);
        members.push(Member {
            key,
            key_start: i,
            value_start,
            value_end: end,
        });
        i = skip_ws(b, end);
        if b.get(i) == Some(&b',') {
            i = skip_ws(b, i + 1);
        }
    }
}

fn malformed() -> AfError {
    AfError::invalid("the file is not a JSON object this tool can edit")
}

/// The root object's `{`, after checking that `text` is one JSON object.
fn root(text: &str) -> Result<usize, AfError> {
    let v: Value = serde_json::from_str(text).map_err(|e| {
        AfError::invalid(format!("the file is not valid JSON ({e})"))
            .with_hint("fix or move the file; it is left untouched")
    })?;
    if !v.is_object() {
        return Err(AfError::invalid("the file's JSON is not an object")
            .with_hint("fix or move the file; it is left untouched"));
    }
    Ok(skip_ws(text.as_bytes(), 0))
}

/// The whitespace at the start of the line holding offset `at`, when only whitespace comes
/// before `at` on that line.
fn line_indent(text: &str, at: usize) -> Option<&str> {
    let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
    let lead = &text[line_start..at];
    lead.bytes()
        .all(|c| c == b' ' || c == b'\t')
        .then_some(lead)
}

/// `value` pretty-printed with `unit` per level, its continuation lines indented by
/// `indent`.
fn render(value: &Value, indent: &str, unit: &str) -> String {
    use serde::Serialize;
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    let pretty = match value.serialize(&mut ser) {
        Ok(()) => String::from_utf8(buf).unwrap_or_else(|_| value.to_string()),
        Err(_) => value.to_string(),
    };
    pretty.replace('\n', &format!("\n{indent}"))
}

/// The file's indentation step: what a member's line adds to its object's line (two spaces
/// when that cannot be told).
fn unit_of<'a>(member_indent: &'a str, object_indent: &str) -> &'a str {
    match member_indent.strip_prefix(object_indent) {
        Some(u) if !u.is_empty() => u,
        _ => "  ",
    }
}

/// Insert `"key": value` as the last member of `obj` (whose own line is indented by
/// `obj_indent`).
fn insert_member(text: &str, obj: &Object, obj_indent: &str, key: &str, value: &Value) -> String {
    let key_json = Value::String(key.to_string()).to_string();
    match obj.members.last() {
        Some(last) => {
            let indent = line_indent(text, last.key_start)
                .map(str::to_string)
                .unwrap_or_else(|| format!("{obj_indent}  "));
            let unit = unit_of(&indent, obj_indent);
            let member = format!(",\n{indent}{key_json}: {}", render(value, &indent, unit));
            format!(
                "{}{member}{}",
                &text[..last.value_end],
                &text[last.value_end..]
            )
        }
        None => {
            let indent = format!("{obj_indent}  ");
            let open = text[..obj.close].rfind('{').unwrap_or(obj.close);
            format!(
                "{}{{\n{indent}{key_json}: {}\n{obj_indent}}}{}",
                &text[..open],
                render(value, &indent, "  "),
                &text[obj.close + 1..]
            )
        }
    }
}

/// Remove member `index` of `obj`, with the separator that belongs to it.
fn remove_member(text: &str, obj: &Object, index: usize) -> String {
    let m = &obj.members[index];
    let (from, to) = if index > 0 {
        (obj.members[index - 1].value_end, m.value_end)
    } else if let Some(next) = obj.members.get(1) {
        (m.key_start, next.key_start)
    } else {
        let open = text[..m.key_start]
            .rfind('{')
            .map_or(m.key_start, |o| o + 1);
        (open, obj.close)
    };
    format!("{}{}", &text[..from], &text[to..])
}

/// `root[container][name]`, if present.
pub fn get(text: &str, container: &str, name: &str) -> Result<Option<Value>, AfError> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    root(text)?;
    let v: Value = serde_json::from_str(text).map_err(|_| malformed())?;
    Ok(v.get(container).and_then(|c| c.get(name)).cloned())
}

/// Set `root[container][name]` to `value` (creating the container), touching nothing else.
/// An empty or whitespace-only `text` is a new file.
pub fn set(text: &str, container: &str, name: &str, value: &Value) -> Result<String, AfError> {
    if text.trim().is_empty() {
        let doc = serde_json::json!({ container: { name: value } });
        return Ok(format!("{}\n", render(&doc, "", "  ")));
    }
    let open = root(text)?;
    let top = object_at(text, open)?;
    let root_indent = line_indent(text, open).unwrap_or("").to_string();
    let Some(c) = top.members.iter().find(|m| m.key == container) else {
        let wrapped = serde_json::json!({ name: value });
        return Ok(insert_member(text, &top, &root_indent, container, &wrapped));
    };
    if text.as_bytes().get(c.value_start) != Some(&b'{') {
        return Err(AfError::invalid(format!(
            "{container:?} in the file is not an object"
        )));
    }
    let inner = object_at(text, c.value_start)?;
    let c_indent = line_indent(text, c.key_start).unwrap_or("").to_string();
    match inner.members.iter().find(|m| m.key == name) {
        Some(m) => {
            let indent = line_indent(text, m.key_start)
                .map(str::to_string)
                .unwrap_or_else(|| format!("{c_indent}  "));
            let unit = unit_of(&indent, &c_indent);
            Ok(format!(
                "{}{}{}",
                &text[..m.value_start],
                render(value, &indent, unit),
                &text[m.value_end..]
            ))
        }
        None => Ok(insert_member(text, &inner, &c_indent, name, value)),
    }
}

/// Remove `root[container][name]`, and the container when that leaves it empty. `None`
/// when there was nothing to remove.
pub fn remove(text: &str, container: &str, name: &str) -> Result<Option<String>, AfError> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let open = root(text)?;
    let top = object_at(text, open)?;
    let Some(ci) = top.members.iter().position(|m| m.key == container) else {
        return Ok(None);
    };
    let c = &top.members[ci];
    if text.as_bytes().get(c.value_start) != Some(&b'{') {
        return Ok(None);
    }
    let inner = object_at(text, c.value_start)?;
    let Some(index) = inner.members.iter().position(|m| m.key == name) else {
        return Ok(None);
    };
    if inner.members.len() == 1 {
        return Ok(Some(remove_member(text, &top, ci)));
    }
    Ok(Some(remove_member(text, &inner, index)))
}

/// Whether `text` is an object with no members (what removing the last entry of a file
/// this tool created leaves).
pub fn is_empty_object(text: &str) -> bool {
    serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| v.as_object().map(serde_json::Map::is_empty))
        .unwrap_or(false)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    const ORIGINAL: &str = "{\n    \"numStartups\": 3,\n    \"mcpServers\": {\n        \"other\": {\"command\": \"x\",   \"args\": [\"a\\u00e9\", {\"}\": \"]\"}]}\n    },\n    \"tail\": [1, 2]\n}\n";

    #[test]
    fn set_then_remove_restores_every_byte() {
        let entry = json!({"type": "stdio", "command": "/bin/afhttp", "args": ["mcp"]});
        let added = set(ORIGINAL, "mcpServers", "afhttp", &entry).unwrap();
        let v: Value = serde_json::from_str(&added).unwrap();
        assert_eq!(v["mcpServers"]["afhttp"], entry);
        assert!(added.starts_with(&ORIGINAL[..ORIGINAL.find("\n    },").unwrap()]));
        assert!(
            added.contains("\n        \"afhttp\": {\n            \"type\""),
            "{added}"
        );
        // Setting again with the same value changes nothing; a new value touches only it.
        assert_eq!(set(&added, "mcpServers", "afhttp", &entry).unwrap(), added);
        let changed = set(&added, "mcpServers", "afhttp", &json!({"url": "u"})).unwrap();
        assert_eq!(
            remove(&changed, "mcpServers", "afhttp").unwrap().unwrap(),
            ORIGINAL
        );
        assert_eq!(
            remove(&added, "mcpServers", "afhttp").unwrap().unwrap(),
            ORIGINAL
        );
        assert!(remove(ORIGINAL, "mcpServers", "afhttp").unwrap().is_none());
    }

    #[test]
    fn a_missing_container_is_added_and_removed_whole() {
        for original in ["{\"a\":1}", "{\n  \"a\": {\"b\": null}\n}\n", "{}", "{ }\n"] {
            let added = set(original, "mcp", "afhttp", &json!({"type": "local"})).unwrap();
            let v: Value = serde_json::from_str(&added).unwrap();
            assert_eq!(v["mcp"]["afhttp"]["type"], "local", "{added}");
            let back = remove(&added, "mcp", "afhttp").unwrap().unwrap();
            if original.contains('a') {
                assert_eq!(back, original);
            } else {
                assert!(is_empty_object(&back), "{back:?}");
            }
        }
        let fresh = set("", "mcpServers", "afhttp", &json!({"x": 1})).unwrap();
        assert!(is_empty_object(
            &remove(&fresh, "mcpServers", "afhttp").unwrap().unwrap()
        ));
    }

    #[test]
    fn first_member_and_bad_files() {
        let text = "{\"mcpServers\": {\"afhttp\": {}, \"b\": 2}, \"c\": 3}";
        assert_eq!(
            remove(text, "mcpServers", "afhttp").unwrap().unwrap(),
            "{\"mcpServers\": {\"b\": 2}, \"c\": 3}"
        );
        for bad in ["[1]", "{", "{\"mcpServers\": 5} x", "// c\n{}"] {
            assert!(
                set(bad, "mcpServers", "afhttp", &json!(1)).is_err(),
                "{bad}"
            );
        }
        assert!(set("{\"mcpServers\": []}", "mcpServers", "afhttp", &json!(1)).is_err());
    }
}
