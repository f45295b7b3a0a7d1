//! A running `afhttp host` child and raw HTTP/1.1 exchanges with its listener.

use std::process::Child;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::chromium::ChromiumLock;
use super::deadline::first_line_within;
use super::Fixture;

/// How long a host may take to print `host_ready` (a browser launch on a loaded machine).
pub const READY_DEADLINE: Duration = Duration::from_secs(90);

/// A running `afhttp host` child; SIGTERM on drop. It holds the Chromium lock while it runs.
pub struct HostProc {
    pub child: Child,
    pub ready: Value,
    pub endpoint: String,
    _chromium: ChromiumLock,
}

impl HostProc {
    pub fn start(fx: &Fixture, args: &[&str], env: &[(&str, &str)]) -> HostProc {
        let chromium = super::chromium::lock();
        let mut cmd = fx.child_command();
        cmd.arg("host").args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let what = format!("afhttp host {args:?}");
        let line = first_line_within(&mut child, READY_DEADLINE, &what);
        let ready: Value =
            serde_json::from_str(line.trim()).unwrap_or_else(|_| panic!("not JSON: {line:?}"));
        assert_eq!(ready["kind"], "result", "host failed: {ready}");
        assert_eq!(ready["result"]["code"], "host_ready");
        let endpoint = ready["result"]["endpoint_url"]
            .as_str()
            .unwrap()
            .to_string();
        HostProc {
            child,
            ready: ready["result"].clone(),
            endpoint,
            _chromium: chromium,
        }
    }

    pub fn terminate(&mut self) -> (i32, Duration) {
        let t = Instant::now();
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        )
        .unwrap();
        let status = crate::support::deadline::wait_within(
            &mut self.child,
            Duration::from_secs(15),
            "the host after SIGTERM",
        );
        (status.code().unwrap_or(-1), t.elapsed())
    }
}

impl Drop for HostProc {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.terminate();
        }
    }
}

/// The port of a `ws://HOST:PORT` endpoint.
pub fn port_of(endpoint: &str) -> u16 {
    endpoint.rsplit(':').next().unwrap().parse().unwrap()
}

/// `GET /health` on a loopback host (with `token` as bearer, if any), straight over TCP so
/// it can be polled fast; Null when nothing answers with JSON.
pub fn health(port: u16, token: Option<&str>) -> Value {
    super::raw_http::get(port, "/health", token).json()
}
