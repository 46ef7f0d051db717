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
//! A relay holds nothing a restart loses: a table's feed starts from the last messages of
//! its stream (`--ring`, 4,096 by default), so a viewer whose last id is among them resumes
//! on any relay from memory; an older id is looked up in the stream and what follows it
//! is read from there (up to [`HISTORY`] messages; beyond, or once the stream no longer
//! keeps it, a resync view, as on the table).

use crate::broker::subjects;
use crate::engine::RoundResult;
use crate::metrics::Metrics;
use crate::table::TableState;
use crate::web::fanout::Fanout;
use crate::web::feed::{Message, PublicFeed, Relayed};
use crate::web::streams::PublicSource;
use crate::web::view::PublicView;
use async_nats::jetstream::{self, consumer, Context};
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tracing::{info, warn};

/// How long a failed follower or watcher waits before trying again.
const RETRY: Duration = Duration::from_secs(1);
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
}

/// One relayed table.
pub struct RelayedTable {
    source: PublicSource,
    received: AtomicU64,
    /// Its public stream, once found.
    stream: Mutex<Option<jetstream::stream::Stream>>,
}

/// Every table the relay serves.
#[derive(Clone)]
pub struct Tables {
    inner: Arc<RwLock<BTreeMap<String, Arc<RelayedTable>>>>,
    watching: Arc<AtomicBool>,
    ring: usize,
}

impl Tables {
    /// No table yet; each table's feed will keep its last `ring` messages.
    pub fn new(ring: usize) -> Tables {
        Tables {
            inner: Arc::default(),
            watching: Arc::default(),
            ring: ring.max(1),
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
        match read_history(&stream, after, oldest).await {
            Ok(history) => history,
            Err(e) => {
                tracing::debug!(table, ?after, error = %e, "no history from the stream: a resync");
                Vec::new()
            }
        }
    }

    /// What serves `table`'s public routes, if it publishes.
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
                    variant: view.variant,
                    state: view.state,
                    round: view.round.number,
                    rounds_settled: view.rounds_settled,
                    id: last.map(|((s, b), _)| format!("{s}.{b}")),
                    n: last.map_or(0, |(_, n)| n),
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

    /// Starts following `table` unless it already is; `snapshot` (the bucket's value: the
    /// view after the message with that id and number) seeds what a resync sends before
    /// the stream has been read, and where the relayed messages start.
    fn ensure(&self, js: &Context, table: &str, snapshot: Option<Snapshot>) {
        if self.read().contains_key(table) {
            return;
        }
        let mut map = self.inner.write().unwrap_or_else(|e| e.into_inner());
        if map.contains_key(table) {
            return;
        }
        let feed = PublicFeed::with_ring(self.ring);
        if let Some(s) = snapshot {
            feed.seed(s.view, s.id, s.n);
        }
        let metrics = Arc::new(Metrics::default());
        let fanout = Fanout::start(&feed, &metrics, Fanout::shards_for_this_machine());
        let relayed = Arc::new(RelayedTable {
            source: PublicSource {
                feed,
                fanout: Some(fanout),
                metrics,
            },
            received: AtomicU64::new(0),
            stream: Mutex::new(None),
        });
        map.insert(table.to_string(), Arc::clone(&relayed));
        info!(table, "relaying");
        tokio::spawn(follow(js.clone(), table.to_string(), relayed, self.ring));
    }
}

/// Watches the bucket for publishing tables, for ever.
pub async fn discover(js: Context, bucket: String, tables: Tables) {
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
    let kv = js.get_key_value(bucket).await.map_err(|e| e.to_string())?;
    let mut entries = kv.watch_all().await.map_err(|e| e.to_string())?;
    tables.watching.store(true, Ordering::Relaxed);
    while let Some(entry) = entries.next().await {
        let entry = entry.map_err(|e| e.to_string())?;
        if entry.operation != jetstream::kv::Operation::Put {
            continue;
        }
        let snapshot = serde_json::from_slice::<Incoming>(&entry.value)
            .ok()
            .and_then(|m| {
                Some(Snapshot {
                    id: (m.seq, m.sub),
                    n: m.n,
                    view: m.view?,
                })
            });
        tables.ensure(js, &entry.key, snapshot);
    }
    Ok(())
}

/// Follows `table`'s public stream into its feed, for ever.
async fn follow(js: Context, table: String, relayed: Arc<RelayedTable>, ring: usize) {
    loop {
        if let Err(e) = follow_once(&js, &table, &relayed, ring).await {
            warn!(table, error = %e, "following the public stream failed; resuming");
        }
        tokio::time::sleep(RETRY).await;
    }
}

async fn follow_once(
    js: &Context,
    table: &str,
    relayed: &RelayedTable,
    ring: usize,
) -> Result<(), String> {
    let subject = subjects::public(table);
    let name = js
        .stream_by_subject(subject.clone())
        .await
        .map_err(|e| e.to_string())?;
    let stream = js.get_stream(name).await.map_err(|e| e.to_string())?;
    let state = stream.get_info().await.map_err(|e| e.to_string())?.state;
    *relayed.stream.lock().unwrap_or_else(|e| e.into_inner()) = Some(stream.clone());
    let feed = &relayed.source.feed;
    let tail = state.last_sequence.saturating_sub(ring as u64 - 1);
    // `seeded`: the feed holds only the bucket's view, after message `n`; the stream's
    // messages up to it fill the ring (sent to no one), the ones after it are relayed.
    let (start, seeded) = match feed.last() {
        Some((_, n)) if feed.oldest().is_some() => (n + 1, None),
        Some((_, n)) => (tail.min(n + 1), Some(n)),
        None => (tail, None),
    };
    let start = start.max(state.first_sequence).max(1);
    let consumer = stream
        .create_consumer(consumer::pull::OrderedConfig {
            filter_subject: subject,
            deliver_policy: consumer::DeliverPolicy::ByStartSequence {
                start_sequence: start,
            },
            ..Default::default()
        })
        .await
        .map_err(|e| e.to_string())?;
    let mut messages = consumer.messages().await.map_err(|e| e.to_string())?;
    let mut early = Vec::new();
    while let Some(message) = messages.next().await {
        let message = message.map_err(|e| e.to_string())?;
        relayed.received.fetch_add(1, Ordering::Relaxed);
        let r = parse(&message.payload)?;
        match seeded {
            Some(seed) if r.n <= seed => {
                early.push(Arc::new(Message::new(r.seq, r.sub, r.kind, r.text)));
                if r.n == seed && !feed.backfill(std::mem::take(&mut early)) {
                    warn!(table, n = seed, "the stream's message does not match the bucket's view: the ring starts after it");
                }
            }
            _ => feed.relay(r),
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
    })
}

/// The stream's messages after the one with id `after`, up to the ring's oldest (`n` =
/// `oldest`, included). The id is found by bisection over the stream's sequence (= `n`,
/// ids grow with it).
async fn read_history(
    stream: &jetstream::stream::Stream,
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
    let id_at = |n: u64| async move {
        let m = stream.get_raw_message(n).await.map_err(|e| e.to_string())?;
        m.headers
            .get(subjects::HEADER_ID)
            .and_then(|v| crate::web::feed::parse_id(v.as_str()))
            .ok_or_else(|| format!("message {n} has no {} header", subjects::HEADER_ID))
    };
    let (mut lo, mut hi) = (first, oldest.saturating_sub(1));
    let mut found = None;
    while lo <= hi {
        let mid = lo + (hi - lo) / 2;
        match id_at(mid).await?.cmp(&after) {
            std::cmp::Ordering::Equal => {
                found = Some(mid);
                break;
            }
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater if mid == 0 => break,
            std::cmp::Ordering::Greater => hi = mid - 1,
        }
    }
    let n = found.ok_or("the id is not in the stream")?;
    if oldest - n - 1 > HISTORY {
        return Err(format!("{} messages back", oldest - n - 1));
    }
    // Through the ring's oldest message itself: the feed resumes after an id it holds.
    let mut out = Vec::new();
    for seq in n + 1..=oldest {
        let m = stream
            .get_raw_message(seq)
            .await
            .map_err(|e| e.to_string())?;
        let r = parse(&m.payload)?;
        out.push(Arc::new(Message::new(r.seq, r.sub, r.kind, r.text)));
    }
    Ok(out)
}
