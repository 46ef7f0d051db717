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
//!
//! By file: `pass` is one table's consumer — a pass from the database's head, the
//! starved consumer's direct reads, the signatures and the commit; `batch_check` checks a
//! batch's rows against the position the floor holds (chain, branches, forks), with no
//! I/O, so it is tested on its own; `quiet` decides when a pass that took nothing for a
//! while reads the stream itself rather than trust the broker's word that it is caught
//! up; `stall` watches how far each table is behind. What
//! stays here is the discovery of the tables and the stats `/metrics` reads.

mod batch_check;
mod pass;
mod quiet;
mod stall;

pub use batch_check::check;

use super::chain::Alarm;
use super::db::{DbError, FloorDb};
use crate::broker::noise::Noise;
use crate::trust::pinned::KeysFile;
use async_nats::jetstream::Context;
use futures::StreamExt;
use pass::pass;
use stall::watch_stall;
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
/// The longest pause after a failure.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

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

/// Aborts the task when dropped (a follower's stall watch ends with it).
struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
