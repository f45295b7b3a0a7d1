//! Test support: the command wrapper, fixtures and fixture servers.

pub mod chromium;
pub mod cmd;
pub mod content;
pub mod deadline;
pub mod docker;
pub mod documents;
pub mod events;
pub mod fake_engine;
pub mod hang;
pub mod host;
pub mod jar;
pub mod listener;
pub mod procs;
pub mod proxy;
pub mod raw_http;
pub mod remote_host;
pub mod routes;
pub mod routes_content;
pub mod routes_dialog;
pub mod routes_network;
pub mod routes_observation;
pub mod routes_ready;
pub mod routes_stall;
pub mod routes_takeover;
pub mod routes_transfer;
pub mod server;
pub mod socks;
pub mod tls;
pub mod warnings;

pub use cmd::{Cmd, Fixture, Run};
pub use deadline::{wait_for, wait_until};
pub use hang::HangServer;
pub use host::{health, port_of, HostProc};
pub use jar::jar_names;
pub use procs::{alive, browser_pid, descendants, processes_mentioning, sigkill};
pub use proxy::HttpProxy;
pub use server::FixtureServer;
pub use socks::Socks5Proxy;
pub use tls::TlsFixtureServer;
pub use warnings::{error_code, warning, warning_codes};

/// Write `body` to `path` as an executable script (a fake or wrapped browser, a helper).
pub fn write_script(path: &std::path::Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A loopback port nothing listens on (bound, then released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
