//! Online backups: `VACUUM INTO` gives a consistent copy while the table keeps writing (it
//! reads one snapshot of the WAL database), and the copy is verified the way start-up
//! verifies a store — `PRAGMA integrity_check`, then every table's hash chain — before it is
//! called a backup. The audit log's chain is verified too.

use super::chain::read_log;
use super::{Reader, StoreError};
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{ConnectOptions, Connection};
use std::path::{Path, PathBuf};

/// What a verified database holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// The file.
    pub path: PathBuf,
    /// Per table: (id, log rows, last sequence number).
    pub tables: Vec<(String, usize, u64)>,
    /// The file's size in bytes.
    pub bytes: u64,
    /// The audit log: rows and head hash (`None` for a database from before it existed).
    pub audit: Option<super::audit::Verified>,
}

/// Copies the live database at `live` to `copy` (which must not exist yet) and verifies the
/// copy. Safe while `croupier run` is writing.
pub async fn backup(live: &Path, copy: &Path) -> Result<Verified, StoreError> {
    let target = copy.to_str().ok_or_else(|| StoreError::Backup {
        path: copy.to_path_buf(),
        why: "the path is not UTF-8".into(),
    })?;
    let reader = Reader::open(live).await?;
    // The copy holds what the live database holds (accounts, sessions, secrets, the
    // wallet's journal): made empty here, 0600 whatever the umask, and only then filled
    // (`VACUUM INTO` takes an empty file and keeps its mode). `create_new` is also the
    // check that nothing is overwritten, with no window between the check and the write.
    let made = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(copy)
    };
    if let Err(e) = made {
        return Err(StoreError::Backup {
            path: copy.to_path_buf(),
            why: if e.kind() == std::io::ErrorKind::AlreadyExists {
                "the file exists; a backup never overwrites".into()
            } else {
                e.to_string()
            },
        });
    }
    let copied = sqlx::query("VACUUM INTO ?")
        .bind(target)
        .execute(&reader.pool)
        .await;
    reader.pool.close().await;
    if let Err(e) = copied {
        // Nothing of a failed copy is left to be taken for a backup.
        let _ = std::fs::remove_file(copy);
        return Err(StoreError::Backup {
            path: copy.to_path_buf(),
            why: e.to_string(),
        });
    }
    // A backup is one self-contained file: no WAL beside it.
    let mut conn = SqliteConnectOptions::new()
        .filename(copy)
        .connect()
        .await
        .map_err(|source| StoreError::Open {
            path: copy.to_path_buf(),
            source,
        })?;
    sqlx::query("PRAGMA journal_mode = DELETE")
        .execute(&mut conn)
        .await?;
    // The copy, never the live database, says it is a backup: a table that opens it
    // later was restored, and begins a new timeline (`store/timeline.rs`).
    let marked = sqlx::query(
        "INSERT INTO backup_marker (id, taken_ms, seq) \
         VALUES (1, ?, (SELECT COALESCE(MAX(seq), 0) FROM events))",
    )
    .bind(super::now_ms())
    .execute(&mut conn)
    .await;
    if let Err(e) = marked {
        // A database no table of this version has opened yet has no marker table; a
        // restore of it is then not told apart (the publisher's hash check still is).
        tracing::warn!(error = %e, "the backup could not be marked as one");
    }
    conn.close().await?;
    let verified = verify(copy).await?;
    anchor_copy(copy, &verified).await?;
    Ok(verified)
}

/// Writes the backup's own anchor (`<copy>.anchor`): restoring the backup means copying
/// both files, and the anchor of each backup kept elsewhere pins what the log held then.
async fn anchor_copy(copy: &Path, verified: &Verified) -> Result<(), StoreError> {
    let Some((table, _, _)) = verified.tables.first() else {
        return Ok(());
    };
    let mut conn = read_only(copy).await?;
    let (log, hash) = read_log(&mut conn, table).await?;
    conn.close().await?;
    let seq = log.last().map_or(0, |r| r.seq);
    super::anchor::write_new(
        &super::anchor::path_for(copy),
        &super::anchor::head(table, seq, &hash),
    )?;
    Ok(())
}

/// A read-only connection to the database at `path`.
async fn read_only(path: &Path) -> Result<sqlx::SqliteConnection, StoreError> {
    super::reader_options(path)
        .connect()
        .await
        .map_err(|source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        })
}

/// Verifies a database file (a backup, or a store before it is trusted): SQLite's integrity
/// check and every table's hash chain.
pub async fn verify(path: &Path) -> Result<Verified, StoreError> {
    if !path.is_file() {
        return Err(StoreError::Backup {
            path: path.to_path_buf(),
            why: "no such file".into(),
        });
    }
    let mut conn = read_only(path).await?;
    let report: Vec<String> = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_all(&mut conn)
        .await
        .map_err(|source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        })?;
    if report != ["ok"] {
        return Err(StoreError::Integrity {
            path: path.to_path_buf(),
            report: report.join("; "),
        });
    }
    let ids: Vec<String> = sqlx::query_scalar("SELECT id FROM tables ORDER BY id")
        .fetch_all(&mut conn)
        .await?;
    let mut tables = Vec::with_capacity(ids.len());
    for id in ids {
        let (rows, _) = read_log(&mut conn, &id).await?;
        let last = rows.last().map_or(0, |r| r.seq);
        tables.push((id, rows.len(), last));
    }
    let has_audit: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'audit'",
    )
    .fetch_one(&mut conn)
    .await?;
    let audit = if has_audit > 0 {
        Some(super::audit::verify(&mut conn).await?)
    } else {
        None
    };
    conn.close().await?;
    let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    Ok(Verified {
        path: path.to_path_buf(),
        tables,
        bytes,
        audit,
    })
}
