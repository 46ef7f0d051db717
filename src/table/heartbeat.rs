//! The table loop's heartbeat: the owner task stamps it (monotonic clock) every
//! [`EVERY`] between commands, so `/healthz` can tell a live process with a hung table
//! task (a command stuck in a write, a deadlock, a panic) from a healthy one.
//!
//! The same loop pings systemd's watchdog; the heartbeat exists too because the
//! watchdog is only armed under systemd, and because a probe wants an answer (503) before
//! systemd's restart.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often the table loop beats.
pub const EVERY: Duration = Duration::from_secs(1);

/// A beat older than this means the table loop is stuck: three missed beats. A single
/// command (one SQLite commit, `synchronous=FULL`) takes milliseconds; one taking
/// seconds is already a fault worth a red probe.
pub const STALE_AFTER: Duration = Duration::from_secs(3);

/// The last beat, as milliseconds since the heartbeat was made (monotonic, never the
/// wall clock).
#[derive(Debug)]
pub struct Heartbeat {
    base: Instant,
    last_ms: AtomicU64,
}

impl Default for Heartbeat {
    fn default() -> Heartbeat {
        Heartbeat {
            base: Instant::now(),
            last_ms: AtomicU64::new(0),
        }
    }
}

impl Heartbeat {
    /// The loop is alive now.
    pub fn beat(&self) {
        let ms = u64::try_from(self.base.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    /// Time since the last beat.
    pub fn age(&self) -> Duration {
        let last = Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
        self.base.elapsed().saturating_sub(last)
    }

    /// Whether the loop has missed its beats.
    pub fn stale(&self) -> bool {
        self.age() > STALE_AFTER
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_beat_is_young() {
        let h = Heartbeat::default();
        h.beat();
        assert!(h.age() < STALE_AFTER);
        assert!(!h.stale());
    }
}
