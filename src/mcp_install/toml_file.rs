//! Format-preserving edits of Codex's `config.toml`: `[mcp_servers.<name>]` is set or
//! removed with `toml_edit`, which keeps every other table, comment and blank line as it
//! was.

use serde_json::{Map, Value};
use toml_edit::{DocumentMut, Item, Table};

use crate::error::AfError;

fn parse(text: &str) -> Result<DocumentMut, AfError> {
    text.parse::<DocumentMut>().map_err(|e| {
        AfError::invalid(format!(
            "the file is not valid TOML ({})",
            e.to_string().lines().next().unwrap_or("parse error")
        ))
        .with_hint("fix or move the file; it is left untouched")
    })
}

/// `[container.name]` as JSON (strings, numbers, booleans, arrays, tables), if present.
pub fn get(text: &str, container: &str, name: &str) -> Result<Option<Value>, AfError> {
    let doc = parse(text)?;
    Ok(doc
        .get(container)
        .and_then(Item::as_table_like)
        .and_then(|t| t.get(name))
        .map(item_json))
}

/// Set `[container.name]` to the table `entry` (a JSON object of strings, arrays of
/// strings, booleans, integers and nested objects), touching nothing else.
pub fn set(text: &str, container: &str, name: &str, entry: &Value) -> Result<String, AfError> {
    let mut doc = parse(text)?;
    let table = json_table(entry)?;
    if doc.get(container).is_none() {
        let mut parent = Table::new();
        // No bare `[mcp_servers]` header: only `[mcp_servers.afhttp]` is written.
        parent.set_implicit(true);
        doc.insert(container, Item::Table(parent));
    }
    let parent = doc
        .get_mut(container)
        .and_then(Item::as_table_like_mut)
        .ok_or_else(|| AfError::invalid(format!("{container} in the file is not a table")))?;
    match parent.get_mut(name).and_then(Item::as_table_mut) {
        // Keep the table's own position and decor; replace its keys.
        Some(existing) => {
            existing.clear();
            for (k, v) in table.iter() {
                existing.insert(k, v.clone());
            }
        }
        None => {
            parent.insert(name, Item::Table(table));
        }
    }
    Ok(doc.to_string())
}

/// Remove `[container.name]`, and an implicit container left empty. `None` when there was
/// nothing to remove.
pub fn remove(text: &str, container: &str, name: &str) -> Result<Option<String>, AfError> {
    let mut doc = parse(text)?;
    let Some(parent) = doc.get_mut(container).and_then(Item::as_table_like_mut) else {
        return Ok(None);
    };
    if parent.remove(name).is_none() {
        return Ok(None);
    }
    let empty_implicit = doc
        .get(container)
        .and_then(Item::as_table)
        .is_some_and(|t| t.is_empty() && t.is_implicit());
    if empty_implicit {
        doc.remove(container);
    }
    Ok(Some(doc.to_string()))
}

fn json_table(entry: &Value) -> Result<Table, AfError> {
    let Value::Object(map) = entry else {
        return Err(AfError::invalid("a TOML entry must be a table"));
    };
    let mut t = Table::new();
    for (k, v) in map {
        let item = match v {
            Value::Object(_) => Item::Table(json_table(v)?),
            other => Item::Value(json_value(other)?),
        };
        t.insert(k, item);
    }
    Ok(t)
}

fn json_value(v: &Value) -> Result<toml_edit::Value, AfError> {
    Ok(match v {
        Value::String(s) => s.as_str().into(),
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => n.as_f64().unwrap_or_default().into(),
        },
        Value::Array(items) => {
            let mut a = toml_edit::Array::new();
            for i in items {
                a.push(json_value(i)?);
            }
            toml_edit::Value::Array(a)
        }
        Value::Object(map) => {
            let mut t = toml_edit::InlineTable::new();
            for (k, v) in map {
                t.insert(k, json_value(v)?);
            }
            toml_edit::Value::InlineTable(t)
        }
        Value::Null => return Err(AfError::invalid("TOML has no null")),
    })
}

fn item_json(item: &Item) -> Value {
    match item {
        Item::Value(v) => value_json(v),
        Item::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), item_json(v)))
                .collect::<Map<_, _>>(),
        ),
        Item::ArrayOfTables(a) => Value::Array(
            a.iter()
                .map(|t| item_json(&Item::Table(t.clone())))
                .collect(),
        ),
        Item::None => Value::Null,
    }
}

fn value_json(v: &toml_edit::Value) -> Value {
    match v {
        toml_edit::Value::String(s) => Value::String(s.value().clone()),
        toml_edit::Value::Integer(i) => Value::from(*i.value()),
        toml_edit::Value::Float(f) => Value::from(*f.value()),
        toml_edit::Value::Boolean(b) => Value::Bool(*b.value()),
        toml_edit::Value::Datetime(d) => Value::String(d.value().to_string()),
        toml_edit::Value::Array(a) => Value::Array(a.iter().map(value_json).collect()),
        toml_edit::Value::InlineTable(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), value_json(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    const ORIGINAL: &str = "# my codex config\nmodel = \"o3\"  # pinned\n\n[mcp_servers.other]\ncommand = \"x\"\nargs = [ \"a\",  \"b\" ]\n\n[profiles.fast]\nmodel = \"mini\"\n";

    #[test]
    fn set_then_remove_restores_every_byte() {
        let entry = json!({"command": "/bin/afhttp", "args": ["mcp"]});
        let added = set(ORIGINAL, "mcp_servers", "afhttp", &entry).unwrap();
        assert!(
            added.contains("[mcp_servers.afhttp]\ncommand = \"/bin/afhttp\""),
            "{added}"
        );
        assert!(added.contains("args = [ \"a\",  \"b\" ]"), "{added}");
        assert_eq!(
            get(&added, "mcp_servers", "afhttp").unwrap().unwrap(),
            entry
        );
        assert_eq!(set(&added, "mcp_servers", "afhttp", &entry).unwrap(), added);
        assert_eq!(
            remove(&added, "mcp_servers", "afhttp").unwrap().unwrap(),
            ORIGINAL
        );
        assert!(remove(ORIGINAL, "mcp_servers", "afhttp").unwrap().is_none());
    }

    #[test]
    fn a_new_container_is_implicit_and_goes_away() {
        let original = "model = \"o3\"\n";
        let entry = json!({"url": "http://127.0.0.1:9222/mcp", "bearer_token_env_var": "T"});
        let added = set(original, "mcp_servers", "afhttp", &entry).unwrap();
        assert!(!added.contains("[mcp_servers]\n"), "{added}");
        assert_eq!(
            remove(&added, "mcp_servers", "afhttp").unwrap().unwrap(),
            original
        );
        assert!(set("a = [", "mcp_servers", "afhttp", &entry).is_err());
        assert!(set("mcp_servers = 3", "mcp_servers", "afhttp", &entry).is_err());
    }
}
