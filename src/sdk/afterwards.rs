//! Work that follows a fetch's answer: closing its tab, disposing of its isolated context,
//! stopping its inline browser. None of it changes a fact the answer reports, so the caller
//! gets the answer first and the clean-up runs after (issue 26: nothing held after the
//! answer is known).
//!
//! A process opts in with [`answer_first`]: then [`after_answer`] starts the work on the
//! current runtime and returns at once. A long-lived process (the host, an MCP server) lets
//! it run on; a process about to exit calls [`finish`] after printing, so an inline browser
//! still leaves no process and no temporary directory behind. Without the opt-in (an SDK
//! user's program, which may drop its runtime as soon as the fetch returns) the work is
//! done before the fetch returns, as before.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

/// The clean-ups started and not yet seen to end.
static PENDING: Mutex<Vec<JoinHandle<()>>> = Mutex::new(Vec::new());

fn pending() -> std::sync::MutexGuard<'static, Vec<JoinHandle<()>>> {
    PENDING.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether this process answers before its clean-ups end.
static ANSWER_FIRST: AtomicBool = AtomicBool::new(false);

/// From now on, [`after_answer`] runs its work beside the caller instead of before it
/// returns. The caller promises to keep its runtime alive until [`finish`] (or forever).
pub fn answer_first() {
    ANSWER_FIRST.store(true, Ordering::SeqCst);
}

/// Whether [`answer_first`] was called.
pub fn answering_first() -> bool {
    ANSWER_FIRST.load(Ordering::SeqCst)
}

/// Run `work` after the answer (beside whatever the caller does next) when the process
/// opted in with [`answer_first`]; otherwise run it now.
pub async fn after_answer(work: impl Future<Output = ()> + Send + 'static) {
    if !ANSWER_FIRST.load(Ordering::SeqCst) {
        return work.await;
    }
    let handle = tokio::spawn(work);
    let mut list = pending();
    list.retain(|h| !h.is_finished());
    list.push(handle);
}

/// Wait for every deferred clean-up, at most `bound` in all (each one has its own deadline
/// well below it); what is still running then is dropped with the runtime.
pub async fn finish(bound: Duration) {
    let until = Instant::now() + bound;
    loop {
        let batch: Vec<JoinHandle<()>> = std::mem::take(&mut *pending());
        if batch.is_empty() {
            return;
        }
        for h in batch {
            let left = until.saturating_duration_since(Instant::now());
            if tokio::time::timeout(left, h).await.is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn finish_waits_for_work_deferred_before_it() {
        let done = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&done);
        answer_first();
        after_answer(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            flag.store(true, Ordering::SeqCst);
        })
        .await;
        finish(Duration::from_secs(5)).await;
        assert!(done.load(Ordering::SeqCst));
    }
}
