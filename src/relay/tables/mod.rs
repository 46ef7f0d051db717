//! The tables a relay serves: found in the broker's key-value bucket (every publishing
//! table puts its latest public view there), each followed on its public stream into a
//! [`PublicFeed`](crate::web::feed::PublicFeed) of its own — the same ring, resume-by-id and `/ws/public` fan-out as the
//! table's own routes, filled with the messages exactly as the table's publisher sent them.
//!
//! A table's feed is seeded with the bucket's value: the view after the stream's message
//! `n`, with that message's id and `n`, so a viewer who joins before the stream is read
//! gets it numbered so, and the relayed messages start right after it (the stream's
//! messages up to it only fill the ring): never a jump, never an older state after it.
//!
//! A relay serves only what a table signed (issue #30): each table's key is pinned by the
//! operator (`--table-keys`, `trust::pinned`); a table without one is not served. Every
//! stream message and the bucket's snapshot must carry the table's signature of its
//! bytes (`trust::wire`); one that does not verify, does not parse, or repeats a number
//! already served is refused — counted per table and reason (`/metrics`, `/readyz`),
//! logged at once, then at most once a minute with the number since — and the feed goes on with the next message. A signed message
//! that jumps ahead (messages lost on the broker) is served as an announced resync. The
//! stream's sequence is not the messages' `n` once someone else wrote to a table's
//! subject, so the relay keeps its own place in the stream.
//!
//! A relay holds nothing a restart loses: a table's feed starts from the last messages of
//! its stream (`--ring`, 4,096 by default), so a viewer whose last id is among them resumes
//! on any relay from memory; an older id is looked up in the stream and what follows it
//! is read from there (up to [`HISTORY`] messages; beyond, or once the stream no longer
//! keeps it, a resync view, as on the table).
//!
//! What each part does, by file: `discovery` finds the tables (the bucket's watch, the
//! keys file read again) and starts one follower each; `follow` fills a table's feed from
//! its own pull consumer, made again when its heartbeat is missed; `history` finds an
//! older id by bisection over the stream; `lobby` is what `/api/tables` and `/metrics`
//! read. The signature checks and the refusals they count stay here, with the table
//! they belong to, since every part uses them.

mod discovery;
mod follow;
mod heartbeat;
mod history;
mod lobby;
mod progress;

pub use discovery::discover;
pub use heartbeat::Kept;
pub use history::HISTORY;
pub use lobby::{LobbyEntry, TableFigures};

use crate::broker::subjects;
use crate::engine::RoundResult;
use crate::trust::pinned::KeysFile;
use crate::web::streams::PublicSource;
use crate::web::view::PublicView;
use async_nats::jetstream::{self, Context};
use discovery::signed_snapshot;
use ed25519_dalek::VerifyingKey;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tracing::{error, info, warn};

/// How long a failed follower or watcher waits before trying again.
const RETRY: Duration = Duration::from_secs(1);
/// How long a table's public stream may go unfollowed before the relay reports it
/// (`/readyz`'s `stalled`, `croupier_relay_tables_stalled`, one ERROR line): longer than
/// a cluster takes to elect a stream's or JetStream's leader after a node is lost (a few
/// seconds), so a failover is not reported, and a broker whose JetStream answers nothing
/// (the fourth hour's soak: two metadata leaders, docs/src/studio.md) is.
pub const STALLED: Duration = Duration::from_secs(20);

/// A public message as the relay reads it (the text itself is passed on unchanged).
#[derive(Deserialize)]
struct Incoming {
    #[serde(rename = "type")]
    kind: String,
    seq: u64,
    sub: u32,
    n: u64,
    view: Option<PublicView>,
    result: Option<RoundResult>,
    #[serde(default)]
    signed: Option<crate::trust::Signed>,
}

/// A table's latest view as its publisher put it in the bucket, with the id and number of
/// the stream's message it follows.
struct Snapshot {
    id: (u64, u32),
    n: u64,
    view: PublicView,
}

/// Why a message from the broker was not served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Refusal {
    /// No signature, or one that does not verify with the table's pinned key.
    Unsigned,
    /// Signed, but not a public message this relay can read.
    Malformed,
    /// A number already served (a replayed message).
    Stale,
    /// Signed and later than the next: messages were lost on the broker; served as a
    /// resync.
    Gap,
}

impl Refusal {
    /// Its label in `/metrics` and `/readyz`.
    pub fn label(self) -> &'static str {
        match self {
            Refusal::Unsigned => "unsigned",
            Refusal::Malformed => "malformed",
            Refusal::Stale => "stale",
            Refusal::Gap => "gap",
        }
    }
}

/// One relayed table.
pub struct RelayedTable {
    source: PublicSource,
    /// Its pinned key (replaced when the keys file changes).
    key: RwLock<VerifyingKey>,
    received: AtomicU64,
    /// When this relay began following the table.
    since: std::time::Instant,
    /// When its last served message came, ms after `since` (`u64::MAX`: none yet) — an
    /// atomic store per message, no lock on the relay's path.
    heard_ms: AtomicU64,
    /// The stream sequence of the last message read (not `n`: see the module's docs).
    stream_seq: AtomicU64,
    /// Its public stream, once found.
    stream: Mutex<Option<jetstream::stream::Stream>>,
    /// Messages not served, by reason.
    refused: Mutex<BTreeMap<Refusal, u64>>,
    /// What of the refusals is still to be said in the log, by reason.
    noise: Mutex<BTreeMap<Refusal, crate::broker::noise::Noise>>,
    /// The bucket's view could not be read when the table was found (the broker did not
    /// answer in time, under load): each pass of `follow` reads it again first, until
    /// read. Without it a quiet table's feed would hold no view, and the table would be
    /// missing from the lobby until it published again.
    unseeded: AtomicBool,
    /// Since when (ms after `since`) following its public stream has failed without a
    /// pass that got as far as pulling (`u64::MAX`: following, or not yet tried).
    failing_ms: AtomicU64,
    /// Whether the stall past [`STALLED`] was said in the log (said once, its end once).
    said_stalled: AtomicBool,
    /// Passes of following that failed, each followed by a consumer made again.
    restarts: AtomicU64,
    /// Missed heartbeats after which the consumer was kept, by [`Kept::index`].
    heartbeats_kept: [AtomicU64; 3],
}

impl RelayedTable {
    /// Seeds the feed with the bucket's value for `table` if the table signed it (none,
    /// or none signed, leaves it as it is); an error when the broker could not say.
    async fn seed(&self, js: &Context, bucket: &str, table: &str) -> Result<(), String> {
        if let Some(s) = signed_snapshot(js, bucket, table, self).await? {
            self.source.feed.seed(s.view, s.id, s.n);
        }
        Ok(())
    }

    /// A message of the table's was served: it is not quiet.
    fn heard_now(&self) {
        self.heard_ms
            .store(ms(self.since.elapsed()), Ordering::Relaxed);
    }

    /// [`LobbyEntry::quiet_ms`].
    fn quiet_ms(&self) -> u64 {
        let now = ms(self.since.elapsed());
        match self.heard_ms.load(Ordering::Relaxed) {
            u64::MAX => now,
            last => now.saturating_sub(last),
        }
    }

    fn key(&self) -> VerifyingKey {
        *self.key.read().unwrap_or_else(|e| e.into_inner())
    }

    /// A missed heartbeat judged not a lost consumer: counted and said.
    fn kept(&self, table: &str, why: Kept, said: &str) {
        self.heartbeats_kept[why.index()].fetch_add(1, Ordering::Relaxed);
        info!(
            table,
            judged = why.label(),
            "relay: a missed heartbeat, the consumer kept: {said}"
        );
    }

    /// A pass of following failed: the stall starts now unless it already had.
    fn follow_failed(&self, table: &str) {
        let now = ms(self.since.elapsed());
        let _ =
            self.failing_ms
                .compare_exchange(u64::MAX, now, Ordering::Relaxed, Ordering::Relaxed);
        if self.stalled() && !self.said_stalled.swap(true, Ordering::Relaxed) {
            error!(table, seconds = STALLED.as_secs(), "relay: the table's public stream cannot be followed (the broker's JetStream does not answer for it): its viewers get nothing new; /readyz lists it under `stalled`");
        }
    }

    /// A pass of following reached its pull: not stalled.
    fn following(&self, table: &str) {
        self.failing_ms.store(u64::MAX, Ordering::Relaxed);
        if self.said_stalled.swap(false, Ordering::Relaxed) {
            info!(table, "relay: following the table's public stream again");
        }
    }

    /// Whether following has failed for longer than [`STALLED`].
    fn stalled(&self) -> bool {
        match self.failing_ms.load(Ordering::Relaxed) {
            u64::MAX => false,
            from => ms(self.since.elapsed()).saturating_sub(from) >= ms(STALLED),
        }
    }

    /// Counts a refusal; says it at once, then at most once a minute per reason with the
    /// number since (`broker::noise`): never a line per message.
    fn refuse(&self, table: &str, why: Refusal, stream_seq: u64, detail: &str) {
        let mut refused = self.refused.lock().unwrap_or_else(|e| e.into_inner());
        *refused.entry(why).or_insert(0) += 1;
        drop(refused);
        let mut noise = self.noise.lock().unwrap_or_else(|e| e.into_inner());
        let noise = noise.entry(why).or_default();
        noise.heard(stream_seq);
        if let Some(heard) = noise.due(std::time::Instant::now()) {
            warn!(table, reason = why.label(), count = heard.count, first = heard.first, last = heard.last, detail, "relay: messages on the table's public stream not served (said at most once a minute per table and reason; /metrics counts each)");
        }
    }

    /// Whether `payload` carries the table's signature in `headers` (domain `domain`).
    fn signed(
        &self,
        table: &str,
        domain: &str,
        payload: &[u8],
        headers: Option<&async_nats::HeaderMap>,
    ) -> bool {
        headers.is_some_and(|h| subjects::signed(&self.key(), domain, table, payload, h))
    }
}

/// `d` in whole milliseconds.
fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX - 1)
}

/// Every table the relay serves.
#[derive(Clone)]
pub struct Tables {
    inner: Arc<RwLock<BTreeMap<String, Arc<RelayedTable>>>>,
    watching: Arc<AtomicBool>,
    ring: usize,
    /// The public streams' prefix (`[publish] public_stream`).
    public_stream: String,
    /// The bucket.
    bucket: String,
    /// The operator's keys file, as last read.
    keys: Arc<KeysFile>,
    /// Tables publishing in the bucket that have no pinned key (not served).
    unpinned: Arc<Mutex<BTreeSet<String>>>,
}

impl Tables {
    /// No table yet; each table's feed will keep its last `ring` messages; tables are
    /// served with the keys in `keys_file` (read now: a relay with no usable keys file
    /// does not start).
    pub fn new(
        ring: usize,
        public_stream: &str,
        bucket: &str,
        keys_file: PathBuf,
    ) -> Result<Tables, crate::trust::pinned::PinnedError> {
        let keys = KeysFile::open(&keys_file)?;
        Ok(Tables {
            inner: Arc::default(),
            watching: Arc::default(),
            ring: ring.max(1),
            public_stream: public_stream.to_string(),
            bucket: bucket.to_string(),
            keys: Arc::new(keys),
            unpinned: Arc::default(),
        })
    }

    /// `table`'s pinned key (hex), for `GET /api/table-key`.
    pub fn pinned_key(&self, table: &str) -> Option<String> {
        self.keys.get(table).map(|k| hex::encode(k.as_bytes()))
    }

    /// Tables in the bucket that have no pinned key.
    pub fn unpinned(&self) -> Vec<String> {
        self.unpinned
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    /// Per table, the messages not served, by reason.
    pub fn refused(&self) -> BTreeMap<String, BTreeMap<&'static str, u64>> {
        self.read()
            .iter()
            .map(|(id, t)| {
                let refused = t.refused.lock().unwrap_or_else(|e| e.into_inner());
                (
                    id.clone(),
                    refused.iter().map(|(r, n)| (r.label(), *n)).collect(),
                )
            })
            .filter(|(_, r): &(String, BTreeMap<&'static str, u64>)| !r.is_empty())
            .collect()
    }

    /// Tables whose public stream has not been followed for [`STALLED`] or longer.
    pub fn stalled(&self) -> Vec<String> {
        self.read()
            .iter()
            .filter(|(_, t)| t.stalled())
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// What serves `table`'s public routes, if it publishes and its key is pinned.
    pub fn source(&self, table: &str) -> Option<PublicSource> {
        self.read().get(table).map(|t| t.source.clone())
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Arc<RelayedTable>>> {
        // A panic while holding the lock leaves a consistent map (inserts are atomic).
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the bucket is being watched (the relay knows the tables).
    pub fn watching(&self) -> bool {
        self.watching.load(Ordering::Relaxed)
    }
}
