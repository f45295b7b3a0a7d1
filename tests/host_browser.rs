//! The browser launcher against real browsers: Debian's Chromium and Lightpanda's binary.
//!
//! These call `afhttp::host::browser` directly; they prove the isolation invariant (spec §7)
//! on the real process: its environment, its process group, its death on shutdown.

use crate::support::deadline::CommandDeadline;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use afhttp::error::ErrorCode;
use afhttp::host::browser::{launch, LaunchOptions};
use afhttp::profile::Backend;

const CHROMIUM: &str = "/usr/bin/chromium";
const CANARY_SECRET: &str = "canary-token-must-not-leak";

fn options(backend: Backend, binary: &Path, profile: &Path) -> LaunchOptions {
    LaunchOptions {
        backend,
        binary: binary.to_path_buf(),
        user_data_dir: profile.to_path_buf(),
        headless: true,
        no_sandbox: true,
        proxy_url: None,
        extra_args: vec![],
        engine_env: vec![],
        display: None,
        downloads_dir: None,
        window_size: (1024, 768),
        startup_timeout: Duration::from_secs(30),
        fingerprint_seed: None,
        parent_env: afhttp::env::Snapshot::read(),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Live (non-zombie) processes whose process group is `pgid`.
fn group_members(pgid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        if fields[0] != "Z" && fields[2].parse::<u32>().ok() == Some(pgid) {
            found.push(pid);
        }
    }
    found
}

fn environ(pid: u32) -> Vec<(String, String)> {
    let raw = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    raw.split(|b| *b == 0)
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let kv = String::from_utf8_lossy(kv);
            let (k, v) = kv.split_once('=').unwrap_or((&kv, ""));
            (k.to_string(), v.to_string())
        })
        .collect()
}

/// The Lightpanda binary bundled in the `lightpanda` PyPI wheel (scripts/test.sh installs it).
pub(crate) fn lightpanda_binary() -> PathBuf {
    let out = Command::new("python3")
        .args([
            "-c",
            "import lightpanda,os;print(os.path.join(os.path.dirname(lightpanda.__file__),'lightpanda'))",
        ])
        .output_within(Duration::from_secs(300))
        .expect("python3 must be installed");
    assert!(
        out.status.success(),
        "the lightpanda PyPI package is missing (pip install lightpanda): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    assert!(path.is_file(), "no binary at {}", path.display());
    path
}

#[test]
fn chromium_starts_answers_and_shutdown_leaves_no_process() {
    let _one = crate::support::chromium::lock();
    let profile = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        let opts = options(Backend::Chromium, Path::new(CHROMIUM), profile.path());
        let mut browser = launch(&opts).await.unwrap();
        assert!(
            browser.ws_url.starts_with("ws://127.0.0.1:"),
            "{}",
            browser.ws_url
        );
        assert!(browser.ws_url.contains("/devtools/browser/"));
        assert!(browser.http_base.starts_with("http://127.0.0.1:"));
        let port = browser.http_base.rsplit(':').next().unwrap();
        assert!(browser.ws_url.contains(&format!(":{port}/")));
        // Chromium's product string is asked for after the launch, off the start path.
        assert_eq!(browser.product, None);
        let product = afhttp::host::browser::product(&browser.http_base)
            .await
            .unwrap();
        assert!(product.contains("Chrome/"), "{product}");
        assert!(!browser.has_exited());
        assert!(group_members(browser.pid).contains(&browser.pid));
        // The profile is really the one we passed.
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", browser.pid)).unwrap();
        let want = format!("--user-data-dir={}", profile.path().display());
        assert!(String::from_utf8_lossy(&cmdline).contains(&want));

        browser.shutdown(Duration::from_secs(5)).await;
        assert!(browser.has_exited());
        assert_eq!(group_members(browser.pid), Vec::<u32>::new());
        // A second shutdown is harmless.
        browser.shutdown(Duration::from_secs(1)).await;
    });
}

#[test]
fn dropping_a_running_browser_kills_its_group() {
    let _one = crate::support::chromium::lock();
    let profile = tempfile::tempdir().unwrap();
    let pid = runtime().block_on(async {
        let opts = options(Backend::Chromium, Path::new(CHROMIUM), profile.path());
        let browser = launch(&opts).await.unwrap();
        let pid = browser.pid;
        drop(browser);
        pid
    });
    crate::support::wait_until(Duration::from_secs(5), || group_members(pid).is_empty());
    assert_eq!(group_members(pid), Vec::<u32>::new());
}

/// The browser's real environment (read from `/proc`) holds none of the hostile variables
/// of the parent environment the host hands down: no proxy, no afhttp token, no
/// `XDG_RUNTIME_DIR`; `HOME` is the profile and `PATH` is passed through.
#[test]
fn browser_environment_holds_no_proxy_or_afhttp_variables() {
    let _one = crate::support::chromium::lock();
    let profile = tempfile::tempdir().unwrap();
    let mut opts = options(Backend::Chromium, Path::new(CHROMIUM), profile.path());
    opts.parent_env = afhttp::env::Snapshot::of([
        (
            "PATH".to_string(),
            std::env::var_os("PATH").unwrap_or_default(),
        ),
        ("HTTP_PROXY".to_string(), "http://127.0.0.1:9".into()),
        ("https_proxy".to_string(), "http://127.0.0.1:9".into()),
        ("ALL_PROXY".to_string(), "socks5://127.0.0.1:9".into()),
        ("AFHTTP_TOKEN_SECRET".to_string(), CANARY_SECRET.into()),
        ("XDG_RUNTIME_DIR".to_string(), "/tmp".into()),
        ("HOME".to_string(), "/root".into()),
    ]);
    runtime().block_on(async {
        let mut browser = launch(&opts).await.unwrap();
        let env = environ(browser.pid);
        browser.shutdown(Duration::from_secs(5)).await;
        assert!(!env.is_empty(), "no environment read for the browser");
        for (k, v) in &env {
            assert!(!k.to_ascii_uppercase().contains("PROXY"), "{k} leaked");
            assert!(!k.starts_with("AFHTTP_"), "{k} leaked");
            assert!(!v.contains(CANARY_SECRET), "{k} carries the token");
            assert_ne!(k, "XDG_RUNTIME_DIR");
        }
        let home = env.iter().find(|(k, _)| k == "HOME").unwrap();
        assert_eq!(Path::new(&home.1), profile.path());
        assert!(env.iter().any(|(k, _)| k == "PATH"));
    });
}

#[test]
fn a_browser_that_dies_at_once_is_reported_with_its_stderr_fast() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("fake-chromium");
    crate::support::write_script(
        &fake,
        "#!/bin/sh\necho 'first line' >&2\necho 'fatal: cannot start' >&2\nexit 3\n",
    );
    let profile = dir.path().join("profile");
    runtime().block_on(async {
        let opts = options(Backend::Chromium, &fake, &profile);
        let started = Instant::now();
        let err = launch(&opts).await.unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(err.code, ErrorCode::BrowserLaunchFailed);
        assert!(
            err.message.contains("fatal: cannot start"),
            "{}",
            err.message
        );
        assert!(err.message.contains("first line"), "{}", err.message);
    });
}

/// Chromium refuses to run as root with its sandbox on: that refusal is reported at once,
/// naming the way out. As a normal user the sandbox works, so the same launch must start
/// instead: each side of the rule is checked, and the test never returns without a verdict.
#[test]
fn chromium_refusing_root_without_no_sandbox_is_reported_fast() {
    let _one = crate::support::chromium::lock();
    let profile = tempfile::tempdir().unwrap();
    let as_root = nix::unistd::Uid::effective().is_root();
    runtime().block_on(async {
        let mut opts = options(Backend::Chromium, Path::new(CHROMIUM), profile.path());
        opts.no_sandbox = false;
        let started = Instant::now();
        let launched = launch(&opts).await;
        if !as_root {
            let mut browser = launched.unwrap_or_else(|e| {
                panic!(
                    "as a normal user Chromium's sandbox must start (user namespaces or a setuid \
                     sandbox); it did not: {e:?}"
                )
            });
            browser.shutdown(Duration::from_secs(5)).await;
            return;
        }
        let err = launched.unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(err.code, ErrorCode::BrowserLaunchFailed);
        assert!(err.message.contains("no-sandbox"), "{}", err.message);
        assert!(err.hint.unwrap().contains("AFHTTP_NO_SANDBOX"));
    });
}

#[test]
fn a_browser_that_never_answers_times_out_and_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("silent-browser");
    let helper = dir.path().join("helper-process");
    // The helper runs as a child of the fake browser, in its group: it must die with it.
    crate::support::write_script(&helper, "#!/bin/sh\nwhile :; do sleep 1; done\n");
    let script = format!(
        "#!/bin/sh\necho waiting >&2\n{} &\nwait\n",
        helper.display()
    );
    crate::support::write_script(&fake, &script);
    let profile = dir.path().join("profile");
    runtime().block_on(async {
        let mut opts = options(Backend::Chromium, &fake, &profile);
        opts.startup_timeout = Duration::from_millis(800);
        let err = launch(&opts).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::BrowserLaunchFailed);
        assert!(err.message.contains("did not open"), "{}", err.message);
        assert!(err.message.contains("waiting"), "{}", err.message);
    });
    // Neither the fake browser nor its helper survives.
    let marker = dir.path().display().to_string();
    crate::support::wait_until(Duration::from_secs(5), || {
        crate::support::processes_mentioning(&marker).is_empty()
    });
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let text = String::from_utf8_lossy(&cmdline);
        assert!(
            !text.contains(&dir.path().display().to_string()),
            "survivor: {text}"
        );
    }
}

#[test]
fn lightpanda_starts_answers_and_stops() {
    let _one = crate::support::chromium::lock();
    let binary = lightpanda_binary();
    let profile = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        let opts = options(Backend::Lightpanda, &binary, profile.path());
        let mut browser = launch(&opts).await.unwrap();
        assert!(
            browser.ws_url.starts_with("ws://127.0.0.1:"),
            "{}",
            browser.ws_url
        );
        assert!(browser.http_base.starts_with("http://127.0.0.1:"));
        let product = browser.product.clone().unwrap();
        assert!(product.contains("Lightpanda"), "{product}");
        let env = environ(browser.pid);
        assert!(env.contains(&("LIGHTPANDA_DISABLE_TELEMETRY".into(), "true".into())));
        browser.shutdown(Duration::from_secs(5)).await;
        assert!(browser.has_exited());
        assert_eq!(group_members(browser.pid), Vec::<u32>::new());
    });
}
