//! The tables a relay serves: found in the broker's key-value bucket (every publishing
//! table puts its latest public view there), each followed on its public stream into a
//! [`PublicFeed`] of its own — the same ring, resume-by-id and `/ws/public` fan-out as the
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

use crate::broker::subjects::{self, HEADER_ID};
use crate::engine::RoundResult;
use crate::metrics::Metrics;
use crate::table::TableState;
use crate::trust::pinned::KeysFile;
use crate::trust::wire;
use crate::web::fanout::Fanout;
use crate::web::feed::{Message, PublicFeed, Relayed};
use crate::web::streams::PublicSource;
use crate::web::view::PublicView;
use async_nats::jetstream::{self, consumer, Context};
use ed25519_dalek::VerifyingKey;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tracing::{info, warn};

/// How long a failed follower or watcher waits before trying again.
const RETRY: Duration = Duration::from_secs(1);
/// The broker's idle heartbeat on a table's pull: two missed, and the consumer is taken
/// for lost and made again.
const HEARTBEAT: Duration = Duration::from_secs(1);
/// How long each pull request waits on the broker.
const PULL_EXPIRES: Duration = Duration::from_secs(10);
/// The broker removes a relay's consumer this long after the relay stops pulling.
const CONSUMER_INACTIVE: Duration = Duration::from_secs(30);
/// The most messages a resuming viewer is sent from the stream before the ring.
pub const HISTORY: u64 = 20_000;

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

/// One table in the lobby (`/api/tables`).
#[derive(Debug, Clone, Serialize)]
pub struct LobbyEntry {
    /// The table id.
    pub table: String,
    /// Its display name.
    pub name: String,
    /// The game.
    pub variant: String,
    /// The game's display name (a built-in variant's `name`; else its id).
    pub game: String,
    /// `open`, `locked`, `disputed` or `broken`.
    pub state: TableState,
    /// The current (or last) round.
    pub round: u64,
    /// Rounds settled so far.
    pub rounds_settled: u64,
    /// The last message's id and number this relay has.
    pub id: Option<String>,
    /// Its number.
    pub n: u64,
    /// How long the table has been quiet, ms: since its last message reached this relay,
    /// or since this relay began following it when none has yet. A table publishes as it
    /// deals; a long quiet means it stopped or lost the broker — the lobby must not show it
    /// as open.
    pub quiet_ms: u64,
    /// The table's limits and seats as it last published them (`None`: a table that does
    /// not publish them yet).
    pub offer: Option<crate::table::TableOffer>,
    /// The table's currency: the offer's amounts are whole numbers of its minor unit.
    pub currency: crate::currency::Currency,
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

    /// Reads the keys file again if it changed since; returns whether it did. A file
    /// that no longer reads keeps the keys in use (and says so).
    fn reload_keys(&self) -> bool {
        match self.keys.reload() {
            Ok(false) => false,
            Ok(true) => {
                for (id, t) in self.read().iter() {
                    if let Some(k) = self.keys.get(id) {
                        *t.key.write().unwrap_or_else(|e| e.into_inner()) = k;
                    }
                }
                info!(file = %self.keys.path().display(), "relay: the table keys were read again");
                true
            }
            Err(e) => {
                warn!(error = %e, "relay: the table keys file changed but cannot be used; keeping the keys in use");
                false
            }
        }
    }

    /// What a viewer of `table` resuming after `after` needs from the stream before the
    /// ring takes over: nothing when the ring serves it; nothing either when the id is not
    /// in the stream (any more) or more than [`HISTORY`] messages back — the viewer then
    /// gets a resync view.
    pub async fn history(&self, table: &str, after: Option<(u64, u32)>) -> Vec<Arc<Message>> {
        let Some(after) = after else {
            return Vec::new();
        };
        let Some(t) = self.read().get(table).cloned() else {
            return Vec::new();
        };
        if t.source.feed.holds(after) {
            return Vec::new();
        }
        let Some((_, oldest)) = t.source.feed.oldest() else {
            return Vec::new();
        };
        let stream = t.stream.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let Some(stream) = stream else {
            return Vec::new();
        };
        match read_history(&stream, table, &t, after, oldest).await {
            Ok(history) => history,
            Err(e) => {
                tracing::debug!(table, ?after, error = %e, "no history from the stream: a resync");
                Vec::new()
            }
        }
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

    /// The lobby, in table order.
    pub fn lobby(&self) -> Vec<LobbyEntry> {
        self.read()
            .iter()
            .filter_map(|(id, t)| {
                let view = t.source.feed.view()?;
                let last = t.source.feed.last();
                Some(LobbyEntry {
                    table: id.clone(),
                    name: view.name,
                    game: crate::engine::Variant::built_in_name(&view.variant)
                        .map_or_else(|| view.variant.clone(), str::to_string),
                    variant: view.variant,
                    state: view.state,
                    round: view.round.number,
                    rounds_settled: view.rounds_settled,
                    id: last.map(|((s, b), _)| format!("{s}.{b}")),
                    n: last.map_or(0, |(_, n)| n),
                    quiet_ms: t.quiet_ms(),
                    offer: view.offer,
                    currency: view.currency,
                })
            })
            .collect()
    }

    /// Per table: the messages received from the broker, the last `n`, the metrics of its
    /// subscribers.
    pub fn figures(&self) -> Vec<(String, u64, u64, Arc<Metrics>)> {
        self.read()
            .iter()
            .map(|(id, t)| {
                (
                    id.clone(),
                    t.received.load(Ordering::Relaxed),
                    t.source.feed.last().map_or(0, |(_, n)| n),
                    Arc::clone(&t.source.metrics),
                )
            })
            .collect()
    }

    /// Starts following `table` unless it already is, if its key is pinned (else it is
    /// listed as unpinned and not served). The bucket's value for it, if the table signed
    /// it, seeds what a resync sends before the stream has been read, and where the
    /// relayed messages start.
    async fn ensure(&self, js: &Context, table: &str) {
        if self.read().contains_key(table) {
            return;
        }
        let Some(key) = self.keys.get(table) else {
            if self
                .unpinned
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(table.to_string())
            {
                warn!(
                    table,
                    "relay: a table publishes but its key is not pinned (--table-keys): not served"
                );
            }
            return;
        };
        self.unpinned
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(table);
        let feed = PublicFeed::with_ring(self.ring);
        let metrics = Arc::new(Metrics::default());
        let fanout = Fanout::start(&feed, &metrics, Fanout::shards_for_this_machine());
        let relayed = Arc::new(RelayedTable {
            source: PublicSource {
                feed,
                fanout: Some(fanout),
                metrics,
            },
            key: RwLock::new(key),
            received: AtomicU64::new(0),
            since: std::time::Instant::now(),
            heard_ms: AtomicU64::new(u64::MAX),
            stream_seq: AtomicU64::new(0),
            stream: Mutex::new(None),
            refused: Mutex::default(),
            noise: Mutex::default(),
            unseeded: AtomicBool::new(false),
        });
        if let Err(e) = relayed.seed(js, &self.bucket, table).await {
            warn!(table, error = %e, "relay: the bucket's view cannot be read now; reading it again before following the stream");
            relayed.unseeded.store(true, Ordering::Relaxed);
        }
        let mut map = self.inner.write().unwrap_or_else(|e| e.into_inner());
        if map.contains_key(table) {
            return;
        }
        map.insert(table.to_string(), Arc::clone(&relayed));
        drop(map);
        info!(table, "relaying");
        tokio::spawn(follow(
            js.clone(),
            table.to_string(),
            subjects::stream(&self.public_stream, table),
            relayed,
            self.ring,
            self.bucket.clone(),
        ));
    }
}

/// The bucket's value for `table`, if the table signed it: `Ok(None)` when the bucket
/// holds none (or none the table signed), an error when the broker could not say.
async fn signed_snapshot(
    js: &Context,
    bucket: &str,
    table: &str,
    relayed: &RelayedTable,
) -> Result<Option<Snapshot>, String> {
    let stream = js
        .get_stream_no_info(format!("KV_{bucket}"))
        .await
        .map_err(|e| e.to_string())?;
    let m = match stream
        .direct_get_last_for_subject(subjects::bucket_key(bucket, table))
        .await
    {
        Ok(m) => m,
        Err(e) if e.kind() == jetstream::stream::DirectGetErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    if !relayed.signed(table, wire::SNAPSHOT, &m.payload, Some(&m.headers)) {
        relayed.refuse(table, Refusal::Unsigned, 0, "the bucket's snapshot");
        return Ok(None);
    }
    let Ok(m) = serde_json::from_slice::<Incoming>(&m.payload) else {
        return Ok(None);
    };
    Ok(m.view.map(|view| Snapshot {
        id: (m.seq, m.sub),
        n: m.n,
        view,
    }))
}

/// Watches the bucket for publishing tables, for ever; reads the keys file again when it
/// changes (a table pinned later is served from then on).
pub async fn discover(js: Context, bucket: String, tables: Tables) {
    let rekey = {
        let (js, tables) = (js.clone(), tables.clone());
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_secs(2)).await;
                if tables.reload_keys() {
                    for table in tables.unpinned() {
                        tables.ensure(&js, &table).await;
                    }
                }
            }
        })
    };
    let _stop_rekey = AbortOnDrop(rekey);
    loop {
        match watch(&js, &bucket, &tables).await {
            Ok(()) => warn!(bucket, "the bucket's watch ended; watching again"),
            Err(e) => {
                warn!(bucket, error = %e, "cannot watch the bucket (no table published yet?); trying again")
            }
        }
        tables.watching.store(false, Ordering::Relaxed);
        tokio::time::sleep(RETRY).await;
    }
}

async fn watch(js: &Context, bucket: &str, tables: &Tables) -> Result<(), String> {
    tracing::debug!(bucket, "watch: opening the bucket");
    let kv = js.get_key_value(bucket).await.map_err(|e| e.to_string())?;
    tracing::debug!(bucket, "watch: watching");
    let mut entries = kv.watch_all().await.map_err(|e| e.to_string())?;
    tracing::debug!(bucket, "watch: listing the keys");
    // Ready (`/readyz`) only once every table already in the bucket is known: a viewer
    // sent here by a ready relay must not get `no table … is publishing` for a table that
    // is (issue #32 item 11). The watch, opened first, still delivers these again and
    // anything put meanwhile; `ensure` takes a table it knows as it is.
    //
    // The keys come from the bucket stream's subjects (one request), not from `kv.keys()`:
    // that listing ends only when a delivered entry has nothing pending after it, which a
    // bucket the tables write many times a second may never give under load — the relay
    // then waited for ever, knowing no table (found under load in the forged-messages test).
    let stream = js
        .get_stream(format!("KV_{bucket}"))
        .await
        .map_err(|e| e.to_string())?;
    let prefix = format!("$KV.{bucket}.");
    let mut subjects = stream
        .info_with_subjects(format!("{prefix}>"))
        .await
        .map_err(|e| e.to_string())?;
    let mut known = Vec::new();
    while let Some(subject) = subjects.next().await {
        let (subject, _) = subject.map_err(|e| e.to_string())?;
        if let Some(key) = subject.strip_prefix(&prefix) {
            known.push(key.to_string());
        }
    }
    known.sort();
    tracing::debug!(bucket, keys = known.len(), "watch: keys listed");
    for key in &known {
        tables.ensure(js, key).await;
    }
    tracing::debug!(bucket, "watch: every listed table known");
    tables.watching.store(true, Ordering::Relaxed);
    while let Some(entry) = entries.next().await {
        let entry = entry.map_err(|e| e.to_string())?;
        if entry.operation != jetstream::kv::Operation::Put {
            continue;
        }
        // The value itself is not trusted here: `ensure` reads it with its signature.
        tables.ensure(js, &entry.key).await;
    }
    Ok(())
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Follows `table`'s public stream into its feed, for ever (its view from `bucket` first,
/// if that could not be read when the table was found).
async fn follow(
    js: Context,
    table: String,
    stream: String,
    relayed: Arc<RelayedTable>,
    ring: usize,
    bucket: String,
) {
    loop {
        if relayed.unseeded.load(Ordering::Relaxed) && relayed.source.feed.last().is_none() {
            if let Err(e) = relayed.seed(&js, &bucket, &table).await {
                warn!(table, error = %e, "relay: the bucket's view still cannot be read; trying again");
                tokio::time::sleep(RETRY).await;
                continue;
            }
            relayed.unseeded.store(false, Ordering::Relaxed);
        }
        if let Err(e) = follow_once(&js, &table, &stream, &relayed, ring).await {
            warn!(table, error = %e, "following the public stream failed; resuming");
        }
        tokio::time::sleep(RETRY).await;
    }
}

async fn follow_once(
    js: &Context,
    table: &str,
    stream_name: &str,
    relayed: &RelayedTable,
    ring: usize,
) -> Result<(), String> {
    // `get_stream` brings the stream's description: no second request for it.
    let stream = js
        .get_stream(stream_name)
        .await
        .map_err(|e| e.to_string())?;
    let state = stream.cached_info().state.clone();
    *relayed.stream.lock().unwrap_or_else(|e| e.into_inner()) = Some(stream.clone());
    let feed = &relayed.source.feed;
    let tail = state.last_sequence.saturating_sub(ring as u64 - 1);
    // `seeded`: the feed holds only the bucket's view, after message `n`; the stream's
    // messages up to it fill the ring (sent to no one), the ones after it are relayed.
    let (start, mut seeded) = match feed.last() {
        Some(_) if feed.oldest().is_some() => {
            (relayed.stream_seq.load(Ordering::Relaxed) + 1, None)
        }
        // The bucket's view may be older than the ring's worth of messages at the stream's
        // end (the table puts it at most once a second): read from it, so the messages
        // after it are relayed, not skipped with a resync. A message's stream sequence is
        // never below its `n` (other writers only add), so the seed's own is at or after
        // sequence `n`.
        Some((_, n)) => (tail.min(n.max(1)), Some(n)),
        None => (tail, None),
    };
    let start = start.max(state.first_sequence).max(1);
    // An ephemeral consumer of our own rather than the client's ordered consumer: that
    // one notices a consumer lost with a broker node only after two missed heartbeats of
    // 15 s each, so viewers of a table whose consumer lived on a dead node waited over a
    // minute (tests/studio_cluster.rs). Here a heartbeat missed for `HEARTBEAT * 2`, or a
    // message out of the consumer's order, ends this pass and the next starts after the
    // last message taken.
    let consumer = stream
        .create_consumer(consumer::pull::Config {
            filter_subject: subjects::public(table),
            deliver_policy: consumer::DeliverPolicy::ByStartSequence {
                start_sequence: start,
            },
            ack_policy: consumer::AckPolicy::None,
            replay_policy: consumer::ReplayPolicy::Instant,
            inactive_threshold: CONSUMER_INACTIVE,
            num_replicas: 1,
            memory_storage: true,
            ..Default::default()
        })
        .await
        .map_err(|e| e.to_string())?;
    let mut messages = consumer
        .stream()
        .heartbeat(HEARTBEAT)
        .expires(PULL_EXPIRES)
        .messages()
        .await
        .map_err(|e| e.to_string())?;
    let mut early = Vec::new();
    let mut delivered = 0u64;
    while let Some(message) = messages.next().await {
        let message = message.map_err(|e| e.to_string())?;
        let info = message.info().map_err(|e| e.to_string())?;
        if info.consumer_sequence != delivered + 1 {
            return Err(format!(
                "the consumer skipped from delivery {delivered} to {}",
                info.consumer_sequence
            ));
        }
        delivered = info.consumer_sequence;
        relayed.received.fetch_add(1, Ordering::Relaxed);
        let seq = info.stream_sequence;
        relayed.stream_seq.store(seq, Ordering::Relaxed);
        if !relayed.signed(
            table,
            wire::PUBLIC,
            &message.payload,
            message.headers.as_ref(),
        ) {
            relayed.refuse(table, Refusal::Unsigned, seq, "no valid signature");
            continue;
        }
        let r = match parse(&message.payload) {
            Ok(r) => r,
            Err(e) => {
                relayed.refuse(table, Refusal::Malformed, seq, &e);
                continue;
            }
        };
        match seeded {
            Some(seed) if r.n <= seed => {
                early.push(Arc::new(Message::new(r.seq, r.sub, r.kind, r.text)));
                // Only the last `ring` of them can fill the ring.
                if early.len() >= 2 * ring {
                    early.drain(..early.len() - ring);
                }
                if r.n == seed {
                    if !feed.backfill(std::mem::take(&mut early)) {
                        warn!(table, n = seed, "the stream's message does not match the bucket's view: the ring starts after it");
                    }
                    // The seed is reached once: from here on a number already served is
                    // stale (a replay of the table's own message, issue #32), never a
                    // second backfill nor kept in `early` for ever.
                    seeded = None;
                }
            }
            _ => {
                // Past the seed without meeting it (the stream no longer holds it): the
                // ring starts after it, and nothing older is kept.
                if seeded.take().is_some() && !early.is_empty() {
                    warn!(table, "the stream's messages do not reach the bucket's view: the ring starts after it");
                    early.clear();
                }
                let last = feed.last().map_or(0, |(_, n)| n);
                if last > 0 && r.n <= last {
                    relayed.refuse(table, Refusal::Stale, seq, "a number already served");
                    continue;
                }
                if last > 0 && r.n > last + 1 {
                    relayed.refuse(table, Refusal::Gap, seq, "messages missing: a resync");
                }
                feed.relay(r);
                relayed.heard_now();
            }
        }
    }
    Err("the stream's consumer ended".into())
}

/// A published message as the feed takes it.
fn parse(payload: &[u8]) -> Result<Relayed, String> {
    let text = std::str::from_utf8(payload).map_err(|e| e.to_string())?;
    let m: Incoming = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let kind = match m.kind.as_str() {
        "view" => "view",
        "result" => "result",
        "final" => "final",
        other => return Err(format!("unknown message type {other:?}")),
    };
    Ok(Relayed {
        seq: m.seq,
        sub: m.sub,
        n: m.n,
        kind,
        text: text.to_string(),
        view: m.view,
        result: m.result,
        signed: m.signed,
    })
}

/// The table's signed message at stream sequence `seq`, if it is one.
async fn signed_at(
    stream: &jetstream::stream::Stream,
    table: &str,
    relayed: &RelayedTable,
    seq: u64,
) -> Result<Option<Relayed>, String> {
    let m = match stream.get_raw_message(seq).await {
        Ok(m) => m,
        Err(e) if e.kind() == jetstream::stream::RawMessageErrorKind::NoMessageFound => {
            return Ok(None)
        }
        Err(e) => return Err(e.to_string()),
    };
    if !relayed.signed(table, wire::PUBLIC, &m.payload, Some(&m.headers))
        || m.headers.get(HEADER_ID).is_none()
    {
        return Ok(None);
    }
    Ok(parse(&m.payload).ok())
}

/// The stream's messages after the one with id `after`, up to the ring's oldest (`n` =
/// `oldest`, included). The id is found by bisection over the stream's sequence (ids
/// grow with it); a message the table did not sign is stepped over.
async fn read_history(
    stream: &jetstream::stream::Stream,
    table: &str,
    relayed: &RelayedTable,
    after: (u64, u32),
    oldest: u64,
) -> Result<Vec<Arc<Message>>, String> {
    let first = stream
        .get_info()
        .await
        .map_err(|e| e.to_string())?
        .state
        .first_sequence
        .max(1);
    let (mut lo, mut hi) = (first, relayed.stream_seq.load(Ordering::Relaxed));
    let mut found = None;
    'search: while lo <= hi {
        let mid = lo + (hi - lo) / 2;
        // The first of the table's own messages at or after `mid`.
        let mut probe = mid;
        let r = loop {
            if probe > hi {
                hi = mid.saturating_sub(1);
                if mid == 0 {
                    break 'search;
                }
                continue 'search;
            }
            if let Some(r) = signed_at(stream, table, relayed, probe).await? {
                break r;
            }
            probe += 1;
        };
        match (r.seq, r.sub).cmp(&after) {
            std::cmp::Ordering::Equal => {
                found = Some((probe, r.n));
                break;
            }
            std::cmp::Ordering::Less => lo = probe + 1,
            std::cmp::Ordering::Greater if mid == 0 => break,
            std::cmp::Ordering::Greater => hi = mid - 1,
        }
    }
    let (at, n) = found.ok_or("the id is not in the stream")?;
    if oldest.saturating_sub(n + 1) > HISTORY {
        return Err(format!("{} messages back", oldest - n - 1));
    }
    // Through the ring's oldest message itself: the feed resumes after an id it holds.
    let mut out = Vec::new();
    let mut seq = at + 1;
    let mut next = n + 1;
    while next <= oldest {
        if seq > relayed.stream_seq.load(Ordering::Relaxed) {
            return Err("the stream ended before the ring's oldest message".into());
        }
        if let Some(r) = signed_at(stream, table, relayed, seq).await? {
            if r.n == next {
                out.push(Arc::new(Message::new(r.seq, r.sub, r.kind, r.text)));
                next += 1;
            } else if r.n > next {
                return Err(format!("message {next} is not in the stream"));
            }
        }
        seq += 1;
    }
    Ok(out)
}
