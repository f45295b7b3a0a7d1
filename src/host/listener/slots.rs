//! `--max-clients`'s counter: CDP client slots with a ceiling, taken before a `/cdp` upgrade
//! and given back when the client leaves.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A counter of CDP client slots with a ceiling.
#[derive(Debug)]
pub struct Slots {
    used: Arc<AtomicUsize>,
    max: usize,
}

/// One taken slot, given back when dropped.
#[derive(Debug)]
pub struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Slots {
    /// `max` slots, none taken.
    pub fn new(max: usize) -> Slots {
        Slots {
            used: Arc::default(),
            max,
        }
    }

    /// Take a slot, or `None` when all `max` are taken (checked and taken atomically, so
    /// racing clients can never overshoot).
    pub fn try_take(&self) -> Option<Slot> {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max).then_some(n + 1)
            })
            .ok()
            .map(|_| Slot(self.used.clone()))
    }

    /// How many slots are taken now.
    pub fn in_use(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    /// The ceiling.
    pub fn max(&self) -> usize {
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_refuse_beyond_the_cap_and_come_back_on_drop() {
        let slots = Slots::new(2);
        let a = slots.try_take();
        let b = slots.try_take();
        assert!(a.is_some() && b.is_some());
        assert!(slots.try_take().is_none());
        assert_eq!(slots.in_use(), 2);
        drop(a);
        assert_eq!(slots.in_use(), 1);
        assert!(slots.try_take().is_some());
        assert_eq!(slots.in_use(), 1);
        assert_eq!(slots.max(), 2);
    }
}
