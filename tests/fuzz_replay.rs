//! The committed fuzz corpora (`fuzz/corpus/<target>/`), replayed on the stable toolchain
//! through the same bodies `cargo fuzz` runs (`afhttp::fuzzing`): no input may panic or
//! break an invariant. Crash inputs found by fuzzing are committed there as `regress-*`.

use std::collections::BTreeSet;
use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use afhttp::fuzzing::{self, TARGETS};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// File stems (or directory names) under `dir`.
fn names(dir: &Path, suffix: &str) -> BTreeSet<String> {
    fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(suffix).map(str::to_string))
        .filter(|n| !n.starts_with('.'))
        .collect()
}

#[test]
fn every_fuzz_target_is_registered_and_has_a_corpus() {
    let registered: BTreeSet<String> = TARGETS.iter().map(|(n, _)| n.to_string()).collect();
    assert_eq!(registered.len(), 8, "one target per input family");
    let binaries = names(&fuzz_dir().join("fuzz_targets"), ".rs");
    let corpora = names(&fuzz_dir().join("corpus"), "");
    assert_eq!(
        binaries, registered,
        "fuzz/fuzz_targets/*.rs vs afhttp::fuzzing::TARGETS"
    );
    assert_eq!(
        corpora, registered,
        "fuzz/corpus/* vs afhttp::fuzzing::TARGETS"
    );
    let manifest = fs::read_to_string(fuzz_dir().join("Cargo.toml")).unwrap();
    for name in &registered {
        assert!(
            manifest.contains(&format!("name = \"{name}\"")),
            "{name} missing from fuzz/Cargo.toml"
        );
        let src =
            fs::read_to_string(fuzz_dir().join("fuzz_targets").join(format!("{name}.rs"))).unwrap();
        assert!(
            src.contains(&format!("::{name}(data)")),
            "fuzz_targets/{name}.rs calls another body"
        );
    }
    // Every request URL a cookie input can pick parses (the bodies rely on it).
    for selector in 0..=u8::MAX {
        let _ = fuzzing::cookies::url_for(selector);
    }
}

/// Run every committed input of `target`; report all failing files at once.
fn replay(target: &str) {
    let body = fuzzing::target(target).unwrap();
    let dir = fuzz_dir().join("corpus").join(target);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    files.retain(|p| {
        p.is_file()
            && !p
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
    });
    files.sort();
    assert!(files.len() >= 10, "{target}: only {} seeds", files.len());
    let failed: Vec<String> = files
        .iter()
        .filter(|p| {
            let data = fs::read(p).unwrap();
            catch_unwind(AssertUnwindSafe(|| body(&data))).is_err()
        })
        .map(|p| p.display().to_string())
        .collect();
    assert!(failed.is_empty(), "{target}: inputs that fail: {failed:#?}");
}

#[test]
fn replay_set_cookie() {
    replay("set_cookie");
}

#[test]
fn replay_cookie_jar() {
    replay("cookie_jar");
}

#[test]
fn replay_wait_spec() {
    replay("wait_spec");
}

#[test]
fn replay_endpoint() {
    replay("endpoint");
}

#[test]
fn replay_header() {
    replay("header");
}

#[test]
fn replay_profile_name() {
    replay("profile_name");
}

#[test]
fn replay_html_content() {
    replay("html_content");
}

#[test]
fn replay_pdf_text() {
    replay("pdf_text");
}
