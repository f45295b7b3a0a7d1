//! Command lines for each backend, and what a user may not add to them.
//!
//! The flags that pin isolation (user-data-dir, where DevTools listens, the proxy) are always
//! afhttp's own; `--browser-arg` may add engine switches but never override those.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::AfError;
use crate::profile::Backend;

/// Everything needed to start one browser process.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    /// Which engine family and command line to use.
    pub backend: Backend,
    /// The executable, from [`super::resolve_binary`].
    pub binary: PathBuf,
    /// The profile directory: Chromium's `--user-data-dir` and the child's `HOME`.
    pub user_data_dir: PathBuf,
    /// Run without a window (`--headless=new`).
    pub headless: bool,
    /// Disable Chromium's sandbox (root, containers); from `AFHTTP_NO_SANDBOX` or a flag.
    pub no_sandbox: bool,
    /// Explicit proxy for browser traffic; ambient proxy variables are never used.
    pub proxy_url: Option<String>,
    /// `--browser-arg` values, appended after afhttp's own flags.
    pub extra_args: Vec<String>,
    /// `--engine-env` entries, added to the allowlisted environment.
    pub engine_env: Vec<(String, String)>,
    /// X display for a headful browser (`DISPLAY`); `None` keeps `DISPLAY` unset.
    pub display: Option<String>,
    /// Where downloads land. Chromium has no switch for it: the caller applies it over CDP
    /// (`Browser.setDownloadBehavior`) once connected.
    pub downloads_dir: Option<PathBuf>,
    /// Window size in pixels (`--window-size=W,H`).
    pub window_size: (u32, u32),
    /// How long to wait for the DevTools endpoint before giving up.
    pub startup_timeout: Duration,
    /// fingerprint-chromium seed; `None` derives it from `user_data_dir`.
    pub fingerprint_seed: Option<u32>,
    /// The front end's environment: the variables the browser inherits
    /// ([`crate::host::procs::INHERITED`]) and the `PATH` helper programs are found on.
    pub parent_env: crate::env::Snapshot,
}

/// Chromium switches afhttp owns, with why each is refused from `--browser-arg`.
const CHROMIUM_RESERVED: &[(&str, &str)] = &[
    (
        "user-data-dir",
        "the profile directory is chosen by --profile",
    ),
    ("remote-debugging-port", "afhttp owns the DevTools endpoint"),
    (
        "remote-debugging-address",
        "afhttp owns the DevTools endpoint",
    ),
    ("remote-debugging-pipe", "afhttp owns the DevTools endpoint"),
    ("proxy-server", "use --proxy-url"),
    // These would route traffic around the proxy (and so around the egress policy).
    (
        "proxy-bypass-list",
        "afhttp routes every request through its proxy",
    ),
    (
        "no-proxy-server",
        "drop --egress-policy (and --deny-private-networks, --egress-allow) and --proxy-url",
    ),
    ("proxy-pac-url", "use --proxy-url"),
    ("proxy-auto-detect", "use --proxy-url"),
    (
        "force-webrtc-ip-handling-policy",
        "afhttp keeps WebRTC behind the proxy",
    ),
];

/// Lightpanda `serve` options afhttp owns.
const LIGHTPANDA_RESERVED: &[(&str, &str)] = &[
    ("host", "afhttp owns the CDP endpoint"),
    ("port", "afhttp owns the CDP endpoint"),
    ("advertise-host", "afhttp owns the CDP endpoint"),
    ("unix-socket", "afhttp owns the CDP endpoint"),
    ("http-proxy", "use --proxy-url"),
];

/// foxbridge options afhttp owns.
const FOXBRIDGE_RESERVED: &[(&str, &str)] = &[
    ("binary", "the browser is chosen by --browser-bin"),
    ("port", "afhttp owns the CDP endpoint"),
];

/// Refuse `--browser-arg` values that would override isolation-pinning flags
/// (`invalid_argument`).
///
/// Chromium accepts both `--switch` and `-switch`, with or without `=value`, so all forms are
/// matched.
pub fn check_extra_args(backend: Backend, extra: &[String]) -> Result<(), AfError> {
    let reserved = match backend {
        Backend::Lightpanda => LIGHTPANDA_RESERVED,
        Backend::Camoufox => FOXBRIDGE_RESERVED,
        _ => CHROMIUM_RESERVED,
    };
    for arg in extra {
        let Some(stripped) = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')) else {
            continue;
        };
        let name = stripped.split('=').next().unwrap_or(stripped);
        if let Some((flag, why)) = reserved.iter().find(|(flag, _)| *flag == name) {
            return Err(AfError::invalid(format!(
                "--browser-arg {arg:?} is not allowed for the {backend} backend: {why}"
            ))
            .with_hint(format!("remove --{flag} from --browser-arg")));
        }
    }
    Ok(())
}

/// Refuse proxy values that could smuggle extra switches or are plainly not a proxy.
fn check_proxy(proxy: &str) -> Result<(), AfError> {
    if proxy.is_empty() || proxy.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(
            AfError::invalid(format!("--proxy-url {proxy:?} is not a proxy URL"))
                .with_hint("pass e.g. http://127.0.0.1:3128 or socks5://127.0.0.1:1080"),
        );
    }
    Ok(())
}

/// Whether a proxy URL points at this machine's loopback (the host's egress proxy, or a
/// local proxy).
///
/// `socks5://` is not a scheme the URL standard knows, so its host comes back as an opaque
/// name (`Host::Domain("127.0.0.1")`): an address written as a name counts as the address.
fn proxy_on_loopback(proxy: &str) -> bool {
    url::Url::parse(proxy)
        .ok()
        .and_then(|u| match u.host()? {
            url::Host::Ipv4(ip) => Some(ip.is_loopback()),
            url::Host::Ipv6(ip) => Some(ip.is_loopback()),
            url::Host::Domain(d) => Some(
                d.eq_ignore_ascii_case("localhost")
                    || d.trim_start_matches('[')
                        .trim_end_matches(']')
                        .parse::<std::net::IpAddr>()
                        .is_ok_and(|ip| ip.is_loopback()),
            ),
        })
        .unwrap_or(false)
}

/// A stable 32-bit seed for fingerprint-chromium's `--fingerprint=<seed>`.
///
/// FNV-1a over the bytes of the canonical profile path (the path as given when it cannot be
/// resolved): the same profile keeps one identity across runs and platforms, and different
/// profiles diverge (spec §10).
pub fn fingerprint_seed(profile_dir: &Path) -> u32 {
    let resolved = std::fs::canonicalize(profile_dir).unwrap_or_else(|_| profile_dir.into());
    resolved
        .as_os_str()
        .as_bytes()
        .iter()
        .fold(0x811c_9dc5_u32, |hash, &byte| {
            (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
        })
}

/// The Chromium-family command line (without the program): afhttp's flags, then the user's
/// extra args, then `about:blank`. Refused extra args or a malformed proxy are
/// `invalid_argument`.
pub fn chromium_args(opts: &LaunchOptions) -> Result<Vec<String>, AfError> {
    check_extra_args(opts.backend, &opts.extra_args)?;
    let mut args = vec![
        "--remote-debugging-port=0".to_string(),
        "--remote-debugging-address=127.0.0.1".to_string(),
        format!("--user-data-dir={}", opts.user_data_dir.display()),
    ];
    if opts.backend == Backend::ChromeHeadlessShell {
        // The headless shell is always headless; `=new` names a mode it does not have.
        args.push("--headless".to_string());
    } else if opts.headless {
        args.push("--headless=new".to_string());
    }
    if opts.no_sandbox {
        args.push("--no-sandbox".to_string());
    }
    args.extend(
        [
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-features=Translate,MediaRouter,OptimizationHints",
            "--disable-quic",
            "--metrics-recording-only",
            "--password-store=basic",
            "--use-mock-keychain",
            // Concurrent fetches each run in their own tab, and only one tab is in front: a
            // hidden tab's timers would otherwise be throttled to once a second, stalling
            // every page that renders from a setTimeout.
            "--disable-background-timer-throttling",
            "--disable-renderer-backgrounding",
            "--disable-backgrounding-occluded-windows",
            // `navigator.webdriver` is false, as in a browser a person started: a DevTools-
            // driven browser sets it, and pages read it (`Emulation.setAutomationOverride`
            // can only force it on).
            "--disable-blink-features=AutomationControlled",
        ]
        .map(String::from),
    );
    args.push(format!(
        "--window-size={},{}",
        opts.window_size.0, opts.window_size.1
    ));
    if opts.headless && opts.backend != Backend::ChromeHeadlessShell {
        // The headless screen is 800x600 unless told otherwise: smaller than the window,
        // which no real desktop shows. No infobar either: as root, the `--no-sandbox` warning
        // would take 56 px from the first tab's viewport only (an inline fetch's tab).
        let (w, h) = requested_window_size(&opts.extra_args).unwrap_or(opts.window_size);
        args.push(format!("--screen-info={{{w}x{h}}}"));
        args.push("--disable-infobars".to_string());
    }
    if !opts.headless && opts.display.is_some() {
        // On a takeover display the window fills the framebuffer: placed at the origin, and
        // maximized when a window manager runs.
        args.push("--window-position=0,0".to_string());
        args.push("--start-maximized".to_string());
    }
    if let Some(proxy) = &opts.proxy_url {
        check_proxy(proxy)?;
        args.push(format!("--proxy-server={proxy}"));
        if proxy_on_loopback(proxy) {
            // Chromium sends loopback targets around any proxy; a proxy on this machine
            // shares its loopback, so routing them through it changes nothing but lets the
            // egress proxy see (and refuse) them.
            args.push("--proxy-bypass-list=<-loopback>".to_string());
        }
        // WebRTC would otherwise send UDP around the proxy.
        args.push("--force-webrtc-ip-handling-policy=disable_non_proxied_udp".to_string());
    }
    if opts.backend == Backend::FingerprintChromium {
        let seed = opts
            .fingerprint_seed
            .unwrap_or_else(|| fingerprint_seed(&opts.user_data_dir));
        args.push(format!("--fingerprint={seed}"));
    }
    args.extend(opts.extra_args.iter().cloned());
    args.push("about:blank".to_string());
    Ok(args)
}

/// The last `--window-size=W,H` among the user's `--browser-arg` values: it overrides
/// afhttp's, so the headless screen must match it.
fn requested_window_size(extra_args: &[String]) -> Option<(u32, u32)> {
    extra_args.iter().rev().find_map(|arg| {
        let value = arg
            .strip_prefix("--window-size=")
            .or_else(|| arg.strip_prefix("-window-size="))?;
        let (w, h) = value.split_once(',')?;
        let size = (w.trim().parse().ok()?, h.trim().parse().ok()?);
        (size.0 > 0 && size.1 > 0).then_some(size)
    })
}

/// Lightpanda's CDP server on loopback: `serve --host 127.0.0.1 --port <port>`.
pub fn lightpanda_args(port: u16) -> Vec<String> {
    vec![
        "serve".to_string(),
        "--host".to_string(),
        "127.0.0.1".to_string(),
        "--port".to_string(),
        port.to_string(),
    ]
}

/// foxbridge's command line for Camoufox: `--binary <camoufox> --port <port>`.
///
/// Neither camoufox nor foxbridge is installable in this environment, so this command line is
/// built and unit-tested but has never been run against the real bridge.
pub fn camoufox_args(camoufox: &Path, port: u16) -> Vec<String> {
    vec![
        "--binary".to_string(),
        camoufox.display().to_string(),
        "--port".to_string(),
        port.to_string(),
    ]
}

/// Lightpanda's full command line: [`lightpanda_args`], the explicit proxy, the user's args.
pub(super) fn lightpanda_command(opts: &LaunchOptions, port: u16) -> Result<Vec<String>, AfError> {
    check_extra_args(opts.backend, &opts.extra_args)?;
    let mut args = lightpanda_args(port);
    if let Some(proxy) = &opts.proxy_url {
        check_proxy(proxy)?;
        args.extend(["--http-proxy".to_string(), proxy.clone()]);
    }
    args.extend(opts.extra_args.iter().cloned());
    Ok(args)
}

/// foxbridge's full command line: [`camoufox_args`] then the user's args (no proxy support
/// is wired for Camoufox yet, so a proxy is refused rather than silently dropped).
pub(super) fn camoufox_command(opts: &LaunchOptions, port: u16) -> Result<Vec<String>, AfError> {
    check_extra_args(opts.backend, &opts.extra_args)?;
    if opts.proxy_url.is_some() {
        return Err(AfError::new(
            crate::error::ErrorCode::BackendUnsupported,
            "--proxy-url is not supported by the camoufox backend yet",
        ));
    }
    let mut args = camoufox_args(&opts.binary, port);
    args.extend(opts.extra_args.iter().cloned());
    Ok(args)
}

#[cfg(test)]
#[path = "args_tests.rs"]
mod tests;
