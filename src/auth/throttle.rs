//! Login throttles beside an account's own lockout (`users.failed_attempts`), in memory:
//!
//! - **Per source address**: [`PEER_FAILURES`] failed logins from one address within the
//!   lockout length block that address for the lockout length (429 `too_many_attempts`),
//!   before any account is looked at, so one machine cannot guess on and on.
//! - **An account's lockout applies to the addresses that caused it**: a guesser elsewhere
//!   on the network who locks a supervisor's account does not lock the supervisor out at
//!   the table's own terminal. Failures from [`SPREAD`] or more addresses lock the account
//!   everywhere; after a restart (nothing known) a stored lockout applies everywhere too.
//! - **Unknown badges lock like real ones**: the third failure on a badge nobody has is
//!   answered 423 as for an account, so the answers do not tell which badges exist.
//!
//! Maps are bounded ([`MAX_ENTRIES`]); past the bound the oldest knowledge is dropped,
//! which only ever makes a throttle forget, never lock someone out.

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::time::Duration;

/// Failed logins from one address, within one lockout length, that block it.
pub const PEER_FAILURES: u32 = 20;

/// Distinct failing addresses from which an account's lockout applies to every address.
pub const SPREAD: usize = 3;

/// How many addresses and unknown badges are remembered.
const MAX_ENTRIES: usize = 4096;

#[derive(Debug, Clone, Copy)]
struct Count {
    failed: u32,
    since: Duration,
    until: Option<Duration>,
}

impl Count {
    fn fresh(now: Duration) -> Count {
        Count {
            failed: 0,
            since: now,
            until: None,
        }
    }

    /// Counts a failure; returns whether it now blocks (for `window` from `now`).
    fn fail(&mut self, now: Duration, limit: u32, window: Duration) -> bool {
        if self.until.is_some_and(|u| u <= now) || now.saturating_sub(self.since) > window {
            *self = Count::fresh(now);
        }
        self.failed += 1;
        if self.failed >= limit {
            self.until = Some(now + window);
        }
        self.until.is_some()
    }

    fn blocked(&self, now: Duration) -> Option<Duration> {
        self.until.filter(|&u| u > now).map(|u| u - now)
    }
}

/// The throttles' state.
#[derive(Debug, Default)]
pub struct Throttle {
    peers: HashMap<IpAddr, Count>,
    unknown: HashMap<String, Count>,
    culprits: HashMap<i64, HashSet<IpAddr>>,
}

fn bounded<K, V>(map: &mut HashMap<K, V>) {
    if map.len() >= MAX_ENTRIES {
        map.clear();
    }
}

impl Throttle {
    /// How much longer `ip` is blocked, if it is.
    pub fn peer_blocked(&self, ip: Option<IpAddr>, now: Duration) -> Option<Duration> {
        self.peers.get(&ip?)?.blocked(now)
    }

    /// A failed login from `ip`.
    pub fn peer_failed(&mut self, ip: Option<IpAddr>, now: Duration, window: Duration) {
        let Some(ip) = ip else { return };
        bounded(&mut self.peers);
        self.peers
            .entry(ip)
            .or_insert_with(|| Count::fresh(now))
            .fail(now, PEER_FAILURES, window);
    }

    /// How much longer the unknown `badge` answers as locked, if it does.
    pub fn unknown_locked(&self, badge: &str, now: Duration) -> Option<Duration> {
        self.unknown.get(badge)?.blocked(now)
    }

    /// A failed login on the unknown `badge`; returns how long it now answers as locked.
    pub fn unknown_failed(
        &mut self,
        badge: &str,
        now: Duration,
        max: u32,
        lockout: Duration,
    ) -> Option<Duration> {
        bounded(&mut self.unknown);
        let count = self
            .unknown
            .entry(badge.to_string())
            .or_insert_with(|| Count::fresh(now));
        count.fail(now, max.max(1), lockout);
        count.blocked(now)
    }

    /// A failed login on account `user` from `ip`.
    pub fn culprit(&mut self, user: i64, ip: Option<IpAddr>) {
        let Some(ip) = ip else { return };
        bounded(&mut self.culprits);
        self.culprits.entry(user).or_default().insert(ip);
    }

    /// Whether account `user`'s lockout applies to a login from `ip`.
    pub fn lock_applies(&self, user: i64, ip: Option<IpAddr>) -> bool {
        match (self.culprits.get(&user), ip) {
            (Some(set), Some(ip)) => set.len() >= SPREAD || set.contains(&ip),
            // Nothing known (a restart, no address): the stored lockout holds everywhere.
            _ => true,
        }
    }

    /// Account `user` logged in: its failures are forgiven.
    pub fn succeeded(&mut self, user: i64) {
        self.culprits.remove(&user);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_blocked_after_its_failures_and_free_again_later() {
        let mut t = Throttle::default();
        let ip = Some("10.0.0.9".parse().expect("ip"));
        let w = Duration::from_secs(300);
        let s = Duration::from_secs;
        for i in 0..PEER_FAILURES {
            assert!(t.peer_blocked(ip, s(i.into())).is_none());
            t.peer_failed(ip, s(i.into()), w);
        }
        assert!(t.peer_blocked(ip, s(20)).is_some());
        assert!(t
            .peer_blocked(Some("10.0.0.8".parse().expect("ip")), s(20))
            .is_none());
        assert!(t.peer_blocked(ip, s(20 + 301)).is_none());
    }

    #[test]
    fn a_lockout_applies_to_its_culprits_then_to_everyone() {
        let mut t = Throttle::default();
        let ip = |s: &str| Some(s.parse().expect("ip"));
        assert!(
            t.lock_applies(7, ip("10.0.0.1")),
            "nothing known: everywhere"
        );
        t.culprit(7, ip("10.0.0.1"));
        assert!(t.lock_applies(7, ip("10.0.0.1")));
        assert!(!t.lock_applies(7, ip("127.0.0.1")));
        t.culprit(7, ip("10.0.0.2"));
        t.culprit(7, ip("10.0.0.3"));
        assert!(t.lock_applies(7, ip("127.0.0.1")), "spread: everywhere");
        t.succeeded(7);
        assert!(t.lock_applies(7, ip("127.0.0.1")));
    }
}
