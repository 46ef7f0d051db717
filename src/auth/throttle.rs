//! Login throttles beside an account's stored lockout (`users.failed_attempts`,
//! `locked_until_ms`), in memory. Lockout must stop guessing without becoming a weapon
//! (issue #32 item 6: failures from many addresses locked a supervisor out everywhere):
//!
//! - **Per badge and address**: `auth.max_failed_attempts` (3) failures on a badge from one
//!   address lock that badge *for that address* for `auth.lockout_seconds` (423).
//! - **Per badge, across addresses**: [`ACCOUNT_FAILURES`] failures on a badge within the
//!   lockout length, from any addresses, lock it for every address that has not logged into
//!   it since the service started ("trusted": the table's own terminals). So a guesser with
//!   many addresses gets at most [`ACCOUNT_FAILURES`] guesses per lockout length, and the
//!   supervisor at the table still logs in.
//! - **Per source address**: [`PEER_FAILURES`] failed logins from one address, on any
//!   badges, within the lockout length block that address (429 `too_many_attempts`) before
//!   any account is looked at.
//! - **Unknown badges lock like real ones** (the same counts), so the answers do not tell
//!   which badges exist.
//! - **A lock holds until it ends**: a login from another address forgives the badge's
//!   failures but lifts no address's own lock, and the account's stored lockout stays
//!   recorded while one is in force ([`Throttle::locked_elsewhere`]); only `croupier user
//!   unlock` lifts them all.
//! - After a restart nothing is known: an account's stored lockout then holds for every
//!   address until it runs out (or `croupier user unlock`).
//!
//! Maps are bounded ([`MAX_ENTRIES`]); past the bound, entries whose lock has run out go
//! first, and only then is the map cleared — which only ever makes a throttle forget,
//! never lock someone out.

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::time::Duration;

/// Failed logins from one address, within one lockout length, that block it.
pub const PEER_FAILURES: u32 = 20;

/// Failed logins on one badge, from any addresses within one lockout length, that lock it
/// for every address it has not been logged into from.
pub const ACCOUNT_FAILURES: u32 = 10;

/// How many addresses, (badge, address) pairs and badges are remembered.
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
    pairs: HashMap<(String, IpAddr), Count>,
    badges: HashMap<String, Count>,
    trusted: HashMap<String, HashSet<IpAddr>>,
}

fn bounded<K: Eq + std::hash::Hash, V>(map: &mut HashMap<K, V>, live: impl Fn(&V) -> bool) {
    if map.len() >= MAX_ENTRIES {
        map.retain(|_, v| live(v));
    }
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
        bounded(&mut self.peers, |c| c.blocked(now).is_some());
        self.peers
            .entry(ip)
            .or_insert_with(|| Count::fresh(now))
            .fail(now, PEER_FAILURES, window);
    }

    /// Whether `ip` has logged into `badge` since the start.
    fn is_trusted(&self, badge: &str, ip: IpAddr) -> bool {
        self.trusted.get(badge).is_some_and(|t| t.contains(&ip))
    }

    /// How much longer `badge` is locked for a login from `ip`, by what this process saw:
    /// the pair's own lock, or the badge's across addresses unless `ip` is trusted.
    pub fn locked_for(&self, badge: &str, ip: Option<IpAddr>, now: Duration) -> Option<Duration> {
        let ip = address(ip);
        if let Some(left) = self
            .pairs
            .get(&(badge.to_string(), ip))
            .and_then(|c| c.blocked(now))
        {
            return Some(left);
        }
        if self.is_trusted(badge, ip) {
            return None;
        }
        self.badges.get(badge)?.blocked(now)
    }

    /// Whether a stored lockout of `badge` (in force) applies to a login from `ip`: as
    /// [`Throttle::locked_for`] when this process has seen the failures; everywhere but
    /// trusted addresses when it has not (the lockout is from before a restart).
    pub fn lock_applies(&self, badge: &str, ip: Option<IpAddr>, now: Duration) -> bool {
        // Seen: the badge's failures, or any address's (a login elsewhere forgave the
        // badge's, not that address's lock).
        let seen = self.badges.contains_key(badge) || self.pairs.keys().any(|(b, _)| b == badge);
        if seen {
            return self.locked_for(badge, ip, now).is_some();
        }
        !self.is_trusted(badge, address(ip))
    }

    /// Whether an address other than `ip` is locked out of `badge` now (its own
    /// failures): a login from `ip` must leave the account's stored lockout in force.
    pub fn locked_elsewhere(&self, badge: &str, ip: Option<IpAddr>, now: Duration) -> bool {
        let ip = address(ip);
        self.pairs
            .iter()
            .any(|((b, other), c)| b == badge && *other != ip && c.blocked(now).is_some())
    }

    /// A failed login on `badge` (an account's or an unknown one) from `ip`; returns how
    /// long `badge` is now locked for `ip`, if it is.
    pub fn failed(
        &mut self,
        badge: &str,
        ip: Option<IpAddr>,
        now: Duration,
        max: u32,
        lockout: Duration,
    ) -> Option<Duration> {
        bounded(&mut self.badges, |c| c.blocked(now).is_some());
        self.badges
            .entry(badge.to_string())
            .or_insert_with(|| Count::fresh(now))
            .fail(now, ACCOUNT_FAILURES, lockout);
        bounded(&mut self.pairs, |c| c.blocked(now).is_some());
        self.pairs
            .entry((badge.to_string(), address(ip)))
            .or_insert_with(|| Count::fresh(now))
            .fail(now, max.max(1), lockout);
        self.locked_for(badge, ip, now)
    }

    /// `badge` logged in from `ip`: the address is trusted for it from now on, and the
    /// badge's failures are forgiven (other addresses' own locks stay).
    pub fn succeeded(&mut self, badge: &str, ip: Option<IpAddr>) {
        self.badges.remove(badge);
        let ip = address(ip);
        self.pairs.remove(&(badge.to_string(), ip));
        bounded(&mut self.trusted, |_| true);
        self.trusted
            .entry(badge.to_string())
            .or_default()
            .insert(ip);
    }
}

/// A login's address; one without (not over TCP) counts as one address of its own.
fn address(ip: Option<IpAddr>) -> IpAddr {
    ip.unwrap_or(IpAddr::from([0, 0, 0, 0]))
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
    fn a_badge_locks_per_address_and_across_addresses_but_never_for_a_trusted_one() {
        let mut t = Throttle::default();
        let ip = |n: u8| Some(IpAddr::from([10, 0, 0, n]));
        let w = Duration::from_secs(300);
        let now = Duration::from_secs(1);
        assert!(
            t.lock_applies("201", ip(1), now),
            "nothing seen: a stored lock holds"
        );
        t.succeeded("201", ip(100));
        assert!(
            !t.lock_applies("201", ip(100), now),
            "but not where it logged in"
        );
        // Three failures from one address lock that address only.
        for _ in 0..2 {
            assert!(t.failed("201", ip(1), now, 3, w).is_none());
        }
        assert!(t.failed("201", ip(1), now, 3, w).is_some());
        assert!(
            t.locked_for("201", ip(2), now).is_none(),
            "another address is free"
        );
        // Failures spread over many addresses: one each, none locked on its own, until
        // the badge's cap; then every untrusted address is locked, the trusted one not.
        for n in 2..=(ACCOUNT_FAILURES as u8 - 3) {
            assert!(t.failed("201", ip(n), now, 3, w).is_none(), "address {n}");
        }
        assert!(t.failed("201", ip(50), now, 3, w).is_some(), "the cap");
        assert!(
            t.locked_for("201", ip(60), now).is_some(),
            "a fresh address"
        );
        assert!(
            t.locked_for("201", ip(100), now).is_none(),
            "the table's terminal"
        );
        assert!(!t.lock_applies("201", ip(100), now));
        assert!(t.lock_applies("201", ip(60), now));
        // Another badge is untouched; time lifts it all.
        assert!(t.locked_for("202", ip(60), now).is_none());
        assert!(t.locked_for("201", ip(60), now + w + w).is_none());
        assert!(t.locked_for("201", ip(1), now + w + w).is_none());
    }
}
