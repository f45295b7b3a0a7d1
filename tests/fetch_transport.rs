//! Transport: timeouts, retries, dropped connections, DNS, TLS options, proxies, streaming.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{Fixture, FixtureServer, HttpProxy, Socks5Proxy, TlsFixtureServer};

#[test]
fn slow_server_times_out_retryable_and_leaves_nothing() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let out = fx.path().join("o");
    let t = Instant::now();
    let run = fx
        .cmd()
        .args([
            "fetch",
            &srv.url("/slow-body?ms=5000"),
            "--timeout-ms",
            "400",
            "--out",
        ])
        .arg(&out)
        .run();
    let e = run.failure("navigation_timeout", 1);
    assert!(e.retryable);
    assert!(
        t.elapsed() < Duration::from_secs(4),
        "the timeout bounds the whole attempt"
    );
    let left: Vec<_> = std::fs::read_dir(&out).unwrap().collect();
    assert!(left.is_empty(), "partial files left: {left:?}");
    assert_eq!(
        run.event["trace"]["attempts"][0]["error"]["code"],
        "navigation_timeout"
    );
}

#[test]
fn stalled_body_times_out() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    fx.cmd()
        .args(["fetch", &srv.url("/stall"), "--timeout-ms", "300"])
        .run()
        .error("navigation_timeout", 1);
}

#[test]
fn dropped_connections_are_target_unreachable_and_retried() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = fx
        .cmd()
        .args(["fetch", &srv.url("/flaky?fail=2&key=a")])
        .run();
    run.error("target_unreachable", 1);

    let run = fx
        .cmd()
        .args([
            "fetch",
            &srv.url("/flaky?fail=2&key=b"),
            "--retry",
            "3",
            "--backoff-ms",
            "10",
        ])
        .run();
    let r = run.result();
    assert_eq!(r["status"], 200);
    let attempts = run.event["trace"]["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 3, "two failures then success");
    assert_eq!(attempts[0]["error"]["code"], "target_unreachable");
}

#[test]
fn statuses_are_never_retried() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = fx
        .cmd()
        .args([
            "fetch",
            &srv.url("/status/503"),
            "--retry",
            "3",
            "--render",
            "none",
        ])
        .run();
    assert_eq!(run.fetch().status, 503);
    assert_eq!(srv.hits("/status/503"), 1);
}

#[test]
fn connection_dropped_mid_body() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let out = fx.path().join("o");
    let run = fx
        .cmd()
        .args(["fetch", &srv.url("/drop"), "--out"])
        .arg(&out)
        .run();
    run.error("target_unreachable", 1);
    assert_eq!(
        std::fs::read_dir(&out).unwrap().count(),
        0,
        "no partial body left"
    );
}

#[test]
fn refused_connection() {
    let fx = Fixture::new();
    let port = crate::support::free_port();
    fx.cmd()
        .args(["fetch", &format!("http://127.0.0.1:{port}/")])
        .run()
        .error("target_unreachable", 1);
}

#[test]
fn unresolvable_host_in_a_private_network() {
    // `unshare -n` gives the process an empty network, so no DNS query leaves the machine.
    let fx = Fixture::new();
    let run = fx
        .cmd_via(&["unshare", "-n"])
        .args(["fetch", "http://no-such-host.invalid/"])
        .run();
    let e = run.failure("dns_resolution_failed", 1);
    assert!(e.retryable);
}

#[test]
fn tls_untrusted_then_ca_cert_then_insecure() {
    let fx = Fixture::new();
    let tls = TlsFixtureServer::start();
    let run = fx.cmd().args(["fetch", &tls.url("/echo")]).run();
    let e = run.failure("tls_error", 1);
    assert!(!e.retryable);
    assert!(e.hint.as_deref().unwrap().contains("--ca-cert"));

    let run = fx
        .cmd()
        .args(["fetch", &tls.url("/echo"), "--ca-cert"])
        .arg(tls.ca_pem_path())
        .run();
    assert_eq!(run.fetch().status, 200);

    let run = fx
        .cmd()
        .args(["fetch", &tls.url("/echo"), "--tls-insecure"])
        .run();
    assert_eq!(run.fetch().status, 200);
}

#[test]
fn bad_ca_cert_file_is_invalid_argument() {
    let fx = Fixture::new();
    let tls = TlsFixtureServer::start();
    let junk = fx.path().join("junk.pem");
    std::fs::write(&junk, "not a certificate").unwrap();
    let run = fx
        .cmd()
        .args(["fetch", &tls.url("/"), "--ca-cert"])
        .arg(&junk)
        .run();
    // The SDK names the field; the CLI adds the flag to the hint.
    let e = run.failure("invalid_argument", 1);
    assert!(e.message.as_str().starts_with("ca_cert "), "{e:?}");
    assert!(e.hint.as_deref().unwrap().contains("--ca-cert"), "{e:?}");
}

#[test]
fn http_proxy_forwards_plain_and_tunnels_tls() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let tls = TlsFixtureServer::start();
    let proxy = HttpProxy::start();
    let run = fx
        .cmd()
        .args(["fetch", &srv.url("/echo"), "--proxy-url", &proxy.url()])
        .run();
    assert_eq!(run.fetch().status, 200);
    assert_eq!(proxy.requests(), 1);

    let run = fx
        .cmd()
        .args([
            "fetch",
            &tls.url("/echo"),
            "--proxy-url",
            &proxy.url(),
            "--ca-cert",
        ])
        .arg(tls.ca_pem_path())
        .run();
    assert_eq!(run.fetch().status, 200);
    assert_eq!(proxy.requests(), 2);
    assert!(proxy
        .seen_targets()
        .iter()
        .any(|t| t.contains(&tls.port().to_string())));
}

#[test]
fn https_proxy_with_its_ca() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let proxy = HttpProxy::start_tls();
    let run = fx
        .cmd()
        .args(["fetch", &srv.url("/echo"), "--proxy-url", &proxy.url()])
        .arg("--ca-cert")
        .arg(proxy.ca_pem_path())
        .run();
    assert_eq!(run.fetch().status, 200, "{}", run.context);
    assert_eq!(proxy.requests(), 1, "{:?}", proxy.seen_targets());

    // The proxy's certificate is checked like any other.
    let run = fx
        .cmd()
        .args(["fetch", &srv.url("/echo"), "--proxy-url", &proxy.url()])
        .run();
    run.error("tls_error", 1);
    assert_eq!(proxy.requests(), 1, "{:?}", proxy.seen_targets());
}

#[test]
fn socks5_proxy() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let socks = Socks5Proxy::start();
    let run = fx
        .cmd()
        .args(["fetch", &srv.url("/echo"), "--proxy-url", &socks.url()])
        .run();
    assert_eq!(run.fetch().status, 200);
    assert_eq!(socks.connections(), 1);
}

#[test]
fn dead_proxy_is_target_unreachable_with_hint() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let port = crate::support::free_port();
    let run = fx
        .cmd()
        .args([
            "fetch",
            &srv.url("/"),
            "--proxy-url",
            &format!("http://127.0.0.1:{port}"),
        ])
        .run();
    let e = run.failure("target_unreachable", 1);
    assert!(e.hint.as_deref().unwrap_or("").contains("proxy"));
}

#[test]
fn ambient_proxy_variables_are_ignored() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let proxy = HttpProxy::start();
    let run = fx
        .cmd()
        .env("HTTP_PROXY", proxy.url())
        .env("http_proxy", proxy.url())
        .env("ALL_PROXY", proxy.url())
        .args(["fetch", &srv.url("/echo")])
        .run();
    assert_eq!(run.artifact_json("body_file")["path"], "/echo");
    assert_eq!(proxy.requests(), 0, "ambient proxy was used");
}

/// Peak RSS of one run of the binary (KiB): the largest `VmHWM` seen in `/proc` while it
/// runs. (`wait4`'s `ru_maxrss` would count the pre-exec copy of this large test process.)
fn run_measuring_rss(fx: &Fixture, args: &[&str]) -> (i32, i64, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_afhttp"))
        .args(args)
        .env_clear()
        .env("TMPDIR", &fx.tmp)
        .env("HOME", &fx.home)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut { stdout }, &mut s).unwrap();
        s
    });
    let status_path = format!("/proc/{}/status", child.id());
    let started = std::time::Instant::now();
    let mut peak_kib = 0i64;
    let status = loop {
        if let Ok(text) = std::fs::read_to_string(&status_path) {
            if let Some(line) = text.lines().find(|l| l.starts_with("VmHWM:")) {
                let kib: i64 = line
                    .split_whitespace()
                    .nth(1)
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                peak_kib = peak_kib.max(kib);
            }
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > crate::support::deadline::RUN_DEADLINE {
            let _ = child.kill();
            panic!("afhttp {args:?} did not exit within its deadline; killed");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    (
        status.code().unwrap_or(-1),
        peak_kib,
        reader.join().unwrap(),
    )
}

#[test]
fn fifty_megabyte_body_streams_to_disk() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let out = fx.path().join("big");
    let n = 50 * 1024 * 1024;
    let url = srv.url(&format!("/bytes?n={n}"));
    let (code, rss_kib, stdout) = run_measuring_rss(
        &fx,
        &[
            "fetch",
            &url,
            "--out",
            out.to_str().unwrap(),
            "--timeout-ms",
            "120000",
        ],
    );
    assert_eq!(code, 0, "{stdout}");
    let event: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(event["result"]["body_bytes"], n);
    assert_eq!(
        std::fs::metadata(out.join("body.bin")).unwrap().len(),
        n as u64
    );
    eprintln!("peak RSS streaming 50 MB: {} KiB", rss_kib);
    // Liveness bound, not a benchmark: holding the body in memory would exceed it.
    assert!(
        rss_kib < 48 * 1024,
        "peak RSS {rss_kib} KiB: the body is held in memory"
    );
}

#[test]
fn tls_to_a_plain_http_server_is_tls_error_not_retryable() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let url = srv.url("/static").replacen("http://", "https://", 1);
    let run = fx.cmd().args(["fetch", &url, "--render", "none"]).run();
    let e = run.failure("tls_error", 1);
    assert!(!e.retryable, "{e:?}");
}

#[test]
fn redirects_between_plain_http_and_tls_check_the_certificate_where_it_is_met() {
    // A plain-HTTP fetch starts without the trust store; the TLS client (the system store,
    // which honours SSL_CERT_FILE) appears for the first https:// hop and checks it there.
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let tls = TlsFixtureServer::start();
    let to_tls = srv.url(&format!("/redirect/abs?to={}", tls.url("/echo")));
    let run = fx.cmd().args(["fetch", &to_tls]).run();
    run.failure("tls_error", 1);

    let run = fx
        .cmd()
        .env("SSL_CERT_FILE", tls.ca_pem_path())
        .args(["fetch", &to_tls])
        .run();
    let r = run.fetch();
    assert_eq!(r.status, 200, "{}", run.context);
    assert_eq!(run.result()["redirects"], 1, "{}", run.context);
    assert!(r.final_url.starts_with("https://"), "{}", run.context);

    // And back: https:// first, then a plain hop.
    let to_plain = tls.url(&format!("/redirect/abs?to={}", srv.url("/static")));
    let run = fx
        .cmd()
        .env("SSL_CERT_FILE", tls.ca_pem_path())
        .args(["fetch", &to_plain])
        .run();
    let r = run.fetch();
    assert_eq!(r.status, 200, "{}", run.context);
    assert_eq!(srv.hits("/static"), 1);
}
