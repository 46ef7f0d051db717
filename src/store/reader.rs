//! Read-only access for everything but the table task: recall, the verified log, disputes,
//! settlement lines and results (a pool of read-only connections, never the writer).

use super::chain::read_log;
use super::{reader_options, LogRow, StoreError};
use crate::engine::RoundResult;
use crate::integrity::shoe::Verdict;
use sqlx::sqlite::{SqlitePool, SqlitePoolOptions};
use sqlx::Row;
use std::path::Path;

/// One round as recalled from the store.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RecalledRound {
    /// The round's number.
    pub round: u64,
    /// The shoe it was dealt from.
    pub shoe: u32,
    /// The sequence number of its bets.
    pub opened_seq: u64,
    /// The sequence number of the input that settled it, if it is settled.
    pub settled_seq: Option<u64>,
    /// Every log row from its bets to the next round's bets (or to the end of the log), in
    /// dealing order: inputs, alarms, held cards, clearings — those after `settled_seq`
    /// happened between this round and the next.
    #[serde(skip)]
    pub rows: Vec<LogRow>,
    /// The settlement, if settled.
    pub result: Option<RoundResult>,
    /// The integrity checks' verdict on its shoe, once the shoe is finished.
    pub shoe_integrity: Option<Verdict>,
}

impl RecalledRound {
    /// The round as JSON: numbers, every log row (`seq`, `at_ms`, `record`) and the result.
    pub fn to_json(&self) -> serde_json::Value {
        let log: Vec<serde_json::Value> = self
            .rows
            .iter()
            .map(
                |row| serde_json::json!({"seq": row.seq, "at_ms": row.at_ms, "record": row.record}),
            )
            .collect();
        serde_json::json!({
            "round": self.round,
            "shoe": self.shoe,
            "opened_seq": self.opened_seq,
            "settled_seq": self.settled_seq,
            "log": log,
            "result": self.result,
            "shoe_integrity": self.shoe_integrity,
        })
    }
}

/// Read-only access for recall, audits and the API; works while the table is locked and
/// while the service is stopped.
#[derive(Debug, Clone)]
pub struct Reader {
    pub(super) pool: SqlitePool,
}

impl Reader {
    /// Opens the database at `path` read-only.
    pub async fn open(path: &Path) -> Result<Reader, StoreError> {
        if !path.is_file() {
            return Err(StoreError::Open {
                path: path.to_path_buf(),
                source: sqlx::Error::Configuration("no such file".into()),
            });
        }
        let pool = SqlitePoolOptions::new()
            .max_connections(2)
            .connect_with(reader_options(path))
            .await
            .map_err(|source| StoreError::Open {
                path: path.to_path_buf(),
                source,
            })?;
        // Read the schema now, so a file that is no database is refused here, by name.
        sqlx::query("SELECT count(*) FROM sqlite_master")
            .execute(&pool)
            .await
            .map_err(|source| StoreError::Open {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(Reader { pool })
    }

    /// The table ids in the database.
    pub async fn tables(&self) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar("SELECT id FROM tables ORDER BY id")
            .fetch_all(&self.pool)
            .await?)
    }

    /// The last `n` rounds of `table` (oldest first), each with every log row from its
    /// bets to the next round's.
    pub async fn recall(&self, table: &str, n: u32) -> Result<Vec<RecalledRound>, StoreError> {
        let rows = sqlx::query(
            "SELECT r.round, r.shoe, r.opened_seq, r.settled_seq, r.result, s.integrity \
             FROM rounds r LEFT JOIN shoes s ON s.table_id = r.table_id AND s.shoe = r.shoe \
             WHERE r.table_id = ? ORDER BY r.round DESC LIMIT ?",
        )
        .bind(table)
        .bind(i64::from(n))
        .fetch_all(&self.pool)
        .await?;
        let mut rounds = Vec::with_capacity(rows.len());
        // A round's rows run to the next round's opening: what happened between rounds
        // (an alarm, its clearing, a shuffle, the result becoming final) is listed after the
        // round before it. The latest round's run to the end of the log.
        let mut next_opened: Option<i64> = None;
        for row in rows.iter() {
            let round: i64 = row.try_get("round")?;
            let shoe: i64 = row.try_get("shoe")?;
            let opened: i64 = row.try_get("opened_seq")?;
            let settled: Option<i64> = row.try_get("settled_seq")?;
            let result: Option<String> = row.try_get("result")?;
            let integrity: Option<String> = row.try_get("integrity")?;
            let events = sqlx::query(
                "SELECT seq, payload, at_ms, hash FROM events WHERE table_id = ? AND seq >= ? \
                 AND seq <= ? ORDER BY seq",
            )
            .bind(table)
            .bind(opened)
            .bind(next_opened.map_or(i64::MAX, |n| n - 1))
            .fetch_all(&self.pool)
            .await?;
            next_opened = Some(opened);
            let mut log = Vec::with_capacity(events.len());
            for e in &events {
                let payload: String = e.try_get("payload")?;
                log.push(LogRow {
                    seq: u64::try_from(e.try_get::<i64, _>("seq")?).unwrap_or(0),
                    at_ms: e.try_get("at_ms")?,
                    record: serde_json::from_str(&payload)?,
                    hash: hex::encode(e.try_get::<Vec<u8>, _>("hash")?),
                });
            }
            rounds.push(RecalledRound {
                round: u64::try_from(round).unwrap_or(0),
                shoe: u32::try_from(shoe).unwrap_or(0),
                opened_seq: u64::try_from(opened).unwrap_or(0),
                settled_seq: settled.and_then(|s| u64::try_from(s).ok()),
                rows: log,
                result: result.map(|r| serde_json::from_str(&r)).transpose()?,
                shoe_integrity: integrity.map(|v| serde_json::from_str(&v)).transpose()?,
            });
        }
        rounds.reverse();
        Ok(rounds)
    }

    /// Every row of `table`'s log, in order (audits and tests).
    pub async fn log(&self, table: &str) -> Result<Vec<LogRow>, StoreError> {
        let mut conn = self.pool.acquire().await?;
        Ok(read_log(&mut conn, table).await?.0)
    }

    /// When `table`'s log row `seq` was committed (Unix ms), `None` when there is none.
    pub async fn row_time_ms(&self, table: &str, seq: u64) -> Result<Option<i64>, StoreError> {
        let seq = i64::try_from(seq).unwrap_or(i64::MAX);
        Ok(
            sqlx::query_scalar("SELECT at_ms FROM events WHERE table_id = ? AND seq = ?")
                .bind(table)
                .bind(seq)
                .fetch_optional(&self.pool)
                .await?,
        )
    }

    /// The last `n` disputes of `table`, newest first, with their resolutions.
    pub async fn disputes(&self, table: &str, n: u32) -> Result<Vec<DisputeRow>, StoreError> {
        Ok(sqlx::query_as::<_, DisputeRow>(
            "SELECT raised_seq, round, origin, seat, reason, raised_by, resolved_seq, resolution, \
             resolve_reason, proposed_by, confirmed_by FROM disputes WHERE table_id = ? \
             ORDER BY raised_seq DESC LIMIT ?",
        )
        .bind(table)
        .bind(i64::from(n))
        .fetch_all(&self.pool)
        .await?)
    }

    /// The settlement lines of one round: (seat, bet kind, staked, returned), in order.
    pub async fn settlement_lines(
        &self,
        table: &str,
        round: i64,
    ) -> Result<Vec<(i64, String, i64, i64)>, StoreError> {
        let rows = sqlx::query(
            "SELECT seat, kind, staked, returned FROM settlements \
             WHERE table_id = ? AND round = ? ORDER BY line",
        )
        .bind(table)
        .bind(round)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok((
                    r.try_get("seat")?,
                    r.try_get("kind")?,
                    r.try_get("staked")?,
                    r.try_get("returned")?,
                ))
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StoreError::from)
    }

    /// Every settled round of `table`, in order.
    pub async fn results(&self, table: &str) -> Result<Vec<RoundResult>, StoreError> {
        let rows: Vec<String> = sqlx::query_scalar(
            "SELECT result FROM rounds WHERE table_id = ? AND result IS NOT NULL ORDER BY round",
        )
        .bind(table)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| serde_json::from_str(r).map_err(StoreError::from))
            .collect()
    }
}

/// One dispute as the store records it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, sqlx::FromRow)]
pub struct DisputeRow {
    /// Its id: the log row that raised it.
    #[sqlx(rename = "raised_seq")]
    pub id: i64,
    /// The round.
    pub round: i64,
    /// Who raised it (`dealer`, `player`, `supervisor`, `alarm`).
    pub origin: String,
    /// The seat.
    pub seat: Option<i64>,
    /// The complaint.
    pub reason: String,
    /// The account that raised it.
    pub raised_by: String,
    /// The resolution's log row, once resolved.
    pub resolved_seq: Option<i64>,
    /// The resolution (stored as JSON text).
    #[sqlx(json(nullable))]
    pub resolution: Option<serde_json::Value>,
    /// Why it was resolved so.
    pub resolve_reason: Option<String>,
    /// Who proposed the resolution.
    pub proposed_by: Option<String>,
    /// Who confirmed it.
    pub confirmed_by: Option<String>,
}
