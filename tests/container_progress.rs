//! `afhttp container build` progress against a fake engine (support::fake_engine): plain
//! `Step N/M` lines on a stderr that is not a terminal, a redrawn progress bar on one (a
//! real pseudo-terminal through `script`), and stdout keeps its one event either way.

use std::time::Duration;

use crate::support::deadline::CommandDeadline;
use crate::support::fake_engine::{FakeEngine, STEPS};
use crate::support::Fixture;

#[test]
fn image_build_progress_is_plain_lines_off_a_terminal() {
    let fx = Fixture::new();
    let engine = FakeEngine::start();
    let run = fx
        .cmd()
        .env("DOCKER_HOST", engine.docker_host())
        .args(["container", "build"])
        .run();
    assert_eq!(run.result()["image_id"], "sha256:fake", "{}", run.context);
    for step in STEPS {
        assert!(
            run.stderr.lines().any(|l| l == *step),
            "no plain line {step:?}\n{}",
            run.context
        );
    }
    assert!(
        !run.stderr.contains('\u{1b}'),
        "escape codes off a terminal\n{}",
        run.context
    );
}

#[test]
fn image_build_progress_is_a_bar_on_a_terminal() {
    let fx = Fixture::new();
    let engine = FakeEngine::start();
    let exe = env!("CARGO_BIN_EXE_afhttp");
    // `script` gives the command a real pseudo-terminal (stdout and stderr both on it).
    let out = fx
        .isolated("script")
        .args(["-qec", &format!("{exe} container build"), "/dev/null"])
        .env("DOCKER_HOST", engine.docker_host())
        .env("TERM", "xterm")
        .current_dir(fx.path())
        .stdin(std::process::Stdio::null())
        .output_within(Duration::from_secs(180))
        .expect("script (util-linux) is not installed");
    let tty = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{tty}");
    // The bar: redrawn in place (escape codes), with its position out of the step count.
    assert!(tty.contains('\u{1b}'), "no redraw on the terminal: {tty:?}");
    assert!(tty.contains("/3"), "no step count on the bar: {tty:?}");
    // Steps are the bar's message, not lines of their own.
    assert!(
        !tty.lines().any(|l| l.trim() == STEPS[0]),
        "a plain step line on the terminal: {tty:?}"
    );
    // And stdout still ends with the one result event.
    assert!(tty.contains("\"code\":\"container_build\""), "{tty:?}");
}
