//! The table's clock: milliseconds on the monotonic clock, continued across restarts from
//! the last time the log holds. The betting countdown, decision timers and resume windows
//! run on it and reach the engine as `Input::Tick` (the Pi has no RTC, so the wall clock is
//! never used for them).
//!
//! After a restart the clock resumes at the latest time the log recorded (a tick, a
//! countdown's opening): a deadline logged before the crash stays the same number, and the
//! time the table was down does not count against a player.

use std::sync::Mutex;
use std::time::Duration;
// tokio's instant: the monotonic clock, which tokio's paused test clock also moves.
use tokio::time::Instant;

/// The table's clock, shared by the table task (which ticks the engine) and the players'
/// API (which shows deadlines and refuses what comes after them).
#[derive(Debug)]
pub struct TableClock {
    /// (a monotonic instant, the table time at that instant).
    origin: Mutex<(Instant, u64)>,
}

impl Default for TableClock {
    fn default() -> TableClock {
        TableClock::new()
    }
}

impl TableClock {
    /// A clock at 0 now.
    pub fn new() -> TableClock {
        TableClock {
            origin: Mutex::new((Instant::now(), 0)),
        }
    }

    fn origin(&self) -> (Instant, u64) {
        *self.origin.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The table time now, ms.
    pub fn now_ms(&self) -> u64 {
        let (at, ms) = self.origin();
        ms.saturating_add(u64::try_from(at.elapsed().as_millis()).unwrap_or(u64::MAX))
    }

    /// Moves the clock up to `ms` if it is behind (recovery: the log's latest time).
    pub fn resume_at(&self, ms: u64) {
        let mut o = self.origin.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let current =
            o.1.saturating_add(u64::try_from(now.duration_since(o.0).as_millis()).unwrap_or(0));
        if current < ms {
            *o = (now, ms);
        }
    }

    /// The monotonic instant at which the clock reads `ms` (now, if that is past).
    pub fn instant_at(&self, ms: u64) -> std::time::Instant {
        self.tokio_instant_at(ms).into_std()
    }

    /// [`TableClock::instant_at`] as tokio's instant (what the table task sleeps until).
    pub fn tokio_instant_at(&self, ms: u64) -> Instant {
        let now = self.now_ms();
        let at = Instant::now();
        at.checked_add(Duration::from_millis(ms.saturating_sub(now)))
            .unwrap_or(at)
    }

    /// The Unix time, ms, at which the clock reads `ms` (what players are shown; read from
    /// the wall clock now, never stored or ordered by).
    pub fn wall_ms_at(&self, ms: u64) -> i64 {
        let now = self.now_ms();
        let delta = i64::try_from(ms).unwrap_or(i64::MAX) - i64::try_from(now).unwrap_or(0);
        crate::wallet::now_ms().saturating_add(delta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_only_moves_forward_and_resumes_from_the_log() {
        let c = TableClock::new();
        c.resume_at(50_000);
        let now = c.now_ms();
        assert!(now >= 50_000);
        c.resume_at(10);
        assert!(c.now_ms() >= now, "never back");
        let later = c.instant_at(now + 1_000);
        assert!(later > std::time::Instant::now());
        assert!(c.instant_at(0) <= std::time::Instant::now());
    }
}
