//! The layer rule of `lib.rs`, as a test over the source tree: a file of a lower layer that
//! names a module of a higher one fails it.

use std::path::{Path, PathBuf};

/// (folder under `src/`, modules it must not name).
const RULES: &[(&str, &[&str])] = &[
    ("sdk", &["host", "cli", "mcp", "container", "mcp_install"]),
    (
        "profile",
        &["host", "cli", "mcp", "container", "mcp_install"],
    ),
    ("mcp", &["host", "cli", "container", "mcp_install"]),
    ("host", &["cli", "mcp_install"]),
    ("container", &["cli", "mcp_install"]),
];

/// Every `.rs` file under `dir`.
pub(crate) fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files
}

/// The crate-root modules `text` names: `crate::NAME` paths, and the first name of each
/// member of a `crate::{A, B::…}` group.
fn named_modules(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        match rest.strip_prefix('{') {
            Some(group) => names.extend(group_heads(group)),
            None => names.push(ident_at(rest)),
        }
    }
    names
}

/// The identifier at the start of `text`.
fn ident_at(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The first identifier of each top-level member of a `{…}` group (`text` starts inside it).
fn group_heads(text: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0usize;
    let mut member_start = true;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => member_start = true,
            c if member_start && depth == 0 && (c.is_alphanumeric() || c == '_') => {
                heads.push(ident_at(&text[i..]));
                member_start = false;
            }
            _ => {}
        }
    }
    heads
}

/// A lower layer that names a higher one fails, as does a cargo feature of a higher layer
/// switched on inside `sdk`.
#[test]
fn layers_run_one_way() {
    let src = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src"));
    let mut broken = Vec::new();
    for (folder, forbidden) in RULES {
        for file in rust_files(&src.join(folder)) {
            let text = std::fs::read_to_string(&file).unwrap();
            for name in named_modules(&text) {
                if forbidden.contains(&name.as_str()) {
                    broken.push(format!("{} names crate::{name}", file.display()));
                }
            }
            if *folder == "sdk" && text.contains("feature = \"host\"") {
                broken.push(format!("{} switches on the host feature", file.display()));
            }
        }
    }
    broken.sort();
    broken.dedup();
    assert!(broken.is_empty(), "layers reach up:\n{}", broken.join("\n"));
}

#[test]
fn named_modules_reads_paths_and_groups() {
    let text = "use crate::sdk::fetch;\nuse crate::{host::cli, error::{AfError, ErrorCode}, cli};\nlet a = crate::mcp::f();";
    assert_eq!(
        named_modules(text),
        ["sdk", "host", "error", "cli", "mcp"].map(String::from)
    );
}
