//! The card path's own write: an event row without an audit row (a card, a decision, a
//! round's settlement with its projections) is written on a second connection to the same
//! database, called directly on the table task's thread.
//!
//! sqlx runs every SQLite connection on a thread of its own: each statement is a message
//! to that thread and an answer back, two thread wake-ups per row, and on a small or
//! virtual CPU waking a thread is the costliest part of a card's path (issue #37,
//! `docs/src/benchmarks.md`, "Where a row's CPU goes"). This connection (rusqlite, on the
//! same bundled SQLite that sqlx links) does the row's one transaction in place.
//!
//! It blocks the runtime worker it runs on for the commit, fsync included — what the table
//! task waits for anyway. Two bounds keep that short: another process's lock is waited for
//! at most [`DIRECT_BUSY`] here, and on `SQLITE_BUSY` (nothing written) the store falls
//! back to the sqlx connection, whose wait of [`super::WRITE_BUSY`] happens off the
//! runtime; and the WAL is never checkpointed here (`wal_autocheckpoint = 0`, as on the
//! writer: the checkpointer does it beside the table).
//!
//! Every row without an audit row goes this way, a round's settlement and its projections
//! included. With only the plain rows here, the cards that settle a round (a fifteenth of
//! all cards, still through sqlx's thread, and each switch of connection costs the other
//! one a reload of its page cache) were the software path's whole p99: 0.72 ms at their
//! median against 0.08 ms for the rest (measured, see `docs/src/benchmarks.md`, "Card
//! latency").
//!
//! The two connections are used one after the other by the one owner (`Store`), never at
//! once, and both are the same single writer behind the store's file lock.

use super::projections::{project, Arg, Sink};
use super::{Record, StoreError};
use crate::engine::Event;
use rusqlite::{ErrorCode, OpenFlags, TransactionBehavior};
use std::future::Future;
use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// The longest this connection waits for another process's write lock before the row goes
/// through the sqlx connection instead: a runtime worker is not held for longer.
pub const DIRECT_BUSY: Duration = Duration::from_millis(20);

const INSERT: &str =
    "INSERT INTO events (table_id, seq, kind, payload, at_ms, hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";

/// What one direct append did.
#[derive(Debug, PartialEq, Eq)]
pub enum Inserted {
    /// The row (and its projections) is committed and on disk.
    Committed,
    /// Another connection holds the write lock: nothing was written.
    Busy,
}

/// One event row, as the store made it.
#[derive(Debug, Clone, Copy)]
pub struct EventRow<'a> {
    /// The table.
    pub table: &'a str,
    /// Its sequence number.
    pub seq: i64,
    /// The record's kind.
    pub kind: &'a str,
    /// The record, as JSON.
    pub payload: &'a str,
    /// When it was written (Unix milliseconds).
    pub at_ms: i64,
    /// The chain hash.
    pub hash: &'a [u8; 32],
}

/// What a row's projections are made from (`projections::project`).
#[derive(Debug, Clone, Copy)]
pub struct Projected<'a> {
    /// The row's record.
    pub record: &'a Record,
    /// The engine's events for it.
    pub events: &'a [Event],
    /// The shoe it was dealt from.
    pub shoe: u32,
}

/// The second connection (see the module's documentation).
#[derive(Debug)]
pub struct DirectWriter {
    conn: Mutex<rusqlite::Connection>,
}

fn busy(e: &rusqlite::Error) -> bool {
    e.sqlite_error_code() == Some(ErrorCode::DatabaseBusy)
}

impl DirectWriter {
    /// Opens `path` (already created, migrated and in WAL mode by the sqlx writer) with the
    /// writer's settings.
    pub fn open(path: &Path) -> Result<DirectWriter, String> {
        let conn = DirectWriter::connect(path).map_err(|e| e.to_string())?;
        let mode: String = conn
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .map_err(|e| e.to_string())?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(format!("the database is in journal mode {mode}, not WAL"));
        }
        Ok(DirectWriter {
            conn: Mutex::new(conn),
        })
    }

    fn connect(path: &Path) -> Result<rusqlite::Connection, rusqlite::Error> {
        let conn = rusqlite::Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        // Per connection, like the writer's: every commit on disk before it returns, the
        // log's foreign key checked, no checkpoint inside a commit.
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", true)?;
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        conn.busy_timeout(DIRECT_BUSY)?;
        conn.prepare_cached(INSERT)?;
        Ok(conn)
    }

    /// The connection. Only its owner uses it, one call at a time; the mutex (never
    /// contended) is what makes the store `Sync`, as a rusqlite connection is not.
    fn conn(&self) -> MutexGuard<'_, rusqlite::Connection> {
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How long to wait for another process's lock: `wait`, but never more than
    /// [`DIRECT_BUSY`].
    pub fn set_busy_timeout(&self, wait: Duration) -> Result<(), rusqlite::Error> {
        self.conn().busy_timeout(wait.min(DIRECT_BUSY))
    }

    /// Appends one event row: alone, as its own (autocommit) transaction; with
    /// `projected`, together with its projections in one transaction, the projections in
    /// a savepoint (one that fails is logged and rolled back, the row still commits — as
    /// on the sqlx writer).
    pub fn append(
        &self,
        row: &EventRow<'_>,
        projected: Option<Projected<'_>>,
    ) -> Result<Inserted, StoreError> {
        let mut conn = self.conn();
        let Some(p) = projected else {
            return match insert(&conn, row) {
                Ok(()) => Ok(Inserted::Committed),
                Err(e) if busy(&e) => Ok(Inserted::Busy),
                Err(e) => Err(e.into()),
            };
        };
        // The write lock first: busy here means nothing was written.
        let mut tx = match conn.transaction_with_behavior(TransactionBehavior::Immediate) {
            Ok(tx) => tx,
            Err(e) if busy(&e) => return Ok(Inserted::Busy),
            Err(e) => return Err(e.into()),
        };
        insert(&tx, row)?;
        let savepoint = tx.savepoint()?;
        let mut sink = DirectSink(&savepoint);
        match at_once(project(
            &mut sink, row.table, row.seq, p.record, p.events, p.shoe,
        )) {
            Ok(()) => savepoint.commit()?,
            Err(e) => {
                // Dropped, the savepoint rolls back and is released.
                drop(savepoint);
                tracing::error!(table = row.table, seq = row.seq, error = %e, "projection not written (the event row is)");
            }
        }
        tx.commit()?;
        Ok(Inserted::Committed)
    }
}

fn insert(conn: &rusqlite::Connection, row: &EventRow<'_>) -> Result<(), rusqlite::Error> {
    conn.prepare_cached(INSERT)?.execute(rusqlite::params![
        row.table,
        row.seq,
        row.kind,
        row.payload,
        row.at_ms,
        &row.hash[..]
    ])?;
    Ok(())
}

/// The projections' statements on this connection: each runs in place, so the future
/// `project` returns is ready at its first poll.
struct DirectSink<'c>(&'c rusqlite::Connection);

impl Sink for DirectSink<'_> {
    async fn exec(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<(), StoreError> {
        let mut statement = self.0.prepare_cached(sql)?;
        statement.execute(rusqlite::params_from_iter(args.iter()))?;
        Ok(())
    }
}

impl rusqlite::ToSql for Arg<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, Value, ValueRef};
        Ok(match *self {
            Arg::Int(v) => ToSqlOutput::Owned(Value::Integer(v)),
            Arg::Text(v) => ToSqlOutput::Borrowed(ValueRef::Text(v.as_bytes())),
            Arg::Null => ToSqlOutput::Owned(Value::Null),
        })
    }
}

/// Runs a future that never waits (its only awaits are [`DirectSink`]'s statements, which
/// run in place) to its end on this thread.
fn at_once<T>(f: impl Future<Output = Result<T, StoreError>>) -> Result<T, StoreError> {
    let mut f = std::pin::pin!(f);
    match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(r) => r,
        // Not reachable while `Sink::exec` is the only await in `project`; should one
        // ever be added, the projection fails like any other (logged, its savepoint
        // rolled back, the row committed) rather than hang the table.
        Poll::Pending => Err(StoreError::Sql(sqlx::Error::Protocol(
            "a projection waited on the direct connection".into(),
        ))),
    }
}
