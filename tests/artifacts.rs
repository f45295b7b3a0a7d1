//! The artifact registry (`afhttp::sdk::artifact`) as its consumers show it from outside:
//! the `--want` parser and help, and the file names on the HTTP and the browser path.

use std::path::Path;

use afhttp::sdk::artifact::{tokens, want_help, Artifact, REGISTRY};
use serde_json::Value;

use crate::support::{Fixture, FixtureServer};

const CHROMIUM: &str = "/usr/bin/chromium";

/// Every `<token>_file` of `result` is named as the registry says.
fn assert_registry_names(result: &Value, wanted: &[Artifact]) {
    let ct = result["content_type"].as_str();
    for a in wanted {
        let key = format!("{}_file", a.as_str());
        let path = result[&key]
            .as_str()
            .unwrap_or_else(|| panic!("no {key} in {result}"));
        let name = Path::new(path).file_name().unwrap().to_str().unwrap();
        assert_eq!(name, a.file_name_for(None, ct), "{key}");
    }
}

#[test]
fn file_names_come_from_the_registry_on_both_paths() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let http: Vec<Artifact> = REGISTRY
        .iter()
        .filter(|s| !s.browser_only)
        .map(|s| s.artifact)
        .collect();
    let list = |l: &[Artifact]| l.iter().map(|a| a.as_str()).collect::<Vec<_>>().join(",");
    let run = fx
        .cmd()
        .args(["fetch", &srv.url("/static"), "--render", "none", "--want"])
        .arg(list(&http))
        .run();
    assert_eq!(run.fetch().render, "http");
    assert_registry_names(run.result(), &http);

    let every: Vec<Artifact> = Artifact::all().collect();
    let _one = crate::support::chromium::lock();
    let run = fx
        .cmd()
        .env("AFHTTP_NO_SANDBOX", "1")
        .env("AFHTTP_BROWSER_BIN", CHROMIUM)
        .args(["fetch", &srv.url("/static"), "--render", "always", "--want"])
        .arg(list(&every))
        .run();
    assert_eq!(run.fetch().render, "browser");
    assert_registry_names(run.result(), &every);
}

#[test]
fn want_parser_and_help_come_from_the_registry() {
    let fx = Fixture::new();
    let help = fx.cmd().args(["fetch", "--help"]).run();
    assert_eq!(help.status, 0);
    let flat: String = help.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    let expected: String = want_help().split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains(&expected), "{}", help.stdout);
    let srv = FixtureServer::start();
    let bad = fx
        .cmd()
        .args(["fetch", &srv.url("/static"), "--want", "body,pdfx"])
        .run();
    let e = bad.failure("invalid_argument", 1);
    assert!(e.message.as_str().contains(&tokens().join(",")), "{e:?}");
}

/// `afhttp fetch URL --render always EXTRA...` in an inline Chromium.
fn render(fx: &Fixture, url: &str, extra: &[&str]) -> crate::support::Run {
    let _one = crate::support::chromium::lock();
    fx.cmd()
        .env("AFHTTP_NO_SANDBOX", "1")
        .env("AFHTTP_BROWSER_BIN", CHROMIUM)
        .args(["fetch", url, "--render", "always", "--wait", "load"])
        .args(extra)
        .run()
}

fn warnings(result: &Value) -> Vec<(String, String)> {
    crate::support::events::decode::<Vec<crate::support::events::Warning>>(&result["warnings"])
        .into_iter()
        .map(|w| (w.artifact.unwrap_or_default(), w.code))
        .collect()
}

#[test]
fn the_browser_path_writes_the_body_whatever_want_says() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = render(&fx, &srv.url("/static"), &["--want", "text"]);
    let r = run.result();
    assert_eq!(run.fetch().render, "browser");
    let body = run.artifact_text("body_file");
    assert!(body.contains("<h1>Static Fixture</h1>"), "{body}");
    assert!(r["body_bytes"].as_u64().unwrap() > 0, "{r}");
    // A page with enough text is not tiny.
    assert!(
        !warnings(r).iter().any(|(_, c)| c == "artifact_tiny"),
        "{r}"
    );
}

#[test]
fn a_rendered_page_with_little_text_is_artifact_tiny() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = render(&fx, &srv.url("/browser/console"), &["--want", "text"]);
    let w = warnings(run.result());
    assert!(
        w.contains(&("text".to_string(), "artifact_tiny".to_string())),
        "{w:?}"
    );
}

#[test]
fn a_capture_that_times_out_is_artifact_capture_timeout() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    // A host, so the fetch's whole --timeout-ms is the browser's (no inline start inside it).
    let mut host = crate::support::HostProc::start(
        &fx,
        &["--listen", "tcp:127.0.0.1:0"],
        &[("AFHTTP_BROWSER_BIN", CHROMIUM)],
    );
    let run = fx
        .cmd()
        .args([
            "fetch",
            &srv.url("/browser/stuck-storage"),
            "--endpoint-url",
        ])
        .arg(&host.endpoint)
        .args([
            "--render",
            "always",
            "--wait",
            "load",
            "--timeout-ms",
            "8000",
        ])
        .args(["--want", "storage,text"])
        .run();
    host.terminate();
    let r = run.result();
    let w = warnings(r);
    assert!(
        w.contains(&(
            "storage".to_string(),
            "artifact_capture_timeout".to_string()
        )),
        "{w:?}"
    );
    assert!(r.get("storage_file").is_none(), "{r}");
    // The other artifact is unaffected.
    assert!(run.artifact_text("text_file").contains("never answers"));

    // Inline too: starting the browser counts against --timeout-ms, and the capture still
    // ends in time for a result.
    let run = render(
        &fx,
        &srv.url("/browser/stuck-storage"),
        &["--timeout-ms", "10000", "--want", "storage,text"],
    );
    let w = warnings(run.result());
    assert!(
        w.contains(&(
            "storage".to_string(),
            "artifact_capture_timeout".to_string()
        )),
        "{w:?}"
    );
}
