//! The SDK's messages and hints name request fields, never command-line flags: an MCP caller
//! or an SDK user has no flags (the CLI adds the flag to a hint from the error's `field`). A
//! whole command line shown to a human is fine: a flag inside a backtick span that starts
//! with `afhttp `, in a literal that is a command line (`afhttp fetch {} --takeover`), or a
//! literal that is one argument of a printed command (`"--endpoint-url"`).

use std::path::{Path, PathBuf};

/// Every string literal of `code` (comments skipped), escapes left as written.
fn string_literals(code: &str) -> Vec<String> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'\'' => {
                // A char literal ('"', '\'', 'x') is skipped; a lifetime is not a literal.
                if b.get(i + 1) == Some(&b'\\') {
                    i += 2;
                    while i < b.len() && b[i] != b'\'' {
                        i += 1;
                    }
                } else if b.get(i + 2) == Some(&b'\'') {
                    i += 2;
                }
            }
            b'r' if matches!(b.get(i + 1), Some(b'"') | Some(b'#'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let hashes = b[i + 1..].iter().take_while(|c| **c == b'#').count();
                let start = i + 1 + hashes + 1;
                if b.get(start - 1) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let end = code[start..].find(&close).map_or(b.len(), |e| start + e);
                out.push(code[start..end].to_string());
                i = end + close.len();
                continue;
            }
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                out.push(code[start..i.min(b.len())].to_string());
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The flags (`--name`) a literal names outside a shown command line.
fn flags_named(lit: &str) -> Vec<String> {
    let t = lit.trim();
    let lone_flag = t.starts_with("--")
        && t[2..]
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if lone_flag || t.starts_with("afhttp ") {
        return Vec::new();
    }
    let mut found = Vec::new();
    for (n, part) in lit.split('`').enumerate() {
        if n % 2 == 1 && part.starts_with("afhttp ") {
            continue;
        }
        let mut rest = part;
        while let Some(at) = rest.find("--") {
            let before = rest[..at].chars().last();
            let name: String = rest[at + 2..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')
                .collect();
            let starts_word = before.is_none_or(|c| !(c.is_alphanumeric() || c == '-'));
            if starts_word && name.starts_with(|c: char| c.is_ascii_lowercase()) {
                found.push(format!("--{name}"));
            }
            rest = &rest[at + 2..];
        }
    }
    found
}

/// The non-test code of a source file.
fn non_test_code(text: &str) -> &str {
    text.find("#[cfg(test)]").map_or(text, |at| &text[..at])
}

/// The non-test `.rs` files under `dir`: the layering test's walk, without `*_tests.rs`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = crate::layers::rust_files(dir);
    files.retain(|p| !p.to_string_lossy().ends_with("_tests.rs"));
    files
}

#[test]
fn no_sdk_message_names_a_flag() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut offenders = Vec::new();
    for file in rust_files(&root.join("src/sdk")) {
        let text = std::fs::read_to_string(&file).unwrap();
        for lit in string_literals(non_test_code(&text)) {
            let flags = flags_named(&lit);
            if !flags.is_empty() {
                let rel = file.strip_prefix(root).unwrap().display().to_string();
                offenders.push(format!("{rel}: {flags:?} in {lit:?}"));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "SDK messages name fields, not flags (the CLI adds the flag from the error's field):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_scanner_tells_flags_from_command_lines() {
    let code = r#"let a = "raise --timeout-ms"; // "--not-this"
        let b = '"'; let c = "afhttp fetch {} --takeover"; let d = "--endpoint-url";
        let e = "start it with `afhttp host --proxy-url URL`, or drop --endpoint-url";
        let f = r"x --max-tabs"; let g = "a-b--c and 1--2";"#;
    let named: Vec<Vec<String>> = string_literals(code)
        .iter()
        .map(|l| flags_named(l))
        .collect();
    assert_eq!(
        named,
        vec![
            vec!["--timeout-ms".to_string()],
            vec![],
            vec![],
            vec!["--endpoint-url".to_string()],
            vec!["--max-tabs".to_string()],
            vec![],
        ]
    );
}
