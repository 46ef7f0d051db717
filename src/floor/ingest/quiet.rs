//! When a pass that has taken nothing for a while asks the stream itself whether it holds
//! more: the one check of "caught up" that does not rest on the broker's bookkeeping.
//!
//! A pass decides it is caught up from two answers of the broker: the consumer delivered
//! nothing new, and the stream's info says its last sequence is at or below what the pass
//! looked at. Both are bookkeeping about the stream, not the stream: the fifth hour's soak
//! (`docs/src/studio.md`) ended with a floor 254 rows behind a complete stream and silent
//! for the check's 90 s, which is what a pass believing both would do. Reading the next
//! message itself (`Stream::get_raw_message`, answered by the stream's leader from its
//! store) settles it; it costs one request per [`NO_PROGRESS`] while a table is idle.

use std::time::{Duration, Instant};

/// How long a pass may take nothing before it reads the stream itself. Far above a pull's
/// wait ([`super::pass`]'s `IDLE`), far below the stall alarm's two minutes, and below
/// the studio check's 90 s: a pass misled by the broker catches up within it.
pub(super) const NO_PROGRESS: Duration = Duration::from_secs(10);

/// A pass's record of when it last moved and last read the stream itself.
#[derive(Debug)]
pub(super) struct Quiet {
    /// When the pass last took a message (its stream head moved).
    moved: Instant,
    /// When it last read the stream itself to see whether it holds more.
    probed: Instant,
    /// The last read found more: keep reading the stream itself until it finds nothing.
    reading: bool,
}

impl Quiet {
    /// A pass that starts at `now`.
    pub(super) fn new(now: Instant) -> Quiet {
        Quiet {
            moved: now,
            probed: now,
            reading: false,
        }
    }

    /// The pass took a message at `now`.
    pub(super) fn moved(&mut self, now: Instant) {
        self.moved = now;
    }

    /// Whether the pass should read the stream itself now: it is already doing so, or it
    /// has taken nothing, and not looked, for [`NO_PROGRESS`].
    pub(super) fn probe_due(&self, now: Instant) -> bool {
        self.reading
            || (now.saturating_duration_since(self.moved) >= NO_PROGRESS
                && now.saturating_duration_since(self.probed) >= NO_PROGRESS)
    }

    /// The stream was read at `now`; `found` whether it held more. Returns true when this
    /// begins an episode of reading it directly (said once in the log).
    pub(super) fn probed(&mut self, now: Instant, found: bool) -> bool {
        self.probed = now;
        let begins = found && !self.reading;
        self.reading = found;
        begins
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_that_keeps_moving_never_reads_the_stream_itself() {
        let start = Instant::now();
        let mut q = Quiet::new(start);
        for s in 1..100 {
            let now = start + Duration::from_secs(s);
            q.moved(now);
            assert!(!q.probe_due(now), "at {s} s");
        }
    }

    #[test]
    fn a_quiet_pass_reads_once_per_interval_until_it_finds_more() {
        let start = Instant::now();
        let mut q = Quiet::new(start);
        assert!(!q.probe_due(start + NO_PROGRESS - Duration::from_millis(1)));
        let first = start + NO_PROGRESS;
        assert!(q.probe_due(first));
        assert!(!q.probed(first, false), "nothing found begins nothing");
        // Looked just now: not again until another interval passed.
        assert!(!q.probe_due(first + Duration::from_secs(3)));
        let second = first + NO_PROGRESS;
        assert!(q.probe_due(second));
        // Found more: said once, then read on every look until the stream runs out.
        assert!(q.probed(second, true));
        assert!(q.probe_due(second));
        assert!(!q.probed(second, true), "an episode is said once");
        q.moved(second);
        assert!(q.probe_due(second + Duration::from_millis(1)));
        assert!(!q.probed(second + Duration::from_millis(1), false));
        assert!(!q.probe_due(second + Duration::from_secs(1)));
    }

    #[test]
    fn a_clock_that_reads_earlier_is_not_a_quiet_pass() {
        let start = Instant::now() + Duration::from_secs(60);
        let q = Quiet::new(start);
        assert!(!q.probe_due(start - Duration::from_secs(30)));
    }
}
