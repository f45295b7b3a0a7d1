//! `--want pdf`: the rendered page printed by Chromium (`Page.printToPDF`) into `page.pdf`,
//! checked with poppler (`pdfinfo`, `pdftotext`) against the page's own text and page size.

use std::collections::HashMap;
use std::process::Command;
use std::time::Duration;

use crate::support::documents::{pdftotext, run_with_deadline, typed, word_f1, DocServer};
use crate::support::Fixture;

const CHROMIUM: &str = "/usr/bin/chromium";

/// Three sections, each on its own A5 page (the page's CSS page size), on a coloured
/// background.
const BOOKLET: &str = "<!doctype html><meta charset=utf-8><title>Booklet</title>\
<style>@page { size: A5; margin: 1cm } body { background: #ffeeaa }\
section { break-after: page }</style>\
<section><h1>Field guide to lichens</h1><p>Lichens grow slowly on bare rock and bark.</p></section>\
<section><h2>Crustose forms</h2><p>Crustose lichens cling tightly to their substrate.</p></section>\
<section><h2>Foliose forms</h2><p>Foliose lichens have leafy lobes that lift at the edges.</p></section>";

fn pdfinfo(path: &std::path::Path) -> String {
    let out = run_with_deadline(Command::new("pdfinfo").arg(path), Duration::from_secs(60));
    assert!(out.status.success(), "pdfinfo failed on {}", path.display());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn info_field<'a>(info: &'a str, field: &str) -> &'a str {
    info.lines()
        .find_map(|l| l.strip_prefix(field))
        .map(|v| v.trim_start_matches(':').trim())
        .unwrap_or_else(|| panic!("no {field} in {info}"))
}

#[test]
fn want_pdf_prints_the_rendered_page() {
    let fx = Fixture::new();
    let mut docs = HashMap::new();
    docs.insert(
        "/booklet".to_string(),
        typed("text/html; charset=utf-8", BOOKLET.as_bytes()),
    );
    let srv = DocServer::start(docs);
    let _one = crate::support::chromium::lock();
    let run = fx
        .cmd()
        .env("AFHTTP_NO_SANDBOX", "1")
        .env("AFHTTP_BROWSER_BIN", CHROMIUM)
        .args([
            "fetch",
            &srv.url("/booklet"),
            "--want",
            "pdf,text",
            "--timeout-ms",
            "60000",
        ])
        .run();
    // A browser-only artifact: --render auto escalates for it.
    assert_eq!(run.fetch().render, "browser", "{}", run.context);
    assert_eq!(
        run.event["trace"]["render"]["escalation_reason"]["code"], "browser_only_artifact",
        "{}",
        run.context
    );
    let path = std::path::PathBuf::from(run.artifact_path("pdf_file"));
    assert!(path.ends_with("page.pdf"), "{}", run.context);
    assert!(std::fs::read(&path).unwrap().starts_with(b"%PDF-"));
    let info = pdfinfo(&path);
    // One page per section, at the page's own A5 size (preferCSSPageSize).
    assert_eq!(info_field(&info, "Pages"), "3", "{info}");
    assert!(info_field(&info, "Page size").contains("(A5)"), "{info}");
    let (printed, pages) = pdftotext(&path);
    assert_eq!(pages, 3, "{printed}");
    let text = run.artifact_text("text_file");
    let f1 = word_f1(&printed, &text);
    assert!(
        f1 >= 0.95,
        "F1 {f1}: pdftotext {printed:?} vs text.txt {text:?}"
    );
    assert!(printed.contains("Foliose lichens"), "{printed}");
}

#[test]
fn want_pdf_is_refused_without_a_browser() {
    let fx = Fixture::new();
    let run = fx
        .cmd()
        .args([
            "fetch",
            "http://127.0.0.1:9/x",
            "--render",
            "none",
            "--want",
            "pdf",
        ])
        .run();
    let e = run.failure("invalid_argument", 1);
    assert!(e.message.as_str().contains("pdf"), "{}", run.context);
}
