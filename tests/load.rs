//! Load: the host's concurrency caps answer `host_busy`, and a soak of mixed fetches against
//! one host leaks no tabs, memory or file descriptors.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::support::HostProc;
use crate::support::{Fixture, FixtureServer};

fn page_targets(fx: &Fixture, ep: &str) -> usize {
    let run = fx.cmd().args(["tabs", "list", "--endpoint-url", ep]).run();
    let r = run.result();
    r["tabs"]
        .as_array()
        .unwrap_or_else(|| panic!("no tabs array: {}", run.context))
        .len()
}

#[test]
fn a_full_client_cap_answers_host_busy_and_nothing_hangs() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let host = HostProc::start(
        &fx,
        &["--listen", "tcp:127.0.0.1:0", "--max-clients", "2"],
        &[],
    );
    let ep = host.endpoint.clone();
    let caps = fx.cmd().args(["capabilities", "--endpoint-url", &ep]).run();
    assert_eq!(
        caps.result()["limits"]["max_clients"],
        2,
        "{}",
        caps.context
    );
    assert_eq!(caps.result()["limits"]["max_tabs"], 32, "{}", caps.context);

    // Four at once against a cap of two: the slow page keeps the first two in flight.
    let url = srv.url("/slow?ms=6000");
    let started = Instant::now();
    let runs: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let (fx, url, ep) = (&fx, &url, &ep);
                s.spawn(move || {
                    fx.cmd()
                        .args(["fetch", url, "--endpoint-url", ep])
                        .args(["--render", "always", "--want", "text"])
                        .run()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "fetches hung: {:?}",
        started.elapsed()
    );
    let ok = runs.iter().filter(|r| r.event["kind"] == "result").count();
    let busy: Vec<_> = runs
        .iter()
        .filter(|r| r.event["kind"] == "error")
        .map(|r| r.error("host_busy", 1))
        .collect();
    assert_eq!(
        ok,
        2,
        "{:#?}",
        runs.iter().map(|r| &r.context).collect::<Vec<_>>()
    );
    assert_eq!(busy.len(), 2);
    assert!(busy.iter().all(|e| e["retryable"] == true), "{busy:?}");

    // Once they finish the slots are free again.
    let again = fx
        .cmd()
        .args(["fetch", &srv.url("/static"), "--endpoint-url", &ep])
        .args(["--render", "always", "--want", "text"])
        .run();
    assert_eq!(again.fetch().status, 200, "{}", again.context);
}

#[test]
fn a_full_tab_cap_refuses_new_tabs_with_host_busy() {
    let fx = Fixture::new();
    let host = HostProc::start(
        &fx,
        &["--listen", "tcp:127.0.0.1:0", "--max-tabs", "2"],
        &[],
    );
    let ep = host.endpoint.clone();
    let create = || {
        fx.cmd()
            .args(["cdp", "Target.createTarget", "--endpoint-url", &ep])
            .args(["--params", r#"{"url":"about:blank"}"#])
            .run()
    };
    let mut created = Vec::new();
    while page_targets(&fx, &ep) < 2 {
        let run = create();
        created.push(
            run.result()["result"]["targetId"]
                .as_str()
                .unwrap()
                .to_string(),
        );
        assert!(created.len() <= 2, "the cap never filled");
    }
    let refused = create();
    let e = refused.error("host_busy", 1);
    assert_eq!(e["retryable"], true);
    assert_eq!(page_targets(&fx, &ep), 2);
    let tabs = fx.cmd().args(["tabs", "list", "--endpoint-url", &ep]).run();
    let first = tabs.result()["tabs"][0]["tab_id"]
        .as_str()
        .unwrap()
        .to_string();
    fx.cmd()
        .args(["tabs", "close", "--tab", &first, "--endpoint-url", &ep])
        .run()
        .result();
    // closeTarget answers before the target is gone; the cap counts what the browser lists.
    crate::support::wait_for("the tab to close", Duration::from_secs(10), || {
        page_targets(&fx, &ep) <= 1
    });
    create().result();
}

/// Resident set size of `pid` in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

fn fd_count(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

/// The soak's mix: static, SPA, XHR-heavy and download pages; every tenth a full fetch
/// (screenshot included), the rest text only.
fn soak_args(srv: &FixtureServer, n: usize) -> Vec<String> {
    let path = match n % 4 {
        0 => "/static",
        1 => "/spa",
        2 => "/net/xhr",
        _ => "/transfer/file?size=20000&name=soak.csv",
    };
    let mut args = vec![
        "fetch".to_string(),
        srv.url(path),
        "--render".into(),
        "always".into(),
    ];
    if n % 10 != 5 {
        args.extend(["--want".into(), "text".into()]);
    }
    args
}

/// Run fetches `range` of the soak, `parallel` at a time; failures are collected.
fn soak_batch(
    fx: &Fixture,
    srv: &FixtureServer,
    ep: &str,
    range: std::ops::Range<usize>,
    parallel: usize,
    failures: &Mutex<Vec<String>>,
) {
    let next = AtomicUsize::new(range.start);
    std::thread::scope(|s| {
        for _ in 0..parallel {
            s.spawn(|| loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= range.end {
                    return;
                }
                let out = fx.path().join(format!("out-{n}"));
                let run = fx
                    .cmd()
                    .args(soak_args(srv, n))
                    .args(["--endpoint-url", ep, "--out"])
                    .arg(&out)
                    .run();
                let good = run.event["kind"] == "result" && (run.event["result"]["status"] == 200);
                if !good {
                    failures.lock().unwrap().push(run.context);
                }
                // The artifacts are not what is measured; keep the disk flat.
                let _ = std::fs::remove_dir_all(&out);
            });
        }
    });
}

#[test]
fn soak_of_mixed_fetches_leaks_no_tabs_memory_or_fds() {
    let _one = crate::support::chromium::lock();
    const TOTAL: usize = 104;
    const PARALLEL: usize = 8;
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let host = HostProc::start(&fx, &["--listen", "tcp:127.0.0.1:0"], &[]);
    let ep = host.endpoint.clone();
    let host_pid = host.child.id();
    let browser_pid = host.ready["browser_pid"].as_u64().unwrap() as u32;
    let tabs_before = page_targets(&fx, &ep);
    let failures = Mutex::new(Vec::new());
    let started = Instant::now();

    // The first quarter warms caches and pools; the baseline is taken after it.
    soak_batch(&fx, &srv, &ep, 0..TOTAL / 4, PARALLEL, &failures);
    let base = (rss_kib(host_pid), rss_kib(browser_pid), fd_count(host_pid));
    soak_batch(&fx, &srv, &ep, TOTAL / 4..TOTAL, PARALLEL, &failures);
    let end = (rss_kib(host_pid), rss_kib(browser_pid), fd_count(host_pid));
    let elapsed = started.elapsed();
    // A fetch prints its answer before its tab is gone (the close is not waited out after
    // the answer): the count returns to the baseline shortly after, not at the same moment.
    crate::support::wait_until(Duration::from_secs(10), || {
        page_targets(&fx, &ep) == tabs_before
    });
    let tabs_after = page_targets(&fx, &ep);
    eprintln!(
        "soak: {TOTAL} fetches in {elapsed:?}; host RSS {} -> {} KiB, browser RSS {} -> {} KiB, \
         host fds {} -> {}, tabs {tabs_before} -> {tabs_after}",
        base.0, end.0, base.1, end.1, base.2, end.2
    );

    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} failures: {failures:#?}",
        failures.len()
    );
    assert_eq!(tabs_after, tabs_before, "leaked page targets");
    let growth = |a: u64, b: u64| (b as f64 - a as f64) / a as f64;
    assert!(
        growth(base.0, end.0) < 0.10,
        "host RSS grew {base:?} -> {end:?}"
    );
    assert!(
        growth(base.1, end.1) < 0.10,
        "browser RSS grew {base:?} -> {end:?}"
    );
    // A leak per fetch would show as dozens; a few sockets may be mid-close.
    assert!(end.2 <= base.2 + 6, "host fds grew {} -> {}", base.2, end.2);
    let health = fx.cmd().args(["health", "--endpoint-url", &ep]).run();
    assert_eq!(health.result()["status"], "ok", "{}", health.context);
    drop(host);
}
