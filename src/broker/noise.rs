//! Messages on a table's subjects that the table did not sign: noise someone wrote — on an
//! open broker anyone, on a studio broker the table's own credential in other hands. Those
//! who read the table's streams (the floor, the relays) pass them over and count them, and
//! say them at most once per table, kind and [`EVERY`], with their number: never once per
//! message (an outside test once had the floor raise 1,202 alarms in a second), never a
//! reason to stop following the table.

use std::time::{Duration, Instant};

/// At most one report per table and kind this often; the first at once.
pub const EVERY: Duration = Duration::from_secs(60);

/// One table's noise of one kind since it was last reported.
#[derive(Debug, Default)]
pub struct Noise {
    /// Messages passed over since the last report.
    count: u64,
    /// Their first and last stream sequences.
    first: u64,
    last: u64,
    /// When the last report was made.
    said: Option<Instant>,
}

/// What is due to be said of some noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Heard {
    /// Messages passed over since the last report.
    pub count: u64,
    /// Their first and last stream sequences.
    pub first: u64,
    /// The last one.
    pub last: u64,
}

impl Noise {
    /// A message at `stream_seq` the table did not sign.
    pub fn heard(&mut self, stream_seq: u64) {
        if self.count == 0 {
            self.first = stream_seq;
        }
        self.count += 1;
        self.last = stream_seq;
    }

    /// What is due to be said at `now`, if anything: the first noise at once, then what
    /// followed once [`EVERY`] has passed since the report before.
    pub fn due(&mut self, now: Instant) -> Option<Heard> {
        if self.count == 0 || self.said.is_some_and(|at| now.duration_since(at) < EVERY) {
            return None;
        }
        let heard = Heard {
            count: self.count,
            first: self.first,
            last: self.last,
        };
        self.count = 0;
        self.said = Some(now);
        Some(heard)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_is_said_at_once_then_once_per_interval_with_its_count() {
        let mut noise = Noise::default();
        let start = Instant::now();
        assert!(noise.due(start).is_none(), "no noise, nothing to say");
        noise.heard(7);
        assert_eq!(
            noise.due(start),
            Some(Heard {
                count: 1,
                first: 7,
                last: 7
            }),
            "the first at once"
        );
        for seq in 8..1_208 {
            noise.heard(seq);
            assert!(noise.due(start + Duration::from_secs(1)).is_none());
        }
        assert_eq!(
            noise.due(start + EVERY),
            Some(Heard {
                count: 1_200,
                first: 8,
                last: 1_207
            }),
            "one with the count"
        );
        assert!(noise.due(start + EVERY * 3).is_none(), "quiet since");
    }
}
