//! Draining a browser's stderr: keep a short tail for error messages, spot the DevTools line.
//!
//! The pipe is read until EOF for the browser's whole life so a chatty browser can never block
//! on a full pipe.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::sync::oneshot;

/// How many stderr lines are kept for error messages.
const TAIL_LINES: usize = 40;
/// Longest single line kept, so one runaway line cannot hold megabytes.
const MAX_LINE: usize = 2048;
/// The line Chromium prints once its DevTools endpoint is listening.
const DEVTOOLS_PREFIX: &str = "DevTools listening on ";

/// The last lines a browser wrote to stderr, shared with the draining task.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tail(Arc<Mutex<VecDeque<String>>>);

impl Tail {
    fn lock(&self) -> MutexGuard<'_, VecDeque<String>> {
        // A poisoned lock only means a reader panicked; the lines are still fine.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn push(&self, line: String) {
        let mut lines = self.lock();
        if lines.len() == TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The kept lines joined with newlines.
    pub(crate) fn text(&self) -> String {
        self.lock().iter().cloned().collect::<Vec<_>>().join("\n")
    }
}

/// Start draining `stderr` in a task. The receiver yields the DevTools WebSocket URL when it
/// appears, or an error once stderr closes without one (the browser exited).
pub(crate) fn drain(
    stderr: impl AsyncRead + Unpin + Send + 'static,
    tail: Tail,
) -> oneshot::Receiver<String> {
    let (tx, rx) = oneshot::channel();
    tokio::spawn(async move {
        let mut tx = Some(tx);
        let mut reader = BufReader::new(stderr);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let mut line = String::from_utf8_lossy(&buf).trim_end().to_string();
            if let Some(url) = devtools_url(&line) {
                if let Some(tx) = tx.take() {
                    let _ = tx.send(url.to_string());
                }
            }
            if line.len() > MAX_LINE {
                let mut cut = MAX_LINE;
                while !line.is_char_boundary(cut) {
                    cut -= 1;
                }
                line.truncate(cut);
            }
            tail.push(line);
        }
    });
    rx
}

/// The `ws://127.0.0.1:PORT/devtools/browser/ID` URL from a DevTools line, if this is one.
pub(crate) fn devtools_url(line: &str) -> Option<&str> {
    let url = line.split_once(DEVTOOLS_PREFIX)?.1.trim();
    url.starts_with("ws://").then_some(url)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn devtools_line_is_recognised() {
        assert_eq!(
            devtools_url("\nDevTools listening on ws://127.0.0.1:4321/devtools/browser/ab-c "),
            Some("ws://127.0.0.1:4321/devtools/browser/ab-c")
        );
        assert_eq!(devtools_url("[123:ERROR] something"), None);
    }

    #[tokio::test]
    async fn tail_keeps_the_last_lines_and_url_is_found() {
        let mut text = String::new();
        for i in 0..100 {
            text.push_str(&format!("line {i}\n"));
        }
        text.push_str("DevTools listening on ws://127.0.0.1:1/devtools/browser/x\n");
        let tail = Tail::default();
        let rx = drain(std::io::Cursor::new(text.into_bytes()), tail.clone());
        assert_eq!(rx.await.unwrap(), "ws://127.0.0.1:1/devtools/browser/x");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let kept = tail.text();
        assert_eq!(kept.lines().count(), TAIL_LINES);
        assert!(kept.starts_with("line 61"));
    }

    #[tokio::test]
    async fn closed_stderr_without_url_is_an_error() {
        let rx = drain(std::io::Cursor::new(b"boom\n".to_vec()), Tail::default());
        assert!(rx.await.is_err());
    }
}
