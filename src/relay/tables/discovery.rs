//! Finding the tables: the key-value bucket every publishing table puts its view in is
//! watched, and each table found with a pinned key gets a feed and a follower
//! (`follow`); the keys file is read again when it changes, so a table pinned later is
//! served from then on. Apart from the following itself, since this runs once per
//! table and bucket entry, not per message.

use super::{follow::follow, Incoming, Refusal, RelayedTable, Snapshot, Tables, RETRY};
use crate::broker::subjects;
use crate::metrics::Metrics;
use crate::trust::wire;
use crate::web::fanout::Fanout;
use crate::web::feed::PublicFeed;
use crate::web::streams::PublicSource;
use async_nats::jetstream::{self, Context};
use futures::StreamExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tracing::{info, warn};

impl Tables {
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
            failing_ms: AtomicU64::new(u64::MAX),
            said_stalled: AtomicBool::new(false),
            restarts: AtomicU64::new(0),
            heartbeats_kept: Default::default(),
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
pub(super) async fn signed_snapshot(
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
