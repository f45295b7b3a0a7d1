//! Handoff capabilities for human takeover (spec §6): the long token mints a short-lived,
//! single-use id for a URL; its first use trades it for a session cookie scoped to
//! `/takeover` that lives until the same expiry.
//!
//! Everything is in memory, so a host restart invalidates every handoff and session.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

/// Default handoff lifetime.
pub const TTL_DEFAULT_S: u64 = 900;
/// Shortest lifetime a caller may ask for.
pub const TTL_MIN_S: u64 = 60;
/// Longest lifetime a caller may ask for.
pub const TTL_MAX_S: u64 = 3600;
/// The session cookie's name.
pub const COOKIE: &str = "afhttp_takeover";
/// The query parameter carrying a handoff id.
pub const QUERY: &str = "handoff";
/// Unspent handoffs plus live sessions kept at most; beyond it the oldest are dropped, so
/// a token holder minting in a loop cannot grow memory without bound.
const MAX_ENTRIES: usize = 4096;

/// A minted handoff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Minted {
    /// The single-use id for `?handoff=`.
    pub id: String,
    /// When it (and the session it is traded for) expires.
    pub expires_at: SystemTime,
}

/// A session obtained by spending a handoff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The cookie value.
    pub id: String,
    /// When it expires (the handoff's expiry).
    pub expires_at: SystemTime,
}

type Clock = Box<dyn Fn() -> SystemTime + Send + Sync>;

/// Pending handoffs and live sessions, with an injectable clock (tests move time forward).
pub struct HandoffStore {
    clock: Clock,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    pending: HashMap<String, SystemTime>,
    sessions: HashMap<String, SystemTime>,
}

impl Default for HandoffStore {
    fn default() -> Self {
        HandoffStore::with_clock(SystemTime::now)
    }
}

impl std::fmt::Debug for HandoffStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandoffStore").finish_non_exhaustive()
    }
}

/// Validate a requested lifetime in seconds (`None`: the default).
pub fn ttl(requested: Option<u64>) -> Result<Duration, String> {
    let s = requested.unwrap_or(TTL_DEFAULT_S);
    if (TTL_MIN_S..=TTL_MAX_S).contains(&s) {
        Ok(Duration::from_secs(s))
    } else {
        Err(format!(
            "ttl_s must be between {TTL_MIN_S} and {TTL_MAX_S}, not {s}"
        ))
    }
}

/// A random id: two v4 UUIDs from the OS generator, 244 random bits.
fn random_id() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

impl HandoffStore {
    /// A store reading time from `clock`.
    pub fn with_clock(clock: impl Fn() -> SystemTime + Send + Sync + 'static) -> HandoffStore {
        HandoffStore {
            clock: Box::new(clock),
            inner: Mutex::new(Inner::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A poisoned lock only means a holder panicked; the maps are still consistent.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Mint a handoff living `ttl` from now.
    pub fn mint(&self, ttl: Duration) -> Minted {
        let now = (self.clock)();
        let expires_at = now + ttl;
        let id = random_id();
        let mut inner = self.lock();
        inner.prune(now);
        inner.pending.insert(id.clone(), expires_at);
        Minted { id, expires_at }
    }

    /// Spend handoff `id`: the first use of an unexpired id yields a session; a spent,
    /// expired or unknown id yields `None` (and an expired one is forgotten).
    pub fn exchange(&self, id: &str) -> Option<Session> {
        let now = (self.clock)();
        let mut inner = self.lock();
        let expires_at = inner.pending.remove(id)?;
        if expires_at <= now {
            return None;
        }
        let session = Session {
            id: random_id(),
            expires_at,
        };
        inner.prune(now);
        inner.sessions.insert(session.id.clone(), expires_at);
        Some(session)
    }

    /// Whether `session` is a live session id.
    pub fn session_valid(&self, session: &str) -> bool {
        let now = (self.clock)();
        self.lock()
            .sessions
            .get(session)
            .is_some_and(|expires_at| *expires_at > now)
    }

    /// Seconds until `t` (0 when past).
    pub fn seconds_until(&self, t: SystemTime) -> u64 {
        t.duration_since((self.clock)())
            .map(|d| d.as_secs())
            .unwrap_or(0)
    }
}

impl Inner {
    /// Forget expired entries; past the cap, drop those expiring soonest.
    fn prune(&mut self, now: SystemTime) {
        self.pending.retain(|_, t| *t > now);
        self.sessions.retain(|_, t| *t > now);
        for map in [&mut self.pending, &mut self.sessions] {
            while map.len() >= MAX_ENTRIES {
                let Some(oldest) = map.iter().min_by_key(|(_, t)| **t).map(|(k, _)| k.clone())
                else {
                    break;
                };
                map.remove(&oldest);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    fn clocked() -> (HandoffStore, Arc<Mutex<SystemTime>>) {
        let now = Arc::new(Mutex::new(
            SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000),
        ));
        let read = Arc::clone(&now);
        (HandoffStore::with_clock(move || *read.lock().unwrap()), now)
    }

    fn advance(now: &Mutex<SystemTime>, s: u64) {
        *now.lock().unwrap() += Duration::from_secs(s);
    }

    #[test]
    fn ttl_bounds_and_default() {
        assert_eq!(ttl(None).unwrap(), Duration::from_secs(900));
        assert_eq!(ttl(Some(60)).unwrap(), Duration::from_secs(60));
        assert_eq!(ttl(Some(3600)).unwrap(), Duration::from_secs(3600));
        assert!(ttl(Some(59)).is_err());
        assert!(ttl(Some(3601)).is_err());
        assert!(ttl(Some(0)).is_err());
    }

    #[test]
    fn single_use_and_session_lives_until_the_ttl() {
        let (store, now) = clocked();
        let m = store.mint(Duration::from_secs(60));
        assert!(m.id.len() >= 32 && m.id.bytes().all(|b| b.is_ascii_hexdigit()));
        let s = store.exchange(&m.id).unwrap();
        assert_eq!(s.expires_at, m.expires_at);
        assert_ne!(s.id, m.id);
        assert!(store.exchange(&m.id).is_none(), "spent");
        assert!(store.session_valid(&s.id));
        assert!(!store.session_valid(&m.id), "a handoff id is not a session");
        assert_eq!(store.seconds_until(s.expires_at), 60);
        advance(&now, 59);
        assert!(store.session_valid(&s.id));
        advance(&now, 1);
        assert!(
            !store.session_valid(&s.id),
            "expired with the handoff's ttl"
        );
        assert_eq!(store.seconds_until(s.expires_at), 0);
    }

    #[test]
    fn expired_and_unknown_ids_are_refused() {
        let (store, now) = clocked();
        let m = store.mint(Duration::from_secs(60));
        advance(&now, 60);
        assert!(store.exchange(&m.id).is_none(), "expired");
        assert!(store.exchange("nope").is_none(), "unknown");
        assert!(store.exchange("").is_none());
        let fresh = store.mint(Duration::from_secs(900));
        advance(&now, 899);
        assert!(store.exchange(&fresh.id).is_some());
    }

    #[test]
    fn ids_are_distinct_and_the_store_is_bounded() {
        let (store, _now) = clocked();
        let ids: std::collections::HashSet<String> = (0..MAX_ENTRIES + 10)
            .map(|_| store.mint(Duration::from_secs(60)).id)
            .collect();
        assert_eq!(ids.len(), MAX_ENTRIES + 10);
        assert!(store.lock().pending.len() <= MAX_ENTRIES);
    }
}
