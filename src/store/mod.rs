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
//!
//! This file is the store's front: the writer ([`Store`]), opening it (file checks, integrity
//! check, migrations, the table's row, the verified log, the anchor) and closing it. The rest
//! is a file per concern: `append.rs` (the write path), `chain.rs` (the hash chain and the
//! verified read), `files.rs` (the database's files and lock), `error.rs`, and the readers,
//! projections, backups, anchor, spill file and audit log in theirs.

pub mod anchor;
mod append;
pub mod audit;
mod backup;
mod chain;
mod checkpoint;
mod direct;
pub mod dispute;
mod error;
mod files;
mod integrity;
pub mod outbox;
mod path;
mod projections;
mod reader;
mod record;
pub mod spill;
pub mod timeline;

pub use backup::{backup, verify, Verified};
pub use chain::{chain_hash, LogRow};
use chain::{check_anchor, read_log};
use checkpoint::Checkpointer;
pub use error::StoreError;
pub use files::{check_file, close_pool, create_private, private_file};
pub use path::check_path;
pub use reader::{DisputeRow, Reader, RecalledRound};
pub use record::{BrokerHead, RaisedDispute, Record, ResolvedDispute, Source, TimelineCause};
pub use timeline::Timeline;

use nix::fcntl::Flock;
use sqlx::pool::PoolConnection;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{ConnectOptions, Sqlite};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The wall clock, Unix ms: what a row records as its `at_ms`.
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
        let lock = files::lock(path)?;
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
                a.set(&anchor::head(table, last_seq, &last_hash))?;
                a.set(&anchor::head(table, last_seq, &last_hash))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A new store for table `t` in `dir`, and its database file.
    pub(super) async fn fresh(dir: &Path) -> (PathBuf, Store) {
        let db = dir.join("t.db");
        let store = Store::open(&db, "t", "t", "deluxe")
            .await
            .expect("open")
            .store;
        (db, store)
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
