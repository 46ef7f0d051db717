//! Link counters, shared between the link task and whoever displays them.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

/// A snapshot of the link counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct LinkCounters {
    /// Valid frames received (cards, statuses, heartbeats, duplicates).
    pub frames: u64,
    /// Garbled, unknown or truncated frames received.
    pub errors: u64,
    /// Times the port was opened again after the link had been up.
    pub reconnects: u64,
    /// `croupier-v1` retransmissions recognised and suppressed.
    pub duplicates: u64,
    /// `croupier-v1` NAKs sent.
    pub naks: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Stats {
    pub(crate) frames: AtomicU64,
    pub(crate) errors: AtomicU64,
    pub(crate) reconnects: AtomicU64,
    pub(crate) duplicates: AtomicU64,
    pub(crate) naks: AtomicU64,
}

impl Stats {
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> LinkCounters {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        LinkCounters {
            frames: get(&self.frames),
            errors: get(&self.errors),
            reconnects: get(&self.reconnects),
            duplicates: get(&self.duplicates),
            naks: get(&self.naks),
        }
    }
}
