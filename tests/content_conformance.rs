//! One content projection on both paths: the same fixtures through `--render none` and
//! `--render always` (a real Chromium) give the same `content.md` and `content.json`, apart
//! from what `docs/reference.md` lists as browser-only (here: the inlined same-origin frame).

use serde_json::Value;

use crate::support::routes_content::{CONFORMANCE_PAGES, INSIDE_FRAME};
use crate::support::{Fixture, FixtureServer, HostProc, Run};

const CHROMIUM: &str = "/usr/bin/chromium";

fn projections(run: &Run) -> (String, Value) {
    (
        run.artifact_text("content_file"),
        run.artifact_json("content_json_file"),
    )
}

/// `json` without the list entries that mention `needle` (and without `text_bytes`, which
/// counts the inlined frame's text too).
fn without(json: &Value, needle: &str) -> Value {
    let mut v = json.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("text_bytes");
        for (_, list) in m.iter_mut() {
            if let Some(a) = list.as_array_mut() {
                a.retain(|e| !e.to_string().contains(needle));
            }
        }
    }
    v
}

#[test]
fn http_and_browser_project_the_same_content() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let mut host = HostProc::start(
        &fx,
        &["--listen", "tcp:127.0.0.1:0"],
        &[("AFHTTP_BROWSER_BIN", CHROMIUM)],
    );
    let want = ["--want", "content,content_json"];
    for page in CONFORMANCE_PAGES {
        let url = srv.url(page);
        let http = fx
            .cmd()
            .args(["fetch", &url, "--render", "none"])
            .args(want)
            .run();
        assert_eq!(http.fetch().render, "http");
        let browser = fx
            .cmd()
            .args(["fetch", &url, "--endpoint-url", &host.endpoint])
            .args(["--render", "always", "--wait", "load"])
            // The projection is under test, not readiness: a loaded CI machine may take
            // longer than the default 5 s budget to reach the load event.
            .args(["--readiness-budget-ms", "60000"])
            .args(want)
            .run();
        assert_eq!(browser.fetch().render, "browser");
        let readiness = &browser.event["trace"]["readiness"];
        assert_eq!(readiness["ended_by"], "load", "{page}: {readiness}");
        let (http_md, http_json) = projections(&http);
        let (browser_md, browser_json) = projections(&browser);
        if page == "/conform/iframe" {
            // Browser-only: the same-origin frame's document is inlined after its iframe.
            assert!(!http_md.contains(INSIDE_FRAME), "{http_md}");
            let framed = browser_md
                .find("[iframe \"Inner page\"")
                .and_then(|at| browser_md[at..].find("inside-frame heading"));
            assert!(framed.is_some(), "{browser_md}");
            let kept: Vec<&str> = browser_md
                .split("\n\n")
                .filter(|block| !block.contains(INSIDE_FRAME))
                .collect();
            assert_eq!(kept.join("\n\n"), http_md, "{page}");
            assert_eq!(
                without(&browser_json, INSIDE_FRAME),
                without(&http_json, INSIDE_FRAME),
                "{page}"
            );
            assert!(browser_json.to_string().contains("/inside-frame-link"));
        } else {
            assert_eq!(browser_md, http_md, "{page}: content.md differs");
            assert_eq!(browser_json, http_json, "{page}: content.json differs");
        }
        match page {
            "/conform/forms" => {
                // The form summary names the button once; no paragraph repeats its caption.
                assert_eq!(http_md.matches("Sign in now").count(), 1, "{http_md}");
                assert!(http_md.contains("Help me"), "{http_md}");
            }
            "/conform/shadow" => {
                for shown in ["Card title", "Default footer", "passed through two roots"] {
                    assert!(http_md.contains(shown), "{shown}: {http_md}");
                }
                for hidden in ["never rendered", "closed root text", "Untitled"] {
                    assert!(!http_md.contains(hidden), "{hidden}: {http_md}");
                }
            }
            "/conform/tables" => assert_eq!(http_json["lang"], "en-GB"),
            _ => {}
        }
    }
    host.terminate();
}
