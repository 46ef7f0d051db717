//! The event log's hash chain: one row's hash ([`chain_hash`]), the verified read of a
//! table's whole log ([`read_log`]: sequence and chain, every row) and the check that it
//! reaches its anchor. Apart from the writer because the readers, the backup's
//! verification and the floor verify the same chain.

use super::{anchor, Record, StoreError};
use sha2::{Digest, Sha256};
use sqlx::{Row, SqliteConnection};

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

/// The verified log (ending at `last_seq`) reaches `head` and holds its hash there.
pub(super) async fn check_anchor(
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

/// Reads a table's whole event log in sequence order, verifying sequence and hash chain.
pub(super) async fn read_log(
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
