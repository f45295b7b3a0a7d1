//! An `afhttp host` run as another user (`nobody`) with its own HOME, XDG_DATA_HOME and
//! TMPDIR in a directory only that user owns: a host that shares no paths with the driver,
//! as one on another machine would not.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::chromium::ChromiumLock;
use super::deadline::{first_line_within, wait_within};
use super::host::READY_DEADLINE;

/// The token every [`RemoteHost`] is started with.
pub const TOKEN: &str = "transfer-token";
/// `nobody`'s uid and gid on Debian.
pub const NOBODY: u32 = 65534;

/// An `afhttp host` run as `nobody`, in a 0700 directory that user owns; killed on drop. It
/// holds the Chromium lock while it runs.
pub struct RemoteHost {
    /// The host process (`setpriv`, exec'd into `afhttp host`).
    pub child: Child,
    /// The `result` of its `host_ready` event.
    pub ready: Value,
    /// `ws://127.0.0.1:PORT`.
    pub endpoint: String,
    /// HOME (`home`), XDG_DATA_HOME (`data`) and TMPDIR (`tmp`) of the host live here.
    pub root: PathBuf,
    _dir: tempfile::TempDir,
    _one: ChromiumLock,
}

impl RemoteHost {
    /// Start one with `args` (after `--listen tcp:127.0.0.1:0 --token-secret TOKEN`), the
    /// browser sandbox off.
    pub fn start(args: &[&str]) -> RemoteHost {
        RemoteHost::start_with(args, false)
    }

    /// With `sandboxed`, Chromium keeps its own sandbox (no `AFHTTP_NO_SANDBOX`).
    pub fn start_with(args: &[&str], sandboxed: bool) -> RemoteHost {
        let one = super::chromium::lock();
        let dir = tempfile::tempdir().unwrap();
        // Traversable for `nobody`, but nothing in it readable except its own subtree.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
        let root = dir.path().join("host");
        for sub in ["", "home", "data", "tmp"] {
            let d = root.join(sub);
            std::fs::create_dir_all(&d).unwrap();
            std::os::unix::fs::chown(&d, Some(NOBODY), Some(NOBODY)).unwrap();
            std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
        }
        let mut command = Command::new("setpriv");
        command
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                env!("CARGO_BIN_EXE_afhttp"),
                "host",
                "--listen",
                "tcp:127.0.0.1:0",
                "--token-secret",
                TOKEN,
            ])
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", root.join("home"))
            .env("XDG_DATA_HOME", root.join("data"))
            .env("TMPDIR", root.join("tmp"))
            .env("AFHTTP_LOG", "warn")
            .current_dir(&root)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        if !sandboxed {
            command.env("AFHTTP_NO_SANDBOX", "1");
        }
        let mut child = command.spawn().unwrap();
        let what = format!("afhttp host (as nobody) {args:?}");
        let line = first_line_within(&mut child, READY_DEADLINE, &what);
        let ready: Value =
            serde_json::from_str(line.trim()).unwrap_or_else(|_| panic!("not JSON: {line:?}"));
        assert_eq!(ready["result"]["code"], "host_ready", "{ready}");
        let endpoint = ready["result"]["endpoint_url"]
            .as_str()
            .unwrap()
            .to_string();
        RemoteHost {
            child,
            ready: ready["result"].clone(),
            endpoint,
            root,
            _dir: dir,
            _one: one,
        }
    }

    /// The listener's port.
    pub fn port(&self) -> u16 {
        super::port_of(&self.endpoint)
    }

    /// `--endpoint-url ENDPOINT --token-secret TOKEN`, for a command that drives it.
    pub fn auth(&self) -> [String; 4] {
        [
            "--endpoint-url".into(),
            self.endpoint.clone(),
            "--token-secret".into(),
            TOKEN.into(),
        ]
    }

    /// SIGTERM and wait (at most 15 s) for it to exit.
    pub fn stop(&mut self) {
        if self.child.try_wait().ok().flatten().is_some() {
            return;
        }
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        wait_within(
            &mut self.child,
            Duration::from_secs(15),
            "afhttp host (as nobody) after SIGTERM",
        );
    }
}

impl Drop for RemoteHost {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
