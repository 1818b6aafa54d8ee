//! Replay refusal: every (client key, nonce) pair is accepted once per boot.
//!
//! Envelopes carrying a timestamp are only accepted inside the freshness window, so their
//! pairs can be forgotten once the window has passed. Pairs without a timestamp must be kept
//! for the whole boot; they are capped, and past the cap such envelopes are refused.

use std::collections::HashMap;
use std::sync::Mutex;

#[derive(Debug, PartialEq, Eq)]
pub enum ReplayVerdict {
    Fresh,
    Replayed,
    /// The envelope's timestamp is outside the window.
    Stale,
    /// No timestamp, and the table of timestamp-less pairs is full.
    TimestampRequired,
}

type Pair = ([u8; 32], [u8; 16]);

pub struct ReplayGuard {
    window_secs: u64,
    max_untimed: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Pair → the time after which it may be forgotten (`None`: never).
    seen: HashMap<Pair, Option<u64>>,
    untimed: usize,
    last_sweep: u64,
}

impl ReplayGuard {
    pub fn new(window_secs: u64, max_untimed: usize) -> Self {
        ReplayGuard { window_secs, max_untimed, inner: Mutex::new(Inner::default()) }
    }

    /// Checks and records the pair. `now` is the enclave's clock in unix seconds.
    pub fn check(&self, client_key: [u8; 32], nonce: [u8; 16], timestamp: Option<u64>, now: u64) -> ReplayVerdict {
        if let Some(ts) = timestamp
            && ts.abs_diff(now) > self.window_secs
        {
            return ReplayVerdict::Stale;
        }
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if now >= inner.last_sweep + self.window_secs.max(1) {
            inner.seen.retain(|_, expiry| expiry.is_none_or(|e| e > now));
            inner.last_sweep = now;
        }
        if inner.seen.contains_key(&(client_key, nonce)) {
            return ReplayVerdict::Replayed;
        }
        let expiry = match timestamp {
            Some(ts) => Some(ts + self.window_secs + 1),
            None if inner.untimed >= self.max_untimed => return ReplayVerdict::TimestampRequired,
            None => {
                inner.untimed += 1;
                None
            }
        };
        inner.seen.insert((client_key, nonce), expiry);
        ReplayVerdict::Fresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_use_is_refused() {
        let g = ReplayGuard::new(300, 10);
        assert_eq!(g.check([1; 32], [2; 16], Some(1000), 1000), ReplayVerdict::Fresh);
        assert_eq!(g.check([1; 32], [2; 16], Some(1000), 1001), ReplayVerdict::Replayed);
        // Same key, other nonce; other key, same nonce: both fresh.
        assert_eq!(g.check([1; 32], [3; 16], Some(1000), 1001), ReplayVerdict::Fresh);
        assert_eq!(g.check([4; 32], [2; 16], Some(1000), 1001), ReplayVerdict::Fresh);
    }

    #[test]
    fn window_edges() {
        let g = ReplayGuard::new(300, 10);
        assert_eq!(g.check([1; 32], [1; 16], Some(700), 1000), ReplayVerdict::Fresh);
        assert_eq!(g.check([1; 32], [2; 16], Some(699), 1000), ReplayVerdict::Stale);
        assert_eq!(g.check([1; 32], [3; 16], Some(1300), 1000), ReplayVerdict::Fresh);
        assert_eq!(g.check([1; 32], [4; 16], Some(1301), 1000), ReplayVerdict::Stale);
    }

    #[test]
    fn expired_pairs_are_forgotten_but_stay_refused_while_valid() {
        let g = ReplayGuard::new(300, 10);
        assert_eq!(g.check([1; 32], [1; 16], Some(1000), 1000), ReplayVerdict::Fresh);
        // Still inside the window: the sweep must not forget it.
        assert_eq!(g.check([9; 32], [9; 16], Some(1299), 1299), ReplayVerdict::Fresh);
        assert_eq!(g.check([1; 32], [1; 16], Some(1000), 1299), ReplayVerdict::Replayed);
        // Past the window the envelope is stale anyway, and the table shrinks.
        assert_eq!(g.check([1; 32], [1; 16], Some(1000), 5000), ReplayVerdict::Stale);
        assert_eq!(g.inner.lock().unwrap().seen.len(), 2);
        g.check([7; 32], [7; 16], Some(5000), 5000);
        assert_eq!(g.inner.lock().unwrap().seen.len(), 1);
    }

    #[test]
    fn untimed_pairs_are_kept_and_capped() {
        let g = ReplayGuard::new(300, 2);
        assert_eq!(g.check([1; 32], [1; 16], None, 0), ReplayVerdict::Fresh);
        assert_eq!(g.check([1; 32], [1; 16], None, 1_000_000), ReplayVerdict::Replayed);
        assert_eq!(g.check([1; 32], [2; 16], None, 0), ReplayVerdict::Fresh);
        assert_eq!(g.check([1; 32], [3; 16], None, 0), ReplayVerdict::TimestampRequired);
        assert_eq!(g.check([1; 32], [3; 16], Some(0), 0), ReplayVerdict::Fresh);
    }
}
