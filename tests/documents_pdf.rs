//! PDFs through the built binary: text agreement with poppler's `pdftotext` on fixtures from
//! two producers, page counts, encryption, the page cap, and hostile files (truncated,
//! decompression bomb, deep nesting) ending in warnings.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::support::documents::{
    bomb_pdf, damaged_pdf, nested_pdf, pdf_fixtures, pdftotext, split_content_pdf, typed,
    unmapped_pdf, word_f1, DocServer,
};
use crate::support::{warning_codes, Fixture};

fn serve(names: &[&str]) -> DocServer {
    let fx = pdf_fixtures();
    let docs: HashMap<String, _> = names
        .iter()
        .map(|n| (format!("/{n}"), typed("application/pdf", &fx.bytes(n))))
        .collect();
    DocServer::start(docs)
}

fn fetch_pdf(fx: &Fixture, url: &str, extra: &[&str]) -> crate::support::Run {
    let out = fx.path().join(format!("out{}", fastrand_name(url)));
    fx.cmd()
        .args([
            "fetch",
            url,
            "--render",
            "none",
            "--want",
            "text,content,content_json",
            "--timeout-ms",
            "60000",
            "--out",
        ])
        .arg(&out)
        .args(extra)
        .run()
}

fn fastrand_name(url: &str) -> String {
    url.rsplit('/').next().unwrap_or_default().replace('.', "_")
}

#[test]
fn pdf_text_agrees_with_pdftotext() {
    let names = [
        "report.pdf",
        "long.pdf",
        "gs.pdf",
        "empty_pw.pdf",
        "empty_pw_aes128.pdf",
    ];
    let srv = serve(&names);
    let fx = Fixture::new();
    for name in names {
        let run = fetch_pdf(&fx, &srv.url(&format!("/{name}")), &[]);
        let r = run.result();
        let text = run.artifact_text("text_file");
        let (reference, pages) = pdftotext(&pdf_fixtures().path(name));
        let f1 = word_f1(&text, &reference);
        assert!(
            f1 >= 0.95,
            "{name}: word F1 {f1:.3} against pdftotext\nours: {text}\npdftotext: {reference}"
        );
        let doc = run.artifact_json("content_json_file");
        assert_eq!(doc["page_count"], pages, "{name}");
        assert_eq!(
            text.matches('\u{c}').count() + 1,
            pages,
            "{name}: a form feed between pages"
        );
        assert_eq!(doc["pages"].as_array().unwrap().len(), pages, "{name}");
        assert_eq!(doc["has_text_layer"], true, "{name}");
        assert_eq!(doc["encrypted"], name.starts_with("empty_pw"), "{name}");
        // The report's third page is an image alone.
        let expected: &[&str] = if name == "report.pdf" || name == "empty_pw.pdf" {
            &["no_text_layer"]
        } else {
            &[]
        };
        assert_eq!(warning_codes(r), expected, "{name}\n{}", run.context);
        let md = run.artifact_text("content_file");
        assert!(md.contains("## Page 1\n"), "{name}: {md}");
        assert!(md.contains(&format!("## Page {pages}\n")), "{name}");
    }
}

#[test]
fn pdf_structure_info_outline_and_links() {
    let srv = serve(&["report.pdf"]);
    let fx = Fixture::new();
    let run = fetch_pdf(&fx, &srv.url("/report.pdf"), &[]);
    let doc = run.artifact_json("content_json_file");
    assert_eq!(doc["info"]["title"], "Quarterly Report");
    assert!(
        doc["info"]["producer"].as_str().unwrap().contains("Skia"),
        "{doc}"
    );
    assert!(
        doc["info"]["creation_date"]
            .as_str()
            .unwrap()
            .starts_with("D:"),
        "{doc}"
    );
    let outline: Vec<&str> = doc["outline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        outline,
        ["Quarterly Report", "Costs and margins", "Outlook"],
        "{doc}"
    );
    assert_eq!(doc["links"][0]["uri"], "https://example.com/appendix");
    // The image-only page is a page without text, not a missing page.
    assert_eq!(doc["pages"][2]["has_text"], false);
    let md = run.artifact_text("content_file");
    assert!(md.contains("## Page 2\n\n#### Costs and margins\n"), "{md}");
    assert!(md.contains("- <https://example.com/appendix>"), "{md}");
}

#[test]
fn scanned_pdf_says_it_has_no_text_layer() {
    let srv = serve(&["scanned.pdf"]);
    let fx = Fixture::new();
    let run = fetch_pdf(&fx, &srv.url("/scanned.pdf"), &[]);
    let doc = run.artifact_json("content_json_file");
    assert_eq!(doc["has_text_layer"], false);
    assert_eq!(doc["page_count"], 2);
    let w = run.fetch().warnings;
    assert!(
        w.iter()
            .any(|w| w.code == "no_text_layer" && w.message.starts_with("page(s) 1, 2 of 2 ")),
        "{}",
        run.context
    );
}

#[test]
fn unmapped_glyphs_are_left_out_with_text_unreliable() {
    let mut docs = HashMap::new();
    docs.insert(
        "/u.pdf".to_string(),
        typed("application/pdf", &unmapped_pdf()),
    );
    let srv = DocServer::start(docs);
    let fx = Fixture::new();
    let run = fetch_pdf(&fx, &srv.url("/u.pdf"), &[]);
    let r = run.result();
    assert_eq!(warning_codes(r), ["text_unreliable"], "{}", run.context);
    let msg = &run.fetch().warnings[0].message;
    assert!(msg.contains("page(s) 3 are mostly unmapped"), "{msg}");
    let text = run.artifact_text("text_file");
    assert!(
        text.contains("The contract starts on the first of March"),
        "{text}"
    );
    assert!(text.contains("three months notice"), "{text}");
    // The third page's glyphs stand for nothing a reader can map: no letters of it appear.
    let third = text.split('\u{c}').nth(2).unwrap();
    assert!(third.trim().is_empty(), "{third:?}");
    let doc = run.artifact_json("content_json_file");
    assert_eq!(doc["pages"][2]["left_out"], true);
    assert_eq!(
        doc["text_unreliable"]["pages_left_out"],
        serde_json::json!([3])
    );
    assert!(
        // 38 unmapped glyphs of 163.
        doc["text_unreliable"]["unmapped_share"].as_f64().unwrap() > 0.2,
        "{doc}"
    );
}

#[test]
fn damaged_pdf_gives_the_readable_pages_and_document_damaged() {
    let mut docs = HashMap::new();
    docs.insert(
        "/d.pdf".to_string(),
        typed("application/pdf", &damaged_pdf()),
    );
    let srv = DocServer::start(docs);
    let fx = Fixture::new();
    let run = fetch_pdf(&fx, &srv.url("/d.pdf"), &[]);
    let r = run.result();
    assert_eq!(warning_codes(r), ["document_damaged"], "{}", run.context);
    let msg = &run.fetch().warnings[0].message;
    assert!(msg.contains("rebuilt"), "{msg}");
    let text = run.artifact_text("text_file");
    assert!(
        text.contains("Invoice number four hundred and two"),
        "{text}"
    );
    assert!(text.contains("Payment goes to the account"), "{text}");
    assert!(!text.contains("lost with its broken stream"), "{text}");
    let doc = run.artifact_json("content_json_file");
    assert_eq!(doc["damaged"], true);
    assert_eq!(doc["page_count"], 3);
}

#[test]
fn pdf_aliases_are_read_and_written_as_body_pdf() {
    let fx = pdf_fixtures();
    let mut docs = HashMap::new();
    docs.insert(
        "/x".to_string(),
        typed("application/x-pdf", &fx.bytes("gs.pdf")),
    );
    let srv = DocServer::start(docs);
    let f = Fixture::new();
    let run = fetch_pdf(&f, &srv.url("/x"), &[]);
    assert!(
        run.artifact_path("body_file").ends_with("body.pdf"),
        "{}",
        run.context
    );
    assert!(run
        .artifact_text("text_file")
        .contains("Ghostscript produced"));
}

#[test]
fn max_pdf_pages_truncates_with_a_warning() {
    let srv = serve(&["long.pdf"]);
    let fx = Fixture::new();
    let run = fetch_pdf(&fx, &srv.url("/long.pdf"), &["--max-pdf-pages", "3"]);
    let r = run.result();
    let doc = run.artifact_json("content_json_file");
    assert_eq!(
        (doc["page_count"].as_u64(), doc["pages_read"].as_u64()),
        (Some(100), Some(3))
    );
    assert_eq!(doc["truncated"], true);
    assert_eq!(warning_codes(r), ["document_truncated"], "{}", run.context);
    assert_eq!(run.artifact_text("text_file").matches('\u{c}').count(), 2);
    let bad = fx
        .cmd()
        .args(["fetch", &srv.url("/long.pdf"), "--max-pdf-pages", "0"])
        .run();
    bad.error("invalid_argument", 1);
}

#[test]
fn locked_pdf_gives_the_body_and_pdf_encrypted() {
    let srv = serve(&["locked.pdf"]);
    let fx = Fixture::new();
    for (name, code) in [("locked.pdf", "pdf_encrypted")] {
        let run = fetch_pdf(&fx, &srv.url(&format!("/{name}")), &[]);
        let r = run.result();
        assert_eq!(
            std::fs::read(run.artifact_path("body_file")).unwrap(),
            pdf_fixtures().bytes(name)
        );
        for a in ["text", "content", "content_json"] {
            assert!(
                r.get(format!("{a}_file")).is_none(),
                "{name}\n{}",
                run.context
            );
        }
        assert_eq!(
            warning_codes(r),
            [code, code, code],
            "{name}\n{}",
            run.context
        );
        // Unread, the document still says what the reader cost (its own VmHWM).
        let doc = &run.event["trace"]["document"];
        assert!(
            doc["peak_rss_kib"].as_u64().is_some_and(|k| k > 0) && doc["pages_read"] == 0,
            "{name}: trace.document {doc}\n{}",
            run.context
        );
    }
}

/// A page's content split over several streams (the reader decodes and joins them itself,
/// one page at a time) reads as one text, with no warning.
#[test]
fn content_split_over_several_streams_reads_as_one() {
    let mut docs = HashMap::new();
    docs.insert(
        "/split.pdf".to_string(),
        typed("application/pdf", &split_content_pdf()),
    );
    let srv = DocServer::start(docs);
    let fx = Fixture::new();
    let run = fetch_pdf(&fx, &srv.url("/split.pdf"), &[]);
    let r = run.result();
    assert_eq!(
        run.artifact_text("text_file"),
        "The notice period is three months.\n",
        "{}",
        run.context
    );
    assert!(warning_codes(r).is_empty(), "{}", run.context);
}

/// Both executables pack their relative relocations (`DT_RELR`, build.rs): unpacked, the
/// loader reads a 24-byte entry per pointer at every start (1.6 MB resident in afhttp).
#[test]
fn the_executables_pack_their_relocations() {
    let afhttp = std::path::PathBuf::from(env!("CARGO_BIN_EXE_afhttp"));
    for exe in [afhttp.clone(), afhttp.with_file_name("afhttp-pdf-reader")] {
        let elf = std::fs::read(&exe).unwrap();
        let tags = crate::support::documents::elf_dynamic_tags(&elf);
        const DT_RELR: u64 = 0x24;
        assert!(
            tags.contains(&DT_RELR),
            "{} has no DT_RELR: {tags:x?}",
            exe.display()
        );
    }
}

#[test]
fn hostile_pdfs_end_within_the_budget() {
    let mut docs = HashMap::new();
    docs.insert(
        "/bomb.pdf".to_string(),
        typed("application/pdf", &bomb_pdf(1 << 30)),
    );
    docs.insert(
        "/nested.pdf".to_string(),
        typed("application/pdf", &nested_pdf(200_000)),
    );
    let srv = DocServer::start(docs);
    let fx = Fixture::new();
    for name in ["bomb.pdf", "nested.pdf"] {
        let started = Instant::now();
        let run = fetch_pdf(&fx, &srv.url(&format!("/{name}")), &[]);
        let r = run.result();
        // Liveness, not speed: the reader's budget is 25 s.
        assert!(started.elapsed() < Duration::from_secs(50), "{name}");
        assert!(!warning_codes(r).is_empty(), "{name}\n{}", run.context);
        assert!(run.artifact_path("body_file").ends_with("body.pdf"));
    }
}

#[test]
fn max_pdf_pages_holds_on_the_browser_path() {
    let srv = serve(&["long.pdf"]);
    let fx = Fixture::new();
    let run = crate::support::chromium::render(
        &fx,
        &srv.url("/long.pdf"),
        "text,content_json",
        &["--max-pdf-pages", "3"],
    );
    let r = run.result();
    assert_eq!(run.fetch().render, "browser", "{}", run.context);
    let doc = run.artifact_json("content_json_file");
    assert_eq!(doc["pages_read"].as_u64(), Some(3), "{}", run.context);
    assert_eq!(warning_codes(r), ["document_truncated"], "{}", run.context);
}

#[test]
fn attachment_pdf_gets_its_text_on_the_browser_path() {
    let fx = pdf_fixtures();
    let mut d = typed("application/pdf", &fx.bytes("gs.pdf"));
    d.disposition = Some("attachment; filename=\"gs.pdf\"".into());
    let mut docs = HashMap::new();
    docs.insert("/gs.pdf".to_string(), d);
    let srv = DocServer::start(docs);
    let f = Fixture::new();
    let run = crate::support::chromium::render(&f, &srv.url("/gs.pdf"), "text,content_json", &[]);
    assert_eq!(run.fetch().render, "browser", "{}", run.context);
    let text = run.artifact_text("text_file");
    assert!(
        text.contains("Ghostscript produced"),
        "{text}\n{}",
        run.context
    );
}

/// Serve gs.pdf at `/gs.pdf` changed by `edit`, and render it in a browser.
fn render_served(edit: impl FnOnce(&mut crate::support::documents::Doc)) -> crate::support::Run {
    let fx = pdf_fixtures();
    let mut d = typed("application/pdf", &fx.bytes("gs.pdf"));
    edit(&mut d);
    let srv = DocServer::start(HashMap::from([("/gs.pdf".to_string(), d)]));
    let f = Fixture::new();
    crate::support::chromium::render(&f, &srv.url("/gs.pdf"), "text,content_json", &[])
}

/// The message of the `artifact_capture_failed` warning that says the main response was
/// not read as a document.
fn not_read_message(run: &crate::support::Run) -> String {
    run.fetch()
        .warnings
        .into_iter()
        .filter(|w| w.code == "artifact_capture_failed")
        .map(|w| w.message)
        .find(|m| m.contains("was not read as a document"))
        .unwrap_or_else(|| panic!("no not-read warning\n{}", run.context))
}

#[test]
fn a_pdf_over_the_interception_size_says_why_it_has_no_text() {
    // Declared 300 MB (over the 256 MiB read through CDP); the body is cut short.
    let run = render_served(|d| d.content_length = Some(300_000_000));
    let m = not_read_message(&run);
    assert!(m.contains("300000000 bytes, over the 256 MiB"), "{m}");
    assert!(m.contains("render none"), "{m}");
}

#[test]
fn a_failed_read_at_the_fetch_stage_is_a_warning_not_a_silent_fallback() {
    // A body labelled gzip that is not: the browser cannot decode it at the Fetch stage.
    let run = render_served(|d| d.extra_headers.push("Content-Encoding: gzip".into()));
    let m = not_read_message(&run);
    assert!(m.contains("reading it at the Fetch stage failed"), "{m}");
}
