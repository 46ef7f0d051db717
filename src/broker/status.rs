//! The publisher's status: relaxed atomics written by the publisher task, read by
//! `/readyz` and `/metrics`.

use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::time::Duration;

/// The acknowledgement-time histogram's bounds, in seconds: a broker on the same host
/// answers in a millisecond or two, a replicated stream on a healthy network in a few
/// more; tenths of a second mean a cluster that queues, seconds a link in trouble.
pub const ACK_BUCKETS: &[f64] = &[
    0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0,
];

/// What the publisher is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum PublishState {
    /// Not connected yet (or reconnecting): nothing is being published.
    Connecting = 0,
    /// Connected: publishing, or caught up and waiting for rows.
    Publishing = 1,
    /// The link to the broker is down (or it was never reached): nothing is published
    /// until it is back.
    Disconnected = 2,
    /// Publishing stopped for good (a row that does not replay, another history on the
    /// broker): nothing more is published until the operator acts and restarts.
    Failed = 3,
    /// Connected, but the broker refused or failed a request (a stream unavailable, an
    /// acknowledgement that did not come): waiting before trying again.
    Retrying = 4,
}

impl PublishState {
    /// Every state, for the metric's labels.
    pub const ALL: [PublishState; 5] = [
        PublishState::Connecting,
        PublishState::Publishing,
        PublishState::Disconnected,
        PublishState::Failed,
        PublishState::Retrying,
    ];

    /// Its name in `/readyz` and `/metrics`.
    pub fn label(self) -> &'static str {
        match self {
            PublishState::Connecting => "connecting",
            PublishState::Publishing => "publishing",
            PublishState::Disconnected => "disconnected",
            PublishState::Failed => "failed",
            PublishState::Retrying => "retrying",
        }
    }
}

/// The publisher's progress, shared with the web side (relaxed atomics: each is a fact on
/// its own, read for reports).
#[derive(Debug)]
pub struct PublishStatus {
    state: AtomicU8,
    acked: AtomicU64,
    public_n: AtomicU64,
    published: AtomicU64,
    failures: AtomicU64,
    foreign: AtomicU64,
    max_lag: AtomicU64,
    /// The broker connection, once made: a lost link is reported at once, not only when
    /// the next acknowledgement times out.
    client: std::sync::OnceLock<async_nats::Client>,
    /// Why publishing stopped for good (until the operator acts and restarts).
    stopped: std::sync::Mutex<Option<String>>,
    /// Send-to-acknowledgement times (`croupier_publish_ack_seconds`), in `registry`.
    ack: Histogram,
    registry: Registry,
}

impl Default for PublishStatus {
    fn default() -> PublishStatus {
        let ack = Histogram::new(ACK_BUCKETS.iter().copied());
        let mut registry = Registry::default();
        registry.register(
            "croupier_publish_ack_seconds",
            "Time from sending one message to the broker to its acknowledgement (log and public; the publisher keeps one in flight per stream, so this bounds a table's messages a second)",
            ack.clone(),
        );
        PublishStatus {
            state: AtomicU8::default(),
            acked: AtomicU64::default(),
            public_n: AtomicU64::default(),
            published: AtomicU64::default(),
            failures: AtomicU64::default(),
            foreign: AtomicU64::default(),
            max_lag: AtomicU64::default(),
            client: std::sync::OnceLock::new(),
            stopped: std::sync::Mutex::new(None),
            ack,
            registry,
        }
    }
}

impl PublishStatus {
    /// A status for a publisher that tolerates `max_lag` unpublished rows while connected.
    pub fn new(max_lag: u64) -> PublishStatus {
        let s = PublishStatus::default();
        s.max_lag.store(max_lag, Ordering::Relaxed);
        s
    }

    /// The current state.
    pub fn state(&self) -> PublishState {
        let link_down = || {
            self.client
                .get()
                .is_some_and(|c| c.connection_state() != async_nats::connection::State::Connected)
        };
        match self.state.load(Ordering::Relaxed) {
            1 | 4 if link_down() => PublishState::Disconnected,
            1 => PublishState::Publishing,
            2 => PublishState::Disconnected,
            3 => PublishState::Failed,
            4 => PublishState::Retrying,
            _ => PublishState::Connecting,
        }
    }

    pub(crate) fn set_client(&self, client: async_nats::Client) {
        let _ = self.client.set(client);
    }

    /// Why publishing stopped (state `failed`), if it did.
    pub fn stopped(&self) -> Option<String> {
        self.stopped
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Publishing stops for good, for `why`.
    pub(crate) fn stop(&self, why: String) {
        self.set_state(PublishState::Failed);
        *self.stopped.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
    }

    pub(crate) fn set_state(&self, state: PublishState) {
        self.state.store(state as u8, Ordering::Relaxed);
    }

    /// The last log row the broker acknowledged.
    pub fn acked(&self) -> u64 {
        self.acked.load(Ordering::Relaxed)
    }

    pub(crate) fn set_acked(&self, seq: u64, public_n: u64) {
        self.acked.store(seq, Ordering::Relaxed);
        self.public_n.store(public_n, Ordering::Relaxed);
    }

    /// The last public message's number the broker acknowledged.
    pub fn public_n(&self) -> u64 {
        self.public_n.load(Ordering::Relaxed)
    }

    /// Messages acknowledged since start (both subjects).
    pub fn published(&self) -> u64 {
        self.published.load(Ordering::Relaxed)
    }

    /// The broker acknowledged a message `took` after it was sent.
    pub(crate) fn observe_ack(&self, took: Duration) {
        self.ack.observe(took.as_secs_f64());
    }

    /// The series `/metrics` reads from the registry (the acknowledgement times).
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    pub(crate) fn count_published(&self, n: u64) {
        self.published.fetch_add(n, Ordering::Relaxed);
    }

    /// Failed attempts since start (connects, requests, publications).
    pub fn failures(&self) -> u64 {
        self.failures.load(Ordering::Relaxed)
    }

    pub(crate) fn count_failure(&self) {
        self.failures.fetch_add(1, Ordering::Relaxed);
    }

    /// Messages on the table's streams that it did not sign, passed over since start
    /// (found reading on from its last message, or between two of its acknowledgements).
    pub fn foreign(&self) -> u64 {
        self.foreign.load(Ordering::Relaxed)
    }

    pub(crate) fn count_foreign(&self, n: u64) {
        self.foreign.fetch_add(n, Ordering::Relaxed);
    }

    /// Committed rows not yet acknowledged, with `committed` the table's last row.
    pub fn lag(&self, committed: u64) -> u64 {
        committed.saturating_sub(self.acked())
    }

    /// Whether the lag is a readiness reason: rows waiting while the broker is not taking
    /// them, or more than `max_lag` waiting at all.
    pub fn lagging(&self, committed: u64) -> bool {
        let lag = self.lag(committed);
        lag > self.max_lag.load(Ordering::Relaxed)
            || (lag > 0 && self.state() != PublishState::Publishing)
    }
}

#[cfg(test)]
mod tests {
    use super::{PublishState, PublishStatus};

    #[test]
    fn a_lag_is_a_reason_beyond_the_allowance_or_while_not_publishing() {
        let s = PublishStatus::new(5);
        s.set_acked(100, 40);
        s.set_state(PublishState::Publishing);
        assert_eq!(s.lag(104), 4);
        assert!(!s.lagging(105), "within the allowance while publishing");
        assert!(s.lagging(106), "beyond it");
        s.set_state(PublishState::Disconnected);
        assert!(
            s.lagging(101),
            "any lag while the broker is not taking rows"
        );
        assert!(!s.lagging(100), "no lag, no reason, whatever the link");
        assert_eq!(s.lag(90), 0, "acked ahead of a snapshot read earlier");
    }
}
