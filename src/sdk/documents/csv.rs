//! `text/csv` (RFC 4180): parsed into rows, shown as a markdown table.

use serde_json::{json, Value};

/// Rows shown in `content.md`; the rest are counted, not shown.
pub const MAX_TABLE_ROWS: usize = 10_000;

/// Parse CSV text into rows of fields (quoted fields, doubled quotes, CRLF or LF).
pub fn parse(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    let mut any = false;
    while let Some(c) = chars.next() {
        any = true;
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    field.push('"');
                    chars.next();
                }
                '"' => quoted = false,
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '"' if field.is_empty() => quoted = true,
            ',' => row.push(std::mem::take(&mut field)),
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
                any = false;
            }
            _ => field.push(c),
        }
    }
    if any {
        row.push(field);
        rows.push(row);
    }
    rows
}

fn cell(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\r', '\n'], " ")
}

/// The markdown table (first row as the header) and `content.json` facts.
pub fn project(text: &str) -> (String, Value) {
    let rows = parse(text);
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut md = String::new();
    if let Some((head, body)) = rows.split_first() {
        let line = |r: &[String]| {
            let mut cells: Vec<String> = r.iter().map(|c| cell(c)).collect();
            cells.resize(columns, String::new());
            format!("| {} |\n", cells.join(" | "))
        };
        md.push_str(&line(head));
        md.push_str(&format!("|{}\n", " --- |".repeat(columns)));
        for r in body.iter().take(MAX_TABLE_ROWS) {
            md.push_str(&line(r));
        }
    }
    let shown = rows.len().saturating_sub(1).min(MAX_TABLE_ROWS);
    let facts = json!({
        "header": rows.first(),
        "rows": rows.len().saturating_sub(1),
        "columns": columns,
        "rows_in_content_md": shown,
        "truncated": rows.len().saturating_sub(1) > MAX_TABLE_ROWS,
    });
    (md, facts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_fields_and_tables() {
        let rows = parse("a,b\r\n\"x, y\",\"say \"\"hi\"\"\"\n1,\n");
        assert_eq!(
            rows,
            vec![
                vec!["a".to_string(), "b".to_string()],
                vec!["x, y".to_string(), "say \"hi\"".to_string()],
                vec!["1".to_string(), String::new()],
            ]
        );
        let (md, facts) = project("name,note\nA,p|q\nB\n");
        assert_eq!(
            md,
            "| name | note |\n| --- | --- |\n| A | p\\|q |\n| B |  |\n"
        );
        assert_eq!(facts["rows"], 2);
        assert_eq!(facts["columns"], 2);
    }
}
