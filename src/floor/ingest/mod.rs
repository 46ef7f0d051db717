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

use super::chain::{self, Alarm, Finding, Head, Position, WireRow};
use super::db::{Batch, BranchStart, DbError, FloorDb};
use crate::broker::noise::Noise;
use crate::broker::subjects;
use crate::engine::Input;
use crate::store::Record;
use crate::trust::pinned::KeysFile;
use crate::trust::wire;
use async_nats::jetstream::{self, consumer, stream::Stream, Context};
use futures::StreamExt;
use std::collections::{HashMap, HashSet};
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
const IDLE: Duration = Duration::from_secs(3);
/// How long a pull of what the stream holds may go unanswered before the pass starts
/// again (the consumer made again, on whichever node now leads it).
const FETCH_DEADLINE: Duration = Duration::from_secs(3);
/// The longest pause after a failure.
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// Idle looks in a row that find the stream ahead of what the consumer delivered before
/// the floor reads the stream itself (`pass`).
const STARVED_LOOKS: u32 = 2;
/// Messages read from the stream itself per batch while the consumer delivers nothing
/// (one request each).
const DIRECT_BATCH: u64 = 200;

/// What the ingest follows and where it writes.
#[derive(Debug, Clone)]
pub struct IngestConfig {
    /// The log streams' prefix (`[publish] log_stream` of the tables).
    pub log_stream: String,
    /// The durable consumer's name on every table's log stream.
    pub consumer: String,
    /// How long the stream may hold rows the floor has not taken before a `stall` alarm.
    pub stall: Duration,
    /// systemd's watchdog, pinged from the discovery loop (`None`: not under systemd).
    pub watchdog: Option<crate::systemd::Watchdog>,
    /// The tables' pinned keys (`--table-keys`): a row is taken only if its table signed
    /// it; a table with no pinned key is not followed until it has one.
    pub keys: Arc<KeysFile>,
}

/// The alarm kinds the floor raises (`chain::Alarm::kind`): each is reported from the
/// start, at 0, so an alert on its rate has a series to read before the first one.
pub const ALARM_KINDS: [&str; 10] = [
    "chain_break",
    "gap",
    "conflict",
    "unreadable",
    "misfiled",
    "timeline",
    "fork",
    "stall",
    "unsigned",
    "unpinned",
];

/// Counters the floor reports on `/metrics` (and the benchmark reads).
#[derive(Debug, Default)]
pub struct IngestStats {
    /// Rows committed to PostgreSQL.
    pub rows: AtomicU64,
    /// Alarms raised.
    pub alarms: AtomicU64,
    /// Alarms raised, by kind (filled by [`IngestStats::alarmed`]).
    by_kind: std::sync::Mutex<std::collections::BTreeMap<&'static str, u64>>,
    /// Per table, how far the ingest is behind its stream (the stall watch's reading).
    behind: std::sync::Mutex<std::collections::BTreeMap<String, Behind>>,
}

/// How far one table's ingest is behind its stream.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Behind {
    /// Messages the broker holds after the last one the floor took.
    pub messages: u64,
    /// How long the floor has taken nothing while the broker held more (0 when caught
    /// up or moving).
    pub stalled: Duration,
}

impl IngestStats {
    /// One alarm of `kind` raised (committed, or written by the stall watch).
    pub fn alarmed(&self, kind: &'static str) {
        self.alarms.fetch_add(1, Ordering::Relaxed);
        let mut by_kind = self.by_kind.lock().unwrap_or_else(|e| e.into_inner());
        *by_kind.entry(kind).or_insert(0) += 1;
    }

    /// Alarms by kind, every kind in [`ALARM_KINDS`] included.
    pub fn alarms_by_kind(&self) -> Vec<(&'static str, u64)> {
        let by_kind = self.by_kind.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: std::collections::BTreeMap<&'static str, u64> =
            ALARM_KINDS.iter().map(|k| (*k, 0)).collect();
        out.extend(by_kind.iter().map(|(k, n)| (*k, *n)));
        out.into_iter().collect()
    }

    /// Records how far `table` is behind.
    fn set_behind(&self, table: &str, behind: Behind) {
        let mut all = self.behind.lock().unwrap_or_else(|e| e.into_inner());
        all.insert(table.to_string(), behind);
    }

    /// Every followed table and how far it is behind, by table id.
    pub fn behind(&self) -> Vec<(String, Behind)> {
        let all = self.behind.lock().unwrap_or_else(|e| e.into_inner());
        all.iter().map(|(t, b)| (t.clone(), *b)).collect()
    }
}

/// One pass over a table failed; the next starts again from the database's head.
#[derive(Debug, thiserror::Error)]
enum PassError {
    #[error("broker: {0}")]
    Broker(String),
    #[error(transparent)]
    Db(#[from] DbError),
    /// The table has no key in `--table-keys`: nothing of its is taken.
    #[error("the table's key is not pinned")]
    Unpinned,
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
    'discover: loop {
        match config.keys.reload() {
            Ok(true) => {
                info!(file = %config.keys.path().display(), "floor: the table keys were read again")
            }
            Ok(false) => {}
            Err(e) => {
                warn!(error = %e, "floor: the table keys file changed but cannot be used; keeping the keys in use")
            }
        }
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
                        Followed {
                            durable: config.consumer.clone(),
                            stream: name.clone(),
                            table,
                            keys: Arc::clone(&config.keys),
                        },
                        Arc::clone(&stats),
                        config.stall,
                    ));
                    followers.insert(name, task);
                }
            }
            Err(e) => warn!(error = %e, "floor: cannot list the log streams; trying again"),
        }
        // The watchdog is pinged only here, between two discoveries: a discovery that hangs
        // (or a runtime that runs nothing) stops the pings. A broker that is down does
        // not: the listing fails within its request timeout and the loop goes on, as the
        // floor must (it reconnects by itself).
        let pause = tokio::time::sleep(DISCOVER);
        tokio::pin!(pause);
        let mut ticks = config
            .watchdog
            .as_ref()
            .map(crate::systemd::Watchdog::interval);
        loop {
            tokio::select! {
                _ = &mut shutdown => break 'discover,
                _ = &mut pause => break,
                _ = crate::systemd::next_tick(&mut ticks) => {
                    if let Some(Err(e)) = config.watchdog.as_ref().map(|w| w.notifier.watchdog()) {
                        warn!(error = %e, "watchdog ping failed");
                    }
                }
            }
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
    followed: Followed,
    stats: Arc<IngestStats>,
    stall: Duration,
) {
    let table = followed.table.clone();
    let mut backoff = Duration::from_millis(250);
    let taken = Arc::new(AtomicU64::new(0));
    let _watch = AbortOnDrop(tokio::spawn(watch_stall(
        js.clone(),
        db.clone(),
        followed.stream.clone(),
        table.clone(),
        Arc::clone(&taken),
        stall,
        Arc::clone(&stats),
    )));
    let mut noise = Noise::default();
    let mut unpinned_said = false;
    loop {
        match pass(
            &js,
            &db,
            &followed,
            &stats,
            &mut backoff,
            &taken,
            &mut noise,
        )
        .await
        {
            Ok(()) => return,
            Err(PassError::Unpinned) => {
                // Said once, as an alarm: the operator pins the key (the file is read again
                // when it changes) and the table is followed from where the floor stands.
                if !std::mem::replace(&mut unpinned_said, true) {
                    let alarm = Alarm {
                        seq: 0,
                        kind: "unpinned",
                        detail: format!("table {table} publishes but its key is not pinned in --table-keys: nothing of its is taken until it is"),
                    };
                    warn!(%table, kind = alarm.kind, detail = %alarm.detail, "FLOOR ALARM");
                    match db.raise(&table, &alarm).await {
                        Ok(()) => stats.alarmed(alarm.kind),
                        Err(e) => warn!(%table, error = %e, "floor: the alarm cannot be written"),
                    }
                }
                tokio::time::sleep(DISCOVER).await;
            }
            Err(PassError::Db(DbError::HeadMoved(_))) => {
                // Another floor on this database (a standby, or a second active one)
                // committed these rows first: nothing is wrong, and each row is stored
                // once. The backoff leaves the rows to the floor that keeps winning.
                info!(%table, "floor: another floor committed this batch first; following from the database's head");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
            Err(e) => {
                warn!(%table, error = %e, "floor: ingest pass failed; starting again from the database's head");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}

/// Which table a follower follows: its stream, the durable consumer's name, and the keys
/// its rows must be signed with.
struct Followed {
    durable: String,
    stream: String,
    table: String,
    keys: Arc<KeysFile>,
}

async fn pass(
    js: &Context,
    db: &FloorDb,
    followed: &Followed,
    stats: &IngestStats,
    backoff: &mut Duration,
    taken: &AtomicU64,
    noise: &mut Noise,
) -> Result<(), PassError> {
    let (durable, stream_name, table) = (
        followed.durable.as_str(),
        followed.stream.as_str(),
        followed.table.as_str(),
    );
    followed.keys.get(table).ok_or(PassError::Unpinned)?;
    let stream = js.get_stream(stream_name).await.map_err(broker)?;
    let consumer: consumer::PullConsumer = stream
        .get_or_create_consumer(durable, crate::broker::streams::floor_consumer(durable))
        .await
        .map_err(broker)?;
    let mut at = db.position(table).await?;
    // What the floor took before: the consumer's acknowledged floor.
    taken.store(
        consumer.cached_info().ack_floor.stream_sequence,
        Ordering::Relaxed,
    );
    // The stream sequence of the last message handled. Not the row's `seq`: a stream
    // may hold messages nobody meant for it (any client with a JetStream grant can point
    // an API answer at any subject), and a branch publishes row numbers again, so the
    // two drift apart; until the first batch the row's `seq` is the lower bound.
    let mut stream_head = at.head.seq;
    *backoff = Duration::from_millis(250);
    // Idle looks in a row that found the stream holding more than the floor took while
    // the consumer delivered nothing.
    let mut starved = 0u32;
    loop {
        if let Some(heard) = noise.due(std::time::Instant::now()) {
            // The table's own subject written to by someone else: said with its number.
            let alarm = Alarm {
                seq: heard.last,
                kind: "unsigned",
                detail: format!(
                    "table {table}: {} message(s) on its log stream not signed with its pinned key (stream sequences {}..={}) passed over: someone else writes to the table's subject",
                    heard.count, heard.first, heard.last
                ),
            };
            warn!(%table, seq = alarm.seq, kind = alarm.kind, detail = %alarm.detail, "FLOOR ALARM");
            db.raise(table, &alarm).await?;
            stats.alarmed(alarm.kind);
        }
        let mut messages = pulled(
            consumer.fetch().max_messages(BATCH).messages(),
            FETCH_DEADLINE,
        )
        .await?;
        // Read from the stream itself up to this sequence, the consumer being starved.
        let mut direct: Option<u64> = None;
        if messages.is_empty() {
            // Caught up: wait for the next row (woken as soon as one arrives).
            messages = pulled(
                consumer.batch().max_messages(1).expires(IDLE).messages(),
                IDLE + FETCH_DEADLINE,
            )
            .await?;
            if messages.is_empty() {
                // Nothing delivered: the stream may have been deleted and made again
                // (a broker that lost its store), which leaves this consumer delivering
                // nothing for ever. A consumer that is gone starts a new pass, which
                // makes it again on the new stream.
                let mut fresh = js.get_stream(stream_name).await.map_err(broker)?;
                let (created, last) = {
                    let info = fresh.info().await.map_err(broker)?;
                    (info.created, info.state.last_sequence)
                };
                if created != stream.cached_info().created {
                    return Err(broker(format!("stream {stream_name} was made again")));
                }
                consumer_alive(&fresh, durable).await?;
                if last <= stream_head {
                    taken.store(last, Ordering::Relaxed);
                    starved = 0;
                    continue;
                }
                // The stream holds more and the consumer delivered none of it. Once is
                // a race (a row stored as the pull expired); twice in a row, the
                // consumer is stuck (seen in tests/studio_cluster.rs under load, after the
                // cluster lost its quorum: the floor idle for 90 s with 1,428 rows
                // waiting). The rows are read from the stream itself, as a hole is; the
                // consumer's own delivery of them later is passed over (rows at or below
                // the head).
                starved += 1;
                if starved < STARVED_LOOKS {
                    continue;
                }
                // A second floor on this database shares the consumer and took them:
                // follow it from the database, as after a commit it won.
                if db.position(table).await?.head != at.head {
                    return Err(PassError::Db(DbError::HeadMoved(table.to_string())));
                }
                let upto = last.min(stream_head + DIRECT_BATCH);
                warn!(%table, from = stream_head + 1, upto, last, "floor: the consumer delivers nothing while the stream holds more; reading them from the stream");
                direct = Some(upto);
            }
        }
        starved = 0;
        // Delivered earlier but never acknowledged (lost in a crash or an outage): read
        // them from the stream itself, so a consumer's hole is not taken for a gap.
        // (Without `direct`, `messages` holds at least one.)
        let first = match direct {
            Some(upto) => upto + 1,
            None => messages[0].info().map_err(broker)?.stream_sequence,
        };
        // Only what the table signed goes on to the chain check; the rest is noise,
        // counted once (messages at or below the head were looked at before). The
        // signatures of a fetch are checked together (`wire::verify_claims`).
        let key = followed.keys.get(table).ok_or(PassError::Unpinned)?;
        let mut fetched = Vec::with_capacity(messages.len());
        for (seq, m) in fill_hole(&stream, stream_head, first).await? {
            let claim = subjects::claim(wire::LOG, table, &m.payload, &m.headers);
            fetched.push((seq, m.payload.to_vec(), claim));
        }
        for m in &messages {
            let seq = m.info().map_err(broker)?.stream_sequence;
            let claim = m
                .headers
                .as_ref()
                .and_then(|h| subjects::claim(wire::LOG, table, &m.payload, h));
            fetched.push((seq, m.payload.to_vec(), claim));
        }
        let claims: Vec<&wire::Claim> = fetched.iter().filter_map(|f| f.2.as_ref()).collect();
        let mut held_up = wire::verify_claims(&key, &claims).into_iter();
        let looked_at = fetched
            .iter()
            .map(|f| f.0)
            .max()
            .unwrap_or(0)
            .max(stream_head);
        let mut bodies = Vec::with_capacity(fetched.len());
        for (seq, payload, claim) in fetched {
            let signed = claim.is_some() && held_up.next().unwrap_or(false);
            if signed {
                bodies.push((seq, payload));
            } else if seq > stream_head {
                noise.heard(seq);
            }
        }
        let held = db
            .history_hashes(table, &branch_points(&at, &bodies))
            .await?;
        let from = at.clone();
        let (batch, to) = check(table, at.clone(), stream_head, &bodies, &held);
        stream_head = looked_at;
        // Read from the stream itself: everything up to `upto` was looked at, if missing.
        stream_head = stream_head.max(direct.unwrap_or(0));
        if to.head != from.head || !batch.alarms.is_empty() {
            db.commit(table, from.head, &to, stream_head, &batch)
                .await?;
            stats
                .rows
                .fetch_add(batch.rows.len() as u64, Ordering::Relaxed);
            for a in &batch.alarms {
                stats.alarmed(a.kind);
                warn!(%table, seq = a.seq, kind = a.kind, detail = %a.detail, "FLOOR ALARM");
            }
            at = to;
        }
        taken.store(stream_head, Ordering::Relaxed);
        // Only now, after the commit: one acknowledgement covers every earlier message.
        if let Some(last) = messages.last() {
            last.ack().await.map_err(broker)?;
        }
    }
}

/// Every message of one pull, or a broker error once `deadline` has passed without them.
/// Each pull is bounded: a request the consumer's leader took and then died with (a
/// broker node lost in a cluster) is never answered, and the client's `fetch` has no
/// deadline of its own, so without one the table's ingest would stall for good.
async fn pulled<E: std::fmt::Display>(
    pull: impl std::future::Future<Output = Result<consumer::pull::Batch, E>>,
    deadline: Duration,
) -> Result<Vec<jetstream::Message>, PassError> {
    let all = async {
        let mut batch = pull.await.map_err(broker)?;
        let mut messages = Vec::new();
        while let Some(m) = batch.next().await {
            messages.push(m.map_err(broker)?);
        }
        Ok(messages)
    };
    tokio::time::timeout(deadline, all)
        .await
        .unwrap_or_else(|_| {
            Err(broker(format!(
                "no answer to a pull within {deadline:?}: the consumer's leader may have changed"
            )))
        })
}

/// Whether the durable consumer still exists on `stream`.
async fn consumer_alive(stream: &Stream, durable: &str) -> Result<(), PassError> {
    stream
        .consumer_info(durable)
        .await
        .map(|_| ())
        .map_err(|e| broker(format!("the consumer {durable}: {e}")))
}

/// A table's stall watch, beside its passes: when the stream holds messages after the
/// last one the floor took and that has not moved for the configured time — a consumer
/// that delivers nothing, a pass that keeps failing, a database that blocks the commit —
/// a `stall` alarm, once per episode (logged first: the database may be what stalls).
async fn watch_stall(
    js: Context,
    db: FloorDb,
    stream_name: String,
    table: String,
    taken: Arc<AtomicU64>,
    stall: Duration,
    stats: Arc<IngestStats>,
) {
    let every = (stall / 4).clamp(Duration::from_millis(250), Duration::from_secs(5));
    let mut last_taken = taken.load(Ordering::Relaxed);
    let mut since = std::time::Instant::now();
    let mut raised = false;
    loop {
        tokio::time::sleep(every).await;
        let now_taken = taken.load(Ordering::Relaxed);
        if now_taken != last_taken {
            (last_taken, since, raised) = (now_taken, std::time::Instant::now(), false);
        }
        // Read every time (not only once the floor stopped moving): how far behind it is
        // is reported on `/metrics` while it catches up too. An unreadable stream leaves
        // the last reading as it was, and starts the stall's clock again (a broker that
        // cannot answer is not the floor stalling).
        let Some(on_broker) = stream_last(&js, &stream_name).await else {
            (since, raised) = (std::time::Instant::now(), false);
            continue;
        };
        if on_broker <= now_taken {
            (since, raised) = (std::time::Instant::now(), false);
        }
        stats.set_behind(
            &table,
            Behind {
                messages: on_broker.saturating_sub(now_taken),
                // `since` restarts whenever the floor takes a row or catches up.
                stalled: if on_broker > now_taken {
                    since.elapsed()
                } else {
                    Duration::ZERO
                },
            },
        );
        if on_broker <= now_taken {
            continue;
        }
        if raised || since.elapsed() < stall {
            continue;
        }
        // Numbered by the stream position it stalled at (reading the table's head could
        // wait on the very lock that stalls the ingest).
        let alarm = Alarm {
            seq: now_taken,
            kind: "stall",
            detail: format!(
                "table {table}: the broker holds {} message(s) after the last one the floor took, which has not moved for {} s",
                on_broker - now_taken,
                since.elapsed().as_secs()
            ),
        };
        warn!(%table, seq = now_taken, kind = alarm.kind, detail = %alarm.detail, "FLOOR ALARM");
        match db.raise(&table, &alarm).await {
            Ok(()) => stats.alarmed(alarm.kind),
            Err(e) => warn!(%table, error = %e, "floor: the stall alarm cannot be written"),
        }
        raised = true;
    }
}

/// The stream's last sequence, `None` when the broker cannot say.
async fn stream_last(js: &Context, stream_name: &str) -> Option<u64> {
    let mut s = js.get_stream(stream_name).await.ok()?;
    s.info().await.ok().map(|i| i.state.last_sequence)
}

/// Aborts the task when dropped (a follower's stall watch ends with it).
struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Messages `head + 1 .. first` read from the stream (what it no longer holds is left out:
/// the chain check reports it as a gap).
async fn fill_hole(
    stream: &Stream,
    head: u64,
    first: u64,
) -> Result<Vec<(u64, jetstream::message::StreamMessage)>, PassError> {
    let mut out = Vec::new();
    for seq in head + 1..first {
        match stream.get_raw_message(seq).await {
            Ok(m) => out.push((seq, m)),
            Err(e) if e.kind() == jetstream::stream::RawMessageErrorKind::NoMessageFound => {}
            Err(e) => return Err(broker(e)),
        }
    }
    Ok(out)
}

/// Checks message bodies (with their stream sequence) against `at`: the batch to commit
/// and the new position. Messages at or below `seen` (a stream sequence) were looked at
/// before: an unreadable one among them is not alarmed again.
///
/// A row on a branch the floor has not seen begins that branch: it must follow from the
/// row before it on the history the floor holds (`held`: those rows' hashes, read from
/// the database, for rows before this batch), and the rows after that one on the old
/// branch are superseded — kept as published, out of the table's history — with a
/// `timeline` alarm; one that does not follow is a `fork`.
pub fn check(
    table: &str,
    mut at: Position,
    seen: u64,
    bodies: &[(u64, Vec<u8>)],
    held: &HashMap<u64, [u8; 32]>,
) -> (Batch, Position) {
    let mut batch = Batch::default();
    // The hashes of rows taken in this batch, by row: a branch may begin after one.
    let mut taken: HashMap<u64, [u8; 32]> = HashMap::new();
    for (stream_seq, body) in bodies {
        let row: WireRow = match chain::parse(body) {
            Ok(r) => r,
            Err(why) => {
                if *stream_seq > seen {
                    batch.alarms.push(match fork_notice(table, body) {
                        Some(detail) => Alarm {
                            seq: *stream_seq,
                            kind: "fork",
                            detail: format!("table {table} stopped publishing: {detail}"),
                        },
                        None => Alarm {
                            seq: *stream_seq,
                            kind: "unreadable",
                            detail: format!("table {table}: message {stream_seq}: {why}"),
                        },
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
        let begins = row.branch != at.branch && !at.left.contains(&row.branch);
        let (finding, next) = if row.branch == at.branch {
            let Some(checked) = chain::check(at.head, &row) else {
                continue;
            };
            checked
        } else if at.left.contains(&row.branch) {
            // A superseded branch's row delivered again.
            continue;
        } else {
            let common = row.seq.saturating_sub(1);
            let prev = if common == 0 {
                Some([0u8; 32])
            } else {
                taken.get(&common).or_else(|| held.get(&common)).copied()
            };
            let finding = match prev {
                Some(prev) => {
                    let expected = crate::store::chain_hash(
                        &prev,
                        row.seq,
                        row.at_ms,
                        &row.kind,
                        &row.payload,
                    );
                    if expected == row.hash {
                        Finding::Ok
                    } else {
                        Finding::Break
                    }
                }
                None => Finding::Gap {
                    from: common,
                    to: common,
                },
            };
            let superseded = at.head.seq;
            batch.alarms.push(if finding == Finding::Break {
                Alarm {
                    seq: row.seq,
                    kind: "fork",
                    detail: format!(
                        "table {table}: branch {:?} begins at row {} but does not follow from row {common} of the history the floor holds (branch {:?}): another history under this id",
                        row.branch, row.seq, at.branch
                    ),
                }
            } else {
                Alarm {
                    seq: row.seq,
                    kind: "timeline",
                    detail: format!(
                        "table {table}: a new timeline (branch {:?}) continues after row {common}; rows {}..={superseded} of branch {:?} are superseded (kept)",
                        row.branch,
                        common + 1,
                        at.branch
                    ),
                }
            });
            batch.branches.push(BranchStart {
                branch: row.branch.clone(),
                parent: at.branch.clone(),
                common_seq: common,
                superseded_seq: superseded,
            });
            taken.retain(|seq, _| *seq <= common);
            at.left
                .insert(std::mem::replace(&mut at.branch, row.branch.clone()));
            let next = Head {
                seq: row.seq,
                hash: row.hash,
            };
            (finding, next)
        };
        // A branch that does not follow raised its `fork` alarm above.
        if let Some(a) =
            chain::alarm(&row, &finding).filter(|_| !(begins && finding == Finding::Break))
        {
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
        taken.insert(row.seq, row.hash);
        batch.rows.push((row, verdict));
        at.head = next;
    }
    (batch, at)
}

/// The detail of a table's notice that its publisher stopped over another history
/// (`publish::outbox`, `{"table", "notice": "fork", "detail"}`), if `body` is one for
/// `table`.
fn fork_notice(table: &str, body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Notice {
        table: String,
        notice: String,
        detail: String,
    }
    let n: Notice = serde_json::from_slice(body).ok()?;
    (n.table == table && n.notice == "fork").then_some(n.detail)
}

/// The rows of `bodies` that may begin a branch the floor has not seen: the row before
/// each, whose hash the check needs from the database.
fn branch_points(at: &Position, bodies: &[(u64, Vec<u8>)]) -> Vec<u64> {
    let mut seen = HashSet::new();
    bodies
        .iter()
        .filter_map(|(_, b)| chain::parse(b).ok())
        .filter(|r| r.branch != at.branch && !at.left.contains(&r.branch) && r.seq > 1)
        .filter(|r| seen.insert(r.branch.clone()))
        .map(|r| r.seq - 1)
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::chain_hash;

    /// Rows `from..=to` of a log whose row `from - 1` has hash `prev`, published on
    /// `branch`, as message bodies; and the last row's hash.
    fn rows(
        prev: [u8; 32],
        from: u64,
        to: u64,
        branch: &str,
        salt: &str,
    ) -> (Vec<Vec<u8>>, Vec<[u8; 32]>) {
        let mut prev = prev;
        let mut bodies = Vec::new();
        let mut hashes = Vec::new();
        for seq in from..=to {
            let payload = format!(r#"{{"kind":"held","item":"{seq}{salt}"}}"#);
            let hash = chain_hash(&prev, seq, 1000 + seq as i64, "held", &payload);
            bodies.push(
                format!(
                    r#"{{"table":"t1","seq":{seq},"at_ms":{},"kind":"held","hash":"{}","timeline":"x","branch":"{branch}","record":{payload}}}"#,
                    1000 + seq,
                    hex::encode(hash)
                )
                .into_bytes(),
            );
            hashes.push(hash);
            prev = hash;
        }
        (bodies, hashes)
    }

    fn numbered(bodies: Vec<Vec<u8>>, first: u64) -> Vec<(u64, Vec<u8>)> {
        bodies
            .into_iter()
            .zip(first..)
            .map(|(b, s)| (s, b))
            .collect()
    }

    #[test]
    fn a_branch_supersedes_the_rows_after_the_common_one_and_a_stray_one_is_a_fork() {
        let (old, old_hashes) = rows([0; 32], 1, 6, "", "H");
        let (batch, at) = check(
            "t1",
            Position::default(),
            0,
            &numbered(old, 1),
            &HashMap::new(),
        );
        assert!(batch.alarms.is_empty());
        assert_eq!((at.head.seq, at.branch.as_str()), (6, ""));
        // The restored log shares rows 1..=3, then continues as branch "b".
        let (new, new_hashes) = rows(old_hashes[2], 4, 8, "b", "S");
        // Row 3's hash comes from the database here (not in this batch).
        let held = HashMap::from([(3, old_hashes[2])]);
        assert_eq!(branch_points(&at, &numbered(new.clone(), 7)), vec![3]);
        let (batch, at) = check("t1", at, 6, &numbered(new, 7), &held);
        let kinds: Vec<&str> = batch.alarms.iter().map(|a| a.kind).collect();
        assert_eq!(kinds, ["timeline"], "{:?}", batch.alarms);
        assert!(
            batch.alarms[0].detail.contains("rows 4..=6"),
            "{}",
            batch.alarms[0].detail
        );
        assert_eq!(batch.branches.len(), 1);
        assert_eq!(
            (
                batch.branches[0].common_seq,
                batch.branches[0].superseded_seq
            ),
            (3, 6)
        );
        assert!(batch.rows.iter().all(|(_, v)| *v == "ok"));
        assert_eq!(
            (at.head.seq, at.head.hash, at.branch.as_str()),
            (8, new_hashes[4], "b")
        );
        assert!(at.left.contains(""));
        // A superseded row delivered again is passed over.
        let (late, _) = rows(old_hashes[4], 6, 6, "", "H");
        let (batch, same) = check("t1", at.clone(), 12, &numbered(late, 6), &HashMap::new());
        assert!(batch.rows.is_empty() && batch.alarms.is_empty());
        assert_eq!(same, at);
        // A branch that does not follow from the history held: a fork, stored as published.
        let (stray, _) = rows([7; 32], 5, 5, "c", "Z");
        let held = HashMap::from([(4, new_hashes[0])]);
        let (batch, at) = check("t1", at, 12, &numbered(stray, 13), &held);
        let kinds: Vec<&str> = batch.alarms.iter().map(|a| a.kind).collect();
        assert_eq!(kinds, ["fork"]);
        assert_eq!(batch.rows[0].1, "break");
        assert_eq!(at.branch, "c");
    }
}
