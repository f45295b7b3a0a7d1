//! A minimal SOCKS5 server (RFC 1928): the no-auth method, or username/password (RFC 1929)
//! when started with credentials; CONNECT only, IPv4/domain/IPv6 address types. It only ever connects to 127.0.0.1: `localhost`, `127.0.0.1` and `::1`
//! are mapped there; any other target is refused with reply 0x02 (not allowed by ruleset).

use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::server::Background;

#[derive(Default)]
struct SocksState {
    connections: AtomicUsize,
    targets: Mutex<Vec<String>>,
    /// The user name and password required (RFC 1929), if any.
    auth: Option<(String, String)>,
}

/// A SOCKS5 proxy on `127.0.0.1:PORT`.
pub struct Socks5Proxy {
    bg: Background,
    state: Arc<SocksState>,
}

impl Socks5Proxy {
    /// Starts an open proxy on an ephemeral port; it stops when dropped.
    pub fn start() -> Socks5Proxy {
        Self::spawn(SocksState::default())
    }

    /// Starts a proxy that only takes the username/password method with these credentials.
    pub fn start_with_auth(user: &str, pass: &str) -> Socks5Proxy {
        Self::spawn(SocksState {
            auth: Some((user.to_string(), pass.to_string())),
            ..SocksState::default()
        })
    }

    fn spawn(state: SocksState) -> Socks5Proxy {
        let state = Arc::new(state);
        let serve_state = state.clone();
        let bg = Background::spawn("socks5", move |listener| async move {
            while let Ok((stream, _)) = listener.accept().await {
                serve_state.connections.fetch_add(1, Ordering::SeqCst);
                let state = serve_state.clone();
                tokio::spawn(async move {
                    let _ = session(stream, state).await;
                });
            }
        });
        Socks5Proxy { bg, state }
    }

    /// `socks5://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("socks5://127.0.0.1:{}", self.bg.port())
    }

    /// `socks5://user:pass@127.0.0.1:PORT`.
    pub fn url_with_credentials(&self, user: &str, pass: &str) -> String {
        format!("socks5://{user}:{pass}@127.0.0.1:{}", self.bg.port())
    }

    /// `socks5h://127.0.0.1:PORT` (the client sends host names for the proxy to resolve).
    pub fn url_remote_dns(&self) -> String {
        format!("socks5h://127.0.0.1:{}", self.bg.port())
    }

    /// How many TCP connections the proxy accepted.
    pub fn connections(&self) -> usize {
        self.state.connections.load(Ordering::SeqCst)
    }

    /// Each CONNECT target as requested, `host:port` (IPv6 as `[addr]:port`).
    pub fn seen_targets(&self) -> Vec<String> {
        self.state.targets.lock().unwrap().clone()
    }
}

/// Reply codes of RFC 1928 section 6.
const REP_OK: u8 = 0x00;
const REP_NOT_ALLOWED: u8 = 0x02;
const REP_REFUSED: u8 = 0x05;
const REP_CMD_UNSUPPORTED: u8 = 0x07;
const REP_ATYP_UNSUPPORTED: u8 = 0x08;

async fn send_reply(stream: &mut TcpStream, rep: u8, port: u16) -> std::io::Result<()> {
    let p = port.to_be_bytes();
    stream
        .write_all(&[5, rep, 0, 1, 127, 0, 0, 1, p[0], p[1]])
        .await
}

async fn session(mut stream: TcpStream, state: Arc<SocksState>) -> std::io::Result<()> {
    let mut head = [0u8; 2];
    stream.read_exact(&mut head).await?;
    if head[0] != 5 {
        return Ok(());
    }
    let mut methods = vec![0u8; usize::from(head[1])];
    stream.read_exact(&mut methods).await?;
    let method = if state.auth.is_some() { 2 } else { 0 };
    if !methods.contains(&method) {
        stream.write_all(&[5, 0xff]).await?;
        return Ok(());
    }
    stream.write_all(&[5, method]).await?;
    if let Some((user, pass)) = &state.auth {
        // RFC 1929: VER=1, ULEN, UNAME, PLEN, PASSWD; reply VER=1, STATUS (0 = success).
        let _version = stream.read_u8().await?;
        let mut name = vec![0u8; usize::from(stream.read_u8().await?)];
        stream.read_exact(&mut name).await?;
        let mut word = vec![0u8; usize::from(stream.read_u8().await?)];
        stream.read_exact(&mut word).await?;
        let ok = name == user.as_bytes() && word == pass.as_bytes();
        stream.write_all(&[1, if ok { 0 } else { 1 }]).await?;
        if !ok {
            return Ok(());
        }
    }

    let mut req = [0u8; 4];
    stream.read_exact(&mut req).await?;
    let (host, loopback) = match req[3] {
        1 => {
            let mut a = [0u8; 4];
            stream.read_exact(&mut a).await?;
            let ip = Ipv4Addr::from(a);
            (ip.to_string(), ip == Ipv4Addr::LOCALHOST)
        }
        3 => {
            let len = stream.read_u8().await?;
            let mut name = vec![0u8; usize::from(len)];
            stream.read_exact(&mut name).await?;
            let name = String::from_utf8_lossy(&name).to_ascii_lowercase();
            let ok = name == "localhost" || name == "127.0.0.1";
            (name, ok)
        }
        4 => {
            let mut a = [0u8; 16];
            stream.read_exact(&mut a).await?;
            let ip = Ipv6Addr::from(a);
            (format!("[{ip}]"), ip == Ipv6Addr::LOCALHOST)
        }
        _ => return send_reply(&mut stream, REP_ATYP_UNSUPPORTED, 0).await,
    };
    let port = stream.read_u16().await?;
    state.targets.lock().unwrap().push(format!("{host}:{port}"));
    if req[1] != 1 {
        return send_reply(&mut stream, REP_CMD_UNSUPPORTED, 0).await;
    }
    if !loopback {
        return send_reply(&mut stream, REP_NOT_ALLOWED, 0).await;
    }
    let Ok(mut upstream) = TcpStream::connect(("127.0.0.1", port)).await else {
        return send_reply(&mut stream, REP_REFUSED, 0).await;
    };
    let bound = upstream.local_addr()?.port();
    send_reply(&mut stream, REP_OK, bound).await?;
    tokio::io::copy_bidirectional(&mut stream, &mut upstream).await?;
    Ok(())
}
