//! A third-party host that accepts TCP connections and never answers a byte: the ad,
//! analytics or CDN host that hangs on the real web. It listens on `127.0.0.2` (another
//! loopback address, so another site than the `127.0.0.1` fixtures) and holds every
//! connection open until dropped.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// The hanging host; stops (and closes every held connection) when dropped.
pub struct HangServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    accepted: Arc<AtomicUsize>,
    thread: Option<JoinHandle<()>>,
}

impl HangServer {
    /// Listen on `127.0.0.2:0`.
    pub fn start() -> HangServer {
        let listener = TcpListener::bind("127.0.0.2:0").expect("bind 127.0.0.2");
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let accepted = Arc::new(AtomicUsize::new(0));
        let (s, a) = (Arc::clone(&stop), Arc::clone(&accepted));
        let thread = std::thread::spawn(move || {
            let mut held: Vec<TcpStream> = Vec::new();
            for conn in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(c) = conn {
                    a.fetch_add(1, Ordering::SeqCst);
                    held.push(c);
                }
            }
        });
        HangServer {
            addr,
            stop,
            accepted,
            thread: Some(thread),
        }
    }

    /// `127.0.0.2:PORT`.
    pub fn host(&self) -> String {
        self.addr.to_string()
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for HangServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept so the thread sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
