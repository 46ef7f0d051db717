//! The card path's own write: a plain event row (a card, a decision — no projection, no
//! audit row) is inserted on a second connection to the same database, called directly on
//! the table task's thread.
//!
//! sqlx runs every SQLite connection on a thread of its own: each statement is a message
//! to that thread and an answer back, two thread wake-ups per row, and on a small or
//! virtual CPU waking a thread is the costliest part of a card's path (issue #37,
//! `docs/src/benchmarks.md`, "Where a row's CPU goes"). This connection (rusqlite, on the
//! same bundled SQLite that sqlx links) does the one autocommit `INSERT` in place.
//!
//! It blocks the runtime worker it runs on for the commit, fsync included — what the table
//! task waits for anyway. Two bounds keep that short: another process's lock is waited for
//! at most [`DIRECT_BUSY`] here, and on `SQLITE_BUSY` (nothing written) the store falls
//! back to the sqlx connection, whose wait of [`super::WRITE_BUSY`] happens off the
//! runtime; and the WAL is never checkpointed here (`wal_autocheckpoint = 0`, as on the
//! writer: the checkpointer does it beside the table).
//!
//! The two connections are used one after the other by the one owner (`Store`), never at
//! once, and both are the same single writer behind the store's file lock.

use rusqlite::{ErrorCode, OpenFlags};
use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// The longest this connection waits for another process's write lock before the row goes
/// through the sqlx connection instead: a runtime worker is not held for longer.
pub const DIRECT_BUSY: Duration = Duration::from_millis(20);

const INSERT: &str =
    "INSERT INTO events (table_id, seq, kind, payload, at_ms, hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";

/// What one direct insert did.
#[derive(Debug, PartialEq, Eq)]
pub enum Inserted {
    /// The row is committed and on disk.
    Committed,
    /// Another connection holds the write lock: nothing was written.
    Busy,
}

/// The second connection (see the module's documentation).
#[derive(Debug)]
pub struct DirectWriter {
    conn: Mutex<rusqlite::Connection>,
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

    /// Inserts one event row as its own (autocommit) transaction.
    pub fn insert(
        &self,
        table: &str,
        seq: i64,
        kind: &str,
        payload: &str,
        at_ms: i64,
        hash: &[u8; 32],
    ) -> Result<Inserted, rusqlite::Error> {
        let conn = self.conn();
        let mut statement = conn.prepare_cached(INSERT)?;
        match statement.execute(rusqlite::params![
            table,
            seq,
            kind,
            payload,
            at_ms,
            &hash[..]
        ]) {
            Ok(_) => Ok(Inserted::Committed),
            Err(e) if e.sqlite_error_code() == Some(ErrorCode::DatabaseBusy) => Ok(Inserted::Busy),
            Err(e) => Err(e),
        }
    }
}
