//! Messages on a table's log stream that the table did not sign (with its key pinned in
//! `--table-keys`): noise someone wrote to the table's subject — on an open broker anyone,
//! on a studio broker the table's own credential in other hands. They are passed over and
//! counted, and said as one `unsigned` alarm per table and [`EVERY`] with their number:
//! never an alarm per message (an outside test once raised 1,202 in a second), never a
//! reason to stop following the table.

use super::chain::Alarm;
use std::time::{Duration, Instant};

/// At most one noise alarm per table this often; the first at once.
pub const EVERY: Duration = Duration::from_secs(60);

/// One table's noise since its last alarm.
#[derive(Debug, Default)]
pub struct Noise {
    /// Messages passed over since the last alarm.
    count: u64,
    /// Their first and last stream sequences.
    first: u64,
    last: u64,
    /// When the last alarm was raised.
    raised: Option<Instant>,
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

    /// The alarm due at `now`, if any: the first noise at once, then the count of what
    /// followed once [`EVERY`] has passed since the alarm before.
    pub fn due(&mut self, table: &str, now: Instant) -> Option<Alarm> {
        if self.count == 0 || self.raised.is_some_and(|at| now.duration_since(at) < EVERY) {
            return None;
        }
        let alarm = Alarm {
            seq: self.last,
            kind: "unsigned",
            detail: format!(
                "table {table}: {} message(s) on its log stream not signed with its pinned key (stream sequences {}..={}) passed over: someone else writes to the table's subject",
                self.count, self.first, self.last
            ),
        };
        self.count = 0;
        self.raised = Some(now);
        Some(alarm)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_is_one_alarm_at_once_then_one_per_interval_with_its_count() {
        let mut noise = Noise::default();
        let start = Instant::now();
        assert!(noise.due("t1", start).is_none(), "no noise, no alarm");
        noise.heard(7);
        let first = noise.due("t1", start).expect("the first at once");
        assert_eq!((first.kind, first.seq), ("unsigned", 7));
        assert!(first.detail.contains("1 message(s)") && first.detail.contains("7..=7"));
        for seq in 8..1_208 {
            noise.heard(seq);
            assert!(noise.due("t1", start + Duration::from_secs(1)).is_none());
        }
        let second = noise.due("t1", start + EVERY).expect("one with the count");
        assert!(
            second.detail.contains("1200 message(s)") && second.detail.contains("8..=1207"),
            "{}",
            second.detail
        );
        assert!(noise.due("t1", start + EVERY * 3).is_none(), "quiet since");
    }
}
