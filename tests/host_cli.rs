//! `afhttp host` and the driver commands against it, through the built binary, with real
//! Chromium (installed by the test command).

use crate::support::deadline::CommandDeadline;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::{processes_mentioning, Fixture, FixtureServer, HostProc};

#[test]
fn host_serves_drivers_and_stops_cleanly() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let mut host = HostProc::start(
        &fx,
        &[
            "--listen",
            "tcp:127.0.0.1:0",
            "--token-secret",
            "s3cret-token",
        ],
        &[
            ("HTTP_PROXY", "http://127.0.0.1:9"),
            ("AFHTTP_TOKEN_SECRET", "leak-me-not"),
        ],
    );
    let ep = host.endpoint.clone();
    let profile_path = host.ready["profile_path"].as_str().unwrap().to_string();
    assert!(std::path::Path::new(&profile_path).is_dir());

    // The browser's environment holds no ambient proxy or token.
    let pid = host.ready["browser_pid"].as_u64().unwrap();
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let environ = String::from_utf8_lossy(&environ);
    assert!(
        !environ.contains("HTTP_PROXY")
            && !environ.contains("leak-me-not")
            && !environ.contains("s3cret"),
        "{environ}"
    );

    let auth = [
        "--endpoint-url",
        ep.as_str(),
        "--token-secret",
        "s3cret-token",
    ];
    fx.cmd()
        .args(["health", "--endpoint-url", &ep])
        .run()
        .error("unauthorized", 1);
    fx.cmd()
        .args(["health", "--endpoint-url", &ep, "--token-secret", "wrong"])
        .run()
        .error("unauthorized", 1);
    let h = fx.cmd().args(["health", "--ready"]).args(auth).run();
    let h = h.result();
    assert_eq!(h["status"], "ok");
    assert_eq!(h["backend"]["family"], "chromium");
    assert!(h["tabs_active"].is_number());
    // The product string, asked for off the start path, is there once the host is ready.
    let version = host.ready["backend"]["version"].as_str().unwrap_or("");
    assert!(version.contains("Chrome/"), "{}", host.ready);
    assert_eq!(h["backend"]["version"], version);
    let c = fx.cmd().arg("capabilities").args(auth).run();
    assert_eq!(c.result()["artifacts"]["screenshot"]["supported"], true);
    let v = fx
        .cmd()
        .args(["cdp", "Browser.getVersion"])
        .args(auth)
        .run();
    assert!(v.result()["result"]["product"]
        .as_str()
        .unwrap()
        .contains("Chrome"));

    let run = fx
        .cmd()
        .args([
            "fetch",
            &srv.url("/spa"),
            "--render",
            "always",
            "--want",
            "text,rendered_html,screenshot",
        ])
        .args(auth)
        .run();
    let r = run.result();
    assert_eq!(run.fetch().render, "browser");
    assert!(r["tab_id"].is_string(), "browser results carry tab_id: {r}");
    assert!(r["screenshot_file"].is_string() && r["rendered_html_file"].is_string());
    let text = run.artifact_text("text_file");
    assert!(text.contains("Item 50"), "SPA not rendered: {text:.300}");

    let tabs = fx.cmd().args(["tabs", "list"]).args(auth).run();
    let before = tabs.result()["tabs"].as_array().unwrap().len();
    assert!(before <= 1, "fetch leaked a tab: {}", tabs.result());

    let (code, took) = host.terminate();
    assert_eq!(code, 0);
    assert!(took < Duration::from_secs(10));
    crate::support::wait_until(Duration::from_secs(5), || {
        processes_mentioning(&profile_path).is_empty()
    });
    assert!(
        processes_mentioning(&profile_path).is_empty(),
        "browser processes survived"
    );
    assert!(
        !std::path::Path::new(&profile_path).exists(),
        "ephemeral profile not removed"
    );
}

#[test]
fn unix_socket_listener_and_refusals() {
    let fx = Fixture::new();
    let sock = fx.path().join("h.sock");
    let listen = format!("unix:{}", sock.display());
    let mut host = HostProc::start(&fx, &["--listen", &listen], &[]);
    let h = fx
        .cmd()
        .args(["health", "--endpoint-url", &host.endpoint])
        .run();
    assert_eq!(h.result()["status"], "ok");
    assert_eq!(host.terminate().0, 0);
    assert!(!sock.exists(), "socket file left behind");

    let run = fx.cmd().args(["host", "--listen", "tcp:0.0.0.0:0"]).run();
    run.error("invalid_argument", 1);
    let run = fx.cmd().args(["host", "--browser", "netscape"]).run();
    run.error("invalid_argument", 1);
    let run = fx
        .cmd()
        .args([
            "host",
            "--listen",
            "tcp:127.0.0.1:0",
            "--browser-bin",
            "/definitely/not/a/browser",
        ])
        .run();
    run.error("invalid_argument", 1);
}

#[test]
fn inline_escalation_renders_and_leaves_nothing() {
    let _one = crate::support::chromium::lock();
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let browser_tmp = escalate_leaving_nothing(&fx, &srv, &fx.tmp);
    // The fixture's temp dir is short enough for Chromium's singleton socket (60 bytes for
    // the scratch dir, 26 of them its name) when the suite's own is (a fresh machine's /tmp);
    // a deep one is the next case.
    if fx.tmp.as_os_str().len() <= 34 {
        assert!(
            browser_tmp.starts_with(&fx.tmp),
            "the browser's TMPDIR {browser_tmp:?} is not under afhttp's {:?}",
            fx.tmp
        );
    }
    // A TMPDIR too deep for the socket (a user's private temp dir, a CI workspace): the
    // browser still gets a private temp dir, in /tmp, removed afterwards.
    let deep = fx
        .tmp
        .join("a-private-temp-dir-deep-enough-for-a-unix-socket");
    std::fs::create_dir(&deep).unwrap();
    let browser_tmp = escalate_leaving_nothing(&fx, &srv, &deep);
    assert_eq!(browser_tmp.parent(), Some(std::path::Path::new("/tmp")));
}

/// Escalate `/spa` to an inline browser with `tmp` as TMPDIR; check it rendered and left
/// nothing in `tmp`, and that the browser ran with a private temp dir of afhttp's, gone
/// afterwards. That dir.
fn escalate_leaving_nothing(
    fx: &Fixture,
    srv: &FixtureServer,
    tmp: &std::path::Path,
) -> std::path::PathBuf {
    let out = tempfile::tempdir_in(fx.path()).unwrap();
    // The browser records the temp dir it was given: a killed Chromium leaves its singleton
    // socket directory there, so it must be afhttp's own and gone afterwards.
    let seen = out.path().join("browser-tmpdir");
    let wrapper = out.path().join("chromium-wrapper");
    crate::support::write_script(
        &wrapper,
        &format!(
            "#!/bin/sh\necho \"$TMPDIR\" > {}\nexec chromium \"$@\"\n",
            seen.display()
        ),
    );
    let run = fx
        .cmd()
        .env("TMPDIR", tmp)
        .env("AFHTTP_NO_SANDBOX", "1")
        .env("AFHTTP_BROWSER_BIN", &wrapper)
        .args(["fetch", &srv.url("/spa"), "--want", "text", "--out"])
        .arg(out.path().join("o"))
        .run();
    assert_eq!(run.fetch().render, "browser");
    assert_eq!(
        run.event["trace"]["render"]["escalation_reason"]["code"],
        "empty_html_shell"
    );
    let text = run.artifact_text("text_file");
    assert!(text.contains("Item 50"), "{text}");
    let leftovers: Vec<_> = std::fs::read_dir(tmp)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .filter(|n| !n.to_string_lossy().starts_with("a-private-temp-dir"))
        .collect();
    assert!(leftovers.is_empty(), "inline host left {leftovers:?}");
    let browser_tmp = std::fs::read_to_string(&seen).unwrap();
    let browser_tmp = std::path::PathBuf::from(browser_tmp.trim());
    let name = browser_tmp
        .file_name()
        .unwrap_or_default()
        .to_string_lossy();
    assert!(
        name.starts_with("afhttp-browser-tmp-"),
        "the browser's TMPDIR {browser_tmp:?} is not afhttp's"
    );
    assert!(!browser_tmp.exists(), "{browser_tmp:?} was left behind");
    browser_tmp
}

/// `[innerWidth, innerHeight, outerWidth, outerHeight, screen.width, screen.height]` of the
/// page a `fetch` run saw.
fn window_geometry(run: &crate::support::cmd::Run) -> Vec<u64> {
    let v = &run.event["trace"]["evaluate_after_wait"]["value"];
    serde_json::from_str(
        v.as_str()
            .unwrap_or_else(|| panic!("no geometry: {}", run.event)),
    )
    .unwrap()
}

const GEOMETRY_JS: &str = "JSON.stringify([innerWidth, innerHeight, outerWidth, outerHeight, \
    screen.width, screen.height])";

#[test]
fn headless_screen_is_the_window_and_inline_tabs_match_host_tabs() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let host = HostProc::start(&fx, &["--listen", "tcp:127.0.0.1:0"], &[]);
    let fetch = |via_host: bool, out: &str| {
        let mut cmd = fx.cmd().env("AFHTTP_NO_SANDBOX", "1").args([
            "fetch",
            &srv.url("/spa"),
            "--render",
            "always",
        ]);
        if via_host {
            cmd = cmd.args(["--endpoint-url", &host.endpoint]);
        }
        cmd.args([
            "--want",
            "text",
            "--evaluate-after-wait",
            GEOMETRY_JS,
            "--out",
        ])
        .arg(fx.path().join(out))
        .run()
    };
    let hosted = window_geometry(&fetch(true, "hosted"));
    // The inline fetch drives the browser's first tab, the one a root-only `--no-sandbox`
    // infobar would shrink.
    let inline = window_geometry(&fetch(false, "inline"));
    for g in [&hosted, &inline] {
        assert_eq!(g[2..4], g[4..6], "the screen is not the window: {g:?}");
        assert_eq!(g[2..4], [1280, 720], "{g:?}");
    }
    assert_eq!(
        hosted[..2],
        inline[..2],
        "host {hosted:?} vs inline {inline:?}"
    );
}

#[test]
fn lightpanda_host_fetches_without_screenshots() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let lp = crate::host_browser::lightpanda_binary();
    let lp = lp.to_str().unwrap();
    let mut host = HostProc::start(
        &fx,
        &[
            "--listen",
            "tcp:127.0.0.1:0",
            "--browser",
            "lightpanda",
            "--browser-bin",
            lp,
        ],
        &[],
    );
    let ep = host.endpoint.clone();
    let c = fx.cmd().args(["capabilities", "--endpoint-url", &ep]).run();
    let caps = c.result()["artifacts"].clone();
    assert_eq!(caps["screenshot"]["supported"], false);
    assert_eq!(caps["storage"]["supported"], false);
    let run = fx
        .cmd()
        .args([
            "fetch",
            &srv.url("/spa"),
            "--endpoint-url",
            &ep,
            "--render",
            "always",
            "--want",
            "text,screenshot,storage",
        ])
        .run();
    let r = run.result();
    assert_eq!(run.fetch().render, "browser");
    let w = r["warnings"].as_array().unwrap();
    // What /capabilities calls unsupported is exactly what the fetch refuses per artifact.
    for token in ["text", "screenshot", "storage"] {
        let supported = caps[token]["supported"].as_bool().unwrap();
        let warned = w
            .iter()
            .any(|w| w["artifact"] == token && w["code"] == "backend_unsupported");
        assert_eq!(warned, !supported, "{token}: {w:?}");
        assert_eq!(r.get(format!("{token}_file")).is_some(), supported, "{r}");
    }
    let text = run.artifact_text("text_file");
    assert!(text.contains("Item 50"), "{text:.200}");
    assert_eq!(host.terminate().0, 0);
}

#[test]
fn playwright_connects_over_cdp_with_a_bearer_header() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let mut host = HostProc::start(
        &fx,
        &["--listen", "tcp:127.0.0.1:0", "--token-secret", "pw-token"],
        &[],
    );
    let http = host.endpoint.replace("ws://", "http://");
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/playwright");
    assert!(
        std::path::Path::new(dir).join("node_modules/playwright-core").is_dir(),
        "playwright-core is not installed: run `npm ci --prefix tests/playwright` (scripts/test.sh does)"
    );
    let out = Command::new("node")
        .current_dir(dir)
        .args(["connect.mjs", &http, "pw-token", &srv.url("/static")])
        .output_within(Duration::from_secs(180))
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(v["ok"], true);
    assert!(!v["title"].as_str().unwrap().is_empty());
    // Without the bearer header the same attach is refused.
    let out = Command::new("node")
        .current_dir(dir)
        .args(["connect.mjs", &http, "wrong", &srv.url("/static")])
        .output_within(Duration::from_secs(180))
        .unwrap();
    assert!(!out.status.success());
    assert_eq!(host.terminate().0, 0);
}

#[test]
fn sdk_inline_ephemeral_client() {
    // It starts Chromium (an inline browser or a host's).
    let _one = crate::support::chromium::lock();
    // The SDK, in-process: a private host that the client owns (the test runs as root).
    std::env::set_var("AFHTTP_NO_SANDBOX", "1");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let profile_dirs = || {
        std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("afhttp-inline-")
            })
            .count()
    };
    let before = profile_dirs();
    rt.block_on(async {
        // Spec §13's form; it is `Client::launch(&InlineLauncher)`.
        let client = afhttp::Client::inline_ephemeral().await.unwrap();
        assert_eq!(client.health().await.unwrap()["status"], "ok");
        let v = client.cdp("Browser.getVersion").send().await.unwrap();
        assert!(v["product"].as_str().unwrap().contains("Chrome"));
        // A non-http URL is refused from code as it is from the CLI.
        let page = client
            .fetch("data:text/html,x")
            .send()
            .await
            .map(|_| ())
            .unwrap_err();
        assert_eq!(page.error.code.as_str(), "invalid_argument");
        assert!(!client.tabs().await.unwrap().is_empty());
        client.close().await;
    });
    assert!(
        profile_dirs() <= before,
        "the inline host left its directory"
    );
}

#[test]
fn host_logs_carry_the_fetch_request_id() {
    // It starts Chromium (an inline browser or a host's).
    let _one = crate::support::chromium::lock();
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let log = fx.path().join("host.log");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_afhttp"));
    cmd.args(["host", "--listen", "tcp:127.0.0.1:0"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("TMPDIR", &fx.tmp)
        .env("XDG_DATA_HOME", &fx.data)
        .env("AFHTTP_NO_SANDBOX", "1")
        .env("AFHTTP_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap());
    let mut child = cmd.spawn().unwrap();
    let _deadline = crate::support::deadline::Watchdog::new(
        child.id(),
        Duration::from_secs(300),
        "afhttp host (info logs)",
    );
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let ready: Value = serde_json::from_str(line.trim()).unwrap();
    let ep = ready["result"]["endpoint_url"]
        .as_str()
        .unwrap()
        .to_string();
    let run = fx
        .cmd()
        .args([
            "fetch",
            &srv.url("/static"),
            "--endpoint-url",
            &ep,
            "--render",
            "always",
            "--want",
            "text",
        ])
        .run();
    let id = run.result()["request_id"].as_str().unwrap().to_string();
    // The host logs the client's end too, with the same id, once the driver's socket closes.
    crate::support::wait_for(
        &format!("the detach line for {id}"),
        Duration::from_secs(10),
        || {
            std::fs::read_to_string(&log)
                .unwrap()
                .lines()
                .any(|l| l.contains("cdp client detached") && l.contains(&id))
        },
    );
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let logs = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<Value> = logs
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}")))
        .collect();
    assert!(
        lines.iter().any(|l| l["request_id"] == id.as_str()),
        "{logs}"
    );
    assert!(
        lines
            .iter()
            .all(|l| l["ts"].is_string() && l["level"].is_string()),
        "{logs}"
    );
}
