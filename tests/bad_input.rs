//! Hostile and malformed input: each vector gives exactly one JSON error with the right
//! code and exit status, no panic, and nothing written outside `--out`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::support::{Fixture, FixtureServer};

fn snapshot(root: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let p = e.path();
            if e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                stack.push(p.clone());
            }
            out.insert(p);
        }
    }
    out
}

#[test]
fn hostile_vectors() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let url = srv.url("/static");
    let a_file = fx.path().join("regular-file");
    std::fs::write(&a_file, "x").unwrap();
    let long_url = format!("http://127.0.0.1/{}", "a".repeat(10 * 1024));
    let long_site = format!("http://{}.example/", "a".repeat(70));
    let long_header = format!("X-Big: {}", "v".repeat(20 * 1024));
    let a_file_s = a_file.to_str().unwrap().to_string();
    let u = url.as_str();

    // (argv, expected code, expected exit status)
    let vectors: Vec<(Vec<&str>, &str, i32)> = vec![
        (
            vec!["fetch", u, "--header", "NoColonHere"],
            "invalid_argument",
            1,
        ),
        (
            vec!["fetch", u, "--header", "Bad Name: v"],
            "invalid_argument",
            1,
        ),
        (
            vec!["fetch", u, "--header", "X: a\r\nInjected: 1"],
            "invalid_argument",
            1,
        ),
        (
            vec!["fetch", u, "--header", "Content-Length: 3"],
            "invalid_argument",
            1,
        ),
        (
            vec!["fetch", u, "--header", &long_header],
            "invalid_argument",
            1,
        ),
        (
            vec!["fetch", u, "--cookie", "a=b\r\nSet-Cookie: x=y"],
            "invalid_argument",
            1,
        ),
        (
            vec!["fetch", u, "--cookie", "a=\u{1}b"],
            "invalid_argument",
            1,
        ),
        (
            vec!["fetch", u, "--cookie", "=nameless"],
            "invalid_argument",
            1,
        ),
        (
            vec!["fetch", u, "--cookie", "a=1; Domain=evil.example"],
            "invalid_argument",
            1,
        ),
        (
            vec!["fetch", u, "--cookie", "a=1; SameSite=Sometimes"],
            "invalid_argument",
            1,
        ),
        (vec!["fetch", ""], "invalid_argument", 1),
        (vec!["fetch", &long_url], "invalid_argument", 1),
        (vec!["fetch", "javascript:alert(1)"], "invalid_argument", 1),
        (vec!["fetch", "file:///etc/passwd"], "invalid_argument", 1),
        (vec!["fetch", "ftp://127.0.0.1/x"], "invalid_argument", 1),
        (vec!["fetch", "http://"], "invalid_argument", 1),
        (
            vec!["fetch", "http://127.0.0.1/\u{7}bell"],
            "invalid_argument",
            1,
        ),
        (vec!["fetch", u, "--out", &a_file_s], "invalid_argument", 1),
        (vec!["fetch", u, "--out", ""], "invalid_argument", 1),
        (
            vec!["fetch", u, "--timeout-ms", "-5"],
            "invalid_argument",
            1,
        ),
        (vec!["fetch", u, "--timeout-ms", "0"], "invalid_argument", 1),
        (
            vec!["fetch", u, "--timeout-ms", "99999999999999999999999"],
            "invalid_argument",
            1,
        ),
        (
            vec!["fetch", u, "--retry", "1000000"],
            "invalid_argument",
            1,
        ),
        (vec!["fetch", u, "--retry", "many"], "invalid_argument", 1),
        (
            vec!["fetch", u, "--backoff-ms", "-1"],
            "invalid_argument",
            1,
        ),
        (
            vec!["fetch", u, "--takeover", "--render", "none"],
            "invalid_argument",
            1,
        ),
        // No endpoint and no installed container: nothing to hand a tab to.
        (vec!["fetch", u, "--takeover"], "takeover_unavailable", 1),
        // A site name too long to be a profile name must be named explicitly.
        (
            vec![
                "fetch",
                &long_site,
                "--takeover",
                "--endpoint-url",
                "http://127.0.0.1:9",
            ],
            "profile_invalid_name",
            1,
        ),
        (
            vec!["fetch", u, "--render", "sometimes"],
            "invalid_argument",
            1,
        ),
        (vec!["fetch", u, "--wait", "forever"], "invalid_argument", 1),
        (vec!["fetch", u, "--wait", "ms:-3"], "invalid_argument", 1),
        (
            vec!["fetch", u, "--want", "body,secrets"],
            "invalid_argument",
            1,
        ),
        (vec!["fetch", u, "--method", "GE T"], "invalid_argument", 1),
        (
            vec!["fetch", u, "--method", "HEAD", "--data", "x"],
            "invalid_argument",
            1,
        ),
        (
            vec!["fetch", u, "--data", "a", "--form", "b=c"],
            "invalid_argument",
            1,
        ),
        (
            vec!["fetch", u, "--data", "@/definitely/not/here"],
            "invalid_argument",
            1,
        ),
        (vec!["fetch", u, "--form", "novalue"], "invalid_argument", 1),
        (
            vec!["fetch", u, "--proxy-url", "gopher://x"],
            "invalid_argument",
            1,
        ),
        (
            vec!["fetch", u, "--proxy-url", "::::"],
            "invalid_argument",
            1,
        ),
        (
            vec!["fetch", u, "--ca-cert", "/definitely/missing.pem"],
            "invalid_argument",
            1,
        ),
        (
            vec!["fetch", u, "--endpoint-url", "ftp://host:1"],
            "invalid_endpoint",
            1,
        ),
        (
            vec!["fetch", u, "--endpoint-url", "ws://h:1/?token_secret=x"],
            "invalid_endpoint",
            1,
        ),
        (
            vec!["fetch", u, "--endpoint-url", "unix:relative.sock"],
            "invalid_endpoint",
            1,
        ),
        (
            vec!["fetch", u, "--tab", "../../etc"],
            "invalid_argument",
            1,
        ),
        (
            vec!["fetch", u, "--user-agent", "a\nb"],
            "invalid_argument",
            1,
        ),
        (
            vec!["fetch", u, "--tls-insecure=yes"],
            "invalid_argument",
            2,
        ),
        (vec!["fetch", u, "--no-such-flag"], "invalid_argument", 2),
        (vec!["fetch"], "invalid_argument", 2),
        (vec!["fetch", u, u], "invalid_argument", 2),
        (vec!["fetch", u, "-H", "X: y"], "invalid_argument", 2),
        (vec!["profile", "info", "../etc"], "profile_invalid_name", 1),
        (vec!["profile", "info", "a/b"], "profile_invalid_name", 1),
        (
            vec!["profile", "delete", "..", "--confirm", ".."],
            "profile_invalid_name",
            1,
        ),
        (
            vec!["profile", "prune", "--older-than", "-3d"],
            "invalid_argument",
            1,
        ),
        (vec!["nonsense-command"], "invalid_argument", 2),
        (vec!["health"], "invalid_endpoint", 1),
        (
            vec!["health", "--endpoint-url", "gopher://x:1"],
            "invalid_endpoint",
            1,
        ),
        (
            vec![
                "capabilities",
                "--endpoint-url",
                "unix:/no/such/afhttp.sock",
            ],
            "host_unreachable",
            1,
        ),
        (
            vec!["cdp", "NotAMethod", "--endpoint-url", "ws://127.0.0.1:9"],
            "invalid_argument",
            1,
        ),
        (
            vec![
                "cdp",
                "Runtime.evaluate",
                "--params",
                "[1]",
                "--endpoint-url",
                "ws://127.0.0.1:9",
            ],
            "invalid_argument",
            1,
        ),
        (
            vec![
                "cdp",
                "Browser.getVersion",
                "--endpoint-url",
                "ws://127.0.0.1:9",
            ],
            "host_unreachable",
            1,
        ),
        (
            vec!["tabs", "close", "--endpoint-url", "ws://127.0.0.1:9"],
            "invalid_argument",
            2,
        ),
        (
            vec![
                "health",
                "--token-secret-file",
                "/no/such/token",
                "--endpoint-url",
                "ws://127.0.0.1:9",
            ],
            "invalid_argument",
            1,
        ),
    ];
    assert!(vectors.len() >= 30);

    let before = snapshot(fx.path());
    for (argv, code, status) in &vectors {
        let run = fx.cmd().args(argv).run();
        assert!(
            !run.stderr.contains("panicked"),
            "panic for {argv:?}\n{}",
            run.context
        );
        assert_eq!(
            run.stdout.lines().count(),
            1,
            "not one line for {argv:?}\n{}",
            run.context
        );
        run.error(code, *status);
    }
    let after = snapshot(fx.path());
    let created: Vec<_> = after.difference(&before).collect();
    assert!(created.is_empty(), "bad input wrote files: {created:?}");
    assert_eq!(srv.hits("/static"), 0, "a bad command still sent a request");
}

/// A hostile tab id gets the same one error wherever it is given (`fetch --tab`,
/// `tabs close`, `cdp --tab`, `upload --tab`), and no host is contacted: `tabs close`, `cdp`
/// and `upload` used to send any id to the host (here an unreachable one, so they answered a
/// retryable `host_unreachable`).
#[test]
fn hostile_tab_ids_get_one_clear_error_before_any_host_is_contacted() {
    let fx = Fixture::new();
    // A "host" that only counts connections.
    let host = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    host.set_nonblocking(true).unwrap();
    let endpoint = format!("http://{}", host.local_addr().unwrap());
    let file = fx.path().join("f.txt");
    std::fs::write(&file, "x").unwrap();
    let file = file.to_str().unwrap().to_string();
    let long = "A".repeat(5000);
    for tab in [
        "../../etc/passwd",
        "",
        "a b",
        "id?token_secret=x",
        "a\r\nX-Injected: 1",
        "%2e%2e",
        long.as_str(),
    ] {
        let commands: [Vec<&str>; 4] = [
            vec!["fetch", "http://127.0.0.1:9/", "--tab", tab],
            vec!["tabs", "close", "--tab", tab],
            vec!["cdp", "Runtime.evaluate", "--tab", tab],
            vec![
                "upload",
                "--tab",
                tab,
                "--selector",
                "input",
                "--file",
                &file,
            ],
        ];
        for argv in commands {
            let run = fx
                .cmd()
                .args(&argv)
                .args(["--endpoint-url", &endpoint])
                .run();
            let err = run.failure("invalid_argument", 1);
            let message = err.message.as_str();
            assert!(message.starts_with("tab "), "{}", run.context);
            assert!(message.len() < 300, "{}", run.context);
            assert!(
                err.hint.as_deref().is_some_and(|h| h.contains("--tab")),
                "{}",
                run.context
            );
        }
    }
    assert!(
        host.accept().is_err(),
        "a command with a bad tab id contacted the host"
    );
}
