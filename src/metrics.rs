//! The service's Prometheus metrics: a tiny hand-written registry (relaxed atomic
//! counters, fixed-bucket histograms) and the text exposition format 0.0.4.
//!
//! Hand-written rather than a crate: a dozen series, all known at compile time, whose
//! labels come from closed enums — a registry crate would bring dynamic label maps,
//! locks and its own dependency tree to a binary that must stay small on a Pi. Every
//! recording is one relaxed `fetch_add` (the table task's hot path stays as it was); a
//! scrape reads the atomics and formats text.
//!
//! Each counter is incremented at exactly one place, after the fact it counts is durable
//! (see `table/task.rs`): cards, alarms and settled rounds after their log row commits,
//! the commit latency around the store's append.

use croupier_drivers::shoe::CountersHandle;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The content type of the text exposition format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// What happened to a card that came out of the shoe (label `outcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardOutcome {
    /// Applied by the engine and recorded as an input.
    Applied,
    /// Read while the table was locked: recorded as `held`.
    Held,
    /// Refused by the rules: recorded in an alarm.
    Refused,
    /// Read while the store was unusable: kept in the spill file (the snapshot's `unrecorded`)
    /// until a `recovered` row takes it into the log.
    Unrecorded,
}

impl CardOutcome {
    const ALL: [CardOutcome; 4] = [
        CardOutcome::Applied,
        CardOutcome::Held,
        CardOutcome::Refused,
        CardOutcome::Unrecorded,
    ];

    fn label(self) -> &'static str {
        match self {
            CardOutcome::Applied => "applied",
            CardOutcome::Held => "held",
            CardOutcome::Refused => "refused",
            CardOutcome::Unrecorded => "unrecorded",
        }
    }
}

/// Why the table raised an alarm (label `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlarmKind {
    /// The shoe's link dropped.
    ShoeDisconnected,
    /// The shoe's sensors report a problem (lid, jam, misread).
    ShoeStatus,
    /// The shoe sent an invalid frame.
    ShoeFault,
    /// A card out of the shoe that the rules refuse.
    CardRefused,
    /// A button of the button box is stuck.
    ButtonStuck,
    /// The dealer pressed *call supervisor*.
    SupervisorCalled,
    /// The store works again after a failed write, with items read meanwhile to decide on.
    StoreFailed,
}

impl AlarmKind {
    const ALL: [AlarmKind; 7] = [
        AlarmKind::ShoeDisconnected,
        AlarmKind::ShoeStatus,
        AlarmKind::ShoeFault,
        AlarmKind::CardRefused,
        AlarmKind::ButtonStuck,
        AlarmKind::SupervisorCalled,
        AlarmKind::StoreFailed,
    ];

    /// The label value.
    pub fn label(self) -> &'static str {
        match self {
            AlarmKind::ShoeDisconnected => "shoe_disconnected",
            AlarmKind::ShoeStatus => "shoe_status",
            AlarmKind::ShoeFault => "shoe_fault",
            AlarmKind::CardRefused => "card_refused",
            AlarmKind::ButtonStuck => "button_stuck",
            AlarmKind::SupervisorCalled => "supervisor_called",
            AlarmKind::StoreFailed => "store_failed",
        }
    }
}

/// A kind of live subscriber (label `stream`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// `/ws/dealer`.
    DealerWs,
    /// `/ws/public`.
    PublicWs,
    /// `/sse/public`.
    PublicSse,
    /// `/api/stream` (snapshot + deltas over SSE).
    ApiStream,
}

impl Stream {
    const ALL: [Stream; 4] = [
        Stream::DealerWs,
        Stream::PublicWs,
        Stream::PublicSse,
        Stream::ApiStream,
    ];

    fn label(self) -> &'static str {
        match self {
            Stream::DealerWs => "dealer_ws",
            Stream::PublicWs => "public_ws",
            Stream::PublicSse => "public_sse",
            Stream::ApiStream => "api_stream",
        }
    }
}

/// Where a subscriber fell behind (label `feed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feed {
    /// The table's deltas ([`crate::table::Subscription`]): resynced with a snapshot.
    Table,
    /// The public feed: caught up from the ring, or resynced with a full view.
    Public,
}

impl Feed {
    const ALL: [Feed; 2] = [Feed::Table, Feed::Public];

    fn label(self) -> &'static str {
        match self {
            Feed::Table => "table",
            Feed::Public => "public",
        }
    }
}

/// A histogram with fixed bucket bounds (seconds); observations are durations.
#[derive(Debug)]
pub struct Histogram {
    bounds: &'static [f64],
    /// Per-bucket counts (not cumulative); the last one is `+Inf`.
    counts: Vec<AtomicU64>,
    sum_ns: AtomicU64,
}

/// Commit latency buckets: from a fast SSD's fsync to an SD card having a bad moment.
pub const COMMIT_BUCKETS: &[f64] = &[
    0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
];

impl Histogram {
    /// An empty histogram with these upper bounds (ascending, seconds).
    pub fn new(bounds: &'static [f64]) -> Histogram {
        Histogram {
            bounds,
            counts: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(),
            sum_ns: AtomicU64::new(0),
        }
    }

    /// Records one observation.
    pub fn observe(&self, d: Duration) {
        let secs = d.as_secs_f64();
        let i = self
            .bounds
            .iter()
            .position(|&le| secs <= le)
            .unwrap_or(self.bounds.len());
        self.counts[i].fetch_add(1, Ordering::Relaxed);
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.sum_ns.fetch_add(ns, Ordering::Relaxed);
    }

    /// Observations so far.
    pub fn count(&self) -> u64 {
        self.counts.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }
}

/// Counts of what the table and its subscribers did since the process started.
#[derive(Debug)]
pub struct Metrics {
    cards: [AtomicU64; 4],
    alarms: [AtomicU64; 7],
    rounds_settled: AtomicU64,
    store_failures: AtomicU64,
    commit: Histogram,
    subscribers: [AtomicI64; 4],
    lagged: [AtomicU64; 2],
    shoe: OnceLock<CountersHandle>,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics {
            cards: Default::default(),
            alarms: Default::default(),
            rounds_settled: AtomicU64::new(0),
            store_failures: AtomicU64::new(0),
            commit: Histogram::new(COMMIT_BUCKETS),
            subscribers: Default::default(),
            lagged: Default::default(),
            shoe: OnceLock::new(),
        }
    }
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

fn index<T: PartialEq>(all: &[T], x: T) -> usize {
    all.iter().position(|a| *a == x).unwrap_or(0)
}

impl Metrics {
    /// Live subscribers of `stream` now.
    pub fn subscribers(&self, stream: Stream) -> i64 {
        self.subscribers[index(&Stream::ALL, stream)].load(Ordering::Relaxed)
    }

    /// Times a subscriber of `feed` fell behind.
    pub fn lagged_count(&self, feed: Feed) -> u64 {
        self.lagged[index(&Feed::ALL, feed)].load(Ordering::Relaxed)
    }

    /// One card out of the shoe, once its fate is recorded (or known unrecordable).
    pub fn card(&self, outcome: CardOutcome) {
        bump(&self.cards[index(&CardOutcome::ALL, outcome)]);
    }

    /// One alarm row committed.
    pub fn alarm(&self, kind: AlarmKind) {
        bump(&self.alarms[index(&AlarmKind::ALL, kind)]);
    }

    /// `n` rounds settled by one committed row.
    pub fn rounds_settled(&self, n: u64) {
        self.rounds_settled.fetch_add(n, Ordering::Relaxed);
    }

    /// One durable append to the event log and how long it took.
    pub fn committed(&self, took: Duration) {
        self.commit.observe(took);
    }

    /// One append that failed (the table went out of service).
    pub fn store_failure(&self) {
        bump(&self.store_failures);
    }

    /// One subscriber fell behind `feed` and was caught up or resynced.
    pub fn lagged(&self, feed: Feed) {
        bump(&self.lagged[index(&Feed::ALL, feed)]);
    }

    /// Counts a live subscriber of `stream` until the guard is dropped.
    pub fn subscriber(self: &Arc<Self>, stream: Stream) -> SubscriberGuard {
        let i = index(&Stream::ALL, stream);
        self.subscribers[i].fetch_add(1, Ordering::Relaxed);
        SubscriberGuard {
            metrics: Arc::clone(self),
            index: i,
        }
    }

    /// The shoe whose link counters are reported (the first one attached wins).
    pub fn attach_shoe(&self, counters: CountersHandle) {
        let _ = self.shoe.set(counters);
    }

    /// Durable appends so far (the commit latency histogram's count).
    pub fn commits(&self) -> u64 {
        self.commit.count()
    }

    /// Writes every series of this registry.
    pub fn write_to(&self, out: &mut Exposition) {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        out.family(
            "croupier_cards_read_total",
            "counter",
            "Cards out of the shoe, by what became of them (applied, held while locked, refused by the rules, unrecorded while the store was unusable).",
        );
        for (o, c) in CardOutcome::ALL.iter().zip(&self.cards) {
            out.sample(
                "croupier_cards_read_total",
                &[("outcome", o.label())],
                get(c),
            );
        }
        out.family(
            "croupier_alarms_total",
            "counter",
            "Alarm rows recorded, by kind.",
        );
        for (k, c) in AlarmKind::ALL.iter().zip(&self.alarms) {
            out.sample("croupier_alarms_total", &[("kind", k.label())], get(c));
        }
        out.counter(
            "croupier_rounds_settled_total",
            "Rounds settled (and recorded) by this process.",
            get(&self.rounds_settled),
        );
        out.counter(
            "croupier_store_write_failures_total",
            "Appends to the event log that failed (each takes the table out of service).",
            get(&self.store_failures),
        );
        out.histogram(
            "croupier_commit_latency_seconds",
            "Time to append and commit one event-log row (synchronous=FULL), as the table task waits for it.",
            &self.commit,
        );
        out.family(
            "croupier_subscribers",
            "gauge",
            "Live subscribers, by stream.",
        );
        for (s, c) in Stream::ALL.iter().zip(&self.subscribers) {
            let n = c.load(Ordering::Relaxed).max(0);
            out.sample("croupier_subscribers", &[("stream", s.label())], n);
        }
        out.family(
            "croupier_lagged_resyncs_total",
            "counter",
            "Times a subscriber fell behind and was resynced (table) or caught up from the ring or resynced (public).",
        );
        for (f, c) in Feed::ALL.iter().zip(&self.lagged) {
            out.sample(
                "croupier_lagged_resyncs_total",
                &[("feed", f.label())],
                get(c),
            );
        }
        if let Some(shoe) = self.shoe.get() {
            let link = shoe.get();
            out.counter(
                "croupier_shoe_frames_total",
                "Valid frames received from the shoe (cards, statuses, heartbeats, duplicates).",
                link.frames,
            );
            out.family(
                "croupier_shoe_frames_rejected_total",
                "counter",
                "Frames from the shoe the driver rejected, by reason.",
            );
            for (reason, n) in link.rejected.by_reason() {
                out.sample(
                    "croupier_shoe_frames_rejected_total",
                    &[("reason", reason)],
                    n,
                );
            }
            out.counter(
                "croupier_shoe_reconnects_total",
                "Times the shoe's port was opened again after the link had been up.",
                link.reconnects,
            );
            out.counter(
                "croupier_shoe_duplicates_total",
                "croupier-v1 retransmissions recognised and suppressed.",
                link.duplicates,
            );
            out.counter(
                "croupier_shoe_naks_total",
                "croupier-v1 NAKs sent to the shoe.",
                link.naks,
            );
        }
    }
}

/// Keeps one subscriber counted; dropping it (the connection ends) uncounts it.
#[derive(Debug)]
pub struct SubscriberGuard {
    metrics: Arc<Metrics>,
    index: usize,
}

impl Drop for SubscriberGuard {
    fn drop(&mut self) {
        self.metrics.subscribers[self.index].fetch_sub(1, Ordering::Relaxed);
    }
}

/// A text exposition (format 0.0.4) being written.
#[derive(Debug, Default)]
pub struct Exposition {
    text: String,
}

/// Escapes a label value (`\`, `"` and newlines).
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

impl Exposition {
    /// Starts a metric family: its `# HELP` and `# TYPE` lines.
    pub fn family(&mut self, name: &str, kind: &str, help: &str) {
        let help = help.replace('\\', "\\\\").replace('\n', "\\n");
        // Writing to a String cannot fail.
        let _ = writeln!(self.text, "# HELP {name} {help}\n# TYPE {name} {kind}");
    }

    /// One sample of the current family.
    pub fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: impl std::fmt::Display) {
        self.text.push_str(name);
        if !labels.is_empty() {
            self.text.push('{');
            for (i, (k, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.text.push(',');
                }
                let _ = write!(self.text, "{k}=\"{}\"", escape(v));
            }
            self.text.push('}');
        }
        let _ = writeln!(self.text, " {value}");
    }

    /// A counter without labels.
    pub fn counter(&mut self, name: &str, help: &str, value: u64) {
        self.family(name, "counter", help);
        self.sample(name, &[], value);
    }

    /// A gauge without labels.
    pub fn gauge(&mut self, name: &str, help: &str, value: impl std::fmt::Display) {
        self.family(name, "gauge", help);
        self.sample(name, &[], value);
    }

    /// A histogram: cumulative `_bucket`s, `_sum`, `_count`. The count is the `+Inf`
    /// bucket, so a scrape racing an observation still reads a consistent histogram.
    pub fn histogram(&mut self, name: &str, help: &str, h: &Histogram) {
        self.family(name, "histogram", help);
        let bucket = format!("{name}_bucket");
        let mut cumulative = 0u64;
        for (i, c) in h.counts.iter().enumerate() {
            cumulative += c.load(Ordering::Relaxed);
            let le = match h.bounds.get(i) {
                Some(b) => b.to_string(),
                None => "+Inf".to_string(),
            };
            self.sample(&bucket, &[("le", &le)], cumulative);
        }
        let sum = h.sum_ns.load(Ordering::Relaxed) as f64 / 1e9;
        self.sample(&format!("{name}_sum"), &[], sum);
        self.sample(&format!("{name}_count"), &[], cumulative);
    }

    /// The text.
    pub fn finish(self) -> String {
        self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_histogram_is_cumulative_and_counts_at_inf() {
        let h = Histogram::new(&[0.001, 0.01]);
        for ms in [0, 1, 5, 5, 50] {
            h.observe(Duration::from_millis(ms));
        }
        let mut out = Exposition::default();
        out.histogram("x_seconds", "test", &h);
        let text = out.finish();
        assert!(
            text.contains("x_seconds_bucket{le=\"0.001\"} 2\n"),
            "{text}"
        );
        assert!(text.contains("x_seconds_bucket{le=\"0.01\"} 4\n"), "{text}");
        assert!(text.contains("x_seconds_bucket{le=\"+Inf\"} 5\n"), "{text}");
        assert!(text.contains("x_seconds_count 5\n"), "{text}");
        assert!(text.contains("x_seconds_sum 0.061\n"), "{text}");
        assert_eq!(h.count(), 5);
    }

    #[test]
    fn subscribers_are_counted_while_their_guard_lives() {
        let m = Arc::new(Metrics::default());
        let a = m.subscriber(Stream::PublicWs);
        let b = m.subscriber(Stream::PublicWs);
        drop(a);
        let mut out = Exposition::default();
        m.write_to(&mut out);
        let text = out.finish();
        assert!(
            text.contains("croupier_subscribers{stream=\"public_ws\"} 1\n"),
            "{text}"
        );
        drop(b);
        let mut out = Exposition::default();
        m.write_to(&mut out);
        assert!(out
            .finish()
            .contains("croupier_subscribers{stream=\"public_ws\"} 0\n"));
    }

    #[test]
    fn label_values_are_escaped() {
        let mut out = Exposition::default();
        out.family("y", "gauge", "a\\b\nc");
        out.sample("y", &[("v", "q\"x\\\n")], 1);
        assert_eq!(
            out.finish(),
            "# HELP y a\\\\b\\nc\n# TYPE y gauge\ny{v=\"q\\\"x\\\\\\n\"} 1\n"
        );
    }
}
