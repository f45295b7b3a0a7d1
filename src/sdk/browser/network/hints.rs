//! Mechanical payload hints: is a body valid JSON, and which GraphQL operation a request
//! names. Nothing here interprets what the payload means.

use serde_json::Value;

/// The GraphQL operation a request carries, when it carries one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GraphqlHint {
    /// `operationName`, or the name after the leading keyword of `query`.
    pub operation_name: Option<String>,
    /// `query`, `mutation` or `subscription` (a bare `{ ... }` selection is a `query`).
    pub operation_type: Option<&'static str>,
}

/// Whether `bytes` parse as one JSON value.
pub fn json_valid(bytes: &[u8]) -> bool {
    serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok()
}

/// Whether a MIME type (or content type) is JSON.
pub fn is_json_mime(mime: &str) -> bool {
    let essence = mime
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json" || essence.ends_with("+json") || essence == "text/json"
}

/// The GraphQL hint of a request: from a JSON POST body (`operationName`, `query`; a batch
/// reports its first operation) or from GET `query`/`operationName` parameters.
pub fn graphql(url: &str, post_body: Option<&[u8]>) -> Option<GraphqlHint> {
    if let Some(body) = post_body {
        if let Ok(v) = serde_json::from_slice::<Value>(body) {
            let op = match &v {
                Value::Array(items) => items.first().cloned().unwrap_or(Value::Null),
                other => other.clone(),
            };
            let query = op.get("query").and_then(Value::as_str);
            let name = op.get("operationName").and_then(Value::as_str);
            if query.is_some() || name.is_some() {
                return Some(hint(query, name));
            }
        }
    }
    let parsed = url::Url::parse(url).ok()?;
    let mut query = None;
    let mut name = None;
    for (k, v) in parsed.query_pairs() {
        match k.as_ref() {
            "query" => query = Some(v.into_owned()),
            "operationName" => name = Some(v.into_owned()),
            _ => {}
        }
    }
    // A bare `?query=` is common outside GraphQL; require it to parse as an operation.
    let q = query.as_deref();
    let parsed_type = q.and_then(|q| leading_operation(q).0);
    if parsed_type.is_none() && name.is_none() {
        return None;
    }
    Some(hint(q, name.as_deref()))
}

fn hint(query: Option<&str>, name: Option<&str>) -> GraphqlHint {
    let (operation_type, parsed_name) = query.map(leading_operation).unwrap_or((None, None));
    GraphqlHint {
        operation_name: name
            .filter(|n| !n.is_empty())
            .map(String::from)
            .or(parsed_name),
        operation_type,
    }
}

/// The first operation of a GraphQL document: its type and name, skipping whitespace, commas
/// and `#` comments, and any leading `fragment` definitions.
pub fn leading_operation(doc: &str) -> (Option<&'static str>, Option<String>) {
    let mut rest = doc;
    loop {
        rest = skip_ignored(rest);
        if rest.starts_with('{') {
            return (Some("query"), None);
        }
        let word = take_name(rest);
        let kind = match word {
            "query" => "query",
            "mutation" => "mutation",
            "subscription" => "subscription",
            "fragment" => {
                // Skip the whole fragment body, balanced braces.
                match skip_block(&rest[word.len()..]) {
                    Some(after) => {
                        rest = after;
                        continue;
                    }
                    None => return (None, None),
                }
            }
            _ => return (None, None),
        };
        let after = skip_ignored(&rest[word.len()..]);
        let name = take_name(after);
        return (Some(kind), (!name.is_empty()).then(|| name.to_string()));
    }
}

fn skip_ignored(mut s: &str) -> &str {
    loop {
        s = s.trim_start_matches(|c: char| c.is_whitespace() || c == ',' || c == '\u{feff}');
        match s.strip_prefix('#') {
            Some(comment) => s = comment.find('\n').map_or("", |i| &comment[i..]),
            None => return s,
        }
    }
}

fn take_name(s: &str) -> &str {
    let end = s
        .char_indices()
        .find(|(i, c)| !(c.is_ascii_alphabetic() || *c == '_' || (*i > 0 && c.is_ascii_digit())))
        .map_or(s.len(), |(i, _)| i);
    &s[..end]
}

/// The text after the first balanced `{ ... }` block of `s`.
fn skip_block(s: &str) -> Option<&str> {
    let start = s.find('{')?;
    let mut depth = 0usize;
    for (i, c) in s[start..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(&s[start + i + 1..]);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_type_and_name_from_the_query_text() {
        assert_eq!(
            leading_operation("mutation AddItem($x: Int) { add(x: $x) }"),
            (Some("mutation"), Some("AddItem".into()))
        );
        assert_eq!(leading_operation("  { me { id } }"), (Some("query"), None));
        assert_eq!(
            leading_operation("# c\n query Q1 { a }"),
            (Some("query"), Some("Q1".into()))
        );
        assert_eq!(
            leading_operation("fragment F on T { a { b } } subscription S { c }"),
            (Some("subscription"), Some("S".into()))
        );
        assert_eq!(leading_operation("select * from t"), (None, None));
        assert_eq!(leading_operation(""), (None, None));
    }

    #[test]
    fn post_body_operation_name_wins() {
        let body = br#"{"operationName":"AddTodo","query":"mutation Other { x }","variables":{}}"#;
        let h = graphql("http://h/graphql", Some(body)).unwrap();
        assert_eq!(h.operation_name.as_deref(), Some("AddTodo"));
        assert_eq!(h.operation_type, Some("mutation"));
        let batch = br#"[{"query":"query A { a }"},{"query":"mutation B { b }"}]"#;
        let h = graphql("http://h/graphql", Some(batch)).unwrap();
        assert_eq!(
            (h.operation_name.as_deref(), h.operation_type),
            (Some("A"), Some("query"))
        );
        assert!(graphql("http://h/api", Some(br#"{"a":1}"#)).is_none());
        assert!(graphql("http://h/api", Some(b"not json")).is_none());
    }

    #[test]
    fn get_parameters() {
        let h = graphql("http://h/graphql?query=query%20Feed%20%7B%20a%20%7D", None).unwrap();
        assert_eq!(
            (h.operation_name.as_deref(), h.operation_type),
            (Some("Feed"), Some("query"))
        );
        // A search box's ?query= is not GraphQL.
        assert!(graphql("http://h/search?query=shoes", None).is_none());
        assert!(graphql("http://h/x", None).is_none());
    }

    #[test]
    fn json_checks() {
        assert!(json_valid(br#"{"a":[1,2]}"#));
        assert!(!json_valid(br#"{"a":"#));
        assert!(is_json_mime("application/json; charset=utf-8"));
        assert!(is_json_mime("application/vnd.api+json"));
        assert!(!is_json_mime("text/html"));
    }
}
