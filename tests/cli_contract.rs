//! The output contract shared by every command.

use crate::support::Fixture;

#[test]
fn unknown_command_is_one_json_usage_error() {
    let fx = Fixture::new();
    let run = fx.cmd().arg("frobnicate").run();
    run.error("invalid_argument", 2);
}

#[test]
fn unknown_flag_is_usage_error() {
    let fx = Fixture::new();
    fx.cmd()
        .args(["fetch", "http://127.0.0.1:1/", "--bogus"])
        .run()
        .error("invalid_argument", 2);
}

#[test]
fn no_command_is_usage_error() {
    let fx = Fixture::new();
    fx.cmd().run().error("invalid_argument", 2);
}

#[test]
fn help_is_human_text_exit_zero() {
    let fx = Fixture::new();
    let run = fx.cmd().arg("--help").run();
    assert_eq!(run.status, 0, "{}", run.context);
    assert!(run.stdout.contains("Usage"), "{}", run.context);
}

#[test]
fn docs_cli_md_is_fresh() {
    let fx = Fixture::new();
    let run = fx
        .cmd()
        .args(["--help", "--recursive", "--output", "markdown"])
        .run();
    assert_eq!(run.status, 0);
    let checked_in = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/cli.md"))
        .unwrap_or_default();
    assert!(
        checked_in == run.stdout,
        "docs/cli.md is stale: regenerate with `make docs`"
    );
}

/// A required argument that is missing is named in the message (clap lists it after a
/// colon on the next line; the message used to stop at "…were not provided:").
#[test]
fn usage_errors_name_the_missing_argument() {
    let fx = Fixture::new();
    for (argv, named) in [
        (&["fetch"][..], "<URL>"),
        (&["tabs", "close"], "--tab"),
        (&["container", "logs", "--follow"], "--raw"),
    ] {
        let run = fx.cmd().args(argv).run();
        let err = run.failure("invalid_argument", 2);
        let message = err.message.as_str();
        assert!(message.contains(named), "{argv:?}: {message}");
        assert!(!message.ends_with(':'), "{argv:?}: {message}");
    }
}

/// A flag given without its value is a command-line shape error (exit 2), like every other
/// parse error, with one JSON error event that names the flag; a bad value stays exit 1.
#[test]
fn a_flag_without_its_value_is_a_usage_error() {
    let fx = Fixture::new();
    for flag in ["--render", "--out", "--timeout-ms"] {
        let run = fx.cmd().args(["fetch", "http://127.0.0.1:9/", flag]).run();
        let err = run.failure("invalid_argument", 2);
        assert!(err.message.as_str().contains(flag), "{}", run.context);
    }
    fx.cmd()
        .args(["fetch", "http://127.0.0.1:9/", "--timeout-ms", "soon"])
        .run()
        .error("invalid_argument", 1);
}

/// `--help --recursive` works in either order, as text or as the markdown of docs/cli.md.
#[test]
fn recursive_help_in_either_order_and_both_forms() {
    let fx = Fixture::new();
    let checked_in =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/cli.md")).unwrap();
    for argv in [
        &["--help", "--recursive"][..],
        &["--recursive", "--help"],
        &["--recursive", "--help", "--output", "text"],
    ] {
        let run = fx.cmd().args(argv).run();
        assert_eq!(run.status, 0, "{}", run.context);
        for section in [
            "== afhttp ==",
            "== afhttp fetch ==",
            "== afhttp container logs ==",
        ] {
            assert!(run.stdout.contains(section), "{argv:?}: no {section}");
        }
        assert!(run.stdout.contains("Usage: afhttp fetch"), "{argv:?}");
    }
    for argv in [
        &["--help", "--recursive", "--output", "markdown"][..],
        &["--recursive", "--help", "--output", "markdown"],
        &["--output", "markdown", "--recursive", "--help"],
    ] {
        let run = fx.cmd().args(argv).run();
        assert_eq!(run.status, 0, "{}", run.context);
        assert!(
            run.stdout == checked_in,
            "{argv:?} differs from docs/cli.md"
        );
    }
    // One command's subtree.
    let run = fx.cmd().args(["container", "--recursive", "--help"]).run();
    assert_eq!(run.status, 0, "{}", run.context);
    assert!(run.stdout.contains("== afhttp container build =="));
    assert!(!run.stdout.contains("== afhttp fetch =="));
}

/// A message quotes what the user typed, never a Rust `Debug` form such as
/// `ProfileName("nope")` (every `Run::error` also checks this).
#[test]
fn messages_quote_names_without_rust_debug_forms() {
    let fx = Fixture::new();
    let run = fx.cmd().args(["profile", "cookies", "nope"]).run();
    let err = run.failure("profile_not_found", 1);
    let message = err.message.as_str();
    assert!(message.contains("\"nope\""), "{message}");
    assert!(!message.contains("ProfileName"), "{message}");
}

/// `host --profile ../x` is refused as a profile name before any browser is looked for:
/// with no browser on PATH and a browser binary that does not exist, the error is still
/// `profile_invalid_name` (not `render_unavailable` or `browser_launch_failed`).
#[test]
fn host_refuses_a_bad_profile_name_before_looking_for_a_browser() {
    let fx = Fixture::new();
    let empty = fx.path().join("empty-path");
    std::fs::create_dir_all(&empty).unwrap();
    for name in ["../x", "a/b", ".hidden"] {
        let run = fx
            .cmd()
            .env("PATH", &empty)
            .args(["host", "--listen", "tcp:127.0.0.1:0", "--profile", name])
            .args(["--browser-bin", "/nonexistent/chromium"])
            .run();
        run.error("profile_invalid_name", 1);
    }
}
