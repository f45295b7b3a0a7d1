//! Fault tolerance: each test injects the fault for real (SIGKILL of the browser, the driver
//! or the host, SIGTERM under load, a full file system, two hosts racing for one profile)
//! against the built binary and real Chromium. See docs/faults.md.

use crate::support::deadline::CommandDeadline;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{
    alive, browser_pid, descendants, port_of, processes_mentioning, sigkill, wait_for, wait_until,
    Fixture, FixtureServer, HostProc,
};

/// `/health` of a tokenless loopback host.
fn health(endpoint: &str) -> Value {
    crate::support::health(port_of(endpoint), None)
}

/// `afhttp ARGS` in `fx`'s environment as a child whose stdout is captured.
fn spawn(fx: &Fixture, args: &[&str]) -> Child {
    fx.child_command().args(args).spawn().unwrap()
}

/// Wait (at most `bound`) for `child` to exit; its exit code and its one JSON event.
fn finish(mut child: Child, bound: Duration) -> (i32, Value, Duration) {
    let t = Instant::now();
    let status = crate::support::deadline::wait_within(&mut child, bound, "afhttp");
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let event = serde_json::from_str(out.trim())
        .unwrap_or_else(|_| panic!("stdout is not one JSON event: {out:?}"));
    (status.code().unwrap_or(-1), event, t.elapsed())
}

/// Page target ids of the host, through `afhttp tabs list`.
fn tab_ids(fx: &Fixture, endpoint: &str) -> Vec<String> {
    let run = fx
        .cmd()
        .args(["tabs", "list", "--endpoint-url", endpoint])
        .run();
    run.result()["tabs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tab_id"].as_str().unwrap().to_string())
        .collect()
}

/// Every file under `dir`, recursively.
fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(files_under(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// The browser dies under a waiting fetch: the fetch fails fast and retryable, `/health`
/// goes `degraded` then `ok`, and the next fetch works on the relaunched browser.
#[test]
fn browser_killed_mid_fetch_is_relaunched() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let host = HostProc::start(&fx, &["--listen", "tcp:127.0.0.1:0"], &[]);
    let ep = host.endpoint.clone();
    let browser = host.ready["browser_pid"].as_u64().unwrap() as i32;
    let slow = srv.url("/slow?ms=30000");
    let fetch = spawn(
        &fx,
        &[
            "fetch",
            &slow,
            "--render",
            "always",
            "--endpoint-url",
            &ep,
            "--timeout-ms",
            "20000",
        ],
    );
    wait_for(
        "the browser to request the slow page",
        Duration::from_secs(20),
        || srv.hits("/slow") >= 1,
    );
    // The browser runs in its own process group: kill all of it at once.
    nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(browser),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let watcher = {
        let ep = ep.clone();
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            let t = Instant::now();
            while t.elapsed() < Duration::from_secs(40) {
                // The readiness form answers 503 exactly while the status is not ok.
                let r = crate::support::raw_http::get(port_of(&ep), "/health?ready", None);
                let (code, h) = (r.status, r.json());
                let status = h["status"].as_str().unwrap_or("none").to_string();
                if code != 0 {
                    assert_eq!(code == 200, status == "ok", "/health?ready {code}: {h}");
                }
                if seen.last() != Some(&status) {
                    seen.push(status.clone());
                }
                if status == "ok" && h["restarts"]["browser"] == 1 {
                    return (seen, t.elapsed());
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            panic!("/health never came back ok: {seen:?}");
        })
    };
    let (code, event, took) = finish(fetch, Duration::from_secs(25));
    assert_eq!(code, 1, "{event}");
    assert_eq!(event["kind"], "error", "{event}");
    let err = &event["error"];
    assert!(
        err["code"] == "tab_crashed" || err["code"] == "cdp_unavailable",
        "{event}"
    );
    assert_eq!(err["retryable"], true, "{event}");
    assert!(took < Duration::from_secs(20), "the fetch took {took:?}");
    eprintln!(
        "measure: fetch failed ({}) {} ms after the browser was killed",
        err["code"],
        took.as_millis()
    );
    let (seen, back) = watcher.join().unwrap();
    assert!(seen.iter().any(|s| s == "degraded"), "{seen:?}");
    eprintln!(
        "measure: browser killed to /health ok: {} ms",
        back.as_millis()
    );
    let run = fx
        .cmd()
        .args([
            "fetch",
            &srv.url("/static"),
            "--render",
            "always",
            "--endpoint-url",
            &ep,
            "--want",
            "text",
        ])
        .run();
    assert_eq!(run.fetch().render, "browser");
}

/// A driver killed mid-fetch leaves a tab it meant to close: the host closes it.
#[test]
fn driver_killed_mid_fetch_leaves_no_tab() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let host = HostProc::start(&fx, &["--listen", "tcp:127.0.0.1:0"], &[]);
    let ep = host.endpoint.clone();
    // A tab an agent created on purpose (raw CDP) outlives its connection.
    let kept = fx
        .cmd()
        .args(["cdp", "Target.createTarget", "--endpoint-url", &ep])
        .args(["--params", r#"{"url":"about:blank"}"#])
        .run();
    let kept = kept.result()["result"]["targetId"]
        .as_str()
        .unwrap()
        .to_string();
    let before = tab_ids(&fx, &ep);
    assert!(before.contains(&kept), "{before:?}");
    let slow = srv.url("/slow?ms=30000");
    let mut fetch = spawn(
        &fx,
        &["fetch", &slow, "--render", "always", "--endpoint-url", &ep],
    );
    wait_for(
        "the fetch's tab on the slow page",
        Duration::from_secs(20),
        || srv.hits("/slow") >= 1,
    );
    let during = tab_ids(&fx, &ep);
    let leased: Vec<&String> = during.iter().filter(|t| !before.contains(t)).collect();
    assert_eq!(leased.len(), 1, "before {before:?}, during {during:?}");
    let leased = leased[0].clone();
    sigkill(fetch.id() as i32);
    let _ = fetch.wait();
    let closed = wait_for(
        "the orphaned tab to be closed",
        Duration::from_secs(5),
        || !tab_ids(&fx, &ep).contains(&leased),
    );
    eprintln!(
        "measure: orphaned tab closed {} ms after the driver was killed",
        closed.as_millis()
    );
    let after = tab_ids(&fx, &ep);
    assert_eq!(after, before, "tabs leaked or lost");
}

/// SIGTERM while 4 fetches wait on the host: it exits cleanly within 10 s, releases the
/// profile, leaves no process; every fetch ends with a coded error and leaves no file.
#[test]
fn sigterm_during_concurrent_fetches_exits_cleanly() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let mut host = HostProc::start(
        &fx,
        &["--listen", "tcp:127.0.0.1:0", "--profile", "busy"],
        &[],
    );
    let ep = host.endpoint.clone();
    let outs: Vec<_> = (0..4)
        .map(|i| fx.dir.path().join(format!("out{i}")))
        .collect();
    let fetches: Vec<Child> = outs
        .iter()
        .enumerate()
        .map(|(i, out)| {
            // Distinct URLs: Chromium's cache lock would serialize identical ones.
            spawn(
                &fx,
                &[
                    "fetch",
                    &srv.url(&format!("/slow?ms=30000&i={i}")),
                    "--render",
                    "always",
                    "--endpoint-url",
                    &ep,
                    "--want",
                    "body,text,rendered_html,screenshot,network",
                    "--out",
                    out.to_str().unwrap(),
                ],
            )
        })
        .collect();
    let waited = wait_for(
        "4 fetches on the slow page",
        Duration::from_secs(30),
        || srv.hits("/slow") >= 4,
    );
    eprintln!(
        "measure: 4 fetches reached the page in {} ms",
        waited.as_millis()
    );
    let tree = descendants(host.child.id());
    assert!(tree.len() >= 3, "expected browser processes: {tree:?}");
    let (code, took) = host.terminate();
    assert_eq!(code, 0);
    assert!(took < Duration::from_secs(10), "{took:?}");
    eprintln!(
        "measure: SIGTERM under 4 fetches to exit: {} ms",
        took.as_millis()
    );
    for (fetch, out) in fetches.into_iter().zip(&outs) {
        let (code, event, took) = finish(fetch, Duration::from_secs(15));
        eprintln!(
            "measure: fetch ended {} ms after the host: {}",
            took.as_millis(),
            event["error"]["code"]
        );
        assert_eq!(code, 1, "{event}");
        assert_eq!(event["kind"], "error", "{event}");
        assert!(
            event["error"]["code"]
                .as_str()
                .is_some_and(|c| !c.is_empty()),
            "{event}"
        );
        let left = files_under(out);
        assert!(left.is_empty(), "a failed fetch left files: {left:?}");
    }
    wait_until(Duration::from_secs(5), || tree.iter().all(|p| !alive(*p)));
    let left: Vec<u32> = tree.into_iter().filter(|p| alive(*p)).collect();
    assert!(left.is_empty(), "processes left after SIGTERM: {left:?}");
    let status = fx.cmd().args(["profile", "lock-status", "busy"]).run();
    assert_eq!(status.result()["locked"], false);
}

/// Unmounts a tmpfs on drop.
struct Mount(std::path::PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// `--out` on a full file system: `io_error`, and nothing under a final artifact name.
#[test]
fn out_on_a_full_filesystem_is_io_error_and_leaves_nothing() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "mounting a tiny tmpfs needs root: run the suite as root (as `make test` on its machine does)"
    );
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let mnt = fx.dir.path().join("full");
    std::fs::create_dir(&mnt).unwrap();
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&mnt)
        .status_within(Duration::from_secs(30))
        .unwrap();
    assert!(
        ok.success(),
        "mount tmpfs failed (root without CAP_SYS_ADMIN?)"
    );
    let _mount = Mount(mnt.clone());
    // A body larger than the file system.
    let out = mnt.join("big");
    let run = fx
        .cmd()
        .args(["fetch", &srv.url("/bytes?n=1048576"), "--render", "none"])
        .args(["--out", out.to_str().unwrap()])
        .run();
    let e = run.error("io_error", 1);
    assert_eq!(e["retryable"], false, "{e}");
    let left = files_under(&out);
    assert!(left.is_empty(), "a full disk left files: {left:?}");
    // A small body fits, but its projections do not all fit after a filler: still nothing
    // half-written under a final name.
    std::fs::write(mnt.join("filler"), vec![b'x'; 56 * 1024]).unwrap();
    let out = mnt.join("small");
    let run = fx
        .cmd()
        .args(["fetch", &srv.url("/big-html?n=16384"), "--render", "none"])
        .args(["--want", "body,text,content,network"])
        .args(["--out", out.to_str().unwrap()])
        .run();
    run.error("io_error", 1);
    let left = files_under(&out);
    assert!(left.is_empty(), "a full disk left files: {left:?}");
    // Space again: the same fetch works (nothing stale blocks it).
    std::fs::remove_file(mnt.join("filler")).unwrap();
    let run = fx
        .cmd()
        .args(["fetch", &srv.url("/static"), "--render", "none"])
        .args(["--out", out.to_str().unwrap()])
        .run();
    run.result();
}

/// Start `afhttp host --profile NAME` and read its first event.
fn host_event(child: &mut Child) -> Value {
    use std::io::BufRead;
    let _deadline = crate::support::deadline::Watchdog::new(
        child.id(),
        crate::support::host::READY_DEADLINE,
        "afhttp host --profile race",
    );
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    serde_json::from_str(line.trim()).unwrap_or_else(|_| panic!("not JSON: {line:?}"))
}

/// Two hosts race for one persistent profile: one wins, the other is `profile_locked`
/// naming the winner. A SIGKILLed owner's lock (and its orphaned browser) is taken over.
#[test]
fn profile_race_and_takeover_after_a_killed_host() {
    let fx = Fixture::new();
    let args = ["host", "--listen", "tcp:127.0.0.1:0", "--profile", "race"];
    let mut a = spawn(&fx, &args);
    let mut b = spawn(&fx, &args);
    let (ea, eb) = (host_event(&mut a), host_event(&mut b));
    let (mut winner, ready, mut loser, refused) = if ea["kind"] == "result" {
        (a, ea, b, eb)
    } else {
        (b, eb, a, ea)
    };
    assert_eq!(ready["result"]["code"], "host_ready", "{ready}");
    assert_eq!(refused["kind"], "error", "both won: {refused}");
    assert_eq!(refused["error"]["code"], "profile_locked", "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&winner.id().to_string()),
        "{refused}"
    );
    let lost = crate::support::deadline::wait_within(
        &mut loser,
        Duration::from_secs(30),
        "the refused afhttp host",
    );
    assert_eq!(lost.code(), Some(1));
    // SIGKILL the winner alone. Its browser runs in its own process group, but dies with the
    // host (parent-death signal); the kernel drops the dead owner's flock.
    let browser = ready["result"]["browser_pid"].as_u64().unwrap() as u32;
    sigkill(winner.id() as i32);
    let _ = winner.wait();
    let gone = wait_for(
        "the dead host's browser to die",
        Duration::from_secs(10),
        || !alive(browser),
    );
    eprintln!(
        "measure: browser gone {} ms after its host was SIGKILLed",
        gone.as_millis()
    );
    let status = fx.cmd().args(["profile", "lock-status", "race"]).run();
    assert_eq!(status.result()["locked"], false, "{}", status.result());
    // A browser still on the profile without a host (as one left by a host that could not
    // set a parent-death signal): the next host stops it instead of failing to launch on a
    // profile Chromium's SingletonLock says is in use.
    let profile = fx.data.join("afhttp/profiles/chromium/race");
    let mut stray = Command::new("chromium")
        .args(["--headless", "--no-sandbox", "--remote-debugging-port=0"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("about:blank")
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(
        "the stray browser's SingletonLock",
        Duration::from_secs(20),
        || std::fs::symlink_metadata(profile.join("SingletonLock")).is_ok(),
    );
    let t = Instant::now();
    let next = HostProc::start(
        &fx,
        &["--listen", "tcp:127.0.0.1:0", "--profile", "race"],
        &[],
    );
    eprintln!(
        "measure: takeover of a profile with a stray browser: {} ms",
        t.elapsed().as_millis()
    );
    let mut reaped = None;
    wait_until(Duration::from_secs(2), || {
        reaped = stray.try_wait().unwrap();
        reaped.is_some()
    });
    if reaped.is_none() {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(stray.id() as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    assert!(
        reaped.is_some(),
        "the stray browser still runs on the profile"
    );
    let h = health(&next.endpoint);
    assert_eq!(h["status"], "ok", "{h}");
    assert_eq!(h["profile"]["name"], "race", "{h}");
    let status = fx.cmd().args(["profile", "lock-status", "race"]).run();
    assert_eq!(status.result()["locked"], true);
    assert_eq!(
        status.result()["lock_owner_pid"],
        next.child.id(),
        "{}",
        status.result()
    );
}

/// An inline `fetch --render always` killed with SIGKILL: its browser (own process group,
/// ephemeral profile under the fetch's TMPDIR) dies with it instead of running on.
#[test]
fn killed_inline_fetch_leaves_no_browser() {
    let _one = crate::support::chromium::lock();
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let slow = srv.url("/slow?ms=30000");
    let mut fetch = spawn(&fx, &["fetch", &slow, "--render", "always"]);
    wait_for(
        "the inline browser on the slow page",
        Duration::from_secs(30),
        || srv.hits("/slow") >= 1,
    );
    let profile_root = fx.tmp.to_str().unwrap().to_string();
    let browsers = processes_mentioning(&profile_root);
    assert!(!browsers.is_empty(), "no browser under {profile_root}");
    sigkill(fetch.id() as i32);
    let _ = fetch.wait();
    let gone = wait_for(
        "the orphaned browser to die",
        Duration::from_secs(10),
        || processes_mentioning(&profile_root).is_empty(),
    );
    eprintln!(
        "measure: inline browser gone {} ms after the fetch was killed",
        gone.as_millis()
    );
}

/// SIGKILL the host's browser (its whole group) and wait until the host relaunched it
/// (`/health` ok with `restarts.browser == crash`) or exited; its exit status if it did.
fn crash_browser(host: &mut HostProc, crash: u64) -> Option<std::process::ExitStatus> {
    let browser = browser_pid(host.child.id()).expect("no browser under the host");
    nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(browser as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let ep = host.endpoint.clone();
    let mut exited = None;
    wait_for(
        &format!("relaunch (or exit) after crash {crash}"),
        Duration::from_secs(60),
        || {
            exited = host.child.try_wait().unwrap();
            let h = health(&ep);
            exited.is_some() || (h["status"] == "ok" && h["restarts"]["browser"] == crash)
        },
    );
    exited
}

/// The restart budget is a sliding window, not a lifetime count: with the window shortened
/// (a test-only knob) the browser is SIGKILLed seven times, each crash more than a window
/// after the previous relaunch, and the host relaunches it every time. It used to give up at
/// the sixth crash of its life (`MAX_RESTARTS = 5`, never reset).
#[test]
fn browser_restart_budget_resets_after_the_window() {
    const WINDOW_MS: u64 = 1500;
    let fx = Fixture::new();
    let window = WINDOW_MS.to_string();
    let mut host = HostProc::start(
        &fx,
        &["--listen", "tcp:127.0.0.1:0"],
        &[(afhttp::env::TEST_RESTART_WINDOW_MS, &window)],
    );
    for crash in 1..=7u64 {
        // The spacing is this test's input, not a synchronisation: each crash lands more
        // than a window after the previous relaunch.
        std::thread::sleep(Duration::from_millis(WINDOW_MS + 200));
        if let Some(status) = crash_browser(&mut host, crash) {
            panic!("the host gave up at crash {crash} ({status})");
        }
    }
    let tabs = fx
        .cmd()
        .args(["tabs", "list", "--endpoint-url", &host.endpoint])
        .run();
    tabs.result();
    assert_eq!(host.terminate().0, 0);
}

/// Within one (default, ten-minute) window the budget still ends a crash loop: the sixth
/// crash in a row makes the host give up and exit 1, instead of lingering without a
/// listener until it is signalled.
#[test]
fn a_browser_that_keeps_crashing_ends_the_host() {
    let fx = Fixture::new();
    let mut host = HostProc::start(&fx, &["--listen", "tcp:127.0.0.1:0"], &[]);
    for crash in 1..=5u64 {
        if let Some(status) = crash_browser(&mut host, crash) {
            panic!("the host gave up early, at crash {crash} ({status})");
        }
    }
    let status = crash_browser(&mut host, 6).expect("the host survived a sixth crash");
    assert_eq!(status.code(), Some(1), "{status}");
}
