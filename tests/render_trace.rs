//! What `trace.render` says about the render decision (issue 13, part 6): the request
//! counts as resent only when a browser really sent it again, and a refusal shows the
//! decision that was made.

use crate::support::{Fixture, FixtureServer};

#[test]
fn request_resent_only_when_the_browser_sent_it_again() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();

    // The shell escalates after the HTTP response, but no browser exists: nothing was resent.
    let run = fx
        .cmd()
        .env("PATH", fx.path())
        .args(["fetch", &srv.url("/spa")])
        .run();
    run.error("render_unavailable", 1);
    let render = &run.event["trace"]["render"];
    assert_eq!(render["decision"], "escalate", "{render}");
    assert_eq!(render["request_resent"], false, "{render}");
    assert_eq!(srv.hits("/spa"), 1);

    // With a browser the same escalation sends it a second time.
    let _one = crate::support::chromium::lock();
    let run = fx
        .cmd()
        .env("AFHTTP_NO_SANDBOX", "1")
        .args(["fetch", &srv.url("/spa")])
        .run();
    assert_eq!(run.fetch().render, "browser", "{}", run.context);
    let render = &run.event["trace"]["render"];
    assert_eq!(render["request_resent"], true, "{render}");
    assert_eq!(render["non_idempotent_resent"], false, "{render}");
    assert_eq!(
        srv.hits("/spa"),
        3,
        "the first fetch's, then one HTTP request and the browser's"
    );

    // Decided before any request (--render always): the browser's is the only one.
    let run = fx
        .cmd()
        .env("AFHTTP_NO_SANDBOX", "1")
        .args(["fetch", &srv.url("/static"), "--render", "always"])
        .run();
    assert_eq!(run.fetch().render, "browser", "{}", run.context);
    assert_eq!(run.event["trace"]["render"]["request_resent"], false);
    assert_eq!(srv.hits("/static"), 1);
}

#[test]
fn takeover_unavailable_trace_shows_the_takeover_decision() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = fx
        .cmd()
        .args(["fetch", &srv.url("/static"), "--takeover"])
        .run();
    run.error("takeover_unavailable", 1);
    let render = &run.event["trace"]["render"];
    assert_eq!(render["decision"], "escalate", "{render}");
    assert_eq!(render["escalation_reason"]["code"], "takeover", "{render}");
    assert_eq!(render["request_resent"], false, "{render}");
    assert_eq!(srv.hits("/static"), 0, "refused before any request");
}
