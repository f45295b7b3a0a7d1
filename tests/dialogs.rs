//! JavaScript dialogs never block a browser fetch: each one is answered as it opens
//! (dismissed, or accepted with `--dialog accept`), recorded in `console.json` and warned
//! about (`dialog_handled`). Real inline Chromium, fixture pages under `/dialog/`.

use serde_json::Value;

use crate::support::{Fixture, FixtureServer, Run};

/// `afhttp fetch URL --render always --want text,console EXTRA...` in an inline Chromium.
fn render(fx: &Fixture, url: &str, extra: &[&str]) -> Run {
    crate::support::chromium::render(fx, url, "text,console", extra)
}

/// The `(kind, text)` of every dialog entry in `console.json`.
fn dialogs(run: &Run) -> Vec<(String, String)> {
    let console = run.artifact_json("console_file");
    console["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["source"] == "dialog")
        .map(|e| {
            (
                e["kind"].as_str().unwrap().to_string(),
                e["text"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The messages of the `dialog_handled` warnings.
fn dialog_warnings(result: &Value) -> Vec<String> {
    result["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["code"] == "dialog_handled")
        .map(|w| w["message"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn an_alert_during_load_is_dismissed_and_the_page_is_captured() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = render(&fx, &srv.url("/dialog/alert-load"), &[]);
    let r = run.result();
    assert_eq!(run.fetch().render, "browser", "{r}");
    let text = run.artifact_text("text_file");
    assert!(text.contains("after the alert"), "{text}");
    assert_eq!(
        dialogs(&run),
        vec![("alert".to_string(), "alert-during-load".to_string())]
    );
    let warned = dialog_warnings(r);
    assert_eq!(warned.len(), 1, "{r}");
    assert!(
        warned[0].contains("alert") && warned[0].contains("dismissed"),
        "{warned:?}"
    );
}

#[test]
fn confirm_and_prompt_are_dismissed_by_default() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    for (path, kind, question, answer) in [
        (
            "/dialog/confirm",
            "confirm",
            "confirm-question",
            "confirm returned false",
        ),
        (
            "/dialog/prompt",
            "prompt",
            "prompt-question",
            "prompt returned null",
        ),
        (
            "/dialog/alert-late",
            "alert",
            "late-alert",
            "alert answered",
        ),
    ] {
        let run = render(&fx, &srv.url(path), &[]);
        let r = run.result();
        // The page reads the answer right after the dialog closes; the auto wait's quiet
        // windows cover that, so the text shows what the dialog returned.
        let text = run.artifact_text("text_file");
        assert!(text.contains(answer), "{path}: {text}");
        assert_eq!(
            dialogs(&run),
            vec![(kind.to_string(), question.to_string())],
            "{path}"
        );
        assert_eq!(dialog_warnings(r).len(), 1, "{path}: {r}");
    }
}

#[test]
fn dialog_accept_accepts_confirm_and_answers_prompt_with_its_default() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    for (path, answer) in [
        ("/dialog/confirm", "confirm returned true"),
        ("/dialog/prompt", "prompt returned prompt-default"),
    ] {
        let run = render(&fx, &srv.url(path), &["--dialog", "accept"]);
        let r = run.result();
        let text = run.artifact_text("text_file");
        assert!(text.contains(answer), "{path}: {text}");
        let warned = dialog_warnings(r);
        assert!(
            warned.len() == 1 && warned[0].contains("accepted"),
            "{path}: {warned:?}"
        );
    }
}

#[test]
fn dialog_is_checked_and_refused_without_a_browser() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let url = srv.url("/static");
    let bad = fx.cmd().args(["fetch", &url, "--dialog", "maybe"]).run();
    let e = bad.error("invalid_argument", 1);
    assert!(
        e["message"].as_str().unwrap().contains("accept or dismiss"),
        "{e}"
    );
    let none = fx
        .cmd()
        .args(["fetch", &url, "--render", "none", "--dialog", "accept"])
        .run();
    let e = none.error("invalid_argument", 1);
    assert!(e["message"].as_str().unwrap().contains("dialog"), "{e}");
}

#[test]
fn a_dialog_page_does_not_stall_or_break_the_next_fetch_on_the_same_host() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let mut host = crate::support::HostProc::start(&fx, &["--listen", "tcp:127.0.0.1:0"], &[]);
    let fetch = |path: &str| {
        fx.cmd()
            .args(["fetch", &srv.url(path), "--render", "always"])
            .args(["--timeout-ms", "20000", "--want", "text,console"])
            .args(["--endpoint-url", &host.endpoint])
            .run()
    };
    for path in ["/dialog/alert-load", "/dialog/alert-late"] {
        let run = fetch(path);
        assert_eq!(dialog_warnings(run.result()).len(), 1, "{}", run.context);
        // The next fetch on the same host is a plain page, untouched by the dialog.
        let next = fetch("/static");
        let r = next.result();
        assert_eq!(next.fetch().render, "browser", "{r}");
        assert!(
            next.artifact_text("text_file").contains("Static Fixture"),
            "{}",
            next.context
        );
        assert!(dialog_warnings(r).is_empty(), "{r}");
        assert!(dialogs(&next).is_empty(), "{}", next.context);
    }
    assert_eq!(host.terminate().0, 0);
}
