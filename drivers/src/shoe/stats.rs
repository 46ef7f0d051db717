//! Link counters, shared between the link task and whoever displays them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde::Serialize;

use crate::event::FaultKind;

/// Rejected frames by reason (the [`FaultKind`] the decoder reported).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct RejectedFrames {
    /// The bytes do not have the dialect's exact shape.
    pub malformed: u64,
    /// `croupier-v1` CRC mismatches.
    pub bad_crc: u64,
    /// Well-formed frames of a type the host does not take from a shoe.
    pub unknown_type: u64,
    /// Too many bytes without a delimiter.
    pub oversized: u64,
    /// Partial frames cut off by a disconnect.
    pub truncated: u64,
}

impl RejectedFrames {
    /// Each reason with its stable snake_case name (for metrics labels), in a fixed order.
    pub fn by_reason(&self) -> [(&'static str, u64); 5] {
        [
            ("malformed", self.malformed),
            ("bad_crc", self.bad_crc),
            ("unknown_type", self.unknown_type),
            ("oversized", self.oversized),
            ("truncated", self.truncated),
        ]
    }
}

/// A snapshot of the link counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct LinkCounters {
    /// Valid frames received (cards, statuses, heartbeats, duplicates).
    pub frames: u64,
    /// Garbled, unknown or truncated frames received.
    pub errors: u64,
    /// `errors` by reason.
    pub rejected: RejectedFrames,
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
    rejected: [AtomicU64; 5],
    pub(crate) reconnects: AtomicU64,
    pub(crate) duplicates: AtomicU64,
    pub(crate) naks: AtomicU64,
}

impl Stats {
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// One rejected frame: the total and its reason, counted together at the one place
    /// the decoder's fault is seen.
    pub(crate) fn reject(&self, kind: FaultKind) {
        let i = match kind {
            FaultKind::Malformed => 0,
            FaultKind::BadCrc => 1,
            FaultKind::UnknownType => 2,
            FaultKind::Oversized => 3,
            FaultKind::Truncated => 4,
        };
        Stats::bump(&self.rejected[i]);
        Stats::bump(&self.errors);
    }

    pub(crate) fn snapshot(&self) -> LinkCounters {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        LinkCounters {
            frames: get(&self.frames),
            errors: get(&self.errors),
            rejected: RejectedFrames {
                malformed: get(&self.rejected[0]),
                bad_crc: get(&self.rejected[1]),
                unknown_type: get(&self.rejected[2]),
                oversized: get(&self.rejected[3]),
                truncated: get(&self.rejected[4]),
            },
            reconnects: get(&self.reconnects),
            duplicates: get(&self.duplicates),
            naks: get(&self.naks),
        }
    }
}

/// A cloneable, thread-safe reader of one shoe's link counters, for whoever reports them
/// (the metrics endpoint) while the shoe itself is owned elsewhere.
#[derive(Debug, Clone)]
pub struct CountersHandle(pub(crate) Arc<Stats>);

impl CountersHandle {
    /// The counters now.
    pub fn get(&self) -> LinkCounters {
        self.0.snapshot()
    }
}
