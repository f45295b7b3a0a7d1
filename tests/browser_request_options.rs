//! The request options on the inline browser path (issue 13, part 2): what the HTTP path
//! sends, the browser sends too (cookies, a cookie jar that is read and updated, a form),
//! and the response cap holds. The HTTP-path twins are in `fetch_cookies` and `fetch_http`.
use crate::support::chromium::render;
use crate::support::{jar_names, Fixture, FixtureServer};

#[test]
fn cookies_and_a_jar_reach_the_browser_and_the_jar_is_updated() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let jar = fx.path().join("jar.json");
    let jar_s = jar.to_str().unwrap();

    // The browser's response sets a cookie: the jar stores it.
    let set = srv.url("/cookies/set-raw?h=kept%3Dyes%3B%20Path%3D%2F%3B%20Max-Age%3D3600");
    let run = render(&fx, &set, "body", &["--cookie-jar", jar_s]);
    assert_eq!(run.fetch().render, "browser", "{}", run.context);
    assert_eq!(jar_names(&jar), ["kept"], "{}", run.context);

    // The jar's cookie and a --cookie both reach the server from the browser; the
    // --cookie is for this fetch only and never stored.
    let run = render(
        &fx,
        &srv.url("/cookies/echo"),
        "body",
        &["--cookie-jar", jar_s, "--cookie", "once=1"],
    );
    assert_eq!(run.fetch().render, "browser", "{}", run.context);
    let sent = srv.last_request("/cookies/echo").unwrap();
    let header = sent.header("cookie").unwrap_or_default().to_string();
    assert!(
        header.contains("kept=yes") && header.contains("once=1"),
        "{header}"
    );
    assert_eq!(jar_names(&jar), ["kept"]);
}

#[test]
fn a_form_is_posted_by_the_browser() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = render(
        &fx,
        &srv.url("/echo"),
        "body",
        &["--form", "a=1", "--form", "b=x y"],
    );
    assert_eq!(run.fetch().render, "browser", "{}", run.context);
    let seen = srv.last_request("/echo").unwrap();
    assert_eq!(seen.method, "POST");
    assert_eq!(seen.body, b"a=1&b=x+y");
    assert_eq!(
        seen.header("content-type"),
        Some("application/x-www-form-urlencoded")
    );

    let upload = fx.path().join("up.txt");
    std::fs::write(&upload, "file-content-42").unwrap();
    let doc = format!("doc=@{}", upload.display());
    let run = render(
        &fx,
        &srv.url("/echo"),
        "body",
        &["--form", "note=hi", "--form", &doc],
    );
    assert_eq!(run.fetch().render, "browser", "{}", run.context);
    let seen = srv.last_request("/echo").unwrap();
    assert!(
        seen.header("content-type")
            .is_some_and(|c| c.starts_with("multipart/form-data; boundary=")),
        "{:?}",
        seen.header("content-type")
    );
    let body = String::from_utf8_lossy(&seen.body);
    assert!(
        body.contains("file-content-42") && body.contains("name=\"note\""),
        "{body}"
    );
}

#[test]
fn the_response_cap_holds_in_the_browser() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = render(
        &fx,
        &srv.url("/big-html"),
        "body",
        &["--max-response-bytes", "1000"],
    );
    let r = run.result();
    assert_eq!(run.fetch().render, "browser", "{}", run.context);
    assert_eq!(r["body_truncated"], true, "{}", run.context);
    let len = std::fs::metadata(run.artifact_path("body_file"))
        .unwrap()
        .len();
    assert!(len <= 1000, "body.html has {len} bytes");
    assert!(
        r["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "network_body_truncated"),
        "{r}"
    );
}

#[test]
fn a_cookie_on_a_host_is_for_that_fetch_only() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let mut host = crate::support::HostProc::start(&fx, &["--listen", "tcp:127.0.0.1:0"], &[]);
    let fetch = |extra: &[&str]| {
        let run = fx
            .cmd()
            .args(["fetch", &srv.url("/cookies/echo"), "--render", "always"])
            .args(["--want", "body", "--endpoint-url", &host.endpoint])
            .args(extra)
            .run();
        assert_eq!(run.fetch().render, "browser", "{}", run.context);
        srv.last_request("/cookies/echo")
            .unwrap()
            .header("cookie")
            .unwrap_or_default()
            .to_string()
    };
    assert!(fetch(&["--cookie", "once=1"]).contains("once=1"));
    // The host's browser serves other fetches: the cookie did not stay in it.
    let next = fetch(&[]);
    assert!(!next.contains("once=1"), "the next fetch sent {next:?}");
    assert_eq!(host.terminate().0, 0);
}

#[test]
fn retries_and_backoff_apply_to_browser_attempts() {
    let fx = Fixture::new();
    // Nothing listens there: every browser attempt is refused (Chromium's own retries of a
    // dropped connection would hide a flaky server from the count).
    let url = format!("http://127.0.0.1:{}/", crate::support::free_port());
    let attempts = |run: &crate::support::Run| {
        run.event["trace"]["attempts"]
            .as_array()
            .map(Vec::len)
            .unwrap_or(0)
    };
    let run = render(&fx, &url, "text", &["--retry", "2", "--backoff-ms", "10"]);
    run.error("target_unreachable", 1);
    assert_eq!(attempts(&run), 3, "{}", run.context);
    assert_eq!(
        run.event["trace"]["render"]["decision"], "escalate",
        "{}",
        run.context
    );

    let run = render(&fx, &url, "text", &[]);
    run.error("target_unreachable", 1);
    assert_eq!(attempts(&run), 1, "{}", run.context);
}
