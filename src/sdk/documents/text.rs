//! `text/plain` and `text/markdown`: the text passes through.

use serde_json::{json, Value};

/// `content.json` of a plain-text document.
pub fn plain_json(text: &str) -> Value {
    json!({"lines": text.lines().count()})
}

/// The headings of a markdown document (ATX `#` lines outside code fences): `(level, text)`.
pub fn markdown_headings(md: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in md.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced || line.len() - t.len() > 3 {
            continue;
        }
        let level = t.bytes().take_while(|b| *b == b'#').count();
        if (1..=6).contains(&level) {
            let rest = &t[level..];
            if rest.is_empty() || rest.starts_with([' ', '\t']) {
                let title = rest.trim().trim_end_matches('#').trim_end();
                out.push((level, title.to_string()));
            }
        }
    }
    out
}

/// `content.json` of a markdown document: title (first level-1 heading) and headings.
pub fn markdown_json(md: &str) -> Value {
    let headings = markdown_headings(md);
    let title = headings
        .iter()
        .find(|(l, _)| *l == 1)
        .map(|(_, t)| t.clone());
    let list: Vec<Value> = headings
        .iter()
        .map(|(level, text)| json!({"level": level, "text": text}))
        .collect();
    json!({"title": title, "headings": list, "lines": md.lines().count()})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_skip_code_fences() {
        let md = "# Title\n\ntext\n```\n# not a heading\n```\n## Part #\n#nospace\n    # indented code\n";
        assert_eq!(
            markdown_headings(md),
            vec![(1, "Title".to_string()), (2, "Part".to_string())]
        );
        assert_eq!(markdown_json(md)["title"], "Title");
    }
}
