//! The monotonic deadlines of sessions and lockouts (see `auth::time`).
//!
//! The database keeps wall-clock times for the record (`sessions.expires_ms`,
//! `last_seen_ms`, `users.locked_until_ms`) and stays the authority on *whether* a session
//! or a lockout exists (logout, `user disable`, `passwd` and `unlock` change it, some from
//! another process). *How long* one lasts is decided here, on monotonic time. A session or
//! lockout this process has not seen yet (it was made before a restart) starts from what
//! its stored wall times leave of it, capped at the configured length — the wall clock is
//! read once for it, at the first sight after a restart, and never again.

use std::collections::HashMap;
use std::time::Duration;

/// A session's deadlines, monotonic.
#[derive(Debug, Clone, Copy)]
struct Live {
    /// The end of its lifetime.
    ends: Duration,
    /// The end of its idle allowance (moved on by every use).
    idle_ends: Duration,
    /// When its `last_seen_ms` was last written (for the record and restarts).
    written: Duration,
}

/// A lockout's end, monotonic, for the stored `locked_until_ms` it was set (or first
/// seen) with: a new lockout has a new value, an `unlock` clears it.
#[derive(Debug, Clone, Copy)]
struct Lock {
    until_ms: i64,
    ends: Duration,
}

/// A session's stored wall times (for the first sight after a restart).
#[derive(Debug, Clone, Copy)]
pub struct Stored {
    /// `sessions.expires_ms`.
    pub expires_ms: i64,
    /// `sessions.last_seen_ms`.
    pub last_seen_ms: i64,
}

/// What a session check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checked {
    /// Live; `write`: its `last_seen_ms` is due to be written.
    Live {
        /// Write `last_seen_ms` now.
        write: bool,
    },
    /// Past its lifetime or idle too long: it is over (its row should go).
    Ended,
}

/// The lengths the deadlines are made of (`[auth]`).
#[derive(Debug, Clone, Copy)]
pub struct Lengths {
    /// A session's lifetime.
    pub life: Duration,
    /// The idle allowance.
    pub idle: Duration,
    /// A lockout.
    pub lockout: Duration,
}

/// Every deadline this process knows.
#[derive(Debug, Default)]
pub struct Timers {
    sessions: HashMap<[u8; 32], Live>,
    locks: HashMap<i64, Lock>,
}

/// What is left of `length` at `wall_now` for something that ends at `end_ms` (wall),
/// capped at `length` (a wall clock behind never lengthens it).
fn left(end_ms: i64, wall_now: i64, length: Duration) -> Duration {
    let ms = u64::try_from(end_ms.saturating_sub(wall_now)).unwrap_or(0);
    Duration::from_millis(ms).min(length)
}

impl Timers {
    /// A session begins at `now`.
    pub fn started(&mut self, hash: [u8; 32], now: Duration, len: &Lengths) {
        self.sessions.insert(
            hash,
            Live {
                ends: now.saturating_add(len.life),
                idle_ends: now.saturating_add(len.idle),
                written: now,
            },
        );
    }

    /// Checks the session `hash` (which the database still holds) at `now`; `touch` (a
    /// request, not a stream's re-check) moves its idle deadline on.
    pub fn check(
        &mut self,
        hash: [u8; 32],
        stored: Stored,
        now: Duration,
        wall_now: i64,
        len: &Lengths,
        touch: bool,
    ) -> Checked {
        let live = self.sessions.entry(hash).or_insert_with(|| {
            let idle_end = stored
                .last_seen_ms
                .saturating_add(i64::try_from(len.idle.as_millis()).unwrap_or(i64::MAX));
            Live {
                ends: now.saturating_add(left(stored.expires_ms, wall_now, len.life)),
                idle_ends: now.saturating_add(left(idle_end, wall_now, len.idle)),
                written: now,
            }
        });
        if now >= live.ends || now >= live.idle_ends {
            self.sessions.remove(&hash);
            return Checked::Ended;
        }
        if !touch {
            return Checked::Live { write: false };
        }
        live.idle_ends = now.saturating_add(len.idle);
        // Written often enough that a restart, which starts from the stored time, does not
        // end a session in use; rarely enough that requests do not each cost a write.
        let every = (len.idle / 4).min(Duration::from_secs(60));
        let write = now.saturating_sub(live.written) >= every;
        if write {
            live.written = now;
        }
        Checked::Live { write }
    }

    /// The session `hash` is gone (logout, or its row no longer exists).
    pub fn forget(&mut self, hash: &[u8; 32]) {
        self.sessions.remove(hash);
    }

    /// Removes and returns every session past a deadline at `now` (their rows should go).
    pub fn sweep(&mut self, now: Duration) -> Vec<[u8; 32]> {
        let ended: Vec<[u8; 32]> = self
            .sessions
            .iter()
            .filter(|(_, l)| now >= l.ends || now >= l.idle_ends)
            .map(|(h, _)| *h)
            .collect();
        for h in &ended {
            self.sessions.remove(h);
        }
        ended
    }

    /// Whether the account `user`, stored as locked until `until_ms` (wall), is locked at
    /// `now`.
    pub fn locked(
        &mut self,
        user: i64,
        until_ms: Option<i64>,
        now: Duration,
        wall_now: i64,
        len: &Lengths,
    ) -> bool {
        let Some(until_ms) = until_ms else {
            self.locks.remove(&user);
            return false;
        };
        let lock = match self.locks.get(&user) {
            Some(l) if l.until_ms == until_ms => *l,
            _ => {
                let l = Lock {
                    until_ms,
                    ends: now.saturating_add(left(until_ms, wall_now, len.lockout)),
                };
                self.locks.insert(user, l);
                l
            }
        };
        now < lock.ends
    }

    /// The account `user` is locked from `now` (stored as locked until `until_ms`).
    pub fn lock(&mut self, user: i64, until_ms: i64, now: Duration, len: &Lengths) {
        self.locks.insert(
            user,
            Lock {
                until_ms,
                ends: now.saturating_add(len.lockout),
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEN: Lengths = Lengths {
        life: Duration::from_secs(12 * 3600),
        idle: Duration::from_secs(3600),
        lockout: Duration::from_secs(300),
    };

    #[test]
    fn a_session_first_seen_after_a_restart_gets_what_its_wall_times_leave_capped() {
        let mut t = Timers::default();
        let wall = 1_000_000_000;
        // Stored with 10 min of idle allowance left, and a lifetime far in the "future"
        // (written while the wall clock was ahead): capped at the configured lengths.
        let stored = Stored {
            expires_ms: wall + 100 * 3_600_000,
            last_seen_ms: wall - 50 * 60_000,
        };
        let h = [1; 32];
        let at = |m: u64| Duration::from_secs(1000 + m * 60);
        assert_eq!(
            t.check(h, stored, at(0), wall, &LEN, false),
            Checked::Live { write: false }
        );
        assert_eq!(
            t.check(h, stored, at(10), wall, &LEN, false),
            Checked::Ended
        );
    }

    #[test]
    fn a_new_lockout_value_restarts_the_lockout_and_none_lifts_it() {
        let mut t = Timers::default();
        let now = Duration::from_secs(50);
        t.lock(7, 5_000, now, &LEN);
        assert!(t.locked(7, Some(5_000), now + Duration::from_secs(299), 0, &LEN));
        assert!(!t.locked(7, Some(5_000), now + Duration::from_secs(300), 0, &LEN));
        assert!(
            !t.locked(7, None, now, 0, &LEN),
            "unlocked by `user unlock`"
        );
    }
}
