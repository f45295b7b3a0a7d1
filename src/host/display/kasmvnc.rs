//! The `kasmvnc` provider: KasmVNC's `Xvnc` serves its own web client and WebSocket on one
//! loopback port, with its basic auth off (the listener in front authenticates).
//!
//! KasmVNC cannot be installed in this build environment, so this command line is built and
//! unit-tested but has never been run here; the `novnc` provider is the one the end-to-end
//! tests exercise. Its server configuration is `kasmvnc/kasmvnc.yaml` in the repository (the
//! image installs it at [`CONFIG_PATH`]); the flags below override what matters for safety.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;

use crate::error::AfError;
use crate::host::log::{log, Level};

use super::{
    component_env, failed, free_display, quality_level, require, reserve_port, spawn, wait_for_web,
    wait_for_x, DisplayOptions, Provider, RunningDisplay,
};

/// Where the image installs the repository's `kasmvnc/kasmvnc.yaml`.
pub const CONFIG_PATH: &str = "/etc/afhttp/kasmvnc.yaml";
/// KasmVNC's web client directory in its Debian packages.
pub const WEB_ROOT: &str = "/usr/share/kasmvnc/www";
/// The WebSocket path the client is told to use, relative to the page's origin.
pub const WS_PATH: &str = "takeover/panel/websockify";

/// KasmVNC `Xvnc` arguments for display `n` with its web client on `web_port`.
///
/// Loopback only (`-interface 127.0.0.1`, no plain RFB port), no TLS and no basic auth
/// (the listener terminates both), VNC security off, and the video qualities from
/// `quality_percent` mapped onto KasmVNC's 0-9 scale. `config` is passed when it exists.
pub fn xvnc_args(
    n: u32,
    size: (u32, u32),
    web_port: u16,
    quality_percent: u8,
    config: Option<&Path>,
) -> Vec<String> {
    let q = quality_level(quality_percent).to_string();
    let mut args = vec![
        format!(":{n}"),
        "-geometry".into(),
        format!("{}x{}", size.0, size.1),
        "-depth".into(),
        "24".into(),
        "-interface".into(),
        "127.0.0.1".into(),
        "-websocketPort".into(),
        web_port.to_string(),
        "-rfbport".into(),
        "-1".into(),
        "-httpd".into(),
        WEB_ROOT.into(),
        "-sslOnly".into(),
        "0".into(),
        "-disableBasicAuth".into(),
        "-SecurityTypes".into(),
        "None".into(),
        "-AlwaysShared".into(),
        "-JpegVideoQuality".into(),
        q.clone(),
        "-WebpVideoQuality".into(),
        q,
        "-nolisten".into(),
        "tcp".into(),
    ];
    if let Some(c) = config {
        args.extend(["-config".into(), c.display().to_string()]);
    }
    args
}

/// The KasmVNC page a human lands on (its client is a noVNC fork that reads the same
/// `autoconnect` and `path` parameters).
pub fn entry() -> String {
    format!("index.html?autoconnect=1&reconnect=1&resize=scale&path={WS_PATH}")
}

/// Start KasmVNC's Xvnc and wait for its display and web client.
pub(super) async fn start(opts: &DisplayOptions) -> Result<RunningDisplay, AfError> {
    let xvnc = require(opts, "Xvnc", "KasmVNC (kasmvncserver)")?;
    let n = free_display(None).ok_or_else(|| failed("no free X display number".into()))?;
    let web_port = reserve_port()?;
    let config = Path::new(CONFIG_PATH);
    let args = xvnc_args(
        n,
        opts.size,
        web_port,
        opts.quality_percent,
        config.is_file().then_some(config),
    );
    let env = component_env(opts, None);
    let mut server = spawn("Xvnc", &xvnc, &args, &env, &opts.state_dir)?;
    let web = SocketAddr::from((Ipv4Addr::LOCALHOST, web_port));
    if !wait_for_x(n, &mut server).await || !wait_for_web(web, "/", &mut server).await {
        let tail = server.stderr_tail();
        server.shutdown(super::GRACE).await;
        return Err(failed(format!(
            "KasmVNC did not come up on :{n} / {web}; stderr tail:\n{tail}"
        )));
    }
    let display = format!(":{n}");
    log(
        Level::Info,
        "takeover display started",
        serde_json::json!({"provider": "kasmvnc", "display": display, "web": web.to_string()}),
    );
    Ok(RunningDisplay {
        provider: Provider::Kasmvnc,
        display,
        web,
        entry: entry(),
        procs: vec![server],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(args: &[String], flag: &str) -> Option<String> {
        args.windows(2).find(|w| w[0] == flag).map(|w| w[1].clone())
    }

    #[test]
    fn loopback_no_auth_and_quality() {
        let a = xvnc_args(22, (1280, 720), 6901, 80, None);
        assert_eq!(a[0], ":22");
        assert_eq!(pair(&a, "-interface").as_deref(), Some("127.0.0.1"));
        assert_eq!(pair(&a, "-websocketPort").as_deref(), Some("6901"));
        assert_eq!(pair(&a, "-rfbport").as_deref(), Some("-1"));
        assert_eq!(pair(&a, "-sslOnly").as_deref(), Some("0"));
        assert_eq!(pair(&a, "-SecurityTypes").as_deref(), Some("None"));
        assert_eq!(pair(&a, "-JpegVideoQuality").as_deref(), Some("7"));
        assert_eq!(pair(&a, "-WebpVideoQuality").as_deref(), Some("7"));
        assert!(a.contains(&"-disableBasicAuth".to_string()));
        assert!(!a.contains(&"-config".to_string()));
        let with = xvnc_args(22, (800, 600), 1, 0, Some(Path::new(CONFIG_PATH)));
        assert_eq!(pair(&with, "-config").as_deref(), Some(CONFIG_PATH));
        assert_eq!(pair(&with, "-JpegVideoQuality").as_deref(), Some("0"));
    }

    #[test]
    fn the_repository_config_binds_loopback_without_tls_or_auth() {
        let yaml = include_str!("../../../kasmvnc/kasmvnc.yaml");
        assert!(yaml.contains("interface: 127.0.0.1"));
        assert!(yaml.contains("require_ssl: false"));
        assert!(entry().contains("path=takeover/panel/websockify"));
    }
}
