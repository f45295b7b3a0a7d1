//! A persistent profile's implicit cookie jar (`<profile>/cookies.jar.json`, spec §7) when
//! the host runs the profile from this machine's store (issue 13, part 6).

use crate::support::{Fixture, FixtureServer, HostProc};

#[test]
fn profile_fetches_keep_the_profiles_own_jar() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let host = HostProc::start(&fx, &["--listen", "tcp:127.0.0.1:0"], &[]);
    let fetch = |url: &str, extra: &[&str]| {
        fx.cmd()
            .args(["fetch", url, "--endpoint-url", &host.endpoint])
            .args(["--profile", "work", "--render", "always"])
            .args(extra)
            .run()
    };

    let run = fetch(&srv.url("/cookies/set?session=s1"), &[]);
    assert_eq!(run.fetch().status, 200, "{}", run.context);
    let jar_file = run.event["trace"]["cookie_jar_file"]
        .as_str()
        .unwrap_or_else(|| panic!("no implicit jar: {}", run.context))
        .to_string();
    assert!(jar_file.ends_with("/work/cookies.jar.json"), "{jar_file}");
    assert_eq!(
        run.event["trace"]["cookie_jar_updates"], 1,
        "{}",
        run.context
    );

    let shown = fx.cmd().args(["profile", "cookies", "work"]).run();
    let r = shown.result();
    assert_eq!(r["cookie_jar_file"], jar_file.as_str(), "{r}");
    let cookies = r["cookies"].as_array().unwrap();
    assert!(
        cookies.iter().any(|c| c["name"] == "session"),
        "profile cookies does not show the fetch's cookie: {r}"
    );

    // --no-cookie-jar uses none, not even the implicit one.
    let run = fetch(&srv.url("/cookies/set?other=o1"), &["--no-cookie-jar"]);
    assert_eq!(run.fetch().status, 200, "{}", run.context);
    assert!(
        run.event["trace"]["cookie_jar_file"].is_null(),
        "{}",
        run.context
    );
    let jar = std::fs::read_to_string(&jar_file).unwrap();
    assert!(!jar.contains("\"other\""), "{jar}");
}
