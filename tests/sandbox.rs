//! Chromium's own sandbox stays on when the host runs natively as an unprivileged user
//! (here `nobody`, without `AFHTTP_NO_SANDBOX`): the page still renders, the browser has no
//! `--no-sandbox`, and every renderer lives in a user namespace of its own (Debian's
//! Chromium sandboxes with namespaces). This kernel allows unprivileged user namespaces; the
//! test checks that first and says so if a machine does not.

use crate::support::deadline::CommandDeadline;
use std::process::Command;

use crate::support::descendants;
use crate::support::remote_host::RemoteHost;
use crate::support::{Fixture, FixtureServer};

fn cmdline(pid: u32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    String::from_utf8_lossy(&raw).replace('\0', " ")
}

fn user_ns(pid: u32) -> String {
    std::fs::read_link(format!("/proc/{pid}/ns/user"))
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

#[test]
fn chromium_sandbox_is_on_for_an_unprivileged_native_host() {
    let userns = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .args(["unshare", "--user", "true"])
        .status_within(std::time::Duration::from_secs(30))
        .unwrap();
    assert!(
        userns.success(),
        "this kernel refuses unprivileged user namespaces, so Chromium's sandbox cannot run \
         for an unprivileged user here (record it in docs/security.md)"
    );
    let fx = Fixture::new();
    let srv = FixtureServer::start();
    let mut host = RemoteHost::start_with(&[], true);
    let browser = host.ready["browser_pid"].as_u64().unwrap() as u32;
    assert!(
        !cmdline(browser).contains("--no-sandbox"),
        "{}",
        cmdline(browser)
    );
    let f = fx
        .cmd()
        .args(["fetch", &srv.url("/static"), "--render", "always"])
        .args(["--want", "rendered_html,screenshot"])
        .args(host.auth())
        .run();
    assert_eq!(f.fetch().status, 200, "{}", f.context);
    let renderers: Vec<u32> = descendants(host.child.id())
        .into_iter()
        .filter(|p| cmdline(*p).contains("--type=renderer"))
        .collect();
    assert!(!renderers.is_empty(), "no renderer process found");
    for r in &renderers {
        assert_ne!(
            user_ns(*r),
            user_ns(browser),
            "renderer {r} shares the browser's user namespace: not sandboxed"
        );
    }
    host.stop();
}
