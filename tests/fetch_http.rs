//! `afhttp fetch` over plain HTTP: results, artifacts, redirects, bodies, projections.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde_json::Value;

use crate::support::{Fixture, FixtureServer};

#[test]
fn static_page_body_only_by_default() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let out = fx.path().join("out");
    let run = fx
        .cmd()
        .args(["fetch", &srv.url("/static"), "--out"])
        .arg(&out)
        .run();
    let r = run.result();
    assert_eq!(r["code"], "fetch");
    assert_eq!(r["status"], 200);
    assert_eq!(run.fetch().render, "http");
    assert_eq!(r["warnings"], serde_json::json!([]));
    let body = run.artifact_path("body_file");
    assert!(body.ends_with("/body.html"));
    assert!(std::fs::read_to_string(&body).unwrap().contains("<h1>"));
    assert!(r.get("text_file").is_none() && r.get("content_file").is_none());
    assert_eq!(std::fs::metadata(&out).unwrap().mode() & 0o777, 0o700);
    assert_eq!(std::fs::metadata(&body).unwrap().mode() & 0o777, 0o600);
    let trace = &run.event["trace"];
    assert_eq!(trace["render"]["decision"], "http_only");
    assert!(trace["timings_ms"]["total"].as_f64().unwrap() > 0.0);
    // Only the body file, no temporary leftovers.
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1);
}

#[test]
fn default_out_dir_is_private_temp_request_dir() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = fx.cmd().args(["fetch", &srv.url("/json")]).run();
    let r = run.result();
    let body = run.artifact_path("body_file");
    let expected = fx
        .tmp
        .join("afhttp-out")
        .join(r["request_id"].as_str().unwrap())
        .join("body.json");
    assert_eq!(Path::new(&body), expected);
    assert_eq!(
        std::fs::metadata(fx.tmp.join("afhttp-out")).unwrap().mode() & 0o777,
        0o700
    );
}

#[test]
fn statuses_are_results_not_errors() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    for code in [404, 500, 418] {
        let run = fx
            .cmd()
            .args([
                "fetch",
                &srv.url(&format!("/status/{code}")),
                "--render",
                "none",
            ])
            .run();
        assert_eq!(run.result()["status"], code);
    }
}

#[test]
fn redirect_chain_is_followed_and_each_hop_recorded() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let out = fx.path().join("o");
    let run = fx
        .cmd()
        .args([
            "fetch",
            &srv.url("/redirect/3"),
            "--want",
            "body,network",
            "--out",
        ])
        .arg(&out)
        .run();
    let r = run.result();
    assert_eq!(r["redirects"], 3);
    assert_eq!(r["final_url"], srv.url("/static"));
    let net: Value = run.artifact_json("network_file");
    let entries = net["entries"].as_array().unwrap();
    let statuses: Vec<u64> = entries
        .iter()
        .map(|e| e["response"]["status"].as_u64().unwrap())
        .collect();
    assert_eq!(statuses, vec![301, 302, 307, 200]);
    for (i, e) in entries.iter().enumerate() {
        if i + 1 < entries.len() {
            assert_eq!(e["redirected_to"], entries[i + 1]["request_id"]);
            assert_eq!(entries[i + 1]["redirected_from"], e["request_id"]);
        }
        assert_eq!(e["state"], "finished");
    }
    assert_eq!(net["summary"]["responses_total"], 4);
}

#[test]
fn redirect_loop_is_an_error() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = fx.cmd().args(["fetch", &srv.url("/redirect/loop")]).run();
    let e = run.failure("redirect_loop", 1);
    assert!(!e.retryable);
}

#[test]
fn request_options_reach_the_server() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = fx
        .cmd()
        .args([
            "fetch",
            &srv.url("/echo?x=1"),
            "--method",
            "put",
            "--data",
            "hello",
        ])
        .args([
            "--header",
            "X-Test: yes",
            "--user-agent",
            "agent/1",
            "--want",
            "body",
        ])
        .run();
    let body: Value = run.artifact_json("body_file");
    assert_eq!(body["method"], "PUT");
    assert_eq!(body["body"], "hello");
    assert_eq!(body["headers"]["x-test"], "yes");
    assert_eq!(body["headers"]["user-agent"], "agent/1");

    let data = fx.path().join("payload.json");
    std::fs::write(&data, br#"{"a":1}"#).unwrap();
    let run = fx
        .cmd()
        .args([
            "fetch",
            &srv.url("/echo"),
            "--header",
            "Content-Type: application/json",
            "--data",
        ])
        .arg(format!("@{}", data.display()))
        .run();
    let body: Value = run.artifact_json("body_file");
    assert_eq!(body["method"], "POST", "--data implies POST");
    assert_eq!(body["body"], r#"{"a":1}"#);
    assert_eq!(body["headers"]["content-type"], "application/json");
}

#[test]
fn forms_urlencoded_and_multipart() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = fx
        .cmd()
        .args([
            "fetch",
            &srv.url("/echo"),
            "--form",
            "a=1",
            "--form",
            "b=x y",
        ])
        .run();
    let body: Value = run.artifact_json("body_file");
    assert_eq!(body["body"], "a=1&b=x+y");
    assert_eq!(
        body["headers"]["content-type"],
        "application/x-www-form-urlencoded"
    );

    let upload = fx.path().join("up.txt");
    std::fs::write(&upload, "file-content").unwrap();
    let run = fx
        .cmd()
        .args(["fetch", &srv.url("/echo"), "--form", "note=hi", "--form"])
        .arg(format!("doc=@{}", upload.display()))
        .run();
    let body: Value = run.artifact_json("body_file");
    assert!(body["headers"]["content-type"]
        .as_str()
        .unwrap()
        .starts_with("multipart/form-data"));
    let text = body["body"].as_str().unwrap();
    assert!(
        text.contains("file-content")
            && text.contains("filename=\"up.txt\"")
            && text.contains("hi")
    );
}

#[test]
fn compressed_bodies_are_decoded() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    for path in ["/gzip", "/deflate", "/brotli"] {
        let run = fx.cmd().args(["fetch", &srv.url(path)]).run();
        let body = run.artifact_text("body_file");
        assert!(
            body.contains("<html") || body.contains("<!doctype"),
            "{path}: {body:.80}"
        );
    }
}

#[test]
fn text_content_and_content_json_from_http_without_a_browser() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let out = fx.path().join("o");
    let run = fx
        .cmd()
        .args([
            "fetch",
            &srv.url("/article"),
            "--want",
            "text,content,content_json",
            "--out",
        ])
        .arg(&out)
        .run();
    let r = run.result();
    assert_eq!(run.fetch().render, "http");
    let text = run.artifact_text("text_file");
    assert!(text.len() > 1000, "text too short");
    assert!(!text.contains("<p>"));
    let md = run.artifact_text("content_file");
    assert!(md.contains("# "), "no headings in content.md");
    assert!(
        md.contains(&format!("]({}", srv.url("/"))) || md.contains("](http://127.0.0.1"),
        "links not absolute"
    );
    let cj: Value = run.artifact_json("content_json_file");
    assert!(cj["links"].as_array().unwrap().len() >= 10);
    assert!(r["body_file"].is_string(), "body is always written");
}

#[test]
fn latin1_page_is_decoded_for_text() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = fx
        .cmd()
        .args(["fetch", &srv.url("/charset/latin1"), "--want", "text"])
        .run();
    let text = run.artifact_text("text_file");
    assert!(text.contains("café"), "{text}");
}

#[test]
fn image_body_gets_no_projection_and_says_why() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = fx
        .cmd()
        .args(["fetch", &srv.url("/image.png"), "--want", "body,text"])
        .run();
    let r = run.result();
    assert!(run.artifact_path("body_file").ends_with("body.png"));
    let w = r["warnings"].as_array().unwrap();
    assert!(
        w.iter().any(|w| w["artifact"] == "text"
            && w["code"] == "backend_unsupported"
            && w["message"].as_str().unwrap().contains("no OCR")),
        "{w:?}"
    );
    assert!(r.get("text_file").is_none());
}

#[test]
fn max_response_bytes_truncates_with_warning() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = fx
        .cmd()
        .args([
            "fetch",
            &srv.url("/bytes?n=100000"),
            "--max-response-bytes",
            "1000",
        ])
        .run();
    let r = run.result();
    assert_eq!(r["body_bytes"], 1000);
    assert_eq!(r["body_truncated"], true);
    assert_eq!(
        std::fs::metadata(run.artifact_path("body_file"))
            .unwrap()
            .len(),
        1000
    );
    assert!(r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["code"] == "network_body_truncated"));
}

#[test]
fn a_projection_from_a_cut_body_names_the_bytes_projected() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = fx
        .cmd()
        .args([
            "fetch",
            &srv.url("/article"),
            "--max-response-bytes",
            "1000",
        ])
        .args(["--want", "text,content"])
        .run();
    let w = run.fetch().warnings;
    for artifact in ["text", "content"] {
        let msg = &w
            .iter()
            .find(|w| w.artifact.as_deref() == Some(artifact) && w.code == "network_body_truncated")
            .unwrap_or_else(|| panic!("no truncation warning for {artifact}: {w:?}"))
            .message;
        assert!(msg.contains("first 1000 bytes"), "{msg}");
    }
}

#[test]
fn head_request_writes_an_empty_body() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = fx
        .cmd()
        .args(["fetch", &srv.url("/static"), "--method", "HEAD"])
        .run();
    let r = run.result();
    assert_eq!(r["body_bytes"], 0);
    assert_eq!(
        std::fs::metadata(run.artifact_path("body_file"))
            .unwrap()
            .len(),
        0
    );
}
