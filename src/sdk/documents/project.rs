//! One entry point from a non-HTML body to its `text`/`content`/`content_json` projections.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use super::outcome::{DocumentOptions, Projected};
use super::{charset, csv, feed, json as json_doc, pdf, text, DocKind};
use crate::error::ErrorCode;
use crate::sdk::content_type;
use crate::sdk::html::Projection;

/// The `content.json` fields every document has.
fn base_json(
    kind: DocKind,
    url: &url::Url,
    ct: Option<&str>,
    title: Option<&str>,
    text: &str,
) -> Value {
    json!({
        "schema_version": 1,
        "url": url.as_str(),
        "type": kind.as_str(),
        "content_type": content_type::essence(ct),
        "title": title,
        "text_bytes": text.len(),
    })
}

fn merge(mut base: Value, extra: Value) -> Value {
    if let (Some(b), Value::Object(e)) = (base.as_object_mut(), extra) {
        b.extend(e);
    }
    base
}

/// Project a document of `kind`. `bytes` is the body (or, for text, its kept prefix);
/// `body_file` is the committed body, which a PDF is read from.
pub async fn project(
    kind: DocKind,
    bytes: &[u8],
    body_file: Option<&Path>,
    ct: Option<&str>,
    url: &url::Url,
    opts: DocumentOptions,
    budget: Duration,
) -> Projected {
    match kind {
        DocKind::Pdf => match body_file {
            Some(path) => pdf::project(path, url, opts, budget).await,
            None => Projected::none(ErrorCode::ArtifactEmpty, "no PDF body was captured"),
        },
        DocKind::Image => Projected::none(
            ErrorCode::BackendUnsupported,
            format!(
                "a {} image has no text to project (afhttp does no OCR)",
                content_type::essence(ct).trim_start_matches("image/")
            ),
        ),
        DocKind::Binary => Projected::none(
            ErrorCode::BackendUnsupported,
            format!("no text projection for a binary {} body", display_type(ct)),
        ),
        DocKind::Html => Projected::none(
            ErrorCode::BackendUnsupported,
            "HTML goes through the HTML projection",
        ),
        _ if bytes.is_empty() => Projected::none(
            ErrorCode::ArtifactEmpty,
            format!("the {} body is empty", display_type(ct)),
        ),
        _ => textual(kind, bytes, ct, url),
    }
}

fn display_type(ct: Option<&str>) -> String {
    let e = content_type::essence(ct);
    if e.is_empty() {
        "untyped".to_string()
    } else {
        e
    }
}

fn textual(kind: DocKind, bytes: &[u8], ct: Option<&str>, url: &url::Url) -> Projected {
    let decoded = charset::decode(bytes, ct, kind);
    let body = decoded.text.as_str();
    let cs = json!({"charset": decoded.to_json()});
    let (text, md, title, extra) = match kind {
        DocKind::Markdown => {
            let facts = text::markdown_json(body);
            let title = facts["title"].as_str().map(str::to_string);
            (body.to_string(), body.to_string(), title, facts)
        }
        DocKind::Csv => {
            let (md, facts) = csv::project(body);
            (body.to_string(), md, None, json!({"csv": facts}))
        }
        DocKind::Json => {
            let (text, md, facts) = json_doc::project(body);
            (text, md, None, facts)
        }
        DocKind::Feed | DocKind::Xml => match feed::parse(body) {
            Some(f) => {
                let (text, md, facts) = f.project();
                let kind_facts = merge(facts, json!({"type": "feed"}));
                let base = base_json(DocKind::Feed, url, ct, f.title.as_deref(), &text);
                let content_json = merge(merge(base, kind_facts), cs);
                return done(text, md, content_json, kind);
            }
            None => match feed::xml_text(body) {
                Some((text, facts)) => (text.clone(), text, None, facts),
                None => (
                    body.to_string(),
                    body.to_string(),
                    None,
                    json!({"xml": {"well_formed": false}}),
                ),
            },
        },
        _ => (
            body.to_string(),
            body.to_string(),
            None,
            text::plain_json(body),
        ),
    };
    let base = base_json(kind, url, ct, title.as_deref(), &text);
    let content_json = merge(merge(base, extra), cs);
    done(text, md, content_json, kind)
}

fn done(text: String, content_md: String, content_json: Value, kind: DocKind) -> Projected {
    let trace = json!({"type": content_json["type"].clone(), "charset": content_json["charset"].clone(), "detected_as": kind.as_str()});
    Projected {
        projection: Some(Projection {
            text,
            content_md,
            content_json,
            lean: None,
        }),
        trace: Some(trace),
        ..Projected::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(kind: DocKind, body: &[u8], ct: &str) -> Projected {
        let url = url::Url::parse("http://h.test/doc").unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(project(
            kind,
            body,
            None,
            Some(ct),
            &url,
            DocumentOptions::default(),
            Duration::from_secs(5),
        ))
    }

    #[test]
    fn each_textual_type_projects() {
        let p = run(DocKind::Markdown, b"# Guide\n\nUse it.\n", "text/markdown")
            .projection
            .unwrap();
        assert_eq!(p.content_md, "# Guide\n\nUse it.\n");
        assert_eq!(p.content_json["title"], "Guide");
        let p = run(DocKind::Csv, b"a,b\n1,2\n", "text/csv")
            .projection
            .unwrap();
        assert!(p.content_md.starts_with("| a | b |"));
        assert_eq!(p.content_json["csv"]["rows"], 1);
        let p = run(DocKind::Json, b"{\"k\":1}", "application/json")
            .projection
            .unwrap();
        assert_eq!(p.content_json["shape"]["keys"], json!(["k"]));
        let p = run(
            DocKind::Xml,
            b"<rss><channel><title>T</title><item><title>I</title></item></channel></rss>",
            "text/xml",
        )
        .projection
        .unwrap();
        assert_eq!(p.content_json["type"], "feed");
        assert_eq!(p.content_json["feed"]["items"][0]["title"], "I");
        let p = run(
            DocKind::Xml,
            b"<note><to>Tove</to><body>Hi</body></note>",
            "text/xml",
        )
        .projection
        .unwrap();
        assert_eq!(p.text, "Tove\nHi\n");
        let p = run(DocKind::Image, b"\x89PNG", "image/png");
        assert_eq!(
            p.unavailable.map(|u| u.0),
            Some(ErrorCode::BackendUnsupported)
        );
        let p = run(DocKind::PlainText, b"", "text/plain");
        assert_eq!(p.unavailable.map(|u| u.0), Some(ErrorCode::ArtifactEmpty));
    }
}
