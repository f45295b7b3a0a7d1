//! The `novnc` provider: TigerVNC `Xvnc` (loopback only, no VNC auth: only websockify on
//! loopback reaches it), a window manager when one is installed, and websockify serving
//! Debian's noVNC web root on a loopback port.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;

use crate::error::AfError;
use crate::host::log::{log, Level};
use crate::host::procs::GroupChild;

use super::{
    component_env, failed, free_display, quality_level, require, reserve_port, spawn, wait_for_rfb,
    wait_for_web, wait_for_x, DisplayOptions, Provider, RunningDisplay,
};

/// Debian's noVNC web root.
pub const NOVNC_WEB_ROOT: &str = "/usr/share/novnc";
/// The WebSocket path noVNC is told to use, relative to the page's origin.
pub const WS_PATH: &str = "takeover/panel/websockify";
/// Display numbers tried when a start loses a race for one.
const DISPLAY_ATTEMPTS: usize = 3;

/// `Xvnc` arguments for display `n`: loopback RFB on `rfb_port`, no VNC authentication, a
/// shared session (agent-side screenshots and a human may look at once).
pub fn xvnc_args(n: u32, size: (u32, u32), rfb_port: u16) -> Vec<String> {
    vec![
        format!(":{n}"),
        "-geometry".into(),
        format!("{}x{}", size.0, size.1),
        "-depth".into(),
        "24".into(),
        "-localhost".into(),
        "-rfbport".into(),
        rfb_port.to_string(),
        "-SecurityTypes".into(),
        "None".into(),
        "-AlwaysShared".into(),
        "-nolisten".into(),
        "tcp".into(),
        "-desktop".into(),
        "afhttp".into(),
    ]
}

/// websockify arguments: noVNC's web root and the WebSocket bridge on `web_port`, both on
/// loopback, to the RFB port.
pub fn websockify_args(web_root: &Path, web_port: u16, rfb_port: u16) -> Vec<String> {
    vec![
        "--web".into(),
        web_root.display().to_string(),
        format!("127.0.0.1:{web_port}"),
        format!("127.0.0.1:{rfb_port}"),
    ]
}

/// The noVNC page a human lands on: connect at once, reconnect after a display restart,
/// scale to the window, quality from `--takeover-quality-percent`, and the WebSocket under
/// the listener's `/takeover/panel/`.
pub fn entry(quality_percent: u8) -> String {
    format!(
        "vnc.html?autoconnect=1&reconnect=1&reconnect_delay=1000&resize=scale&quality={}&path={WS_PATH}",
        quality_level(quality_percent)
    )
}

/// Start Xvnc (retrying on another display number if one is taken meanwhile), the window
/// manager and websockify.
pub(super) async fn start(opts: &DisplayOptions) -> Result<RunningDisplay, AfError> {
    let xvnc = require(opts, "Xvnc", "tigervnc-standalone-server")?;
    let websockify = require(opts, "websockify", "websockify")?;
    let web_root = Path::new(NOVNC_WEB_ROOT);
    if !web_root.join("vnc.html").is_file() {
        return Err(AfError::new(
            crate::error::ErrorCode::TakeoverUnavailable,
            format!("noVNC's web client is not at {NOVNC_WEB_ROOT}"),
        )
        .with_hint("install novnc"));
    }
    let mut tried = None;
    let mut last_tail = String::new();
    let (n, rfb_port, mut procs) = 'found: {
        for _ in 0..DISPLAY_ATTEMPTS {
            let Some(n) = free_display(tried) else { break };
            tried = Some(n);
            // A reserved port can be taken by someone else before Xvnc binds it: the display
            // counts only once its RFB greeting is heard there.
            let rfb_port = reserve_port()?;
            let env = component_env(opts, None);
            let args = xvnc_args(n, opts.size, rfb_port);
            let mut server = spawn("Xvnc", &xvnc, &args, &env, &opts.state_dir)?;
            if wait_for_x(n, &mut server).await && wait_for_rfb(rfb_port, &mut server).await {
                break 'found (n, rfb_port, vec![server]);
            }
            last_tail = server.stderr_tail();
            server.shutdown(super::GRACE).await;
        }
        return Err(failed(format!(
            "Xvnc did not open a display; stderr tail:\n{last_tail}"
        )));
    };
    let display = format!(":{n}");
    let env = component_env(opts, Some(&display));
    let path = opts.parent_env.get_os(crate::env::PATH);
    if let Some(wm) = crate::host::browser::find_executable("openbox", path) {
        // Optional: without a window manager the browser still fills the screen through
        // its window position and size.
        procs.push(spawn("openbox", &wm, &[], &env, &opts.state_dir)?);
    }
    let web_port = reserve_port()?;
    let args = websockify_args(web_root, web_port, rfb_port);
    let mut bridge = spawn("websockify", &websockify, &args, &env, &opts.state_dir)?;
    let web = SocketAddr::from((Ipv4Addr::LOCALHOST, web_port));
    if !wait_for_web(web, "/vnc.html", &mut bridge).await {
        let tail = bridge.stderr_tail();
        bridge.shutdown(super::GRACE).await;
        shutdown_all(&mut procs).await;
        return Err(failed(format!(
            "websockify did not serve noVNC on {web}; stderr tail:\n{tail}"
        )));
    }
    procs.push(bridge);
    log(
        Level::Info,
        "takeover display started",
        serde_json::json!({"provider": "novnc", "display": display, "web": web.to_string()}),
    );
    Ok(RunningDisplay {
        provider: Provider::Novnc,
        display,
        web,
        entry: entry(opts.quality_percent),
        procs,
    })
}

async fn shutdown_all(procs: &mut [GroupChild]) {
    for p in procs.iter_mut().rev() {
        p.shutdown(super::GRACE).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xvnc_is_loopback_only_and_sized() {
        let a = xvnc_args(21, (1280, 720), 5999);
        assert_eq!(a[0], ":21");
        assert!(a.windows(2).any(|w| w == ["-geometry", "1280x720"]));
        assert!(a.contains(&"-localhost".to_string()));
        assert!(a.windows(2).any(|w| w == ["-rfbport", "5999"]));
        assert!(a.windows(2).any(|w| w == ["-nolisten", "tcp"]));
    }

    #[test]
    fn websockify_binds_loopback() {
        let a = websockify_args(Path::new("/usr/share/novnc"), 6080, 5999);
        assert_eq!(
            a,
            [
                "--web",
                "/usr/share/novnc",
                "127.0.0.1:6080",
                "127.0.0.1:5999"
            ]
        );
    }

    #[test]
    fn entry_points_the_socket_under_the_panel() {
        let e = entry(80);
        assert!(e.starts_with("vnc.html?autoconnect=1"));
        assert!(e.contains("quality=7"));
        assert!(e.ends_with("path=takeover/panel/websockify"));
    }
}
