//! The audit log: who did what, when, to what, from which value to which, and why — one
//! append-only row per login attempt, logout, user change, alarm clear, override and
//! configuration change, each hash-chained to the one before (like the event log, see
//! `0002_accounts_audit.sql` for the exact hash).
//!
//! Appending is serialised by SQLite's write lock: [`append`] runs inside the caller's
//! transaction (the table task appends an alarm clear in the same transaction as its event
//! row), [`append_now`] opens a `BEGIN IMMEDIATE` transaction of its own (logins, the
//! `croupier user` commands). `seq` is the primary key, so two writers can never fork the
//! chain: the loser of a race gets an error, not a second row with the same number.
//!
//! [`verify`] walks the chain and names the first bad row: edited (the row does not match
//! its hash), deleted (a gap in `seq`), inserted (the next row links past it) or a chain
//! mismatch. A chain has no anchor outside the file: whoever can write the file can cut
//! rows off its end or forge new ones there, so `croupier audit verify` prints the head
//! hash for the operator to note (and backups carry it).

use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::{Connection, Row, SqliteConnection, SqlitePool};
use std::time::{SystemTime, UNIX_EPOCH};

/// The action names the service writes (stable: reports filter on them).
pub mod actions {
    /// A successful login.
    pub const LOGIN: &str = "login";
    /// A failed login (wrong secret, unknown badge, disabled account).
    pub const LOGIN_FAILED: &str = "login_failed";
    /// The failed attempt that locked an account, or an attempt refused while locked.
    pub const LOGIN_LOCKED: &str = "login_locked";
    /// A logout.
    pub const LOGOUT: &str = "logout";
    /// `croupier user add`.
    pub const USER_ADD: &str = "user_add";
    /// `croupier user disable`.
    pub const USER_DISABLE: &str = "user_disable";
    /// `croupier user enable`.
    pub const USER_ENABLE: &str = "user_enable";
    /// `croupier user passwd` (a new secret; also unlocks).
    pub const USER_PASSWD: &str = "user_passwd";
    /// `croupier user unlock`.
    pub const USER_UNLOCK: &str = "user_unlock";
    /// The demo accounts created at a demo start.
    pub const USER_SEED: &str = "user_seed";
    /// An alarm cleared.
    pub const ALARM_CLEAR: &str = "alarm_clear";
    /// The configuration (table file + variant) differs from the last start's.
    pub const CONFIG: &str = "config";
    /// A dispute raised (it halts the round).
    pub const DISPUTE: &str = "dispute";
    /// A supervisor's resolution of a dispute applied to the round (an override).
    pub const OVERRIDE: &str = "override";
    /// A proposed resolution withdrawn (who withdrew whose proposal).
    pub const DISPUTE_WITHDRAW: &str = "dispute_withdraw";
    /// A finished shoe the integrity checks found suspicious (not shuffled).
    pub const SHOE_SUSPICIOUS: &str = "shoe_suspicious";
}

/// The audit log failed or is broken.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// A query failed.
    #[error("audit log: database error: {0}")]
    Sql(#[from] sqlx::Error),
    /// `detail` could not be encoded.
    #[error("audit log: {0}")]
    Json(#[from] serde_json::Error),
    /// The chain is broken at `seq`.
    #[error("the audit log is broken at seq {seq}: {why}")]
    Broken {
        /// The first bad row (for a deletion: the first missing number).
        seq: u64,
        /// What is wrong.
        why: Break,
    },
}

/// How the chain is broken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Break {
    /// The row's fields do not give its hash.
    #[error("edited: the row does not match its hash")]
    Edited,
    /// Rows are missing before the next one present.
    #[error("deleted: seq {first}..={last} missing (the chain has a gap)")]
    Deleted {
        /// The first missing number.
        first: u64,
        /// The last missing number.
        last: u64,
    },
    /// The row is not in the chain: the row after it links to the row before it.
    #[error("inserted: the next row links to seq {before}, not to this one")]
    Inserted {
        /// The row the chain continues from.
        before: u64,
    },
    /// The row's `prev_hash` is not the previous row's hash.
    #[error("chain mismatch: prev_hash is not the hash of seq {before}")]
    Mismatch {
        /// The previous row.
        before: u64,
    },
}

/// One thing to record. Build with [`AuditEntry::new`] and the setters.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct AuditEntry {
    /// Who: `user:<badge>`, `cli:<unix user>`, `local:<who>`, `system`, `anonymous`.
    pub actor: String,
    /// What (one of [`actions`] or a later name).
    pub action: String,
    /// To what (a badge, a table id, a round).
    pub subject: String,
    /// The value before, if something changed.
    pub old_value: Option<String>,
    /// The value after.
    pub new_value: Option<String>,
    /// Why, as the operator put it.
    pub reason: String,
    /// Anything else, as a JSON object (peer address, failure reason, event seq).
    pub detail: serde_json::Value,
}

impl AuditEntry {
    /// An entry with `actor` and `action`; the rest empty.
    pub fn new(actor: impl Into<String>, action: impl Into<String>) -> AuditEntry {
        AuditEntry {
            actor: actor.into(),
            action: action.into(),
            detail: serde_json::json!({}),
            ..AuditEntry::default()
        }
    }

    /// Sets the subject.
    pub fn subject(mut self, subject: impl Into<String>) -> AuditEntry {
        self.subject = subject.into();
        self
    }

    /// Sets the old and new values.
    pub fn values(mut self, old: Option<String>, new: Option<String>) -> AuditEntry {
        self.old_value = old;
        self.new_value = new;
        self
    }

    /// Sets the reason.
    pub fn reason(mut self, reason: impl Into<String>) -> AuditEntry {
        self.reason = reason.into();
        self
    }

    /// Sets the detail object.
    pub fn detail(mut self, detail: serde_json::Value) -> AuditEntry {
        self.detail = detail;
        self
    }
}

/// One stored row (as exported: hashes in hex).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuditRow {
    /// From 1, no gaps.
    pub seq: u64,
    /// RFC 3339 UTC.
    pub at: String,
    /// What was recorded (exported as the row's own fields).
    #[serde(flatten)]
    pub entry: AuditEntry,
    /// The previous row's hash (hex).
    pub prev_hash: String,
    /// This row's hash (hex).
    pub hash: String,
}

/// What a verified chain holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// Rows.
    pub rows: u64,
    /// The last row's hash (hex; 64 zeros for an empty log).
    pub head: String,
}

/// The current wall-clock time as RFC 3339 UTC with milliseconds
/// (`2026-05-01T12:34:56.789Z`).
pub fn now_rfc3339() -> String {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    rfc3339(i64::try_from(ms).unwrap_or(i64::MAX))
}

/// Unix milliseconds as RFC 3339 UTC (proleptic Gregorian; Howard Hinnant's days→civil).
pub fn rfc3339(unix_ms: i64) -> String {
    let secs = unix_ms.div_euclid(1000);
    let ms = unix_ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let tod = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        tod / 3600,
        tod % 3600 / 60,
        tod % 60
    )
}

fn field(h: &mut Sha256, value: Option<&str>) {
    match value {
        None => h.update([0]),
        Some(v) => {
            h.update([1]);
            h.update((v.len() as u64).to_be_bytes());
            h.update(v.as_bytes());
        }
    }
}

/// The chained hash of one row (see the migration for the layout). `detail` is the text
/// the row stores, not `entry.detail`: verification hashes what is on disk.
fn row_hash(prev: &[u8], seq: u64, at: &str, entry: &AuditEntry, detail: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(prev);
    h.update(seq.to_be_bytes());
    for f in [at, &entry.actor, &entry.action, &entry.subject] {
        field(&mut h, Some(f));
    }
    field(&mut h, entry.old_value.as_deref());
    field(&mut h, entry.new_value.as_deref());
    field(&mut h, Some(&entry.reason));
    field(&mut h, Some(detail));
    h.finalize().into()
}

/// Appends `entry` as the next row **inside the caller's open transaction** on `conn`.
///
/// The previous hash is read in the same transaction, so the caller must hold SQLite's
/// write lock before calling: a `BEGIN IMMEDIATE` transaction, or one that has already
/// written (the table task's: its event row first). In a deferred transaction that has only
/// read, a concurrent writer makes this fail with `SQLITE_BUSY` instead of forking the
/// chain. Nothing is committed here.
pub async fn append(
    conn: &mut SqliteConnection,
    entry: &AuditEntry,
) -> Result<AuditRow, AuditError> {
    let last = sqlx::query("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1")
        .fetch_optional(&mut *conn)
        .await?;
    let (prev_seq, prev_hash) = match last {
        Some(row) => (
            u64::try_from(row.try_get::<i64, _>("seq")?).unwrap_or(0),
            row.try_get::<Vec<u8>, _>("hash")?,
        ),
        None => (0, vec![0u8; 32]),
    };
    let seq = prev_seq + 1;
    let at = now_rfc3339();
    let detail = serde_json::to_string(&entry.detail)?;
    let hash = row_hash(&prev_hash, seq, &at, entry, &detail);
    sqlx::query(
        "INSERT INTO audit (seq, at, actor, action, subject, old_value, new_value, reason, \
         detail, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(i64::try_from(seq).unwrap_or(i64::MAX))
    .bind(&at)
    .bind(&entry.actor)
    .bind(&entry.action)
    .bind(&entry.subject)
    .bind(&entry.old_value)
    .bind(&entry.new_value)
    .bind(&entry.reason)
    .bind(&detail)
    .bind(&prev_hash[..])
    .bind(&hash[..])
    .execute(&mut *conn)
    .await?;
    Ok(AuditRow {
        seq,
        at,
        entry: entry.clone(),
        prev_hash: hex::encode(&prev_hash),
        hash: hex::encode(hash),
    })
}

/// Appends `entry` in a `BEGIN IMMEDIATE` transaction of its own and commits it (web-side
/// writes such as logins, the CLI).
pub async fn append_now(pool: &SqlitePool, entry: &AuditEntry) -> Result<AuditRow, AuditError> {
    let mut conn = pool.acquire().await?;
    let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
    let row = append(&mut tx, entry).await?;
    tx.commit().await?;
    Ok(row)
}

fn decode(row: &sqlx::sqlite::SqliteRow) -> Result<(AuditRow, Vec<u8>, Vec<u8>), AuditError> {
    let prev: Vec<u8> = row.try_get("prev_hash")?;
    let hash: Vec<u8> = row.try_get("hash")?;
    let detail: String = row.try_get("detail")?;
    let out = AuditRow {
        seq: u64::try_from(row.try_get::<i64, _>("seq")?).unwrap_or(0),
        at: row.try_get("at")?,
        entry: AuditEntry {
            actor: row.try_get("actor")?,
            action: row.try_get("action")?,
            subject: row.try_get("subject")?,
            old_value: row.try_get("old_value")?,
            new_value: row.try_get("new_value")?,
            reason: row.try_get("reason")?,
            // Kept as text when it is not JSON (an edited row still exports).
            detail: serde_json::from_str(&detail).unwrap_or(serde_json::Value::String(detail)),
        },
        prev_hash: hex::encode(&prev),
        hash: hex::encode(&hash),
    };
    Ok((out, prev, hash))
}

const SELECT: &str = "SELECT seq, at, actor, action, subject, old_value, new_value, reason, \
                      detail, prev_hash, hash FROM audit";

/// Rows with `seq > since`, in order (export).
pub async fn rows_since(
    conn: &mut SqliteConnection,
    since: u64,
) -> Result<Vec<AuditRow>, AuditError> {
    let rows = sqlx::query(&format!("{SELECT} WHERE seq > ? ORDER BY seq"))
        .bind(i64::try_from(since).unwrap_or(i64::MAX))
        .fetch_all(&mut *conn)
        .await?;
    rows.iter().map(|r| decode(r).map(|d| d.0)).collect()
}

/// The last row with `action`, if any.
pub async fn last_of(
    conn: &mut SqliteConnection,
    action: &str,
) -> Result<Option<AuditRow>, AuditError> {
    let row = sqlx::query(&format!(
        "{SELECT} WHERE action = ? ORDER BY seq DESC LIMIT 1"
    ))
    .bind(action)
    .fetch_optional(&mut *conn)
    .await?;
    row.as_ref().map(|r| decode(r).map(|d| d.0)).transpose()
}

/// Verifies the whole chain; names the first bad row.
pub async fn verify(conn: &mut SqliteConnection) -> Result<Verified, AuditError> {
    let rows = sqlx::query(&format!("{SELECT} ORDER BY seq"))
        .fetch_all(&mut *conn)
        .await?;
    let mut prev = vec![0u8; 32];
    // The hash of the row before the previous one: a row whose prev_hash is this one skips
    // the previous row, which therefore is not part of the chain (inserted).
    let mut before_prev: Option<Vec<u8>> = None;
    let mut expected = 1u64;
    for row in &rows {
        let (r, stored_prev, stored_hash) = decode(row)?;
        let broken = |seq, why| AuditError::Broken { seq, why };
        if r.seq != expected {
            return Err(broken(
                expected,
                Break::Deleted {
                    first: expected,
                    last: r.seq.saturating_sub(1),
                },
            ));
        }
        if stored_prev != prev {
            if before_prev.as_ref() == Some(&stored_prev) {
                return Err(broken(
                    r.seq - 1,
                    Break::Inserted {
                        before: r.seq.saturating_sub(2),
                    },
                ));
            }
            return Err(broken(
                r.seq,
                Break::Mismatch {
                    before: r.seq.saturating_sub(1),
                },
            ));
        }
        let detail: String = row.try_get("detail")?;
        let expect = row_hash(&prev, r.seq, &r.at, &r.entry, &detail);
        if stored_hash[..] != expect[..] {
            return Err(broken(r.seq, Break::Edited));
        }
        before_prev = Some(std::mem::replace(&mut prev, stored_hash));
        expected += 1;
    }
    Ok(Verified {
        rows: expected - 1,
        head: hex::encode(&prev),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_formats_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(rfc3339(1_767_225_599_999), "2025-12-31T23:59:59.999Z");
    }

    #[test]
    fn every_field_is_in_the_hash() {
        let entry = |actor: &str, action: &str, old: Option<&str>| AuditEntry {
            actor: actor.into(),
            action: action.into(),
            subject: "d".into(),
            old_value: old.map(str::to_owned),
            new_value: Some("e".into()),
            reason: "f".into(),
            detail: serde_json::json!({}),
        };
        let base = row_hash(&[0; 32], 1, "a", &entry("b", "c", None), "{}");
        assert_ne!(
            base,
            row_hash(&[0; 32], 1, "a", &entry("b", "c", Some("")), "{}")
        );
        assert_ne!(
            base,
            row_hash(&[0; 32], 2, "a", &entry("b", "c", None), "{}")
        );
        // Length-prefixed: moving text between fields changes the hash.
        assert_ne!(
            base,
            row_hash(&[0; 32], 1, "a", &entry("bc", "", None), "{}")
        );
    }
}
