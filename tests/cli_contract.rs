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
