//! Real-display takeover end to end: `afhttp host --takeover-provider novnc` (real TigerVNC,
//! websockify, noVNC, openbox and Chromium), `afhttp panel`, and a separate real headless
//! Chromium (Playwright, tests/playwright/takeover.mjs) driving the panel through the
//! listener's `/takeover/panel` proxy. Needs tigervnc-standalone-server, novnc, websockify,
//! openbox and chromium (scripts/test.sh installs them); fails loudly without them.

use crate::support::deadline::CommandDeadline;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::raw_http::send;
use crate::support::routes_takeover::BLOCK_RGB;
use crate::support::{
    alive, browser_pid, descendants, port_of, wait_for, wait_until, Fixture, FixtureServer,
    HostProc,
};

pub(crate) const TOKEN: &str = "takeover-long-token";

/// `/health` of a loopback host that uses [`TOKEN`].
pub(crate) fn health(port: u16) -> Value {
    crate::support::health(port, Some(TOKEN))
}

/// `Runtime.evaluate` of `expr` in tab `tab` through `afhttp cdp` (`auth`: its endpoint and
/// token flags); the value.
pub(crate) fn eval_in_tab(fx: &Fixture, tab: &str, auth: &[&str], expr: &str) -> Value {
    let params = json!({"expression": expr, "returnByValue": true}).to_string();
    let run = fx
        .cmd()
        .args(["cdp", "Runtime.evaluate", "--tab", tab, "--params", &params])
        .args(auth)
        .run();
    run.result()["result"]["result"]["value"].clone()
}

/// A loopback host with the novnc provider and [`TOKEN`], once `/health` says ok; its port.
pub(crate) fn start_novnc_host(fx: &Fixture) -> (HostProc, u16) {
    let host = HostProc::start(
        fx,
        &[
            "--listen",
            "tcp:127.0.0.1:0",
            "--token-secret",
            TOKEN,
            "--takeover-provider",
            "novnc",
        ],
        &[],
    );
    let port = port_of(&host.endpoint);
    wait_for("/health ok", Duration::from_secs(30), || {
        health(port)["status"] == "ok"
    });
    (host, port)
}

#[test]
fn novnc_panel_shows_and_drives_the_host_browser() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let t0 = Instant::now();
    let (mut host, port) = start_novnc_host(&fx);
    eprintln!(
        "measure: host start to /health ok with novnc: {} ms",
        t0.elapsed().as_millis()
    );
    let takeover = &host.ready["takeover"];
    assert_eq!(takeover["provider"], "novnc", "{}", host.ready);
    assert_eq!(takeover["panel_path"], "/takeover/panel");
    let ep = host.endpoint.clone();
    let auth = ["--endpoint-url", ep.as_str(), "--token-secret", TOKEN];

    // Open the fixture page in the host browser's visible tab.
    let tabs = fx.cmd().args(["tabs", "list"]).args(auth).run();
    let tab = tabs.result()["tabs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type"] == "page")
        .unwrap()["tab_id"]
        .as_str()
        .unwrap()
        .to_string();
    let eval = |expr: &str| eval_in_tab(&fx, &tab, &auth, expr);
    let params = json!({"url": srv.url("/takeover-fixture/page")}).to_string();
    fx.cmd()
        .args(["cdp", "Page.navigate", "--tab", &tab, "--params", &params])
        .args(auth)
        .run()
        .result();
    wait_for("the fixture page", Duration::from_secs(15), || {
        eval("document.readyState === 'complete' && !!document.querySelector('#field')") == true
    });

    // A handoff URL: short-lived, single-use, never the long token.
    let panel = fx.cmd().args(["panel", "--ttl-s", "600"]).args(auth).run();
    let p = panel.result();
    assert_eq!(p["code"], "panel");
    assert_eq!(p["scope"], "/takeover/*");
    assert_eq!(p["ttl_s"], 600);
    assert!(p["expires_at_rfc3339"].as_str().unwrap().ends_with('Z'));
    let url = p["takeover_url"].as_str().unwrap().to_string();
    assert!(
        url.starts_with(&format!("http://127.0.0.1:{port}/takeover/panel?handoff=")),
        "{url}"
    );
    assert!(!url.contains(TOKEN), "{url}");
    assert!(!panel.stdout.contains(TOKEN));

    // A separate real browser opens it; noVNC connects through the proxy.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/playwright");
    assert!(
        std::path::Path::new(dir).join("node_modules/playwright-core").is_dir(),
        "playwright-core is not installed: run `npm ci --prefix tests/playwright` (scripts/test.sh does)"
    );
    let shot = fx.dir.path().join("panel.png");
    let (r, g, b) = BLOCK_RGB;
    let out = Command::new("node")
        .current_dir(dir)
        .args([
            "takeover.mjs",
            &url,
            &format!("{r},{g},{b}"),
            "hello takeover",
            shot.to_str().unwrap(),
        ])
        .output_within(Duration::from_secs(180))
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|_| panic!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(v["ok"], true, "{v}");
    eprintln!(
        "measure: panel connect (goto to noVNC connected): {} ms",
        v["connect_ms"]
    );
    assert!(
        !v["final_url"].as_str().unwrap().contains("handoff="),
        "{v}"
    );
    assert!(
        v["final_url"]
            .as_str()
            .unwrap()
            .contains("/takeover/panel/vnc.html"),
        "{v}"
    );
    let cookie = &v["cookie"];
    assert_eq!(cookie["httpOnly"], true, "{v}");
    assert_eq!(cookie["sameSite"], "Strict", "{v}");
    assert_eq!(cookie["path"], "/takeover", "{v}");
    assert!(
        v["colour_fraction"].as_f64().unwrap() > 0.1,
        "the panel screenshot does not show the host page's block: {v}"
    );
    assert!(shot.is_file());
    // The click and keystrokes reached the host page.
    wait_for(
        "typed text in the host page",
        Duration::from_secs(10),
        || eval("document.querySelector('#field').value") == "hello takeover",
    );

    // Refusals: spent, unknown, the long token in a query, no credentials, cookie-less mint.
    let path = url.split_once(&format!(":{port}")).unwrap().1.to_string();
    assert_eq!(
        send(port, "GET", &path, &[], b"").status,
        401,
        "spent handoff"
    );
    assert_eq!(
        send(
            port,
            "GET",
            "/takeover/panel?handoff=0123456789abcdef",
            &[],
            b""
        )
        .status,
        401
    );
    for q in [
        "/takeover/panel",
        "/takeover/panel/vnc.html",
        "/takeover/handoff",
    ] {
        let with_token = format!("{q}?token_secret={TOKEN}");
        assert_eq!(
            send(port, "GET", &with_token, &[], b"").status,
            401,
            "{with_token}"
        );
        let bearer = format!("Bearer {TOKEN}");
        assert_eq!(
            send(port, "GET", &with_token, &[("Authorization", &bearer)], b"").status,
            401,
            "a query token is refused even next to a bearer header: {with_token}"
        );
    }
    assert_eq!(
        send(port, "GET", "/takeover/panel/vnc.html", &[], b"").status,
        401
    );
    assert_eq!(
        send(port, "POST", "/takeover/handoff", &[], b"{}").status,
        401
    );
    let bearer = format!("Bearer {TOKEN}");
    let r = send(
        port,
        "POST",
        "/takeover/handoff",
        &[("Authorization", &bearer)],
        br#"{"ttl_s": 30}"#,
    );
    assert_eq!(r.status, 400, "{}", r.raw());
    fx.cmd()
        .args(["panel", "--ttl-s", "3601"])
        .args(auth)
        .run()
        .error("invalid_argument", 1);
    // The bearer header also opens the panel (an agent checking it), and the page redirects.
    let r = send(
        port,
        "GET",
        "/takeover/panel",
        &[("Authorization", &bearer)],
        b"",
    );
    assert_eq!(r.status, 303, "{}", r.raw());
    assert!(
        r.header("location")
            .is_some_and(|l| l.starts_with("/takeover/panel/vnc.html?")),
        "{}",
        r.raw()
    );

    // A crashed display is restarted: /health degraded, then ok with a restart counted.
    let xvnc = host.ready["takeover"]["pids"][0].as_u64().unwrap() as i32;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(xvnc),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    wait_for("/health degraded", Duration::from_secs(10), || {
        health(port)["status"] == "degraded"
    });
    let back = wait_for("/health ok again", Duration::from_secs(40), || {
        let h = health(port);
        h["status"] == "ok" && h["takeover"]["connected"] == true
    });
    eprintln!(
        "measure: display restart to /health ok: {} ms",
        back.as_millis()
    );
    let h = health(port);
    assert_eq!(h["restarts"]["display"], 1, "{h}");
    let status = send(
        port,
        "GET",
        "/takeover/panel/vnc.html",
        &[("Authorization", &bearer)],
        b"",
    )
    .status;
    assert_eq!(status, 200, "the panel serves again after the restart");
    // ... and its VNC socket works again: websockify relays the new Xvnc's RFB greeting.
    let greeting = rfb_greeting(port, &bearer);
    assert!(greeting.starts_with(b"RFB 003."), "{greeting:?}");

    // Then a crashed browser: degraded, ok again, and a fetch works afterwards.
    let browser = browser_pid(host.child.id()).expect("no browser process under the host");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(browser as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    wait_for("/health degraded", Duration::from_secs(10), || {
        health(port)["status"] == "degraded"
    });
    wait_for(
        "/health ok after the browser",
        Duration::from_secs(40),
        || health(port)["status"] == "ok",
    );
    assert_eq!(health(port)["restarts"]["browser"], 1);
    let page = srv.url("/takeover-fixture/page");
    let fetched = fx
        .cmd()
        .args([
            "fetch",
            &page,
            "--render",
            "always",
            "--want",
            "rendered_html",
        ])
        .args(auth)
        .run();
    assert_eq!(fetched.fetch().status, 200, "{}", fetched.context);

    // SIGTERM during a fetch: exit 0 within 10 s, the fetch ends with an error event, and
    // nothing of the tree is left.
    let tree = descendants(host.child.id());
    assert!(
        tree.len() >= 4,
        "expected browser and display processes: {tree:?}"
    );
    let slow = srv.url("/slow?ms=20000");
    let in_flight = fx
        .cmd()
        .args([
            "fetch",
            &slow,
            "--render",
            "always",
            "--timeout-ms",
            "60000",
        ])
        .args(auth)
        .spawn();
    wait_for(
        "the fetch on the slow page",
        Duration::from_secs(30),
        || srv.hits("/slow") >= 1,
    );
    let (code, took) = host.terminate();
    assert_eq!(code, 0);
    assert!(took < Duration::from_secs(10), "{took:?}");
    let ended = in_flight.finish();
    assert_eq!(ended.event["kind"], "error", "{}", ended.context);
    wait_until(Duration::from_secs(5), || tree.iter().all(|p| !alive(*p)));
    let left: Vec<u32> = tree.into_iter().filter(|p| alive(*p)).collect();
    assert!(left.is_empty(), "processes left after SIGTERM: {left:?}");
}

/// Open `/takeover/panel/websockify` with `authorization` and return the first binary
/// message (the VNC server's protocol version).
fn rfb_greeting(port: u16, authorization: &str) -> Vec<u8> {
    use tokio_tungstenite::tungstenite::{self, client::IntoClientRequest, Message};
    let mut request = format!("ws://127.0.0.1:{port}/takeover/panel/websockify")
        .into_client_request()
        .unwrap();
    request
        .headers_mut()
        .insert("authorization", authorization.parse().unwrap());
    request
        .headers_mut()
        .insert("sec-websocket-protocol", "binary".parse().unwrap());
    let (mut ws, _) = tungstenite::connect(request).unwrap();
    if let tungstenite::stream::MaybeTlsStream::Plain(s) = ws.get_ref() {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    }
    loop {
        match ws.read().unwrap() {
            Message::Binary(b) => return b.to_vec(),
            Message::Text(t) => return t.as_bytes().to_vec(),
            _ => {}
        }
    }
}

#[test]
fn panel_without_a_provider_is_takeover_unavailable() {
    let fx = Fixture::new();
    let mut host = HostProc::start(
        &fx,
        &["--listen", "tcp:127.0.0.1:0", "--token-secret", TOKEN],
        &[],
    );
    let ep = host.endpoint.clone();
    fx.cmd()
        .args(["panel", "--endpoint-url", &ep, "--token-secret", TOKEN])
        .run()
        .error("takeover_unavailable", 1);
    fx.cmd()
        .args(["panel", "--endpoint-url", &ep])
        .run()
        .error("unauthorized", 1);
    // `fetch --takeover` refuses before it switches the host's profile.
    let refused = fx
        .cmd()
        .args(["fetch", "http://127.0.0.1:9/x", "--takeover"])
        .args(["--endpoint-url", &ep, "--token-secret", TOKEN])
        .run();
    refused.error("takeover_unavailable", 1);
    assert!(!fx.data.join("afhttp/profiles/chromium/127.0.0.1").exists());
    let port = port_of(&ep);
    assert_eq!(send(port, "GET", "/takeover/panel", &[], b"").status, 401);
    assert_eq!(host.terminate().0, 0);
}

/// The children of `pid` (from `/proc/<pid>/task/*/children`).
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let list = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        out.extend(
            list.split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok()),
        );
    }
    out
}

fn state_of(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..].trim_start().chars().next()
}

/// As PID 1 (a fresh pid namespace, like a container), `afhttp host` stays a small init: it
/// reaps the orphans of a killed browser, forwards SIGTERM to the host and exits with its
/// code, leaving nothing behind.
#[test]
fn as_pid1_the_host_reaps_orphans_and_forwards_sigterm() {
    use std::io::BufRead;
    // Its host starts a Chromium, outside HostProc.
    let _one = crate::support::chromium::lock();
    let fx = Fixture::new();
    let mut child = fx
        .isolated("unshare")
        .args([
            "--pid",
            "--fork",
            "--mount-proc",
            env!("CARGO_BIN_EXE_afhttp"),
        ])
        .args(["host", "--listen", "tcp:127.0.0.1:0"])
        .env("AFHTTP_NO_SANDBOX", "1")
        .env("AFHTTP_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let _deadline = crate::support::deadline::Watchdog::new(
        child.id(),
        Duration::from_secs(300),
        "unshare afhttp host",
    );
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let ready: Value = serde_json::from_str(line.trim()).unwrap_or_else(|_| panic!("{line:?}"));
    assert_eq!(ready["result"]["code"], "host_ready", "{ready}");
    let port = port_of(ready["result"]["endpoint_url"].as_str().unwrap());
    let init = children(child.id())[0];
    // Whatever happens below, the namespace dies with its init.
    struct KillOnDrop(u32);
    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(self.0 as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
    let _guard = KillOnDrop(init);
    let host = children(init)[0];
    assert!(std::fs::read_to_string(format!("/proc/{init}/cmdline"))
        .unwrap()
        .contains("host"));
    // Kill the browser's main process: its helpers are orphaned onto the init, which reaps
    // them; the supervisor relaunches the browser.
    let browser = children(host)
        .into_iter()
        .find(|p| {
            std::fs::read_to_string(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| c.contains("--remote-debugging-port"))
        })
        .unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(browser as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let health = |port: u16| crate::support::raw_http::get(port, "/health", None).json();
    wait_for("the browser relaunched", Duration::from_secs(30), || {
        let h = health(port);
        h["status"] == "ok" && h["restarts"]["browser"] == 1
    });
    wait_for("orphans reaped", Duration::from_secs(10), || {
        children(init)
            .iter()
            .all(|p| *p == host || state_of(*p) != Some('Z'))
    });
    let tree = descendants(child.id());
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(init as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = crate::support::deadline::wait_within(
        &mut child,
        Duration::from_secs(10),
        "the init after SIGTERM",
    );
    assert_eq!(status.code(), Some(0));
    let left: Vec<u32> = tree.into_iter().filter(|p| alive(*p)).collect();
    assert!(left.is_empty(), "processes left: {left:?}");
}
