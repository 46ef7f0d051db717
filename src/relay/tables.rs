//! The tables a relay serves: found in the broker's key-value bucket (every publishing
//! table puts its latest public view there), each followed on its public stream into a
//! [`PublicFeed`] of its own — the same ring, resume-by-id and `/ws/public` fan-out as the
//! table's own routes, filled with the messages exactly as the table's publisher sent them.
//!
//! A relay holds nothing a restart loses: a table's feed starts from the last
//! [`RING`](crate::web::feed::RING) messages of its stream, so a viewer whose last id is
//! among them resumes on any relay without a gap (older ids get a resync view, as on the
//! table).

use crate::broker::subjects;
use crate::engine::RoundResult;
use crate::metrics::Metrics;
use crate::table::TableState;
use crate::web::fanout::Fanout;
use crate::web::feed::{PublicFeed, Relayed, RING};
use crate::web::streams::PublicSource;
use crate::web::view::PublicView;
use async_nats::jetstream::{self, consumer, Context};
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tracing::{info, warn};

/// How long a failed follower or watcher waits before trying again.
const RETRY: Duration = Duration::from_secs(1);

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
}

/// Every table the relay serves.
#[derive(Clone, Default)]
pub struct Tables {
    inner: Arc<RwLock<BTreeMap<String, Arc<RelayedTable>>>>,
    watching: Arc<AtomicBool>,
}

impl Tables {
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

    /// Starts following `table` unless it already is; `snapshot` (the bucket's value)
    /// seeds what a resync sends before the stream has been read.
    fn ensure(&self, js: &Context, table: &str, snapshot: Option<PublicView>) {
        if self.read().contains_key(table) {
            return;
        }
        let mut map = self.inner.write().unwrap_or_else(|e| e.into_inner());
        if map.contains_key(table) {
            return;
        }
        let feed = PublicFeed::empty();
        if let Some(view) = snapshot {
            feed.seed_view(view);
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
        });
        map.insert(table.to_string(), Arc::clone(&relayed));
        info!(table, "relaying");
        tokio::spawn(follow(js.clone(), table.to_string(), relayed));
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
        let view = serde_json::from_slice::<Incoming>(&entry.value)
            .ok()
            .and_then(|m| m.view);
        tables.ensure(js, &entry.key, view);
    }
    Ok(())
}

/// Follows `table`'s public stream into its feed, for ever.
async fn follow(js: Context, table: String, relayed: Arc<RelayedTable>) {
    loop {
        if let Err(e) = follow_once(&js, &table, &relayed).await {
            warn!(table, error = %e, "following the public stream failed; resuming");
        }
        tokio::time::sleep(RETRY).await;
    }
}

async fn follow_once(js: &Context, table: &str, relayed: &RelayedTable) -> Result<(), String> {
    let subject = subjects::public(table);
    let name = js
        .stream_by_subject(subject.clone())
        .await
        .map_err(|e| e.to_string())?;
    let stream = js.get_stream(name).await.map_err(|e| e.to_string())?;
    let state = stream.get_info().await.map_err(|e| e.to_string())?.state;
    let feed = &relayed.source.feed;
    // After what the feed has (n is the stream's sequence), or the stream's last RING.
    let start = match feed.last() {
        Some((_, n)) => n + 1,
        None => state
            .last_sequence
            .saturating_sub(RING as u64 - 1)
            .max(state.first_sequence)
            .max(1),
    };
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
    while let Some(message) = messages.next().await {
        let message = message.map_err(|e| e.to_string())?;
        let text = std::str::from_utf8(&message.payload).map_err(|e| e.to_string())?;
        let m: Incoming = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let kind = match m.kind.as_str() {
            "view" => "view",
            "result" => "result",
            "final" => "final",
            other => return Err(format!("unknown message type {other:?}")),
        };
        relayed.received.fetch_add(1, Ordering::Relaxed);
        feed.relay(Relayed {
            seq: m.seq,
            sub: m.sub,
            n: m.n,
            kind,
            text: text.to_string(),
            view: m.view,
            result: m.result,
        });
    }
    Err("the stream's consumer ended".into())
}
