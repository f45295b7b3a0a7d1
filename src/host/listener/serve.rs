//! Bind the listener (TCP or unix socket) and serve the router until shutdown.

use std::future::Future;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;
use std::sync::Arc;

use axum::serve::ListenerExt;
use tokio::net::{TcpListener, UnixListener};

use super::config::ListenAddr;
use super::routes::router;
use super::state::ListenerState;
use crate::error::{AfError, ErrorCode};

/// A bound, serving listener.
#[derive(Debug)]
pub struct BoundListener {
    /// What was bound: `tcp:127.0.0.1:PORT` (the real port when 0 was asked) or `unix:/path`.
    pub local: String,
    /// The serving task; it ends after `shutdown` resolves and the listener is closed
    /// (and the unix socket file removed).
    pub join: tokio::task::JoinHandle<()>,
}

/// Bind `state.config.listen` and serve [`router`] on it until `shutdown` resolves.
///
/// On shutdown the listener stops accepting, every proxied WebSocket is closed, idle HTTP
/// connections drain, and a unix socket file is removed. A port in use is `io_error`.
pub async fn serve(
    state: Arc<ListenerState>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<BoundListener, AfError> {
    state.config.validate()?;
    let app = router(state.clone());
    let stopper = state.clone();
    let pool = tokio::spawn(Arc::clone(&state.pool).run(Arc::clone(&state.view)));
    let stop = async move {
        shutdown.await;
        pool.abort();
        stopper.disconnect_all("afhttp: the host is shutting down");
    };
    match &state.config.listen {
        ListenAddr::Tcp(addr) => {
            let listener = TcpListener::bind(addr).await.map_err(|e| {
                if e.kind() == std::io::ErrorKind::AddrInUse {
                    AfError::new(
                        ErrorCode::IoError,
                        format!("cannot listen on tcp:{addr}: the port is already in use"),
                    )
                    .with_hint("stop the other process or pick another --listen port")
                } else {
                    AfError::io(format_args!("cannot listen on tcp:{addr}"), &e)
                }
            })?;
            let local = listener
                .local_addr()
                .map_err(|e| AfError::io("cannot read the bound address", &e))?;
            // Frames go out as they are written: with Nagle's algorithm a small answer
            // written behind an unacknowledged one waited for the driver's delayed ACK
            // (about 40 ms, measured on every fetch's Target.attachToTarget; issue 26).
            let listener = listener.tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
            // The peer address decides whether `X-Forwarded-Proto` is believed.
            let service = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
            let join = tokio::spawn(async move {
                let _ = axum::serve(listener, service)
                    .with_graceful_shutdown(stop)
                    .await;
            });
            Ok(BoundListener {
                local: format!("tcp:{local}"),
                join,
            })
        }
        ListenAddr::Unix(path) => {
            prepare_socket_path(path)?;
            let listener = UnixListener::bind(path).map_err(|e| {
                AfError::io(format_args!("cannot listen on unix:{}", path.display()), &e)
            })?;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
                .map_err(|e| AfError::io(format_args!("cannot restrict {}", path.display()), &e))?;
            let socket = path.clone();
            let join = tokio::spawn(async move {
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(stop)
                    .await;
                let _ = std::fs::remove_file(&socket);
            });
            Ok(BoundListener {
                local: format!("unix:{}", path.display()),
                join,
            })
        }
    }
}

/// Remove a stale socket file; refuse a live socket or a non-socket file.
fn prepare_socket_path(path: &Path) -> Result<(), AfError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(AfError::io(
                format_args!("cannot inspect {}", path.display()),
                &e,
            ))
        }
    };
    if !meta.file_type().is_socket() {
        return Err(AfError::new(
            ErrorCode::IoError,
            format!("{} exists and is not a socket", path.display()),
        )
        .with_hint("pick another unix: path or remove the file"));
    }
    if std::os::unix::net::UnixStream::connect(path).is_ok() {
        return Err(AfError::new(
            ErrorCode::IoError,
            format!(
                "cannot listen on unix:{}: another process is serving it",
                path.display()
            ),
        )
        .with_hint("stop the other host or pick another unix: path"));
    }
    std::fs::remove_file(path)
        .map_err(|e| AfError::io(format_args!("cannot remove stale {}", path.display()), &e))
}
