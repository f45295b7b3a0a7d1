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
    assert_eq!(run.result()["render"], "http");
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
    assert_eq!(run.result()["render"], "browser");
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
    let e = bad.error("invalid_argument", 1);
    assert!(
        e["message"].as_str().unwrap().contains(&tokens().join(",")),
        "{e}"
    );
}
