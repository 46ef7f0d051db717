//! The floor's PostgreSQL database (sqlx, runtime queries): its migrations
//! (`src/floor/migrations/`), each table's chain head, and the batch commit.

use super::chain::{Alarm, Head, Position, WireRow};
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::Row;
use std::collections::HashMap;
use std::future::Future;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long one of the ingest's database operations may take. A link to PostgreSQL that
/// stops answering without a reset (a NAT or firewall that lost the connection's state,
/// a dead switch port) otherwise holds the query, and its pooled connection, for ever:
/// the nemesis found a floor that never ingested again after such a link healed
/// (`tests/it/nemesis.rs`). A batch commit takes milliseconds; this is far above it.
pub const OPERATION_DEADLINE: Duration = Duration::from_secs(15);

/// How long a connection handed back to the pool may take to answer its health check
/// before it is closed instead of kept: one whose operation was abandoned at its deadline
/// may never answer again.
const RELEASE_CHECK: Duration = Duration::from_secs(5);

/// The floor's database failed.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// A query failed (or the server is unreachable).
    #[error("PostgreSQL: {0}")]
    Sql(#[from] sqlx::Error),
    /// The migrations could not be applied.
    #[error("PostgreSQL migrations: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// Another writer moved the table's head meanwhile (a second floor on the same
    /// database): the batch was rolled back; the head is read again.
    #[error("table {0}: the head moved under this batch")]
    HeadMoved(String),
    /// PostgreSQL did not answer within [`OPERATION_DEADLINE`]: the operation was given
    /// up (a transaction rolls back) and its connection is closed, not reused.
    #[error("PostgreSQL did not answer within {0:?}; the connection is dropped")]
    Deadline(Duration),
}

/// `op` within [`OPERATION_DEADLINE`].
async fn bounded<T>(op: impl Future<Output = Result<T, DbError>>) -> Result<T, DbError> {
    tokio::time::timeout(OPERATION_DEADLINE, op)
        .await
        .map_err(|_| DbError::Deadline(OPERATION_DEADLINE))?
}

/// One table's rows, checked, ready to commit together.
#[derive(Debug, Default)]
pub struct Batch {
    /// The rows, each with its verdict (`ok`, `break`, `gap`).
    pub rows: Vec<(WireRow, &'static str)>,
    /// The alarms they raise.
    pub alarms: Vec<Alarm>,
    /// The last card's time among them, if any.
    pub last_card_ms: Option<i64>,
    /// The branches they begin.
    pub branches: Vec<BranchStart>,
}

/// A branch a batch begins (`croupier timeline continue` on the table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchStart {
    /// Its id.
    pub branch: String,
    /// The branch it leaves.
    pub parent: String,
    /// The last row both share.
    pub common_seq: u64,
    /// The parent's last row the floor held: rows after `common_seq` up to it are
    /// superseded.
    pub superseded_seq: u64,
}

/// The floor's database.
#[derive(Debug, Clone)]
pub struct FloorDb {
    pool: PgPool,
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

fn int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl FloorDb {
    /// Connects to `url` (`postgres://…`) and applies the migrations.
    pub async fn open(url: &str, connections: u32) -> Result<FloorDb, DbError> {
        let pool = PgPoolOptions::new()
            .max_connections(connections)
            // sqlx checks a released connection with a ping that has no deadline of its
            // own; one that hangs would hold its place in the pool for ever.
            .after_release(|conn, _| {
                Box::pin(async move {
                    use sqlx::Connection;
                    Ok(tokio::time::timeout(RELEASE_CHECK, conn.ping())
                        .await
                        .is_ok_and(|answered| answered.is_ok()))
                })
            })
            .connect(url)
            .await?;
        sqlx::migrate!("src/floor/migrations").run(&pool).await?;
        Ok(FloorDb { pool })
    }

    /// The pool (the pit page reads through it).
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Where `table`'s ingest stands (registering the table on first sight): its head,
    /// the branch it is on and the branches it left.
    pub async fn position(&self, table: &str) -> Result<Position, DbError> {
        bounded(async {
            let now = now_ms();
            sqlx::query(
                "INSERT INTO floor_tables (table_id, first_ms, ingested_ms) VALUES ($1, $2, $2) \
                 ON CONFLICT (table_id) DO NOTHING",
            )
            .bind(table)
            .bind(now)
            .execute(&self.pool)
            .await?;
            let row = sqlx::query(
                "SELECT head_seq, head_hash, branch FROM floor_tables WHERE table_id = $1",
            )
            .bind(table)
            .fetch_one(&self.pool)
            .await?;
            let hash: Vec<u8> = row.try_get("head_hash")?;
            let branch: String = row.try_get("branch")?;
            let left: Vec<String> = sqlx::query_scalar(
                "SELECT parent FROM floor_branches WHERE table_id = $1 \
                 UNION SELECT branch FROM floor_branches WHERE table_id = $1",
            )
            .bind(table)
            .fetch_all(&self.pool)
            .await?;
            Ok(Position {
                head: Head {
                    seq: u64::try_from(row.try_get::<i64, _>("head_seq")?).unwrap_or(0),
                    hash: hash.try_into().unwrap_or([0; 32]),
                },
                left: left.into_iter().filter(|b| *b != branch).collect(),
                branch,
            })
        })
        .await
    }

    /// The hashes of `table`'s rows `seqs` in its history as it stands (`floor_history`).
    pub async fn history_hashes(
        &self,
        table: &str,
        seqs: &[u64],
    ) -> Result<HashMap<u64, [u8; 32]>, DbError> {
        bounded(async {
            if seqs.is_empty() {
                return Ok(HashMap::new());
            }
            let seqs: Vec<i64> = seqs.iter().map(|s| int(*s)).collect();
            let rows = sqlx::query(
                "SELECT seq, hash FROM floor_history WHERE table_id = $1 AND seq = ANY($2)",
            )
            .bind(table)
            .bind(&seqs)
            .fetch_all(&self.pool)
            .await?;
            let mut out = HashMap::new();
            for r in rows {
                let hash: Vec<u8> = r.try_get("hash")?;
                if let Ok(hash) = <[u8; 32]>::try_from(hash) {
                    out.insert(
                        u64::try_from(r.try_get::<i64, _>("seq")?).unwrap_or(0),
                        hash,
                    );
                }
            }
            Ok(out)
        })
        .await
    }

    /// Raises one alarm on its own (a stall: no rows move).
    pub async fn raise(&self, table: &str, alarm: &Alarm) -> Result<(), DbError> {
        bounded(async {
            insert_alarm(table, alarm, now_ms())
                .execute(&self.pool)
                .await?;
            Ok(())
        })
        .await
    }

    /// Commits `batch` for `table` in one transaction, moving its head from `from` to
    /// `to` (and the stream position to `stream_seq`): the branches begun, the rows
    /// (idempotent on (table, branch, seq)), the alarms, the head. Nothing is written if
    /// the head is no longer `from`.
    pub async fn commit(
        &self,
        table: &str,
        from: Head,
        to: &Position,
        stream_seq: u64,
        batch: &Batch,
    ) -> Result<(), DbError> {
        bounded(async {
            let now = now_ms();
            let mut tx = self.pool.begin().await?;
            let moved = sqlx::query(
                "UPDATE floor_tables SET head_seq = $2, head_hash = $3, ingested_ms = $5, \
                 head_at_ms = GREATEST(head_at_ms, $6), \
                 last_card_ms = GREATEST(last_card_ms, $7), branch = $8, stream_seq = $9 \
                 WHERE table_id = $1 AND head_seq = $4",
            )
            .bind(table)
            .bind(int(to.head.seq))
            .bind(&to.head.hash[..])
            .bind(int(from.seq))
            .bind(now)
            .bind(batch.rows.last().map_or(0, |(r, _)| r.at_ms))
            .bind(batch.last_card_ms)
            .bind(&to.branch)
            .bind(int(stream_seq))
            .execute(&mut *tx)
            .await?;
            if moved.rows_affected() != 1 {
                return Err(DbError::HeadMoved(table.to_string()));
            }
            for b in &batch.branches {
                sqlx::query(
                    "INSERT INTO floor_branches (table_id, branch, parent, common_seq, \
                     superseded_seq, began_ms) VALUES ($1, $2, $3, $4, $5, $6) \
                     ON CONFLICT (table_id, branch) DO NOTHING",
                )
                .bind(table)
                .bind(&b.branch)
                .bind(&b.parent)
                .bind(int(b.common_seq))
                .bind(int(b.superseded_seq))
                .bind(now)
                .execute(&mut *tx)
                .await?;
            }
            if !batch.rows.is_empty() {
                let n = batch.rows.len();
                let (mut seq, mut kind, mut at, mut hash, mut payload, mut verified, mut branch) = (
                    Vec::with_capacity(n),
                    Vec::with_capacity(n),
                    Vec::with_capacity(n),
                    Vec::with_capacity(n),
                    Vec::with_capacity(n),
                    Vec::with_capacity(n),
                    Vec::with_capacity(n),
                );
                for (r, v) in &batch.rows {
                    seq.push(int(r.seq));
                    kind.push(r.kind.as_str());
                    at.push(r.at_ms);
                    hash.push(&r.hash[..]);
                    payload.push(r.payload.as_str());
                    verified.push(*v);
                    branch.push(r.branch.as_str());
                }
                // One statement per batch: the arrays are unnested server-side.
                sqlx::query(
                    "INSERT INTO floor_events (table_id, seq, kind, at_ms, hash, payload, verified, \
                     ingested_ms, branch) SELECT $1, u.seq, u.kind, u.at_ms, u.hash, u.payload, \
                     u.verified, $8, u.branch \
                     FROM UNNEST($2::bigint[], $3::text[], $4::bigint[], $5::bytea[], $6::text[], \
                     $7::text[], $9::text[]) AS u(seq, kind, at_ms, hash, payload, verified, branch) \
                     ON CONFLICT (table_id, branch, seq) DO NOTHING",
                )
                .bind(table)
                .bind(&seq)
                .bind(&kind)
                .bind(&at)
                .bind(&hash)
                .bind(&payload)
                .bind(&verified)
                .bind(now)
                .bind(&branch)
                .execute(&mut *tx)
                .await?;
            }
            for a in &batch.alarms {
                insert_alarm(table, a, now).execute(&mut *tx).await?;
            }
            tx.commit().await?;
            Ok(())
        })
        .await
    }
}

/// The statement that raises `alarm` for `table` (once per table, row and kind).
fn insert_alarm<'q>(
    table: &'q str,
    alarm: &'q Alarm,
    now: i64,
) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
    sqlx::query(
        "INSERT INTO floor_alarms (table_id, seq, kind, detail, raised_ms) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (table_id, seq, kind) DO NOTHING",
    )
    .bind(table)
    .bind(int(alarm.seq))
    .bind(alarm.kind)
    .bind(&alarm.detail)
    .bind(now)
}
