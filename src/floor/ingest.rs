//! The ingest: every table's log stream on the broker into PostgreSQL.
//!
//! The tables publish one stream per table (`<log_stream>_<table>`, subject
//! `croupier.<table>.log`, the stream's sequence being the row's `seq`; see
//! `broker::subjects`), so the floor follows `croupier.*.log` as one durable pull consumer
//! per table stream, all with the same durable name (`--consumer`), found by listing the
//! streams every few seconds. Nats-server 2.9 has no multi-filter consumers, and a stream
//! cannot overlap the tables' own streams, so per-stream consumers are the 2.9 way to
//! consume the wildcard.
//!
//! Per table, one task: fetch up to [`BATCH`] messages, check them against the chain head
//! the database holds (`chain::check`), commit rows + alarms + the new head in one
//! transaction, and only then acknowledge (ack policy *all*: one ack covers the batch).
//! A crash between the commit and the ack makes the broker deliver the rows again; they
//! are at or below the head and skipped, so each row is stored once. Messages fetched but
//! lost before a crash leave a hole in what the consumer delivers next: the missing
//! sequence numbers are read straight from the stream, and only rows the stream does not
//! hold are a gap.

use super::chain::{self, Alarm, Finding, Head, WireRow};
use super::db::{Batch, DbError, FloorDb};
use crate::engine::Input;
use crate::store::Record;
use async_nats::jetstream::{self, consumer, stream::Stream, Context};
use futures::StreamExt;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use tracing::{info, warn};

/// Messages fetched and committed together per table.
pub const BATCH: usize = 1000;
/// How often the streams are listed for new tables.
const DISCOVER: Duration = Duration::from_secs(2);
/// How long a caught-up table's pull waits for its next row.
const IDLE: Duration = Duration::from_secs(5);
/// The longest pause after a failure.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// What the ingest follows and where it writes.
#[derive(Debug, Clone)]
pub struct IngestConfig {
    /// The log streams' prefix (`[publish] log_stream` of the tables).
    pub log_stream: String,
    /// The durable consumer's name on every table's log stream.
    pub consumer: String,
}

/// Counters the floor reports (and the benchmark reads).
#[derive(Debug, Default)]
pub struct IngestStats {
    /// Rows committed to PostgreSQL.
    pub rows: AtomicU64,
    /// Alarms raised.
    pub alarms: AtomicU64,
}

/// One pass over a table failed; the next starts again from the database's head.
#[derive(Debug, thiserror::Error)]
enum PassError {
    #[error("broker: {0}")]
    Broker(String),
    #[error(transparent)]
    Db(#[from] DbError),
}

fn broker(e: impl std::fmt::Display) -> PassError {
    PassError::Broker(e.to_string())
}

/// Follows every table's log stream until `shutdown` ends (call inside a runtime).
pub async fn run(
    js: Context,
    db: FloorDb,
    config: IngestConfig,
    stats: Arc<IngestStats>,
    shutdown: impl std::future::Future<Output = ()>,
) {
    tokio::pin!(shutdown);
    let prefix = format!("{}_", config.log_stream);
    let mut followers: HashMap<String, JoinHandle<()>> = HashMap::new();
    loop {
        match stream_names(&js, &prefix).await {
            Ok(names) => {
                for name in names {
                    let running = followers.get(&name).is_some_and(|t| !t.is_finished());
                    if running {
                        continue;
                    }
                    let table = name[prefix.len()..].to_string();
                    info!(%table, stream = %name, "floor: following the table's log");
                    let task = tokio::spawn(follow(
                        js.clone(),
                        db.clone(),
                        config.consumer.clone(),
                        name.clone(),
                        table,
                        Arc::clone(&stats),
                    ));
                    followers.insert(name, task);
                }
            }
            Err(e) => warn!(error = %e, "floor: cannot list the log streams; trying again"),
        }
        tokio::select! {
            _ = &mut shutdown => break,
            _ = tokio::time::sleep(DISCOVER) => {}
        }
    }
    for (_, task) in followers {
        task.abort();
    }
}

async fn stream_names(js: &Context, prefix: &str) -> Result<Vec<String>, PassError> {
    let mut names = js.stream_names();
    let mut out = Vec::new();
    while let Some(name) = names.next().await {
        let name = name.map_err(broker)?;
        if name.len() > prefix.len() && name.starts_with(prefix) {
            out.push(name);
        }
    }
    Ok(out)
}

/// One table, for ever: passes, with a backoff after each failure.
async fn follow(
    js: Context,
    db: FloorDb,
    durable: String,
    stream: String,
    table: String,
    stats: Arc<IngestStats>,
) {
    let mut backoff = Duration::from_millis(250);
    loop {
        match pass(&js, &db, &durable, &stream, &table, &stats, &mut backoff).await {
            Ok(()) => return,
            Err(e) => {
                warn!(%table, error = %e, "floor: ingest pass failed; starting again from the database's head");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}

async fn pass(
    js: &Context,
    db: &FloorDb,
    durable: &str,
    stream_name: &str,
    table: &str,
    stats: &IngestStats,
    backoff: &mut Duration,
) -> Result<(), PassError> {
    let stream = js.get_stream(stream_name).await.map_err(broker)?;
    let consumer: consumer::PullConsumer = stream
        .get_or_create_consumer(durable, crate::broker::streams::floor_consumer(durable))
        .await
        .map_err(broker)?;
    let mut head = db.head(table).await?;
    // The stream sequence of the last message handled. Not the row's `seq`: a stream
    // may hold messages nobody meant for it (any client with a JetStream grant can point
    // an API answer at any subject), so the two drift apart; until the first batch the
    // row's `seq` is the lower bound.
    let mut stream_head = head.seq;
    *backoff = Duration::from_millis(250);
    loop {
        let mut messages = Vec::with_capacity(BATCH);
        let mut fetched = consumer
            .fetch()
            .max_messages(BATCH)
            .messages()
            .await
            .map_err(broker)?;
        while let Some(m) = fetched.next().await {
            messages.push(m.map_err(broker)?);
        }
        if messages.is_empty() {
            // Caught up: wait for the next row (woken as soon as one arrives).
            let mut next = consumer
                .batch()
                .max_messages(1)
                .expires(IDLE)
                .messages()
                .await
                .map_err(broker)?;
            while let Some(m) = next.next().await {
                messages.push(m.map_err(broker)?);
            }
            if messages.is_empty() {
                continue;
            }
        }
        let first = messages[0].info().map_err(broker)?.stream_sequence;
        // Delivered earlier but never acknowledged (lost in a crash or an outage): read
        // them from the stream itself, so a consumer's hole is not taken for a gap.
        let mut bodies = fill_hole(&stream, stream_head, first).await?;
        for m in &messages {
            let seq = m.info().map_err(broker)?.stream_sequence;
            bodies.push((seq, m.payload.to_vec()));
        }
        let (batch, to) = check(table, head, stream_head, &bodies);
        stream_head = stream_head.max(bodies.last().map_or(0, |(seq, _)| *seq));
        if to != head || !batch.alarms.is_empty() {
            db.commit(table, head, to, &batch).await?;
            stats
                .rows
                .fetch_add(batch.rows.len() as u64, Ordering::Relaxed);
            stats
                .alarms
                .fetch_add(batch.alarms.len() as u64, Ordering::Relaxed);
            for a in &batch.alarms {
                warn!(%table, seq = a.seq, kind = a.kind, detail = %a.detail, "FLOOR ALARM");
            }
            head = to;
        }
        // Only now, after the commit: one acknowledgement covers every earlier message.
        if let Some(last) = messages.last() {
            last.ack().await.map_err(broker)?;
        }
    }
}

/// Messages `head + 1 .. first` read from the stream (what it no longer holds is left out:
/// the chain check reports it as a gap).
async fn fill_hole(
    stream: &Stream,
    head: u64,
    first: u64,
) -> Result<Vec<(u64, Vec<u8>)>, PassError> {
    let mut out = Vec::new();
    for seq in head + 1..first {
        match stream.get_raw_message(seq).await {
            Ok(m) => out.push((seq, m.payload.to_vec())),
            Err(e) if e.kind() == jetstream::stream::RawMessageErrorKind::NoMessageFound => {}
            Err(e) => return Err(broker(e)),
        }
    }
    Ok(out)
}

/// Checks message bodies (with their stream sequence) against `head`: the batch to
/// commit and the new head. Messages at or below `seen` (a stream sequence) were looked at
/// before: an unreadable one among them is not alarmed again.
pub fn check(table: &str, mut head: Head, seen: u64, bodies: &[(u64, Vec<u8>)]) -> (Batch, Head) {
    let mut batch = Batch::default();
    for (stream_seq, body) in bodies {
        let row: WireRow = match chain::parse(body) {
            Ok(r) => r,
            Err(why) => {
                if *stream_seq > seen {
                    batch.alarms.push(Alarm {
                        seq: *stream_seq,
                        kind: "unreadable",
                        detail: format!("table {table}: message {stream_seq}: {why}"),
                    });
                }
                continue;
            }
        };
        if row.table != table {
            batch.alarms.push(Alarm {
                seq: *stream_seq,
                kind: "misfiled",
                detail: format!(
                    "message {stream_seq} on table {table}'s log names table {}",
                    row.table
                ),
            });
            continue;
        }
        let Some((finding, next)) = chain::check(head, &row) else {
            continue;
        };
        if let Some(a) = chain::alarm(&row, &finding) {
            batch.alarms.push(a);
        }
        if is_card(&row) {
            batch.last_card_ms = Some(row.at_ms);
        }
        let verdict = match finding {
            Finding::Ok => "ok",
            Finding::Break => "break",
            Finding::Gap { .. } => "gap",
        };
        batch.rows.push((row, verdict));
        head = next;
    }
    (batch, head)
}

fn is_card(row: &WireRow) -> bool {
    row.kind == "input"
        && matches!(
            serde_json::from_str::<Record>(&row.payload),
            Ok(Record::Input {
                input: Input::Card(_),
                ..
            })
        )
}
