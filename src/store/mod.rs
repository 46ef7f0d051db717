//! The store: SQLite through sqlx. One writer (owned by the table task) appends to the
//! event log — in place on its second, direct connection (`direct.rs`), through the sqlx
//! connection for audited rows and while another process holds the lock; read-only
//! connections serve recall and the API.
//!
//! - WAL journal, `synchronous = FULL` (every commit is on disk before `append` returns),
//!   foreign keys on, migrations embedded in the binary (`src/store/migrations/`).
//! - Runtime queries (`sqlx::query`), not the `query!` macros, so building needs no live
//!   database and no committed offline query data.
//! - The event log is append-only (triggers refuse UPDATE/DELETE) and hash-chained:
//!   `hash = sha256(prev_hash || seq || at_ms || kind || 0 || payload)`. [`Store::open`]
//!   runs `PRAGMA integrity_check` and verifies the whole chain before anything else.
//! - `shoes`, `rounds`, `bets`, `settlements` and `alarms` are projections written in the
//!   same transaction as the event row that caused them.

pub mod anchor;
pub mod audit;
mod backup;
mod checkpoint;
mod direct;
pub mod dispute;
mod integrity;
pub mod outbox;
mod path;
mod projections;
mod reader;
mod record;
pub mod spill;
pub mod timeline;

pub use backup::{backup, verify, Verified};
use checkpoint::Checkpointer;
pub use path::check_path;
use projections::project;
pub use reader::{DisputeRow, Reader, RecalledRound};
pub use record::{BrokerHead, Record, Source, TimelineCause};
pub use timeline::Timeline;

use crate::engine::{Event, Input};
use nix::fcntl::{Flock, FlockArg};
use sha2::{Digest, Sha256};
use sqlx::pool::PoolConnection;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{ConnectOptions, Connection, Row, Sqlite, SqliteConnection};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The store failed. Any of these at start-up leaves the table locked with the message.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The directory for the database could not be created.
    #[error("cannot create {path}: {source}")]
    Dir {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// `store.path` cannot hold a database (`path::check_path`).
    #[error("{path}: {why}")]
    Unusable {
        /// The configured path.
        path: PathBuf,
        /// Why, naming the directory or file at fault.
        why: String,
    },
    /// SQLite refused to open the file (not a database, unreadable, locked).
    #[error("cannot open the database {path}: {source}")]
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        source: sqlx::Error,
    },
    /// `PRAGMA integrity_check` found damage.
    #[error("the database {path} is damaged (PRAGMA integrity_check: {report})")]
    Integrity {
        /// The file.
        path: PathBuf,
        /// SQLite's report.
        report: String,
    },
    /// The embedded migrations could not be applied.
    #[error("cannot migrate the database: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A row of the event log does not match its hash, or the sequence has a gap.
    #[error("the event log is broken at seq {seq}: {why}")]
    Chain {
        /// The first bad row.
        seq: u64,
        /// What is wrong with it.
        why: String,
    },
    /// Another process holds the database (a second `croupier run` on the same file).
    #[error("{path} is in use by another croupier process (lock {lock})")]
    InUse {
        /// The database.
        path: PathBuf,
        /// The lock file.
        lock: String,
    },
    /// The database was created for another game.
    #[error(
        "table {table} was recorded with variant {recorded:?}, the config says {configured:?}"
    )]
    VariantChanged {
        /// The table.
        table: String,
        /// The variant in the database.
        recorded: String,
        /// The variant in the config.
        configured: String,
    },
    /// The database file exists but is empty: the history it should hold is gone.
    #[error(
        "the database {path} is an empty file (0 bytes): the table's history should be in it. \
         Restore it from a backup (with its .anchor file), or start with `croupier run --init` \
         to create a new table in its place"
    )]
    EmptyFile {
        /// The file.
        path: PathBuf,
    },
    /// There is no database file, but its anchor says there was a log.
    #[error(
        "the database {path} does not exist, but its anchor says table {table}'s log reached \
         seq {seq}. Restore it from a backup (with its .anchor file), or start with \
         `croupier run --init` to create a new table"
    )]
    Missing {
        /// The file.
        path: PathBuf,
        /// The table in the anchor.
        table: String,
        /// The anchor's sequence number.
        seq: u64,
    },
    /// The log ends before its anchor, or holds another row where the anchor points.
    #[error(
        "table {table}'s event log does not reach its anchor: {why}. Rows were removed from \
         its end (or the database was replaced). Restore it from a backup with its .anchor \
         file"
    )]
    Truncated {
        /// The table.
        table: String,
        /// What does not match.
        why: String,
    },
    /// `--init` where a database already is.
    #[error(
        "--init creates a new table, but {path} already holds a database: refusing to touch it"
    )]
    InitExisting {
        /// The file.
        path: PathBuf,
    },
    /// The anchor file could not be read or written.
    #[error(transparent)]
    Anchor(#[from] anchor::AnchorError),
    /// The operating system's random generator failed (a new timeline needs an id).
    #[error("no random id can be made: {0}")]
    Random(String),
    /// A query failed.
    #[error("database error: {0}")]
    Sql(#[from] sqlx::Error),
    /// A write on the direct connection failed (`direct.rs`).
    #[error("database error: {0}")]
    Direct(#[from] rusqlite::Error),
    /// A payload could not be encoded or decoded.
    #[error("event payload: {0}")]
    Json(#[from] serde_json::Error),
    /// The audit row could not be written (neither was the event row), or the audit
    /// chain is broken.
    #[error(transparent)]
    Audit(#[from] audit::AuditError),
    /// A backup could not be written.
    #[error("cannot back up to {path}: {why}")]
    Backup {
        /// The backup file.
        path: PathBuf,
        /// Why.
        why: String,
    },
}

/// One row of the event log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRow {
    /// The table's sequence number, from 1.
    pub seq: u64,
    /// When it was written (Unix milliseconds).
    pub at_ms: i64,
    /// The record.
    pub record: Record,
    /// The row's chain hash (lowercase hex): the log's head once this row is the last.
    pub hash: String,
}

/// The chained hash of one row (the floor verifies published rows with it too).
pub fn chain_hash(prev: &[u8; 32], seq: u64, at_ms: i64, kind: &str, payload: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(prev);
    h.update(seq.to_be_bytes());
    h.update(at_ms.to_be_bytes());
    h.update(kind.as_bytes());
    h.update([0]);
    h.update(payload.as_bytes());
    h.finalize().into()
}

pub(crate) fn now_ms() -> i64 {
    // Watched for steps (`clock::StepWatch`): a row's `at_ms` that jumps is logged.
    crate::clock::wall_now_ms()
}

/// How long a write waits for another process's lock (a backup, an operator's `sqlite3`)
/// before it fails: long enough for a short lock, short enough that the table loop misses
/// no more than a few heartbeats. A longer lock takes the table out of service until a
/// retry succeeds (`table/task/outage.rs`).
pub const WRITE_BUSY: Duration = Duration::from_secs(5);

fn options(path: &Path) -> SqliteConnectOptions {
    SqliteConnectOptions::new()
        .filename(path)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Full)
        .foreign_keys(true)
        .busy_timeout(WRITE_BUSY)
        .disable_statement_logging()
}

/// Read-only connections: the journal mode is the file's own (the writer makes it WAL);
/// setting it would be a write, which a read-only connection (or a backup in rollback-journal
/// mode) refuses.
fn reader_options(path: &Path) -> SqliteConnectOptions {
    SqliteConnectOptions::new()
        .filename(path)
        .read_only(true)
        .foreign_keys(true)
        .busy_timeout(Duration::from_secs(5))
        .disable_statement_logging()
}

/// The writer: owned by the table task, the only connection that writes.
#[derive(Debug)]
pub struct Store {
    conn: PoolConnection<Sqlite>,
    pool: SqlitePool,
    checkpointer: Checkpointer,
    /// Held while this writer lives: one writer per database, across processes too.
    _lock: Flock<std::fs::File>,
    path: PathBuf,
    table: String,
    last_hash: [u8; 32],
    last_seq: u64,
    /// The log head outside the database (`anchor.rs`); `None` if it cannot be written.
    anchor: Option<anchor::Anchor>,
    /// The timeline the log is on (`timeline.rs`).
    timeline: Timeline,
    /// The database's first timeline.
    first_timeline: String,
    /// The last committed rows, for the broker publisher (only once it asked for them).
    recent: Option<outbox::Recent>,
    /// The unaudited rows' connection, used in place (`direct.rs`); `None` if it could not
    /// be opened, and then every row goes through `conn`.
    direct: Option<direct::DirectWriter>,
}

/// What [`Store::open`] found.
#[derive(Debug)]
pub struct Opened {
    /// The writer, positioned after the last row.
    pub store: Store,
    /// The whole event log of the table, verified, in sequence order.
    pub log: Vec<LogRow>,
}

impl Store {
    /// Opens the database at `path` for `table` — creating it only where there is no file
    /// and no anchor says there was one: integrity check, migrations, the table's row, then
    /// reads and verifies its whole event log and checks it against the anchor.
    pub async fn open(
        path: &Path,
        table: &str,
        name: &str,
        variant: &str,
    ) -> Result<Opened, StoreError> {
        Store::open_as(path, table, name, variant, false).await
    }

    /// [`Store::open`]; with `init`, a new table is also created in an empty (0-byte) file
    /// or where an anchor is left without its database (`croupier run --init`), and the
    /// anchor is started afresh.
    pub async fn open_as(
        path: &Path,
        table: &str,
        name: &str,
        variant: &str,
        init: bool,
    ) -> Result<Opened, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Dir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let lock = lock(path)?;
        let anchor_path = anchor::path_for(path);
        let anchored = if init {
            if std::fs::metadata(path).is_ok_and(|m| m.len() > 0) {
                return Err(StoreError::InitExisting {
                    path: path.to_path_buf(),
                });
            }
            None
        } else {
            check_file(path)?;
            anchor::read(&anchor_path)?.filter(|h| h.table == table)
        };
        create_private(path)?;
        let open_err = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        // A pool of exactly one connection: the single writer. (A pool, not a bare
        // connection, because the migrator's future must be Send.)
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .connect_with(
                options(path)
                    .create_if_missing(true)
                    // Checkpoints run beside the writer (see `checkpointer`), not inside a
                    // commit on the card path.
                    .pragma("wal_autocheckpoint", "0"),
            )
            .await
            .map_err(open_err)?;
        let mut conn = pool.acquire().await.map_err(open_err)?;
        let report: Vec<String> = sqlx::query_scalar("PRAGMA integrity_check")
            .fetch_all(&mut *conn)
            .await
            .map_err(open_err)?;
        if report != ["ok"] {
            return Err(StoreError::Integrity {
                path: path.to_path_buf(),
                report: report.join("; "),
            });
        }
        drop(conn);
        sqlx::migrate!("src/store/migrations").run(&pool).await?;
        let mut conn = pool.acquire().await?;
        let recorded: Option<(String, Option<String>)> =
            sqlx::query_as("SELECT variant, timeline FROM tables WHERE id = ?")
                .bind(table)
                .fetch_optional(&mut *conn)
                .await?;
        let first_timeline = match recorded {
            Some((recorded, _)) if recorded != variant => {
                return Err(StoreError::VariantChanged {
                    table: table.to_string(),
                    recorded,
                    configured: variant.to_string(),
                })
            }
            Some((_, Some(timeline))) => timeline,
            Some((_, None)) => {
                let id = timeline::new_id()?;
                sqlx::query("UPDATE tables SET timeline = ? WHERE id = ?")
                    .bind(&id)
                    .bind(table)
                    .execute(&mut *conn)
                    .await?;
                id
            }
            None => {
                let id = timeline::new_id()?;
                sqlx::query(
                    "INSERT INTO tables (id, name, variant, created_ms, timeline) VALUES (?, ?, ?, ?, ?)",
                )
                .bind(table)
                .bind(name)
                .bind(variant)
                .bind(now_ms())
                .bind(&id)
                .execute(&mut *conn)
                .await?;
                id
            }
        };
        let (mut log, last_hash) = read_log(&mut conn, table).await?;
        let last_seq = log.last().map_or(0, |r| r.seq);
        if let Some(head) = anchored {
            check_anchor(&mut conn, table, last_seq, &head).await?;
        }
        let anchor = match anchor::Anchor::create(&anchor_path) {
            Ok(mut a) => {
                a.set(&head(table, last_seq, &last_hash))?;
                a.set(&head(table, last_seq, &last_hash))?;
                Some(a)
            }
            Err(e) => {
                tracing::warn!(error = %e, "the log head cannot be anchored outside the database");
                None
            }
        };
        let checkpointer = Checkpointer::spawn(path.to_path_buf());
        let direct = match direct::DirectWriter::open(path) {
            Ok(d) => Some(d),
            Err(e) => {
                tracing::warn!(error = %e, "every row goes through sqlx's thread: the direct connection cannot be opened");
                None
            }
        };
        let timeline = Timeline::of(&first_timeline, &log);
        let mut store = Store {
            conn,
            pool,
            checkpointer,
            _lock: lock,
            path: path.to_path_buf(),
            table: table.to_string(),
            last_hash,
            last_seq,
            anchor,
            timeline,
            first_timeline,
            recent: None,
            direct,
        };
        if store.begin_restored_timeline(&log).await? {
            log = store.reload().await?;
        }
        Ok(Opened { store, log })
    }

    /// A database with a backup's marker was restored from that backup: its history
    /// begins a new timeline (a `timeline` row) before anything else is written, and the
    /// marker goes. A crash between the two finds the row already written for the same
    /// backup and only removes the marker. Returns whether a row was written.
    async fn begin_restored_timeline(&mut self, log: &[LogRow]) -> Result<bool, StoreError> {
        let marker: Option<(i64, i64)> =
            sqlx::query_as("SELECT taken_ms, seq FROM backup_marker WHERE id = 1")
                .fetch_optional(&mut *self.conn)
                .await?;
        let Some((backup_ms, backup_seq)) = marker else {
            return Ok(false);
        };
        let backup_seq = u64::try_from(backup_seq).unwrap_or(0);
        let cause = TimelineCause::Restored {
            backup_ms,
            backup_seq,
        };
        let already = log
            .last()
            .is_some_and(|r| matches!(&r.record, Record::Timeline { cause: c, .. } if *c == cause));
        if !already {
            let record = Record::Timeline {
                id: timeline::new_id()?,
                parent: self.timeline.id.clone(),
                cause,
            };
            let seq = self.append(&record, &[], 0).await?;
            tracing::warn!(
                table = %self.table,
                seq,
                backup_seq,
                timeline = %self.timeline.id,
                "this database was restored from a backup: a new timeline begins"
            );
        }
        sqlx::query("DELETE FROM backup_marker")
            .execute(&mut *self.conn)
            .await?;
        Ok(!already)
    }

    /// The timeline the log is on.
    pub fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The last sequence number written (0 for an empty log).
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// Appends `record` as the next row, with the projections of `events` (what the engine
    /// said about an accepted input; empty otherwise) and `shoe` (the shoe in play after
    /// it), in one transaction. Returns the row's sequence number once it is on disk.
    pub async fn append(
        &mut self,
        record: &Record,
        events: &[Event],
        shoe: u32,
    ) -> Result<u64, StoreError> {
        self.append_audited(record, events, shoe, None).await
    }

    /// [`Store::append`], plus `audit` (an override, an alarm clear) appended to the audit
    /// log **in the same transaction**: both rows commit or neither does. The audit row's
    /// `detail` gets `table` and `event_seq` (the event row's sequence number). The event
    /// row is inserted first, so the transaction holds SQLite's write lock before the audit
    /// chain's head is read.
    pub async fn append_audited(
        &mut self,
        record: &Record,
        events: &[Event],
        shoe: u32,
        audit: Option<&audit::AuditEntry>,
    ) -> Result<u64, StoreError> {
        let seq = self.last_seq + 1;
        let at_ms = now_ms();
        let kind = record.kind();
        let payload = serde_json::to_string(record)?;
        let hash = chain_hash(&self.last_hash, seq, at_ms, kind, &payload);
        let table = self.table.as_str();
        let seq_i = i64::try_from(seq).unwrap_or(i64::MAX);
        let projected = audit.is_some()
            || matches!(
                record,
                Record::Alarm { .. }
                    | Record::Clear { .. }
                    | Record::Dispute { .. }
                    | Record::Resolve { .. }
                    | Record::Final { .. }
                    | Record::Recovered { .. }
            )
            || events.iter().any(|e| {
                matches!(
                    e,
                    Event::ShoeShuffled { .. } | Event::RoundOpened { .. } | Event::RoundSettled(_)
                )
            });
        // Without an audit row (nearly every row: cards, decisions, a round's settlement),
        // in place on this thread (`direct.rs`); through SQLite's thread when another
        // process holds the lock, without the direct connection, or with an audit row
        // (whose chain `audit::append` reads and extends on the sqlx writer).
        if let (Some(direct), None) = (&self.direct, audit) {
            let row = direct::EventRow {
                table,
                seq: seq_i,
                kind,
                payload: &payload,
                at_ms,
                hash: &hash,
            };
            let projection = projected.then_some(direct::Projected {
                record,
                events,
                shoe,
            });
            if direct.append(&row, projection)? == direct::Inserted::Committed {
                self.committed(seq, at_ms, hash, record, payload);
                return Ok(seq);
            }
        }
        // Built only off the card's path: the direct connection has its own statement.
        let insert = sqlx::query(
            "INSERT INTO events (table_id, seq, kind, payload, at_ms, hash) VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(table)
        .bind(seq_i)
        .bind(kind)
        .bind(&payload)
        .bind(at_ms)
        .bind(&hash[..]);
        if !projected {
            // One statement, atomic and durable on its own (autocommit): one round trip
            // to SQLite's thread instead of three.
            insert.execute(&mut *self.conn).await?;
            self.committed(seq, at_ms, hash, record, payload);
            return Ok(seq);
        }
        let mut tx = self.conn.begin().await?;
        insert.execute(&mut *tx).await?;
        if let Some(entry) = audit {
            let mut entry = entry.clone();
            if let Some(detail) = entry.detail.as_object_mut() {
                detail.insert("table".into(), table.into());
                detail.insert("event_seq".into(), seq.into());
            }
            audit::append(&mut tx, &entry).await?;
        }
        // The projections are derived data: if one cannot be written, the row (the truth)
        // still commits and the projection is logged as missing, rather than the table
        // going out of service over a report.
        let mut savepoint = (*tx).begin().await?;
        match project(&mut *savepoint, table, seq_i, record, events, shoe).await {
            Ok(()) => savepoint.commit().await?,
            Err(e) => {
                savepoint.rollback().await?;
                tracing::error!(table, seq, error = %e, "projection not written (the event row is)");
            }
        }
        tx.commit().await?;
        self.committed(seq, at_ms, hash, record, payload);
        Ok(seq)
    }

    /// After a commit: the writer's position and the anchor follow the log's new head.
    fn committed(
        &mut self,
        seq: u64,
        at_ms: i64,
        hash: [u8; 32],
        record: &Record,
        payload: String,
    ) {
        self.last_seq = seq;
        self.last_hash = hash;
        self.timeline.follow(seq, record);
        if let Some(a) = &mut self.anchor {
            if let Err(e) = a.set(&head(&self.table, seq, &hash)) {
                tracing::warn!(error = %e, "the anchor could not follow the log head");
            }
        }
        if let Some(recent) = &self.recent {
            let hash = hex::encode(hash);
            recent.push(outbox::StoredRow {
                row: LogRow {
                    seq,
                    at_ms,
                    record: record.clone(),
                    hash: hash.clone(),
                },
                kind: record.kind().to_string(),
                payload,
                hash,
            });
        }
    }

    /// The buffer of the rows this writer commits from now on, for the broker publisher
    /// ([`outbox::OutboxDb::with_recent`]): made at the first call, the same one after.
    pub fn recent(&mut self) -> outbox::Recent {
        let last_seq = self.last_seq;
        self.recent
            .get_or_insert_with(|| {
                let recent = outbox::Recent::default();
                recent.reset(last_seq);
                recent
            })
            .clone()
    }

    /// The log's head: the last row's chain hash (lowercase hex).
    pub fn head_hash(&self) -> String {
        hex::encode(self.last_hash)
    }

    /// Re-reads and verifies the whole log after a failed write, and positions the writer
    /// after its last row: whatever the failed write left (nothing, or a row that did
    /// commit after all), the log on disk is what counts.
    pub async fn reload(&mut self) -> Result<Vec<LogRow>, StoreError> {
        let (log, last_hash) = read_log(&mut self.conn, &self.table).await?;
        self.last_seq = log.last().map_or(0, |r| r.seq);
        self.last_hash = last_hash;
        if let Some(recent) = &self.recent {
            recent.reset(self.last_seq);
        }
        self.timeline = Timeline::of(&self.first_timeline, &log);
        Ok(log)
    }

    /// How long a write waits for another connection's lock before it fails
    /// (SQLite's busy timeout; [`WRITE_BUSY`] unless changed).
    pub async fn set_busy_timeout(&mut self, wait: Duration) -> Result<(), StoreError> {
        sqlx::query(&format!("PRAGMA busy_timeout = {}", wait.as_millis()))
            .execute(&mut *self.conn)
            .await?;
        if let Some(direct) = &self.direct {
            direct.set_busy_timeout(wait)?;
        }
        Ok(())
    }

    /// Appends `entry` to the audit log on its own, in a `BEGIN IMMEDIATE` transaction of
    /// this (the writer's) connection: a decision that changes no event row (a withdrawn
    /// proposal).
    pub async fn audit(&mut self, entry: &audit::AuditEntry) -> Result<(), StoreError> {
        let mut tx = self.conn.begin_with("BEGIN IMMEDIATE").await?;
        audit::append(&mut tx, entry).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Checkpoints the WAL and closes the connection (graceful shutdown).
    pub async fn close(self) -> Result<(), StoreError> {
        let Store {
            conn,
            pool,
            checkpointer,
            _lock: lock,
            direct,
            ..
        } = self;
        drop(direct);
        // Its connection closed first and for good: nothing may touch the files once this
        // returns (a restore may replace them).
        checkpointer.close().await;
        let mut conn = conn;
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
            .execute(&mut *conn)
            .await?;
        drop(conn);
        close_pool(&pool).await;
        drop(lock);
        Ok(())
    }
}

/// Opens (creating if needed, never truncating) a file only its owner may read or write:
/// what sits beside the database is as private as the database.
pub fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
}

/// Closes `pool` for good: every connection closed when this returns. `Pool::close` alone
/// may return with one still open — a connection handed back is returned by a task
/// spawned from its drop, and can reach the idle queue after the close drained it, where
/// nothing closes it (sqlx issue #3217). A SQLite connection left open holds the files and,
/// as the last one, checkpoints into them when it finally closes: after a restore put
/// other files in place, that wrote "database disk image is malformed".
pub async fn close_pool(pool: &sqlx::SqlitePool) {
    // Returns in flight land first (bounded: a connection someone still holds is theirs).
    for _ in 0..200 {
        if pool.num_idle() as u32 >= pool.size() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    pool.close().await;
    // A return that landed after the drain: closing again closes it.
    for _ in 0..200 {
        if pool.size() == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
        pool.close().await;
    }
    tracing::warn!(
        open = pool.size(),
        "a database pool still holds connections after its close"
    );
}

/// Creates the database file, if there is none, private to its owner (SQLite then gives
/// its `-wal` and `-shm` files the same mode), whatever the umask.
pub fn create_private(path: &Path) -> Result<(), StoreError> {
    if path.exists() {
        return Ok(());
    }
    private_file(path)
        .map(drop)
        .map_err(|source| StoreError::Dir {
            path: path.to_path_buf(),
            source,
        })
}

/// The anchor's view of a log head.
fn head(table: &str, seq: u64, hash: &[u8; 32]) -> anchor::Head {
    anchor::Head {
        table: table.to_string(),
        seq,
        hash: hex::encode(hash),
    }
}

/// Refuses a database file of 0 bytes, and a missing one whose anchor says it held a log:
/// opening either would create a new, empty table where a history should be.
pub fn check_file(path: &Path) -> Result<(), StoreError> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() && m.len() == 0 => Err(StoreError::EmptyFile {
            path: path.to_path_buf(),
        }),
        Ok(_) => Ok(()),
        Err(_) => match anchor::read(&anchor::path_for(path))? {
            Some(head) if head.seq > 0 => Err(StoreError::Missing {
                path: path.to_path_buf(),
                table: head.table,
                seq: head.seq,
            }),
            _ => Ok(()),
        },
    }
}

/// The verified log (ending at `last_seq`) reaches `head` and holds its hash there.
async fn check_anchor(
    conn: &mut SqliteConnection,
    table: &str,
    last_seq: u64,
    head: &anchor::Head,
) -> Result<(), StoreError> {
    let truncated = |why: String| StoreError::Truncated {
        table: table.to_string(),
        why,
    };
    if last_seq < head.seq {
        return Err(truncated(format!(
            "the log ends at seq {last_seq}, the anchor is at seq {}",
            head.seq
        )));
    }
    let hash: Vec<u8> =
        sqlx::query_scalar("SELECT hash FROM events WHERE table_id = ? AND seq = ?")
            .bind(table)
            .bind(i64::try_from(head.seq).unwrap_or(i64::MAX))
            .fetch_optional(&mut *conn)
            .await?
            .unwrap_or_default();
    if head.seq > 0 && hex::encode(hash) != head.hash {
        return Err(truncated(format!(
            "the row at seq {} is not the one the anchor names",
            head.seq
        )));
    }
    Ok(())
}

/// Takes the exclusive advisory lock `<db>.lock` (released by the kernel when the process
/// ends, however it ends).
fn lock(path: &Path) -> Result<Flock<std::fs::File>, StoreError> {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    let lock_path = PathBuf::from(name);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|source| StoreError::Dir {
            path: lock_path.clone(),
            source,
        })?;
    Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|_| StoreError::InUse {
        path: path.to_path_buf(),
        lock: lock_path.display().to_string(),
    })
}

/// Reads a table's whole event log in sequence order, verifying sequence and hash chain.
async fn read_log(
    conn: &mut SqliteConnection,
    table: &str,
) -> Result<(Vec<LogRow>, [u8; 32]), StoreError> {
    let rows = sqlx::query(
        "SELECT seq, kind, payload, at_ms, hash FROM events WHERE table_id = ? ORDER BY seq",
    )
    .bind(table)
    .fetch_all(&mut *conn)
    .await?;
    let mut prev = [0u8; 32];
    let mut log = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let seq: i64 = row.try_get("seq")?;
        let kind: String = row.try_get("kind")?;
        let payload: String = row.try_get("payload")?;
        let at_ms: i64 = row.try_get("at_ms")?;
        let hash: Vec<u8> = row.try_get("hash")?;
        let seq = u64::try_from(seq).unwrap_or(0);
        let broken = |why: String| StoreError::Chain { seq, why };
        if seq != i as u64 + 1 {
            return Err(broken(format!("expected seq {}", i + 1)));
        }
        let expect = chain_hash(&prev, seq, at_ms, &kind, &payload);
        if hash[..] != expect[..] {
            return Err(broken(
                "the row does not match its hash (altered or damaged)".into(),
            ));
        }
        let record: Record = serde_json::from_str(&payload)
            .map_err(|e| broken(format!("unreadable payload: {e}")))?;
        if record.kind() != kind {
            return Err(broken(format!("kind {kind:?} does not match the payload")));
        }
        prev = expect;
        log.push(LogRow {
            seq,
            at_ms,
            record,
            hash: hex::encode(expect),
        });
    }
    Ok((log, prev))
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn fresh(dir: &Path) -> (PathBuf, Store) {
        let db = dir.join("t.db");
        let store = Store::open(&db, "t", "t", "deluxe")
            .await
            .expect("open")
            .store;
        (db, store)
    }

    #[tokio::test]
    async fn a_projection_that_cannot_be_written_does_not_lose_the_row() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (db, mut store) = fresh(dir.path()).await;
        let record = Record::Input {
            source: Source::Api,
            input: Input::Shuffle,
        };
        let opened = [Event::RoundOpened { round: 1 }];
        assert_eq!(store.append(&record, &opened, 1).await.expect("first"), 1);
        // The same round number again: its `rounds` row collides, the event row stays.
        assert_eq!(store.append(&record, &opened, 1).await.expect("second"), 2);
        store.close().await.expect("close");
        let reopened = Store::open(&db, "t", "t", "deluxe").await.expect("reopen");
        assert_eq!(reopened.log.len(), 2, "the chain verifies with both rows");
        drop(reopened);
        let reader = Reader::open(&db).await.expect("reader");
        assert_eq!(reader.recall("t", 10).await.expect("recall").len(), 1);
    }

    #[tokio::test]
    async fn a_row_waits_out_a_lock_longer_than_the_direct_connections_and_is_written_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (db, mut store) = fresh(dir.path()).await;
        let card = |c: &str| Record::Input {
            source: Source::Shoe,
            input: Input::Card(c.parse().expect("card")),
        };
        assert_eq!(store.append(&card("AS"), &[], 1).await.expect("row 1"), 1);
        // A plain row (one autocommit INSERT) and a projected one (a transaction) in turn.
        let shuffled = [Event::ShoeShuffled { shoe: 2 }];
        let rows: [(Record, &[Event]); 2] = [(card("KH"), &[]), (card("QD"), &shuffled)];
        for (n, (record, events)) in rows.iter().enumerate() {
            // Another process holds the write lock ten times as long as the direct
            // connection waits: the row goes through the sqlx connection's longer wait.
            let mut blocker = options(&db).connect().await.expect("blocker");
            sqlx::query("BEGIN IMMEDIATE")
                .execute(&mut blocker)
                .await
                .expect("lock");
            let held = direct::DIRECT_BUSY * 10;
            let release = tokio::spawn(async move {
                tokio::time::sleep(held).await;
                sqlx::query("COMMIT")
                    .execute(&mut blocker)
                    .await
                    .expect("unlock");
            });
            let started = std::time::Instant::now();
            let seq = store.append(record, events, 2).await.expect("written");
            assert_eq!(seq, n as u64 + 2);
            assert!(
                started.elapsed() >= held,
                "written only once the lock was released"
            );
            release.await.expect("released");
        }
        assert_eq!(store.append(&card("JC"), &[], 2).await.expect("row 4"), 4);
        store.close().await.expect("close");
        let reopened = Store::open(&db, "t", "t", "deluxe").await.expect("reopen");
        assert_eq!(
            reopened.log.iter().map(|r| r.seq).collect::<Vec<_>>(),
            [1, 2, 3, 4],
            "each row once, and the chain verifies across both connections"
        );
        drop(reopened);
        assert_eq!(
            projections_of(&db).await,
            ["shoes [\"t\",2,3,null]"],
            "the projection of the row written under the lock"
        );
    }

    /// Every projection table, row by row, in a stable order.
    async fn projections_of(db: &Path) -> Vec<String> {
        let mut conn = options(db).connect().await.expect("connect");
        let mut out = Vec::new();
        for (table, order) in [
            ("shoes", "shoe"),
            ("rounds", "round"),
            ("bets", "round, line"),
            ("settlements", "round, line"),
            ("alarms", "raised_seq"),
        ] {
            let columns: String =
                sqlx::query_scalar("SELECT group_concat(name, ', ') FROM pragma_table_info(?)")
                    .bind(table)
                    .fetch_one(&mut conn)
                    .await
                    .expect("columns");
            let sql = format!("SELECT json_array({columns}) FROM {table} ORDER BY {order}");
            let rows: Vec<String> = sqlx::query_scalar(&sql)
                .fetch_all(&mut conn)
                .await
                .expect("dump");
            out.extend(rows.into_iter().map(|r| format!("{table} {r}")));
        }
        out
    }

    #[tokio::test]
    async fn the_direct_connection_projects_a_session_as_the_sqlx_writer_does() {
        use crate::engine::{Engine, Variant};
        use crate::sim::{Style, TableSim};
        let variant =
            std::sync::Arc::new(Variant::built_in("deluxe").expect("known").expect("valid"));
        let mut engine = Engine::new(std::sync::Arc::clone(&variant));
        let mut sim = TableSim::new(variant, 11, Style::Random);
        let (one, two) = (
            tempfile::tempdir().expect("tempdir"),
            tempfile::tempdir().expect("tempdir"),
        );
        let (direct_db, mut direct) = fresh(one.path()).await;
        let (sqlx_db, mut through_sqlx) = fresh(two.path()).await;
        assert!(direct.direct.is_some(), "the direct connection opened");
        through_sqlx.direct = None;
        let (mut events, mut settled) = (Vec::new(), 0);
        while settled < 40 {
            let input = sim.next_input(&engine);
            events.clear();
            engine.apply(&input, &mut events).expect("legal");
            settled += events
                .iter()
                .filter(|e| matches!(e, Event::RoundSettled(_)))
                .count();
            let record = Record::Input {
                source: Source::Api,
                input,
            };
            let shoe = engine.shoe().number();
            let a = direct.append(&record, &events, shoe).await.expect("direct");
            let b = through_sqlx
                .append(&record, &events, shoe)
                .await
                .expect("sqlx");
            assert_eq!(a, b);
        }
        // An alarm and its clearing (projected, no audit row) go the direct way too.
        let alarm = Record::Alarm {
            reason: "wrong card".into(),
            expected: "a card for seat 1".into(),
            item: None,
        };
        for store in [&mut direct, &mut through_sqlx] {
            store.append(&alarm, &[], 1).await.expect("alarm");
        }
        direct.close().await.expect("close");
        through_sqlx.close().await.expect("close");
        let (a, b) = (
            projections_of(&direct_db).await,
            projections_of(&sqlx_db).await,
        );
        assert!(a.iter().filter(|r| r.starts_with("settlements ")).count() >= 40);
        assert!(a.iter().any(|r| r.starts_with("shoes ")));
        assert!(a.iter().any(|r| r.starts_with("alarms ")));
        assert_eq!(a, b, "the same projections whichever connection wrote them");
    }

    #[tokio::test]
    async fn the_publishers_buffer_serves_what_the_database_holds_and_falls_back_past_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (db, mut store) = fresh(dir.path()).await;
        let record = |n: u64| Record::Input {
            source: if n.is_multiple_of(2) {
                Source::Api
            } else {
                Source::Shoe
            },
            input: Input::Shuffle,
        };
        // Rows committed before the buffer was asked for are only in the database.
        store.append(&record(0), &[], 1).await.expect("row 1");
        let recent = store.recent();
        let total = super::outbox::RECENT_ROWS as u64 + 40;
        for n in 2..=total {
            store.append(&record(n), &[], 1).await.expect("a row");
        }
        let plain = outbox::OutboxDb::open(&db, "t").await.expect("outbox");
        let buffered = outbox::OutboxDb::open(&db, "t")
            .await
            .expect("outbox")
            .with_recent(recent.clone());
        let key = |rows: Vec<outbox::StoredRow>| {
            rows.into_iter()
                .map(|r| (r.row, r.kind, r.payload, r.hash))
                .collect::<Vec<_>>()
        };
        for after in [0, 1, 30, 41, total - 100, total - 1, total] {
            let from_db = plain.rows_after(after, 64).await.expect("db rows");
            let from_memory = buffered.rows_after(after, 64).await.expect("rows");
            assert_eq!(key(from_memory), key(from_db), "rows after {after}");
        }
        // In memory: the last row, not read from the database (which no longer has it).
        assert!(recent.after(total - 1, 1).is_some());
        // Past its reach (and before the buffer began): not in memory, so from the database.
        assert!(recent.after(1, 1).is_none());
        assert!(recent.after(0, 1).is_none());
        // A reload starts the buffer again at the log's head.
        store.reload().await.expect("reload");
        assert_eq!(recent.after(total - 1, 1), None);
        assert_eq!(recent.after(total, 1).map(|r| r.len()), Some(0));
        store
            .append(&record(1), &[], 1)
            .await
            .expect("after reload");
        let next = recent.after(total, 8).expect("in memory again");
        assert_eq!(
            next.iter().map(|r| r.row.seq).collect::<Vec<_>>(),
            [total + 1]
        );
    }

    #[tokio::test]
    async fn the_database_and_every_file_beside_it_are_private_to_their_owner() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("t.db");
        // A permissive umask, as outside systemd.
        let old = nix::sys::stat::umask(nix::sys::stat::Mode::from_bits_truncate(0o022));
        let opened = Store::open(&db, "t", "t", "deluxe").await.expect("open");
        let mut store = opened.store;
        store
            .append(&Record::Held { item: "7H".into() }, &[], 1)
            .await
            .expect("append");
        let _spill = spill::Spill::open(&spill::path_for(&db)).expect("spill");
        let token = crate::auth::local_token::LocalToken::create(&db).expect("token");
        let pool = crate::auth::open_pool(&db).await.expect("accounts pool");
        nix::sys::stat::umask(old);
        let mut files = vec![
            db.clone(),
            anchor::path_for(&db),
            spill::path_for(&db),
            token.path().to_path_buf(),
        ];
        for suffix in ["-wal", "-shm"] {
            let mut name = db.as_os_str().to_owned();
            name.push(suffix);
            files.push(PathBuf::from(name));
        }
        for f in files {
            let mode = std::fs::metadata(&f).expect("exists").permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{}", f.display());
        }
        pool.close().await;
    }

    #[tokio::test]
    async fn the_event_log_refuses_updates_and_deletes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (_, mut store) = fresh(dir.path()).await;
        let record = Record::Held { item: "7H".into() };
        store.append(&record, &[], 1).await.expect("append");
        for sql in ["UPDATE events SET payload = '{}'", "DELETE FROM events"] {
            let refused = sqlx::query(sql).execute(&mut *store.conn).await;
            assert!(refused.is_err(), "{sql} must be refused");
        }
    }
}
