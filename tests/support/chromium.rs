//! One lock serialises the Chromium-heavy tests: the machine is small, and each of them
//! starts its own browser. Re-entrant per thread, so a test that holds it can start a
//! [`super::HostProc`] (which takes it too) or two.

use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::{Mutex, MutexGuard};

static CHROMIUM: Mutex<()> = Mutex::new(());

thread_local! {
    /// This thread's hold on [`CHROMIUM`] and how many [`ChromiumLock`]s share it.
    static HELD: RefCell<Option<(MutexGuard<'static, ()>, usize)>> = const { RefCell::new(None) };
}

/// A hold on the Chromium lock; released when the last one of this thread drops. Not
/// `Send`: it must drop on the thread that took it.
pub struct ChromiumLock(PhantomData<*const ()>);

/// Take the Chromium lock (waits while another test holds it; a panicked holder does not
/// poison it).
pub fn lock() -> ChromiumLock {
    HELD.with(|held| {
        let mut held = held.borrow_mut();
        match held.as_mut() {
            Some((_, n)) => *n += 1,
            None => *held = Some((CHROMIUM.lock().unwrap_or_else(|p| p.into_inner()), 1)),
        }
    });
    ChromiumLock(PhantomData)
}

impl Drop for ChromiumLock {
    fn drop(&mut self) {
        HELD.with(|held| {
            let mut held = held.borrow_mut();
            if let Some((_, n)) = held.as_mut() {
                *n -= 1;
                if *n == 0 {
                    *held = None;
                }
            }
        });
    }
}

/// A headless Chromium with DevTools on an ephemeral loopback port and its own profile,
/// holding the Chromium lock; killed on drop.
pub struct Headless {
    child: std::process::Child,
    /// `ws://127.0.0.1:PORT/devtools/browser/…`.
    pub ws_url: String,
    /// The DevTools port.
    pub port: u16,
    /// The path of `ws_url` (`/devtools/browser/…`).
    pub ws_path: String,
    _profile: tempfile::TempDir,
    _one: ChromiumLock,
}

impl Headless {
    /// Launch `/usr/bin/chromium` with `extra` flags; fails the test if DevTools does not
    /// listen within 30 s.
    pub fn launch(extra: &[&str]) -> Headless {
        use std::io::{BufRead, BufReader};
        use std::process::{Command, Stdio};
        let one = lock();
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new("/usr/bin/chromium")
            .args([
                "--headless=new",
                "--no-sandbox",
                "--remote-debugging-port=0",
                "--remote-debugging-address=127.0.0.1",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ])
            .args(extra)
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        // Keeps draining stderr after the DevTools line, so Chromium never blocks on it.
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    if let Some(tx) = tx.take() {
                        let _ = tx.send(url.trim().to_string());
                    }
                }
            }
        });
        let Ok(ws_url) = rx.recv_timeout(std::time::Duration::from_secs(30)) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium {extra:?}: DevTools did not listen within 30 s");
        };
        let rest = ws_url.strip_prefix("ws://127.0.0.1:").unwrap();
        let (port, path) = rest.split_once('/').unwrap();
        Headless {
            port: port.parse().unwrap(),
            ws_path: format!("/{path}"),
            ws_url: ws_url.clone(),
            child,
            _profile: profile,
            _one: one,
        }
    }
}

impl Drop for Headless {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The system Chromium the inline-browser tests run.
pub const BIN: &str = "/usr/bin/chromium";

/// `afhttp fetch URL --render always --want WANT EXTRA...` in an inline Chromium, under the
/// lock, bounded well under the test deadline so a blocked page fails as
/// `navigation_timeout`, not as a killed run. An `extra` `--timeout-ms` replaces that bound.
pub fn render(fx: &super::Fixture, url: &str, want: &str, extra: &[&str]) -> super::Run {
    let _one = lock();
    let timeout: &[&str] = if extra.contains(&"--timeout-ms") {
        &[]
    } else {
        &["--timeout-ms", "20000"]
    };
    fx.cmd()
        .env("AFHTTP_NO_SANDBOX", "1")
        .env("AFHTTP_BROWSER_BIN", BIN)
        .args(["fetch", url, "--render", "always"])
        .args(timeout)
        .args(["--want", want])
        .args(extra)
        .run()
}
