//! Transport options on the browser path (issue 13, part 2): `--tls-insecure`, `--ca-cert`
//! and `--proxy-url` take effect on the inline browser or are refused out loud; plus the
//! inline browser's launch failures and what `trace.sensitive_capture` reports.

use crate::support::{
    write_script, Fixture, FixtureServer, HttpProxy, Socks5Proxy, TlsFixtureServer,
};

const CHROMIUM: &str = "/usr/bin/chromium";

/// `afhttp fetch URL --render always` on the inline Chromium, plus `extra`.
fn render(fx: &Fixture, url: &str, extra: &[&str]) -> crate::support::Run {
    fx.cmd()
        .env("AFHTTP_NO_SANDBOX", "1")
        .env("AFHTTP_BROWSER_BIN", CHROMIUM)
        .args(["fetch", url, "--render", "always"])
        .args(extra)
        .run()
}

#[test]
fn self_signed_site_renders_only_when_allowed() {
    let _one = crate::support::chromium::lock();
    let fx = Fixture::new();
    let tls = TlsFixtureServer::start();
    let url = tls.url("/static");

    // Not allowed: the browser's certificate error stays tls_error.
    let e = render(&fx, &url, &[]).error("tls_error", 1).clone();
    assert_eq!(e["retryable"], false);

    let run = render(&fx, &url, &["--tls-insecure"]);
    assert_eq!(run.fetch().render, "browser", "{}", run.context);
    assert_eq!(run.fetch().status, 200, "{}", run.context);

    let ca = tls.ca_pem_path().display().to_string();
    let run = render(&fx, &url, &["--ca-cert", &ca]);
    assert_eq!(run.fetch().render, "browser", "{}", run.context);
    assert_eq!(run.fetch().status, 200, "{}", run.context);

    // Another server's CA does not make this one trusted.
    let other = TlsFixtureServer::start();
    let other_ca = other.ca_pem_path().display().to_string();
    render(&fx, &url, &["--ca-cert", &other_ca]).error("tls_error", 1);
}

#[test]
fn inline_browser_goes_through_the_proxy() {
    let _one = crate::support::chromium::lock();
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let proxy = HttpProxy::start();
    let run = render(&fx, &srv.url("/static"), &["--proxy-url", &proxy.url()]);
    assert_eq!(run.fetch().render, "browser", "{}", run.context);
    assert_eq!(run.fetch().status, 200, "{}", run.context);
    let port = port_of(&srv);
    assert_saw_static(&proxy, &port, "proxy");
}

/// `proxy` saw the browser's request for `/static` on the fixture's `port`.
fn assert_saw_static(proxy: &HttpProxy, port: &str, which: &str) {
    assert!(
        proxy
            .seen_targets()
            .iter()
            .any(|t| t.contains(port) && t.contains("/static")),
        "the {which} did not see the browser's request: {:?}",
        proxy.seen_targets()
    );
}

/// `password` is in neither the output nor `network.json`.
fn assert_no_password(run: &crate::support::Run, password: &str) {
    for out in [&run.stdout, &run.stderr] {
        assert!(!out.contains(password), "the password leaked: {out}");
    }
    assert!(
        !run.artifact_text("network_file").contains(password),
        "the password is in network.json"
    );
}

/// The fixture server's port, as the proxies record targets (`127.0.0.1:PORT`).
fn port_of(srv: &FixtureServer) -> String {
    srv.url("/")
        .split(':')
        .nth(2)
        .unwrap()
        .trim_end_matches('/')
        .to_string()
}

#[test]
fn inline_browser_sends_proxy_credentials() {
    let _one = crate::support::chromium::lock();
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let password = "s3cret-proxy-pw";
    let proxy = HttpProxy::start_with_auth("agent", password);
    let run = render(
        &fx,
        &srv.url("/static"),
        &[
            "--proxy-url",
            &proxy.url_with_credentials("agent", password),
        ],
    );
    // The fixture answers 407 to any request without the right Proxy-Authorization, so a
    // 200 means the browser's request carried the credentials.
    assert_eq!(run.fetch().render, "browser", "{}", run.context);
    assert_eq!(run.fetch().status, 200, "{}", run.context);
    let port = port_of(&srv);
    assert_saw_static(&proxy, &port, "proxy");
    assert_no_password(&run, password);

    // The wrong password is not let through.
    let run = render(
        &fx,
        &srv.url("/static"),
        &["--proxy-url", &proxy.url_with_credentials("agent", "wrong")],
    );
    assert_ne!(
        run.event["result"]["status"], 200,
        "a wrong password passed: {}",
        run.context
    );
}

/// The `network.json` entry of the main document at `url`: it must be there, answered.
fn main_document_entry(run: &crate::support::Run, url: &str) -> serde_json::Value {
    let file = run.result()["network_file"].as_str().unwrap().to_string();
    let network: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let entry = network["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["url"] == url && e["resource_type"] == "Document")
        .cloned();
    let entry = entry.unwrap_or_else(|| panic!("no document entry for {url}: {network}"));
    assert_eq!(entry["response"]["status"], 200, "{entry}");
    entry
}

#[test]
fn inline_browser_goes_through_a_socks5_proxy() {
    let _one = crate::support::chromium::lock();
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let port = port_of(&srv);
    let url = srv.url("/static");

    // Without credentials: Chromium's own SOCKS5 client. A loopback target would go around
    // the proxy unless the proxy is recognised as local (socks5:// hosts parse as names).
    let socks = Socks5Proxy::start();
    let run = render(&fx, &url, &["--proxy-url", &socks.url()]);
    assert_eq!(run.fetch().render, "browser", "{}", run.context);
    assert_eq!(run.fetch().status, 200, "{}", run.context);
    assert!(
        socks
            .seen_targets()
            .iter()
            .any(|t| t == &format!("127.0.0.1:{port}")),
        "the SOCKS5 proxy did not see the browser's connection: {:?}",
        socks.seen_targets()
    );
    main_document_entry(&run, &url);

    // With credentials: through the inline host's loopback proxy, which authenticates to the
    // SOCKS5 proxy (RFC 1929); the fixture takes no other method.
    let password = "s0cks-pw";
    let socks = Socks5Proxy::start_with_auth("agent", password);
    let proxy_url = socks.url_with_credentials("agent", password);
    let run = render(&fx, &url, &["--proxy-url", &proxy_url]);
    assert_eq!(run.fetch().render, "browser", "{}", run.context);
    assert_eq!(run.fetch().status, 200, "{}", run.context);
    assert!(
        socks
            .seen_targets()
            .iter()
            .any(|t| t.ends_with(&format!(":{port}"))),
        "the SOCKS5 proxy did not see the browser's connection: {:?}",
        socks.seen_targets()
    );
    let entry = main_document_entry(&run, &url);
    assert!(!entry.to_string().contains(password), "{entry}");
    for out in [&run.stdout, &run.stderr] {
        assert!(!out.contains(password), "the password leaked: {out}");
    }

    // The wrong password is not let through.
    let wrong = socks.url_with_credentials("agent", "wrong");
    let run = render(&fx, &url, &["--proxy-url", &wrong]);
    assert_ne!(
        run.event["result"]["status"], 200,
        "a wrong password passed: {}",
        run.context
    );
}

#[test]
fn inline_browser_goes_through_an_https_proxy() {
    let _one = crate::support::chromium::lock();
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let url = srv.url("/static");
    let proxy = HttpProxy::start_tls();
    let ca = proxy.ca_pem_path().display().to_string();
    let run = render(&fx, &url, &["--proxy-url", &proxy.url(), "--ca-cert", &ca]);
    assert_eq!(run.fetch().render, "browser", "{}", run.context);
    assert_eq!(run.fetch().status, 200, "{}", run.context);
    let port = port_of(&srv);
    assert_saw_static(&proxy, &port, "https proxy");
    main_document_entry(&run, &url);

    // With credentials the browser goes through the host's loopback proxy, which speaks TLS
    // to the https:// proxy (trusting --ca-cert) and authenticates; the password stays out
    // of the event and network.json, and a wrong one is not let through.
    let authed = HttpProxy::start_tls_with_auth("agent", "s3cret-pw");
    let authed_ca = authed.ca_pem_path().display().to_string();
    let with_credentials = authed
        .url()
        .replacen("https://", "https://agent:s3cret-pw@", 1);
    let run = render(
        &fx,
        &url,
        &["--proxy-url", &with_credentials, "--ca-cert", &authed_ca],
    );
    assert_eq!(run.fetch().status, 200, "{}", run.context);
    assert_saw_static(&authed, &port, "authenticating https proxy");
    main_document_entry(&run, &url);
    assert_no_password(&run, "s3cret-pw");
    let wrong = authed.url().replacen("https://", "https://agent:wrong@", 1);
    let run = render(&fx, &url, &["--proxy-url", &wrong, "--ca-cert", &authed_ca]);
    assert_ne!(
        run.event["result"]["status"], 200,
        "a wrong password was let through: {}",
        run.context
    );
}

#[test]
fn host_browser_refuses_per_fetch_transport_options() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    // A real CA file: the HTTP client reads it before the browser path is reached.
    let tls = TlsFixtureServer::start();
    let ca = tls.ca_pem_path().display().to_string();
    let proxy = HttpProxy::start();
    let endpoint = format!("http://127.0.0.1:{}", crate::support::free_port());
    for (flag, extra) in [
        ("tls_insecure", vec!["--tls-insecure"]),
        ("ca_cert", vec!["--ca-cert", &ca]),
        ("proxy_url", vec!["--proxy-url", &proxy.url()]),
    ] {
        let run = fx
            .cmd()
            .args(["fetch", &srv.url("/static"), "--render", "always"])
            .args(["--endpoint-url", &endpoint])
            .args(&extra)
            .run();
        let e = run.error("invalid_argument", 1);
        let message = e["message"].as_str().unwrap();
        assert!(message.contains(flag), "{flag}: {e}");
        assert!(message.contains("host"), "{flag}: {e}");
    }
}

#[test]
fn a_browser_that_cannot_start_is_browser_launch_failed() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let bin = fx.path().join("broken-chromium");
    write_script(
        &bin,
        "#!/bin/sh\necho 'fatal: missing libfoo.so.3' >&2\nexit 1\n",
    );
    let run = fx
        .cmd()
        .args([
            "fetch",
            &srv.url("/static"),
            "--render",
            "always",
            "--browser-bin",
        ])
        .arg(&bin)
        .run();
    let e = run.error("browser_launch_failed", 1);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("missing libfoo.so.3"),
        "no stderr tail: {e}"
    );

    // No browser executable at all is render_unavailable.
    let run = fx
        .cmd()
        .env("PATH", fx.path())
        .args(["fetch", &srv.url("/static"), "--render", "always"])
        .run();
    run.error("render_unavailable", 1);
}

#[test]
fn sensitive_capture_reports_what_was_captured() {
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let run = fx
        .cmd()
        .args([
            "fetch",
            &srv.url("/static"),
            "--capture-ws",
            "--capture-sse",
            "--no-network-redact",
        ])
        .run();
    assert_eq!(run.fetch().render, "http", "{}", run.context);
    let capture = &run.event["trace"]["sensitive_capture"];
    assert_eq!(capture["capture_ws"], false, "{capture}");
    assert_eq!(capture["capture_sse"], false, "{capture}");
    // No network.json was written, so no credential header was kept anywhere.
    assert_eq!(capture["no_network_redact"], false, "{capture}");
    // The HTTP path's network.json keeps them, and says so.
    let run = fx
        .cmd()
        .args(["fetch", &srv.url("/static"), "--want", "body,network"])
        .arg("--no-network-redact")
        .run();
    let capture = &run.event["trace"]["sensitive_capture"];
    assert_eq!(capture["no_network_redact"], true, "{}", run.context);
}
