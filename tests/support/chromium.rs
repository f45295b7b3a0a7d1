//! One lock serialises the Chromium-heavy tests: the machine is small, and each of them
//! starts its own browser. Re-entrant per thread, so a test that holds it can start a
//! [`super::HostProc`] (which takes it too) or two.

use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::{Mutex, MutexGuard};

static CHROMIUM: Mutex<()> = Mutex::new(());

thread_local! {
    /// This thread's hold on [`CHROMIUM`] and how many [`ChromiumLock`]s share it.
    static HELD: RefCell<Option<(MutexGuard<'static, ()>, usize)>> = const { RefCell::new(None) };
}

/// A hold on the Chromium lock; released when the last one of this thread drops. Not
/// `Send`: it must drop on the thread that took it.
pub struct ChromiumLock(PhantomData<*const ()>);

/// Take the Chromium lock (waits while another test holds it; a panicked holder does not
/// poison it).
pub fn lock() -> ChromiumLock {
    HELD.with(|held| {
        let mut held = held.borrow_mut();
        match held.as_mut() {
            Some((_, n)) => *n += 1,
            None => *held = Some((CHROMIUM.lock().unwrap_or_else(|p| p.into_inner()), 1)),
        }
    });
    ChromiumLock(PhantomData)
}

impl Drop for ChromiumLock {
    fn drop(&mut self) {
        HELD.with(|held| {
            let mut held = held.borrow_mut();
            if let Some((_, n)) = held.as_mut() {
                *n -= 1;
                if *n == 0 {
                    *held = None;
                }
            }
        });
    }
}
