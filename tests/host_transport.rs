//! The driver's host transport against things that are not an afhttp host: another
//! service's `/health` and `/capabilities` (plain and over TLS), an untrusted certificate,
//! and a TLS endpoint pointed at a plain-HTTP port. No browser.

use crate::support::{Fixture, FixtureServer, Run, TlsFixtureServer};

/// `afhttp <command> --endpoint-url <endpoint>` plus `extra`, with `env`.
fn driver(
    fx: &Fixture,
    command: &str,
    endpoint: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Run {
    let mut cmd = fx
        .cmd()
        .args([command, "--endpoint-url", endpoint, "--timeout-ms", "10000"])
        .args(extra);
    for (k, v) in env {
        cmd = cmd.env(k, v);
    }
    cmd.run()
}

fn message(run: &Run) -> &str {
    run.event["error"]["message"].as_str().unwrap_or("")
}

#[test]
fn health_and_capabilities_refuse_another_service() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let base = srv.url("");
    let base = base.trim_end_matches('/');
    // `{"status":"ok"}` is what many services answer; without the host's marker (anonymous)
    // or its `code: health` (authenticated), it is not a host's health.
    for extra in [&[][..], &["--token-secret", "some-token"][..]] {
        let run = driver(&fx, "health", base, extra, &[]);
        run.error("invalid_endpoint", 1);
        assert!(
            message(&run).contains("not as an afhttp host"),
            "{}",
            run.context
        );
        assert!(run.event["error"]["hint"].is_string(), "{}", run.context);
    }
    // An HTML page where the capabilities should be.
    let run = driver(&fx, "capabilities", base, &[], &[]);
    run.error("invalid_endpoint", 1);
    assert_eq!(srv.hits("/health"), 2);
    assert_eq!(srv.hits("/capabilities"), 1);
    // The token went as a bearer header, nowhere else.
    let sent = srv.last_request("/health").unwrap();
    assert_eq!(sent.header("authorization"), Some("Bearer some-token"));
    assert_eq!(sent.path_and_query, "/health");
}

#[test]
fn tls_endpoints_verify_the_certificate() {
    let fx = Fixture::new();
    let tls = TlsFixtureServer::start();
    let endpoint = format!("https://127.0.0.1:{}", tls.port());
    let trust = tls.ca_pem_path().to_str().unwrap().to_string();

    // Trusted (the system store honours SSL_CERT_FILE): the exchange happens, and the
    // answer is judged like any other.
    let run = driver(&fx, "health", &endpoint, &[], &[("SSL_CERT_FILE", &trust)]);
    run.error("invalid_endpoint", 1);
    assert_eq!(tls.hits("/health"), 1);
    let wss = format!("wss://localhost:{}", tls.port());
    let run = driver(&fx, "capabilities", &wss, &[], &[("SSL_CERT_FILE", &trust)]);
    run.error("invalid_endpoint", 1);
    assert_eq!(tls.hits("/capabilities"), 1);

    // Not trusted: tls_error, not retried, and nothing reached the route.
    let run = driver(&fx, "health", &endpoint, &[], &[]);
    let e = run.failure("tls_error", 1);
    assert!(!e.retryable, "{}", run.context);
    assert!(
        message(&run).contains("TLS with the host"),
        "{}",
        run.context
    );
    assert_eq!(tls.hits("/health"), 1);
}

/// `/cdp` trusts what the control calls trust: a `wss://` host whose certificate chains to a
/// CA of the system store (`SSL_CERT_FILE`) is reached there too. It used to pass `health`
/// and fail the handshake (the WebSocket had its own TLS stack, web roots only).
#[test]
fn cdp_over_wss_trusts_the_system_store_like_control_calls() {
    let fx = Fixture::new();
    let tls = TlsFixtureServer::start();
    let trust = tls.ca_pem_path().to_str().unwrap().to_string();
    let wss = format!("wss://localhost:{}", tls.port());
    let cdp = |env: &[(&str, &str)]| {
        let mut cmd = fx
            .cmd()
            .args(["cdp", "Browser.getVersion", "--endpoint-url", &wss])
            .args(["--timeout-ms", "10000"]);
        for (k, v) in env {
            cmd = cmd.env(k, v);
        }
        cmd.run()
    };
    // The fixture is no host: the handshake reaches it and is answered 404.
    let run = cdp(&[("SSL_CERT_FILE", &trust)]);
    run.error("invalid_endpoint", 1);
    assert_eq!(tls.hits("/cdp"), 1, "{}", run.context);
    // Untrusted, it is the control calls' tls_error.
    cdp(&[]).error("tls_error", 1);
}

#[test]
fn a_tls_endpoint_on_a_plain_port_is_a_tls_error() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let endpoint = format!("https://127.0.0.1:{}", srv.port());
    let run = driver(&fx, "health", &endpoint, &[], &[]);
    run.error("tls_error", 1);
}

#[test]
fn a_closed_port_is_host_unreachable() {
    let fx = Fixture::new();
    let port = crate::support::free_port();
    for scheme in ["http", "https"] {
        let run = driver(
            &fx,
            "health",
            &format!("{scheme}://127.0.0.1:{port}"),
            &[],
            &[],
        );
        let e = run.failure("host_unreachable", 1);
        assert!(e.retryable, "{}", run.context);
    }
}
