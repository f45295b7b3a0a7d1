//! The content-type table (docs/reference.md "Content types") through the built binary: each
//! type by its header, by sniffing under a generic header, and with a wrong charset label.

use std::collections::HashMap;

use serde_json::Value;

use crate::support::documents::{pdf_fixtures, png, typed, Doc, DocServer};
use crate::support::{Fixture, HostProc};

const CHROMIUM: &str = "/usr/bin/chromium";

/// One row of the table: path, declared type, body, `content.json` type, words that must be
/// in text.txt and content.md.
struct Case {
    path: &'static str,
    content_type: &'static str,
    body: Vec<u8>,
    kind: &'static str,
    text_has: &'static str,
    md_has: &'static str,
}

fn cases() -> Vec<Case> {
    let rss = br#"<?xml version="1.0"?><rss version="2.0"><channel><title>Release notes</title><link>https://n.test/</link><item><title>Version two ships</title><link>https://n.test/2</link><pubDate>Mon, 01 Dec 2025 10:00:00 GMT</pubDate></item></channel></rss>"#;
    let atom = br#"<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Team blog</title><entry><title>Hello Atom</title><link href="https://b.test/p"/><updated>2025-12-01T00:00:00Z</updated></entry></feed>"#;
    vec![
        Case { path: "/plain", content_type: "text/plain; charset=utf-8", body: "Plain words, café.\n".into(), kind: "text", text_has: "Plain words, café.", md_has: "Plain words" },
        Case { path: "/md", content_type: "text/markdown; charset=utf-8", body: "# Guide\n\nInstall it with *care*.\n".into(), kind: "markdown", text_has: "Install it", md_has: "# Guide\n\nInstall it with *care*." },
        Case { path: "/csv", content_type: "text/csv", body: "name,city\nAda,Zürich\n\"Lovelace, A\",London\n".into(), kind: "csv", text_has: "Zürich", md_has: "| Lovelace, A | London |" },
        Case { path: "/json", content_type: "application/json", body: r#"{"name":"café","items":[1,2]}"#.into(), kind: "json", text_has: "\"name\": \"café\"", md_has: "```json" },
        Case { path: "/problem", content_type: "application/problem+json", body: br#"{"title":"Not here"}"#.to_vec(), kind: "json", text_has: "Not here", md_has: "Not here" },
        Case { path: "/rss", content_type: "application/rss+xml", body: rss.to_vec(), kind: "feed", text_has: "Version two ships", md_has: "- [Version two ships](https://n.test/2)" },
        Case { path: "/atom", content_type: "application/atom+xml", body: atom.to_vec(), kind: "feed", text_has: "Hello Atom", md_has: "[Hello Atom](https://b.test/p)" },
        Case { path: "/xml", content_type: "application/xml", body: b"<?xml version=\"1.0\"?><note><to>Tove</to><body>Remember the meeting</body></note>".to_vec(), kind: "xml", text_has: "Remember the meeting", md_has: "Tove" },
    ]
}

fn fetch(fx: &Fixture, url: &str, extra: &[&str]) -> crate::support::Run {
    let out = fx.path().join(format!("out-{}", uuid_like(url, extra)));
    fx.cmd()
        .args([
            "fetch",
            url,
            "--want",
            "body,text,content,content_json",
            "--timeout-ms",
            "60000",
            "--out",
        ])
        .arg(&out)
        .args(extra)
        .run()
}

fn uuid_like(url: &str, extra: &[&str]) -> String {
    format!("{url}{}", extra.join(""))
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                b as char
            } else {
                '_'
            }
        })
        .collect()
}

fn server(generic: bool, wrong_charset: bool) -> DocServer {
    let mut docs = HashMap::new();
    for c in cases() {
        let ct = if generic {
            "application/octet-stream".to_string()
        } else if wrong_charset {
            // A label that names no encoding: the bytes decide.
            format!(
                "{}; charset=x-no-such-charset",
                c.content_type.split(';').next().unwrap_or_default()
            )
        } else {
            c.content_type.to_string()
        };
        docs.insert(c.path.to_string(), typed(&ct, &c.body));
    }
    let ct = if generic {
        "application/octet-stream"
    } else {
        "image/png"
    };
    docs.insert("/png".into(), typed(ct, &png(8, 8)));
    let ct = if generic {
        "binary/octet-stream"
    } else {
        "application/zip"
    };
    docs.insert(
        "/zip".into(),
        typed(ct, b"PK\x03\x04\x14\0\0\0\x08\0binary\0\xff\xfe"),
    );
    let ct = if generic {
        "application/octet-stream"
    } else {
        "application/pdf"
    };
    docs.insert(
        "/pdf".into(),
        typed(ct, &pdf_fixtures().bytes("report.pdf")),
    );
    DocServer::start(docs)
}

/// What sniffing can tell from bytes alone: markdown and CSV are text.
fn sniffed_kind(kind: &str) -> &str {
    match kind {
        "markdown" | "csv" => "text",
        k => k,
    }
}

/// The fetch flags for `render`: `always` goes to `host`'s browser.
fn render_args<'a>(render: &'a str, host: Option<&'a HostProc>) -> Vec<&'a str> {
    let mut args = vec!["--render", render];
    if let Some(h) = host {
        args.extend(["--endpoint-url", h.endpoint.as_str()]);
    }
    args
}

/// On the browser path a document's artifacts come from the main response's bytes, and the
/// trace says so.
fn check_browser_document(run: &crate::support::Run, kind: &str) {
    assert_eq!(run.fetch().render, "browser", "{}", run.context);
    let main = &run.event["trace"]["main_response"];
    assert_eq!(main["document"], kind, "{}", run.context);
    assert_eq!(main["readiness"], "skipped", "{}", run.context);
    assert_eq!(
        run.event["trace"]["readiness"]["skipped"], "main_response_document",
        "{}",
        run.context
    );
}

fn check_table(render: &str, generic: bool, wrong_charset: bool) {
    let fx = Fixture::new();
    let srv = server(generic, wrong_charset);
    let host = (render == "always").then(|| {
        HostProc::start(
            &fx,
            &["--listen", "tcp:127.0.0.1:0"],
            &[("AFHTTP_BROWSER_BIN", CHROMIUM)],
        )
    });
    let args = render_args(render, host.as_ref());
    for c in cases() {
        let run = fetch(&fx, &srv.url(c.path), &args);
        let r = run.result();
        let ctx = format!(
            "{} render={render} generic={generic} wrong_charset={wrong_charset}\n{}",
            c.path, run.context
        );
        assert_eq!(
            std::fs::read(run.artifact_path("body_file")).unwrap(),
            c.body,
            "{ctx}"
        );
        let text = run.artifact_text("text_file");
        let md = run.artifact_text("content_file");
        let doc: Value = run.artifact_json("content_json_file");
        let kind = if generic {
            sniffed_kind(c.kind)
        } else {
            c.kind
        };
        assert_eq!(doc["type"], kind, "{ctx}");
        assert!(
            text.contains(c.text_has),
            "text.txt lacks {:?}: {text}\n{ctx}",
            c.text_has
        );
        if !generic || kind == c.kind {
            assert!(
                md.contains(c.md_has),
                "content.md lacks {:?}: {md}\n{ctx}",
                c.md_has
            );
        }
        if wrong_charset {
            assert_eq!(doc["charset"]["source"], "declared_overridden", "{ctx}");
        }
        let w = r["warnings"].as_array().unwrap();
        assert!(w.iter().all(|w| w["code"] != "artifact_empty"), "{ctx}");
        // Documents are never escalated, and never shown through a browser viewer.
        if render == "auto" {
            assert_eq!(run.fetch().render, "http", "{ctx}");
        }
        if host.is_some() {
            check_browser_document(&run, kind);
        }
    }
    if wrong_charset {
        return;
    }
    for path in ["/png", "/zip"] {
        let run = fetch(&fx, &srv.url(path), &args);
        let r = run.result();
        for a in ["text", "content", "content_json"] {
            assert!(
                r.get(format!("{a}_file")).is_none(),
                "{path}: no garbage {a}\n{}",
                run.context
            );
            assert!(
                r["warnings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|w| w["artifact"] == a && w["code"] == "backend_unsupported"),
                "{path}: {a}\n{}",
                run.context
            );
        }
        if host.is_some() {
            check_browser_document(&run, if path == "/png" { "image" } else { "binary" });
        }
        let ext = if path == "/png" {
            "png"
        } else if generic {
            "bin"
        } else {
            "zip"
        };
        assert!(
            run.artifact_path("body_file")
                .ends_with(&format!("body.{ext}")),
            "{}",
            run.context
        );
    }
    let run = fetch(&fx, &srv.url("/pdf"), &args);
    if host.is_some() {
        check_browser_document(&run, "pdf");
    }
    assert!(
        run.artifact_path("body_file").ends_with("body.pdf"),
        "{}",
        run.context
    );
    assert_eq!(
        std::fs::read(run.artifact_path("body_file")).unwrap(),
        pdf_fixtures().bytes("report.pdf")
    );
    assert!(
        run.artifact_text("text_file")
            .contains("Revenue grew by twelve percent"),
        "{}",
        run.context
    );
    assert_eq!(run.artifact_json("content_json_file")["page_count"], 4);
    if render == "auto" {
        assert_eq!(run.fetch().render, "http");
    }
}

#[test]
fn content_types_by_header_over_http() {
    check_table("none", false, false);
}

#[test]
fn content_types_by_sniffing_a_generic_header_over_http() {
    check_table("none", true, false);
}

#[test]
fn content_types_with_a_wrong_charset_label_over_http() {
    check_table("none", false, true);
}

#[test]
fn content_types_by_header_in_a_browser() {
    check_table("always", false, false);
}

#[test]
fn content_types_by_sniffing_a_generic_header_in_a_browser() {
    check_table("always", true, false);
}

#[test]
fn content_types_with_a_wrong_charset_label_in_a_browser() {
    check_table("always", false, true);
}

#[test]
fn render_auto_never_escalates_documents() {
    check_table("auto", false, false);
}

#[test]
fn json_ignores_a_wrong_latin1_label_and_pretty_prints() {
    let fx = Fixture::new();
    let mut docs = HashMap::new();
    docs.insert(
        "/j".to_string(),
        typed(
            "application/json; charset=iso-8859-1",
            "{\"a\":\"café\",\"b\":[1,2,3]}".as_bytes(),
        ),
    );
    docs.insert("/arr".to_string(), typed("application/json", b"[1,2,3]"));
    let srv = DocServer::start(docs);
    let run = fetch(&fx, &srv.url("/j"), &["--render", "none"]);
    assert_eq!(
        run.artifact_text("text_file"),
        "{\n  \"a\": \"café\",\n  \"b\": [\n    1,\n    2,\n    3\n  ]\n}\n"
    );
    let doc = run.artifact_json("content_json_file");
    assert_eq!(doc["shape"]["keys"], serde_json::json!(["a", "b"]));
    let run = fetch(&fx, &srv.url("/arr"), &["--render", "none"]);
    assert_eq!(run.artifact_json("content_json_file")["shape"]["length"], 3);
}

#[test]
fn accept_markdown_takes_the_servers_markdown() {
    let fx = Fixture::new();
    let mut docs = HashMap::new();
    docs.insert(
        "/docs".to_string(),
        Doc {
            content_type: Some("text/html; charset=utf-8".into()),
            body:
                b"<!doctype html><title>Docs</title><h1>Docs</h1><p>HTML version of the page.</p>"
                    .to_vec(),
            markdown: Some(b"# Docs\n\nMarkdown version of the page.\n".to_vec()),
            disposition: None,
            content_length: None,
            extra_headers: Vec::new(),
        },
    );
    let srv = DocServer::start(docs);
    let run = fetch(&fx, &srv.url("/docs"), &["--accept-markdown"]);
    let r = run.result();
    assert_eq!(run.fetch().render, "http", "{}", run.context);
    assert_eq!(r["content_type"], "text/markdown; charset=utf-8");
    assert_eq!(
        run.artifact_text("content_file"),
        "# Docs\n\nMarkdown version of the page.\n"
    );
    assert_eq!(
        run.event["trace"]["content_source"], "server_markdown",
        "{}",
        run.context
    );
    let run = fetch(&fx, &srv.url("/docs"), &[]);
    assert!(
        run.artifact_text("content_file").contains("HTML version"),
        "{}",
        run.context
    );
    assert!(run.event["trace"].get("content_source").is_none());
}
