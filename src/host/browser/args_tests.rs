#![allow(clippy::unwrap_used)]

use super::*;
use crate::error::ErrorCode;

fn opts() -> LaunchOptions {
    LaunchOptions {
        backend: Backend::Chromium,
        binary: PathBuf::from("/usr/bin/chromium"),
        user_data_dir: PathBuf::from("/tmp/afhttp-profile"),
        headless: true,
        no_sandbox: false,
        proxy_url: None,
        extra_args: vec![],
        engine_env: vec![],
        display: None,
        downloads_dir: None,
        window_size: (1280, 800),
        startup_timeout: Duration::from_secs(10),
        fingerprint_seed: None,
        parent_env: Default::default(),
    }
}

fn has(args: &[String], flag: &str) -> bool {
    args.iter().any(|a| a == flag)
}

#[test]
fn baseline_flags_pin_isolation() {
    let args = chromium_args(&opts()).unwrap();
    for flag in [
        "--remote-debugging-port=0",
        "--remote-debugging-address=127.0.0.1",
        "--user-data-dir=/tmp/afhttp-profile",
        "--headless=new",
        "--no-first-run",
        "--disable-background-networking",
        "--password-store=basic",
        "--window-size=1280,800",
    ] {
        assert!(has(&args, flag), "missing {flag}: {args:?}");
    }
    assert_eq!(args.last().unwrap(), "about:blank");
    assert!(!args.iter().any(|a| a.starts_with("--fingerprint")));
}

#[test]
fn sandbox_flag_only_when_asked() {
    assert!(!has(&chromium_args(&opts()).unwrap(), "--no-sandbox"));
    let mut o = opts();
    o.no_sandbox = true;
    assert!(has(&chromium_args(&o).unwrap(), "--no-sandbox"));
}

#[test]
fn headful_has_no_headless_flag() {
    let mut o = opts();
    o.headless = false;
    let args = chromium_args(&o).unwrap();
    assert!(!args.iter().any(|a| a.starts_with("--headless")));
}

#[test]
fn proxy_only_when_given() {
    let args = chromium_args(&opts()).unwrap();
    assert!(!args.iter().any(|a| a.starts_with("--proxy-server")));
    let mut o = opts();
    o.proxy_url = Some("socks5://127.0.0.1:1080".into());
    assert!(has(
        &chromium_args(&o).unwrap(),
        "--proxy-server=socks5://127.0.0.1:1080"
    ));
    o.proxy_url = Some("http://a b".into());
    assert_eq!(
        chromium_args(&o).unwrap_err().code,
        ErrorCode::InvalidArgument
    );
}

#[test]
fn isolation_breaking_extra_args_are_refused() {
    for bad in [
        "--user-data-dir=/root/.config/chromium",
        "--user-data-dir",
        "-user-data-dir=/x",
        "--remote-debugging-port=9222",
        "--remote-debugging-address=0.0.0.0",
        "--remote-debugging-pipe",
        "--proxy-server=http://x:1",
    ] {
        let mut o = opts();
        o.extra_args = vec![bad.into()];
        let err = chromium_args(&o).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument, "{bad}");
    }
}

#[test]
fn extra_args_come_after_ours_and_before_the_page() {
    let mut o = opts();
    o.extra_args = vec!["--lang=de".into(), "--user-data-dirx".into()];
    let args = chromium_args(&o).unwrap();
    let n = args.len();
    assert_eq!(
        &args[n - 3..],
        ["--lang=de", "--user-data-dirx", "about:blank"]
    );
}

#[test]
fn fingerprint_seed_is_stable_and_differs_between_profiles() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    assert_eq!(fingerprint_seed(a.path()), fingerprint_seed(a.path()));
    assert_ne!(fingerprint_seed(a.path()), fingerprint_seed(b.path()));
    // FNV-1a reference values: the seed must not change between releases or platforms.
    assert_eq!(fingerprint_seed(Path::new("/nonexistent/afhttp/a")), {
        let mut h = 0x811c_9dc5_u32;
        for byte in b"/nonexistent/afhttp/a" {
            h = (h ^ u32::from(*byte)).wrapping_mul(0x0100_0193);
        }
        h
    });
    assert_eq!(fingerprint_seed(Path::new("")), 0x811c_9dc5);
}

#[test]
fn fingerprint_chromium_gets_a_seed() {
    let mut o = opts();
    o.backend = Backend::FingerprintChromium;
    let seed = fingerprint_seed(&o.user_data_dir);
    assert!(has(
        &chromium_args(&o).unwrap(),
        &format!("--fingerprint={seed}")
    ));
    o.fingerprint_seed = Some(42);
    assert!(has(&chromium_args(&o).unwrap(), "--fingerprint=42"));
}

#[test]
fn headless_shell_is_always_headless() {
    let mut o = opts();
    o.backend = Backend::ChromeHeadlessShell;
    o.headless = false;
    assert!(has(&chromium_args(&o).unwrap(), "--headless"));
}

#[test]
fn lightpanda_and_foxbridge_command_lines() {
    assert_eq!(
        lightpanda_args(9333),
        ["serve", "--host", "127.0.0.1", "--port", "9333"]
    );
    let mut o = opts();
    o.backend = Backend::Lightpanda;
    o.proxy_url = Some("http://127.0.0.1:3128".into());
    let args = lightpanda_command(&o, 1).unwrap();
    assert!(args.ends_with(&["--http-proxy".into(), "http://127.0.0.1:3128".into()]));
    o.extra_args = vec!["--port=1".into()];
    assert!(lightpanda_command(&o, 1).is_err());

    assert_eq!(
        camoufox_args(Path::new("/opt/camoufox"), 7000),
        ["--binary", "/opt/camoufox", "--port", "7000"]
    );
    let mut o = opts();
    o.backend = Backend::Camoufox;
    o.extra_args = vec!["--binary=/x".into()];
    assert!(camoufox_command(&o, 1).is_err());
}

#[test]
fn a_loopback_proxy_sees_loopback_targets_and_webrtc_stays_behind_it() {
    let mut o = opts();
    o.proxy_url = Some("http://127.0.0.1:4000".into());
    let args = chromium_args(&o).unwrap();
    assert!(has(&args, "--proxy-bypass-list=<-loopback>"));
    assert!(has(
        &args,
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp"
    ));
    // socks5:// hosts are opaque names to the URL parser; a loopback address is still one.
    for socks in [
        "socks5://127.0.0.1:1080",
        "socks5://[::1]:1080",
        "socks5://localhost:1080",
    ] {
        o.proxy_url = Some(socks.into());
        let args = chromium_args(&o).unwrap();
        assert!(has(&args, "--proxy-bypass-list=<-loopback>"), "{socks}");
    }
    for remote in [
        "http://proxy.lan:3128",
        "socks5://proxy.lan:1080",
        "socks5://10.0.0.1:1080",
    ] {
        o.proxy_url = Some(remote.into());
        let args = chromium_args(&o).unwrap();
        assert!(
            !args.iter().any(|a| a.starts_with("--proxy-bypass-list")),
            "{remote}"
        );
    }
    for flag in [
        "--proxy-bypass-list=*",
        "--no-proxy-server",
        "-proxy-pac-url=http://x/p.pac",
        "--proxy-auto-detect",
        "--force-webrtc-ip-handling-policy=default",
    ] {
        o.extra_args = vec![flag.into()];
        assert_eq!(
            chromium_args(&o).unwrap_err().code,
            ErrorCode::InvalidArgument,
            "{flag}"
        );
    }
}

#[test]
fn headless_screen_is_the_window_size_and_has_no_infobar() {
    let args = chromium_args(&opts()).unwrap();
    assert!(has(&args, "--screen-info={1280x800}"), "{args:?}");
    assert!(has(&args, "--disable-infobars"), "{args:?}");

    // A user's --window-size wins over afhttp's, and the screen follows it.
    let mut o = opts();
    o.extra_args = vec!["--window-size=1920,1080".into()];
    let args = chromium_args(&o).unwrap();
    assert!(has(&args, "--screen-info={1920x1080}"), "{args:?}");
    o.extra_args = vec!["--window-size=oops".into()];
    let args = chromium_args(&o).unwrap();
    assert!(has(&args, "--screen-info={1280x800}"), "{args:?}");

    // Headful windows are on a real display (a human may need the infobar), and the
    // headless shell has neither a screen switch nor infobars.
    let mut o = opts();
    o.headless = false;
    let args = chromium_args(&o).unwrap();
    assert!(!args.iter().any(|a| a.starts_with("--screen-info")));
    assert!(!has(&args, "--disable-infobars"));
    let mut o = opts();
    o.backend = Backend::ChromeHeadlessShell;
    let args = chromium_args(&o).unwrap();
    assert!(!args.iter().any(|a| a.starts_with("--screen-info")));
}
