//! The broker publisher's access to the database (`crate::publish`): committed log rows
//! in sequence order, and its own progress (`publish_progress`). Its own small pool, so it
//! never waits on the table task's writer; it writes nothing but its progress row.
//!
//! The rows the writer committed last are also kept in memory ([`Recent`]), so a caught-up
//! publisher takes each new row from there instead of reading it back from SQLite (a read
//! transaction, its locks and page reads on a second connection's thread, per row): the
//! database is read only to catch up on rows older than the buffer.

use super::{options, reader_options, LogRow, Record, StoreError};
use sqlx::sqlite::{SqlitePool, SqlitePoolOptions, SqliteSynchronous};
use sqlx::Row;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

/// How many committed rows [`Recent`] keeps: one publisher batch.
pub(super) const RECENT_ROWS: usize = 256;

/// The writer's last committed rows, shared with the publisher ([`OutboxDb::with_recent`]).
/// The writer pushes every row it commits, in order, once it is on disk; a row that is not
/// the one after the last pushed (the writer reloaded the log after a failed write) starts
/// the buffer again, so what it holds is always a run of consecutive committed rows, and
/// the log's head it knows is the writer's own.
#[derive(Debug, Clone, Default)]
pub struct Recent(Arc<Mutex<RecentRows>>);

#[derive(Debug, Default)]
struct RecentRows {
    /// The last committed row's sequence number, as the writer knows it.
    head: u64,
    rows: VecDeque<StoredRow>,
}

impl Recent {
    fn lock(&self) -> std::sync::MutexGuard<'_, RecentRows> {
        // A panic while holding the lock leaves a consistent deque (push and clear only).
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The writer's head after opening or reloading the log: nothing buffered before it.
    pub(super) fn reset(&self, head: u64) {
        let mut r = self.lock();
        r.head = head;
        r.rows.clear();
    }

    /// A row the writer committed.
    pub(super) fn push(&self, row: StoredRow) {
        let mut r = self.lock();
        if r.head + 1 != row.row.seq {
            r.rows.clear();
        }
        r.head = row.row.seq;
        r.rows.push_back(row);
        while r.rows.len() > RECENT_ROWS {
            r.rows.pop_front();
        }
    }

    /// Up to `limit` committed rows after `seq` from memory: empty when `seq` is the head;
    /// `None` when the row after `seq` is no longer (or not yet) in the buffer.
    pub(super) fn after(&self, seq: u64, limit: u32) -> Option<Vec<StoredRow>> {
        let r = self.lock();
        if seq >= r.head {
            return Some(Vec::new());
        }
        let first = r.rows.front()?.row.seq;
        if seq + 1 < first {
            return None;
        }
        let skip = usize::try_from(seq + 1 - first).ok()?;
        let take = usize::try_from(limit).unwrap_or(usize::MAX);
        Some(r.rows.iter().skip(skip).take(take).cloned().collect())
    }
}

/// One committed row as stored: the parsed record and the stored text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRow {
    /// The row.
    pub row: LogRow,
    /// Its kind (`input`, `alarm`, ...).
    pub kind: String,
    /// The payload as stored (the record's JSON).
    pub payload: String,
    /// Its chain hash (hex).
    pub hash: String,
}

/// What the publisher last had acknowledged, and where the broker stored it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    /// The last row on the log subject.
    pub log_seq: u64,
    /// Its message's sequence in the log stream, from the broker's acknowledgement (0: not
    /// known).
    pub log_stream_seq: u64,
    /// The last public message's id.
    pub public_id: (u64, u32),
    /// Its number.
    pub public_n: u64,
    /// Its sequence in the public stream (0: not known).
    pub public_stream_seq: u64,
}

/// The publisher's connections.
#[derive(Debug, Clone)]
pub struct OutboxDb {
    read: SqlitePool,
    write: SqlitePool,
    table: String,
    recent: Option<Recent>,
}

impl OutboxDb {
    /// Opens the database at `path` (which `Store::open` created and migrated) for `table`.
    pub async fn open(path: &Path, table: &str) -> Result<OutboxDb, StoreError> {
        let open_err = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        let read = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(reader_options(path))
            .await
            .map_err(open_err)?;
        // The progress row is a hint (the broker's streams are the authority), so its
        // commits need not wait for the disk: losing the last one re-sends nothing twice.
        let write = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options(path).synchronous(SqliteSynchronous::Normal))
            .await
            .map_err(open_err)?;
        Ok(OutboxDb {
            read,
            write,
            table: table.to_string(),
            recent: None,
        })
    }

    /// Takes new rows from the writer's [`Recent`] buffer where it holds them.
    pub fn with_recent(mut self, recent: Recent) -> OutboxDb {
        self.recent = Some(recent);
        self
    }

    /// The log's timelines (`store/timeline.rs`): the first, and every `timeline` row.
    pub async fn lineage(&self) -> Result<super::timeline::Lineage, StoreError> {
        let first: Option<String> = sqlx::query_scalar("SELECT timeline FROM tables WHERE id = ?")
            .bind(&self.table)
            .fetch_optional(&self.read)
            .await?
            .flatten();
        let rows = sqlx::query(
            "SELECT seq, payload FROM events WHERE table_id = ? AND kind = 'timeline' ORDER BY seq",
        )
        .bind(&self.table)
        .fetch_all(&self.read)
        .await?;
        let mut changes = Vec::with_capacity(rows.len());
        for r in &rows {
            let seq: i64 = r.try_get("seq")?;
            let payload: String = r.try_get("payload")?;
            let seq = u64::try_from(seq).unwrap_or(0);
            let record: Record = serde_json::from_str(&payload).map_err(|e| StoreError::Chain {
                seq,
                why: format!("unreadable payload: {e}"),
            })?;
            changes.push((seq, record));
        }
        Ok(super::timeline::Lineage::new(
            first.as_deref().unwrap_or_default(),
            changes,
        ))
    }

    /// Up to `limit` committed rows after `seq`, in order.
    pub async fn rows_after(&self, seq: u64, limit: u32) -> Result<Vec<StoredRow>, StoreError> {
        match self.recent.as_ref().and_then(|r| r.after(seq, limit)) {
            Some(rows) => Ok(rows),
            None => self.stored_rows_after(seq, limit).await,
        }
    }

    /// [`OutboxDb::rows_after`] read from the database, whatever the buffer holds.
    pub async fn stored_rows_after(
        &self,
        seq: u64,
        limit: u32,
    ) -> Result<Vec<StoredRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT seq, kind, payload, at_ms, hash FROM events WHERE table_id = ? AND seq > ? \
             ORDER BY seq LIMIT ?",
        )
        .bind(&self.table)
        .bind(i64::try_from(seq).unwrap_or(i64::MAX))
        .bind(i64::from(limit))
        .fetch_all(&self.read)
        .await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            let seq = u64::try_from(r.try_get::<i64, _>("seq")?).unwrap_or(0);
            let payload: String = r.try_get("payload")?;
            let hash = hex::encode(r.try_get::<Vec<u8>, _>("hash")?);
            let record: Record = serde_json::from_str(&payload).map_err(|e| StoreError::Chain {
                seq,
                why: format!("unreadable payload: {e}"),
            })?;
            out.push(StoredRow {
                row: LogRow {
                    seq,
                    at_ms: r.try_get("at_ms")?,
                    record,
                    hash: hash.clone(),
                },
                kind: r.try_get("kind")?,
                payload,
                hash,
            });
        }
        Ok(out)
    }

    /// The last committed row's sequence number (0: an empty log).
    pub async fn last_seq(&self) -> Result<u64, StoreError> {
        let seq: Option<i64> = sqlx::query_scalar("SELECT max(seq) FROM events WHERE table_id = ?")
            .bind(&self.table)
            .fetch_one(&self.read)
            .await?;
        Ok(seq.and_then(|s| u64::try_from(s).ok()).unwrap_or(0))
    }

    /// The progress last saved (zero when none).
    pub async fn progress(&self) -> Result<Progress, StoreError> {
        let row = sqlx::query(
            "SELECT log_seq, log_stream_seq, public_seq, public_sub, public_n, public_stream_seq \
             FROM publish_progress WHERE table_id = ?",
        )
        .bind(&self.table)
        .fetch_optional(&self.read)
        .await?;
        let Some(row) = row else {
            return Ok(Progress::default());
        };
        let get = |name: &str| -> Result<u64, StoreError> {
            Ok(u64::try_from(row.try_get::<i64, _>(name)?).unwrap_or(0))
        };
        Ok(Progress {
            log_seq: get("log_seq")?,
            log_stream_seq: get("log_stream_seq")?,
            public_id: (
                get("public_seq")?,
                u32::try_from(get("public_sub")?).unwrap_or(0),
            ),
            public_n: get("public_n")?,
            public_stream_seq: get("public_stream_seq")?,
        })
    }

    /// Saves `progress`.
    pub async fn save(&self, progress: Progress) -> Result<(), StoreError> {
        let int = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        sqlx::query(
            "INSERT INTO publish_progress (table_id, log_seq, log_stream_seq, public_seq, \
             public_sub, public_n, public_stream_seq, at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?) \
             ON CONFLICT(table_id) DO UPDATE SET log_seq = excluded.log_seq, \
             log_stream_seq = excluded.log_stream_seq, public_seq = excluded.public_seq, \
             public_sub = excluded.public_sub, public_n = excluded.public_n, \
             public_stream_seq = excluded.public_stream_seq, at_ms = excluded.at_ms",
        )
        .bind(&self.table)
        .bind(int(progress.log_seq))
        .bind(int(progress.log_stream_seq))
        .bind(int(progress.public_id.0))
        .bind(i64::from(progress.public_id.1))
        .bind(int(progress.public_n))
        .bind(int(progress.public_stream_seq))
        .bind(super::now_ms())
        .execute(&self.write)
        .await?;
        Ok(())
    }
}
