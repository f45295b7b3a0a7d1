//! How often a crashing child may be restarted: at most [`MAX_RESTARTS`] within a sliding
//! [`RESTART_WINDOW`]. A child that stays up long enough earns its budget back, so a host
//! that runs for days survives an occasional crash, while a crash loop still ends it.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Restarts allowed within one window before the host gives up on a child.
pub const MAX_RESTARTS: usize = 5;
/// The window the restarts are counted in.
pub const RESTART_WINDOW: Duration = Duration::from_secs(600);

/// The restarts of one child within the window.
#[derive(Debug, Clone)]
pub struct RestartBudget {
    window: Duration,
    recent: VecDeque<Instant>,
}

impl RestartBudget {
    /// An unused budget over `window`.
    pub fn new(window: Duration) -> RestartBudget {
        RestartBudget {
            window,
            recent: VecDeque::new(),
        }
    }

    /// Spend one restart at `now`: its number within the window (1-based, for the backoff),
    /// or `None` when [`MAX_RESTARTS`] were already spent within the window.
    pub fn spend(&mut self, now: Instant) -> Option<u32> {
        while self
            .recent
            .front()
            .is_some_and(|t| now.saturating_duration_since(*t) >= self.window)
        {
            self.recent.pop_front();
        }
        if self.recent.len() >= MAX_RESTARTS {
            return None;
        }
        self.recent.push_back(now);
        Some(self.recent.len() as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sixth_restart_within_the_window_is_refused() {
        let mut b = RestartBudget::new(Duration::from_secs(600));
        let t0 = Instant::now();
        for n in 1..=5u32 {
            let at = t0 + Duration::from_secs(u64::from(n) * 60);
            assert_eq!(b.spend(at), Some(n));
        }
        assert_eq!(b.spend(t0 + Duration::from_secs(599)), None);
    }

    #[test]
    fn restarts_older_than_the_window_are_forgotten() {
        let mut b = RestartBudget::new(Duration::from_secs(600));
        let t0 = Instant::now();
        for n in 0..5u64 {
            assert!(b.spend(t0 + Duration::from_secs(n)).is_some());
        }
        // Ten minutes after the first: one slot is free again, and it is restart 5 of the
        // window; a second one at the same moment is not.
        assert_eq!(b.spend(t0 + Duration::from_secs(600)), Some(5));
        assert_eq!(b.spend(t0 + Duration::from_secs(600)), None);
        assert_eq!(b.spend(t0 + Duration::from_secs(601)), Some(5));
        // A child that stayed up a whole window starts again from one.
        assert_eq!(b.spend(t0 + Duration::from_secs(1300)), Some(1));
    }

    #[test]
    fn a_crash_a_day_never_runs_out() {
        let mut b = RestartBudget::new(Duration::from_secs(600));
        let t0 = Instant::now();
        for day in 0..100u64 {
            assert_eq!(b.spend(t0 + Duration::from_secs(day * 86_400)), Some(1));
        }
    }
}
