//! [`StoreError`]: every way the store fails, from a path that cannot hold a database to a
//! broken chain. Apart from the writer because every part of the store (and the table's
//! start-up, which shows the message) names these.

use super::{anchor, audit};
use std::path::PathBuf;

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
