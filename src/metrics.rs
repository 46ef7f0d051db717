//! The service's Prometheus metrics, on the Prometheus project's client
//! (`prometheus-client`): the table's counters, gauges and the commit-latency histogram
//! live in a [`Registry`] owned by [`Metrics`]; what is only known at scrape time (the
//! shoe driver's link counters, readiness, the clock, the process) is written through an
//! [`Exposition`], which registers it in a per-scrape registry. Both are encoded by the
//! crate; [`Exposition::finish`] then renders its OpenMetrics text as the Prometheus text
//! format 0.0.4 (see [`to_text_004`] for why).
//!
//! Every recording stays one atomic operation on the table task's hot path (the crate's
//! counters are atomics; label sets are closed enums, resolved once at start).
//!
//! Each counter is incremented at exactly one place, after the fact it counts is durable
//! (see `table/task.rs`): cards, alarms and settled rounds after their log row commits,
//! the commit latency around the store's append.

use croupier_drivers::shoe::CountersHandle;
use prometheus_client::encoding::text::encode_registry;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::sync::atomic::{AtomicU64, Ordering};
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

/// The wallet's error codes counted (`WalletError::code`, label `code`), all but
/// `insufficient_funds`: that one is the player's balance, not a fault.
const WALLET_ERROR_CODES: [&str; 4] = [
    "unknown_player",
    "wallet_conflict",
    "wallet_rolled_back",
    "wallet_unavailable",
];

/// Commit latency buckets: from a fast SSD's fsync to an SD card having a bad moment.
pub const COMMIT_BUCKETS: &[f64] = &[
    0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
];

/// The crate appends the period itself.
fn help(text: &str) -> &str {
    text.strip_suffix('.').unwrap_or(text)
}

/// The crate names a counter family without `_total` and adds it to the samples.
fn counter_name(name: &str) -> &str {
    name.strip_suffix("_total").unwrap_or(name)
}

/// One counter per value of a closed label.
struct Labelled<C> {
    each: Vec<C>,
}

impl<
        C: Clone
            + Default
            + prometheus_client::encoding::EncodeMetric
            + prometheus_client::metrics::TypedMetric
            + Send
            + Sync
            + std::fmt::Debug
            + 'static,
    > Labelled<C>
{
    /// Registers `name` with one series per `(label, value)`.
    fn register(
        registry: &mut Registry,
        name: &str,
        text: &str,
        label: &'static str,
        values: &[&'static str],
    ) -> Labelled<C> {
        let family = prometheus_client::metrics::family::Family::<
            [(&'static str, &'static str); 1],
            C,
        >::default();
        let each = values
            .iter()
            .map(|v| family.get_or_create(&[(label, *v)]).clone())
            .collect();
        registry.register(name, help(text), family);
        Labelled { each }
    }
}

/// Counts of what the table and its subscribers did since the process started.
pub struct Metrics {
    registry: Registry,
    cards: Labelled<Counter>,
    alarms: Labelled<Counter>,
    rounds_settled: Counter,
    store_failures: Counter,
    commit: Histogram,
    commits: AtomicU64,
    subscribers: Labelled<Gauge>,
    lagged: Labelled<Counter>,
    wallet_errors: Labelled<Counter>,
    shoe: OnceLock<CountersHandle>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Metrics {
        let mut registry = Registry::default();
        let cards = Labelled::register(
            &mut registry,
            counter_name("croupier_cards_read_total"),
            "Cards out of the shoe, by what became of them (applied, held while locked, refused by the rules, unrecorded while the store was unusable).",
            "outcome",
            &CardOutcome::ALL.map(CardOutcome::label),
        );
        let alarms = Labelled::register(
            &mut registry,
            counter_name("croupier_alarms_total"),
            "Alarm rows recorded, by kind.",
            "kind",
            &AlarmKind::ALL.map(AlarmKind::label),
        );
        let rounds_settled = Counter::default();
        registry.register(
            "croupier_rounds_settled",
            "Rounds settled (and recorded) by this process",
            rounds_settled.clone(),
        );
        let store_failures = Counter::default();
        registry.register(
            "croupier_store_write_failures",
            "Appends to the event log that failed (each takes the table out of service)",
            store_failures.clone(),
        );
        let commit = Histogram::new(COMMIT_BUCKETS.iter().copied());
        registry.register(
            "croupier_commit_latency_seconds",
            "Time to append and commit one event-log row (synchronous=FULL), as the table task waits for it",
            commit.clone(),
        );
        let subscribers = Labelled::register(
            &mut registry,
            "croupier_subscribers",
            "Live subscribers, by stream.",
            "stream",
            &Stream::ALL.map(Stream::label),
        );
        let lagged = Labelled::register(
            &mut registry,
            counter_name("croupier_lagged_resyncs_total"),
            "Times a subscriber fell behind and was resynced (table) or caught up from the ring or resynced (public).",
            "feed",
            &Feed::ALL.map(Feed::label),
        );
        let wallet_errors = Labelled::register(
            &mut registry,
            counter_name("croupier_wallet_errors_total"),
            "Wallet requests that failed, by code (a player's insufficient funds is not an error): the wallet did not answer, refused an id it had seen for another request or already rolled back, or knew no such player.",
            "code",
            &WALLET_ERROR_CODES,
        );
        Metrics {
            registry,
            cards,
            alarms,
            rounds_settled,
            store_failures,
            commit,
            commits: AtomicU64::new(0),
            subscribers,
            lagged,
            wallet_errors,
            shoe: OnceLock::new(),
        }
    }
}

fn index<T: PartialEq>(all: &[T], x: T) -> usize {
    all.iter().position(|a| *a == x).unwrap_or(0)
}

impl Metrics {
    /// Live subscribers of `stream` now.
    pub fn subscribers(&self, stream: Stream) -> i64 {
        self.subscribers.each[index(&Stream::ALL, stream)].get()
    }

    /// Times a subscriber of `feed` fell behind.
    pub fn lagged_count(&self, feed: Feed) -> u64 {
        self.lagged.each[index(&Feed::ALL, feed)].get()
    }

    /// One card out of the shoe, once its fate is recorded (or known unrecordable).
    pub fn card(&self, outcome: CardOutcome) {
        self.cards.each[index(&CardOutcome::ALL, outcome)].inc();
    }

    /// One alarm row committed.
    pub fn alarm(&self, kind: AlarmKind) {
        self.alarms.each[index(&AlarmKind::ALL, kind)].inc();
    }

    /// `n` rounds settled by one committed row.
    pub fn rounds_settled(&self, n: u64) {
        self.rounds_settled.inc_by(n);
    }

    /// One durable append to the event log and how long it took.
    pub fn committed(&self, took: Duration) {
        self.commit.observe(took.as_secs_f64());
        self.commits.fetch_add(1, Ordering::Relaxed);
    }

    /// One append that failed (the table went out of service).
    pub fn store_failure(&self) {
        self.store_failures.inc();
    }

    /// One subscriber fell behind `feed` and was caught up or resynced.
    pub fn lagged(&self, feed: Feed) {
        self.lagged.each[index(&Feed::ALL, feed)].inc();
    }

    /// One wallet request failed (`crate::wallet::Counted` calls it for every answer that
    /// is not the player's own shortfall).
    pub fn wallet_error(&self, code: &'static str) {
        if let Some(i) = WALLET_ERROR_CODES.iter().position(|c| *c == code) {
            self.wallet_errors.each[i].inc();
        }
    }

    /// Counts a live subscriber of `stream` until the guard is dropped.
    pub fn subscriber(self: &Arc<Self>, stream: Stream) -> SubscriberGuard {
        let gauge = self.subscribers.each[index(&Stream::ALL, stream)].clone();
        gauge.inc();
        SubscriberGuard { gauge }
    }

    /// The shoe whose link counters are reported (the first one attached wins).
    pub fn attach_shoe(&self, counters: CountersHandle) {
        let _ = self.shoe.set(counters);
    }

    /// Durable appends so far (the commit latency histogram's count).
    pub fn commits(&self) -> u64 {
        self.commits.load(Ordering::Relaxed)
    }

    /// Writes every series of this registry, and the shoe's link counters.
    pub fn write_to(&self, out: &mut Exposition) {
        out.registry(&self.registry);
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
    gauge: Gauge,
}

impl Drop for SubscriberGuard {
    fn drop(&mut self) {
        self.gauge.dec();
    }
}

/// A family of scrape-time values being collected.
#[derive(Debug)]
struct Pending {
    name: String,
    kind: &'static str,
    help: String,
    samples: Vec<(Vec<(String, String)>, f64)>,
}

/// One scrape being written: registries encoded by `prometheus-client`, and scrape-time
/// families registered in a registry of their own when it finishes.
#[derive(Debug, Default)]
pub struct Exposition {
    text: String,
    pending: Vec<Pending>,
}

impl Exposition {
    /// Encodes `registry` into the scrape.
    pub fn registry(&mut self, registry: &Registry) {
        // Writing to a String cannot fail.
        let _ = encode_registry(&mut self.text, registry);
    }

    /// Starts a scrape-time metric family (`kind`: `counter` or `gauge`).
    pub fn family(&mut self, name: &str, kind: &str, help: &str) {
        self.pending.push(Pending {
            name: name.to_string(),
            kind: if kind == "counter" {
                "counter"
            } else {
                "gauge"
            },
            help: help.to_string(),
            samples: Vec::new(),
        });
    }

    /// One sample of the current family.
    pub fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: impl Into<Sample>) {
        let labels = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        if let Some(f) = self.pending.last_mut().filter(|f| f.name == name) {
            f.samples.push((labels, value.into().0));
        }
    }

    /// A counter without labels.
    pub fn counter(&mut self, name: &str, help: &str, value: u64) {
        self.family(name, "counter", help);
        self.sample(name, &[], value);
    }

    /// A gauge without labels.
    pub fn gauge(&mut self, name: &str, help: &str, value: impl Into<Sample>) {
        self.family(name, "gauge", help);
        self.sample(name, &[], value);
    }

    /// The process's resident memory and CPU time (`croupier_process_*`), which every
    /// role (table, relay, floor) reports the same way.
    pub fn process(&mut self, p: &crate::process::ProcessFigures) {
        self.gauge(
            "croupier_process_resident_memory_bytes",
            "Resident set size (VmRSS).",
            p.rss_bytes,
        );
        self.family(
            "croupier_process_cpu_seconds_total",
            "counter",
            "User and system CPU time.",
        );
        self.sample("croupier_process_cpu_seconds_total", &[], p.cpu_seconds);
    }

    /// The text, in the Prometheus text format 0.0.4.
    pub fn finish(mut self) -> String {
        type Labels = Vec<(String, String)>;
        type F64Counter = Counter<f64, AtomicU64>;
        type F64Gauge = Gauge<f64, AtomicU64>;
        let mut registry = Registry::default();
        for f in std::mem::take(&mut self.pending) {
            let unlabelled = f.samples.len() == 1 && f.samples[0].0.is_empty();
            match (f.kind, unlabelled) {
                ("counter", true) => {
                    let c = F64Counter::default();
                    c.inc_by(f.samples[0].1);
                    registry.register(counter_name(&f.name), help(&f.help), c);
                }
                ("counter", false) => {
                    let family =
                        prometheus_client::metrics::family::Family::<Labels, F64Counter>::default();
                    for (labels, v) in &f.samples {
                        family.get_or_create(labels).inc_by(*v);
                    }
                    registry.register(counter_name(&f.name), help(&f.help), family);
                }
                (_, true) => {
                    let g = F64Gauge::default();
                    g.set(f.samples[0].1);
                    registry.register(f.name, help(&f.help), g);
                }
                _ => {
                    let family =
                        prometheus_client::metrics::family::Family::<Labels, F64Gauge>::default();
                    for (labels, v) in &f.samples {
                        family.get_or_create(labels).set(*v);
                    }
                    registry.register(f.name, help(&f.help), family);
                }
            }
        }
        self.registry(&registry);
        to_text_004(&self.text)
    }
}

/// A sample's value (every number a metric holds converts).
#[derive(Debug, Clone, Copy)]
pub struct Sample(f64);

macro_rules! sample_from {
    ($($t:ty),*) => {$(
        impl From<$t> for Sample {
            #[allow(clippy::cast_precision_loss, clippy::cast_lossless)]
            fn from(v: $t) -> Sample {
                Sample(v as f64)
            }
        }
        impl From<&$t> for Sample {
            fn from(v: &$t) -> Sample {
                Sample::from(*v)
            }
        }
    )*};
}
sample_from!(u8, u32, u64, i64, usize, f64);

/// The crate's OpenMetrics text as the Prometheus text format 0.0.4: a counter family's
/// `# HELP`/`# TYPE` lines name it with `_total` as its samples are, and `# EOF` goes.
///
/// Hand-written because the crate writes only OpenMetrics, whose counter families are
/// named without `_total`: the 0.0.4 parser (Prometheus' own, and `promtool check metrics`
/// 2.42, Debian's) then reads every counter as an untyped family with no help (measured:
/// promtool exits 3, "croupier_cards_read_total no help text").
pub fn to_text_004(open_metrics: &str) -> String {
    let mut counters = std::collections::HashSet::new();
    for line in open_metrics.lines() {
        if let Some(name) = line
            .strip_prefix("# TYPE ")
            .and_then(|rest| rest.strip_suffix(" counter"))
        {
            counters.insert(name.to_string());
        }
    }
    let mut out = String::with_capacity(open_metrics.len() + 16 * counters.len());
    for line in open_metrics.lines() {
        if line == "# EOF" {
            continue;
        }
        let meta = ["# HELP ", "# TYPE "]
            .into_iter()
            .find_map(|p| line.strip_prefix(p).map(|rest| (p, rest)));
        match meta {
            Some((prefix, rest)) => {
                let (name, tail) = rest.split_once(' ').unwrap_or((rest, ""));
                out.push_str(prefix);
                out.push_str(name);
                if counters.contains(name) {
                    out.push_str("_total");
                }
                out.push(' ');
                out.push_str(tail);
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scrape(m: &Metrics) -> String {
        let mut out = Exposition::default();
        m.write_to(&mut out);
        out.finish()
    }

    #[test]
    fn the_histogram_is_cumulative_and_counts_at_inf() {
        let m = Metrics::default();
        for ms in [0, 1, 5, 5, 50] {
            m.committed(Duration::from_millis(ms));
        }
        let text = scrape(&m);
        assert!(
            text.contains("croupier_commit_latency_seconds_bucket{le=\"0.001\"} 2\n"),
            "{text}"
        );
        assert!(
            text.contains("croupier_commit_latency_seconds_bucket{le=\"0.01\"} 4\n"),
            "{text}"
        );
        assert!(
            text.contains("croupier_commit_latency_seconds_bucket{le=\"+Inf\"} 5\n"),
            "{text}"
        );
        assert!(
            text.contains("croupier_commit_latency_seconds_count 5\n"),
            "{text}"
        );
        assert!(
            text.contains("croupier_commit_latency_seconds_sum 0.061\n"),
            "{text}"
        );
        assert_eq!(m.commits(), 5);
    }

    #[test]
    fn subscribers_are_counted_while_their_guard_lives() {
        let m = Arc::new(Metrics::default());
        let a = m.subscriber(Stream::PublicWs);
        let b = m.subscriber(Stream::PublicWs);
        drop(a);
        assert!(scrape(&m).contains("croupier_subscribers{stream=\"public_ws\"} 1\n"));
        assert_eq!(m.subscribers(Stream::PublicWs), 1);
        drop(b);
        assert!(scrape(&m).contains("croupier_subscribers{stream=\"public_ws\"} 0\n"));
    }

    #[test]
    fn counters_are_typed_under_their_total_name_in_text_004() {
        let m = Metrics::default();
        m.card(CardOutcome::Held);
        m.rounds_settled(3);
        let mut out = Exposition::default();
        m.write_to(&mut out);
        out.counter("x_things_total", "Things.", 2);
        out.family("y_state", "gauge", "State.");
        out.sample("y_state", &[("v", "q\"x\\\n")], 1u8);
        let text = out.finish();
        assert!(
            text.contains("# TYPE croupier_cards_read_total counter\n"),
            "{text}"
        );
        assert!(
            text.contains("# HELP croupier_cards_read_total Cards out"),
            "{text}"
        );
        assert!(
            text.contains("croupier_cards_read_total{outcome=\"held\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "# TYPE croupier_rounds_settled_total counter\ncroupier_rounds_settled_total 3\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("# TYPE x_things_total counter\nx_things_total 2"),
            "{text}"
        );
        assert!(text.contains("y_state{v=\"q\\\"x\\\\\\n\"} 1"), "{text}");
        assert!(!text.contains("# EOF"), "{text}");
        assert!(!text.contains("_total_total"), "{text}");
    }
}
