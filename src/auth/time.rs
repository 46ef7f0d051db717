//! The clocks of accounts and sessions.
//!
//! Durations (a session's lifetime, its idle limit, a lockout) are measured on monotonic
//! time, which never steps: the Pi has no RTC, and NTP may move the wall clock by hours
//! after boot. The wall clock is kept only for the record (the stored `*_ms` columns, the
//! audit log, what `user list` prints). [`Clock`] is injected, so tests move time by hand
//! ([`ManualClock`]) instead of sleeping.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Monotonic time for durations, wall time for the record.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Time since an arbitrary fixed origin; never goes back, never jumps.
    fn monotonic(&self) -> Duration;
    /// Unix milliseconds: for people and the record only, never for a duration.
    fn wall_ms(&self) -> i64;
}

/// The system's clocks: `Instant` (CLOCK_MONOTONIC) and `SystemTime`.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    origin: Instant,
}

impl SystemClock {
    /// Monotonic time counted from now.
    pub fn new() -> SystemClock {
        SystemClock {
            origin: Instant::now(),
        }
    }

    /// A shared system clock.
    pub fn shared() -> Arc<dyn Clock> {
        Arc::new(SystemClock::new())
    }
}

impl Default for SystemClock {
    fn default() -> SystemClock {
        SystemClock::new()
    }
}

impl Clock for SystemClock {
    fn monotonic(&self) -> Duration {
        self.origin.elapsed()
    }

    fn wall_ms(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0)
    }
}

/// A clock moved by hand (tests, simulations): [`ManualClock::advance`] moves both clocks
/// as time passing does; [`ManualClock::step_wall`] moves only the wall clock, as NTP or an
/// operator's `date -s` does.
#[derive(Debug)]
pub struct ManualClock {
    monotonic_ns: AtomicU64,
    wall_ms: AtomicI64,
}

impl ManualClock {
    /// Monotonic time zero, the wall clock at `wall_ms`.
    pub fn new(wall_ms: i64) -> Arc<ManualClock> {
        Arc::new(ManualClock {
            monotonic_ns: AtomicU64::new(0),
            wall_ms: AtomicI64::new(wall_ms),
        })
    }

    /// Monotonic time zero, the wall clock at the system's now.
    pub fn at_system_now() -> Arc<ManualClock> {
        ManualClock::new(SystemClock::new().wall_ms())
    }

    /// `by` passes: both clocks move.
    pub fn advance(&self, by: Duration) {
        let ns = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        self.monotonic_ns.fetch_add(ns, Ordering::SeqCst);
        let ms = i64::try_from(by.as_millis()).unwrap_or(i64::MAX);
        self.wall_ms.fetch_add(ms, Ordering::SeqCst);
    }

    /// The wall clock steps by `ms` (negative: back); monotonic time does not move.
    pub fn step_wall(&self, ms: i64) {
        self.wall_ms.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn monotonic(&self) -> Duration {
        Duration::from_nanos(self.monotonic_ns.load(Ordering::SeqCst))
    }

    fn wall_ms(&self) -> i64 {
        self.wall_ms.load(Ordering::SeqCst)
    }
}
