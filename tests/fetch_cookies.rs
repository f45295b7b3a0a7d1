//! Cookies on the HTTP path: jars, `--cookie`, Max-Age deletion, Secure skipping, concurrency.

use serde_json::Value;

use crate::support::{jar_names, Fixture, FixtureServer};

fn echoed_cookie(run: &crate::support::Run) -> Value {
    run.artifact_json("body_file")["cookie"].clone()
}

#[test]
fn jar_stores_sends_and_deletes_by_max_age() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let jar = fx.path().join("jar.json");
    let jar_s = jar.to_str().unwrap();
    fx.cmd()
        .args([
            "fetch",
            &srv.url("/cookies/set?a=1&b=2"),
            "--cookie-jar",
            jar_s,
        ])
        .run()
        .result();
    let mut names = jar_names(&jar);
    names.sort();
    assert_eq!(names, vec!["a", "b"]);
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(&jar).unwrap().mode() & 0o777, 0o600);

    let run = fx
        .cmd()
        .args(["fetch", &srv.url("/cookies/echo"), "--cookie-jar", jar_s])
        .run();
    let sent = echoed_cookie(&run);
    assert!(
        sent.as_str().unwrap().contains("a=1") && sent.as_str().unwrap().contains("b=2"),
        "{sent}"
    );
    assert!(run.event["trace"]["cookie_jar_file"]
        .as_str()
        .unwrap()
        .ends_with("jar.json"));

    fx.cmd()
        .args([
            "fetch",
            &srv.url("/cookies/delete?name=a"),
            "--cookie-jar",
            jar_s,
        ])
        .run()
        .result();
    assert_eq!(jar_names(&jar), vec!["b"]);
}

#[test]
fn jar_from_environment_and_no_cookie_jar() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let jar = fx.path().join("envjar.json");
    fx.cmd()
        .env("AFHTTP_COOKIE_JAR", &jar)
        .args(["fetch", &srv.url("/cookies/set?e=1")])
        .run()
        .result();
    assert_eq!(jar_names(&jar), vec!["e"]);
    let run = fx
        .cmd()
        .env("AFHTTP_COOKIE_JAR", &jar)
        .args(["fetch", &srv.url("/cookies/echo"), "--no-cookie-jar"])
        .run();
    assert!(
        echoed_cookie(&run).is_null(),
        "--no-cookie-jar still sent cookies"
    );
}

#[test]
fn cookie_set_on_a_redirect_reaches_the_next_hop() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = fx
        .cmd()
        .args(["fetch", &srv.url("/cookies/redirect-set")])
        .run();
    assert_eq!(echoed_cookie(&run), "hop=1");
}

#[test]
fn cli_cookie_is_sent_not_stored() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let jar = fx.path().join("jar.json");
    let run = fx
        .cmd()
        .args([
            "fetch",
            &srv.url("/cookies/echo"),
            "--cookie",
            "sid=xyz; Path=/; HttpOnly",
            "--cookie-jar",
        ])
        .arg(&jar)
        .run();
    assert_eq!(echoed_cookie(&run), "sid=xyz");
    assert!(!jar.exists() || jar_names(&jar).is_empty());
}

#[test]
fn secure_cookie_over_http_is_skipped_with_warning() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = fx
        .cmd()
        .args([
            "fetch",
            &srv.url("/cookies/echo"),
            "--cookie",
            "s=1; Secure",
            "--cookie",
            "p=2",
        ])
        .run();
    assert_eq!(echoed_cookie(&run), "p=2");
    let w = run.result()["warnings"].as_array().unwrap();
    assert!(w.iter().any(|w| w["code"] == "cookie_skipped"), "{w:?}");
}

#[test]
fn cookie_for_another_domain_or_path_is_invalid() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    for bad in [
        "a=1; Domain=example.com",
        "a=1; Path=/other",
        "a=b\r\nX: y",
        "=v",
        "novalue",
    ] {
        let run = fx
            .cmd()
            .args(["fetch", &srv.url("/cookies/echo"), "--cookie", bad])
            .run();
        run.error("invalid_argument", 1);
    }
    assert_eq!(
        srv.hits("/cookies/echo"),
        0,
        "nothing was sent for an invalid cookie"
    );
}

#[test]
fn corrupt_jar_is_io_error_and_left_untouched() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let jar = fx.path().join("jar.json");
    std::fs::write(&jar, "{not json").unwrap();
    let run = fx
        .cmd()
        .args(["fetch", &srv.url("/cookies/set?a=1"), "--cookie-jar"])
        .arg(&jar)
        .run();
    run.error("io_error", 1);
    assert_eq!(std::fs::read_to_string(&jar).unwrap(), "{not json");
}

#[test]
fn eight_concurrent_processes_lose_no_cookie() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let jar = fx.path().join("shared.json");
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let cmd = fx
                .cmd()
                .args([
                    "fetch",
                    &srv.url(&format!("/cookies/set?c{i}=v{i}")),
                    "--cookie-jar",
                ])
                .arg(&jar);
            std::thread::spawn(move || cmd.run())
        })
        .collect();
    for h in handles {
        h.join().unwrap().result();
    }
    let mut names = jar_names(&jar);
    names.sort();
    assert_eq!(names, (0..8).map(|i| format!("c{i}")).collect::<Vec<_>>());
}
