//! `croupier audit …`: the audit log's hash chain verified, and its rows exported, read
//! straight from the database (read-only: it works while the service runs).

use super::args::TableArgs;
use super::{fail, with_runtime};
use clap::Subcommand;
use croupier::store::audit;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `croupier audit …`.
#[derive(Subcommand)]
pub enum AuditCommand {
    /// Verifies the hash chain: exit 0 when intact, 1 naming the first bad row (edited,
    /// deleted, inserted, chain mismatch), 2 when the database cannot be read.
    Verify,
    /// Writes the rows as JSON lines on stdout.
    Export {
        /// Only rows after this sequence number.
        #[arg(long, default_value_t = 0)]
        since: u64,
    },
}

/// `croupier audit …` on the table `table` names.
pub fn audit_command(command: AuditCommand, table: TableArgs) -> ExitCode {
    match command {
        AuditCommand::Verify => with_runtime(audit_verify(table)),
        AuditCommand::Export { since } => with_runtime(audit_export(table, since)),
    }
}

async fn read_only(path: &Path) -> Result<sqlx::SqliteConnection, String> {
    use sqlx::ConnectOptions;
    if !path.is_file() {
        return Err(format!("{}: no such file", path.display()));
    }
    sqlx::sqlite::SqliteConnectOptions::new()
        .filename(path)
        .read_only(true)
        .busy_timeout(std::time::Duration::from_secs(5))
        .connect()
        .await
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The database named by `--config`/`--db`, opened read-only.
async fn open_read_only(table: TableArgs) -> Result<(PathBuf, sqlx::SqliteConnection), ExitCode> {
    let path = table.database()?;
    let conn = read_only(&path).await.map_err(fail)?;
    Ok((path, conn))
}

/// `croupier audit verify`: exit 0 when the chain is intact, 1 naming the first bad row,
/// 2 when the database cannot be read.
async fn audit_verify(table: TableArgs) -> ExitCode {
    let (path, mut conn) = match open_read_only(table).await {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    match audit::verify(&mut conn).await {
        Ok(v) => {
            println!(
                "audit log of {}: {} rows, hash chain intact; head {}",
                path.display(),
                v.rows,
                v.head
            );
            ExitCode::SUCCESS
        }
        Err(e @ audit::AuditError::Broken { .. }) => {
            eprintln!("croupier: {}: {e}", path.display());
            ExitCode::from(1)
        }
        Err(e) => fail(e),
    }
}

/// `croupier audit export`: rows after `since` as JSON lines on stdout.
async fn audit_export(table: TableArgs, since: u64) -> ExitCode {
    let (_, mut conn) = match open_read_only(table).await {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    let rows = match audit::rows_since(&mut conn, since).await {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for row in &rows {
        match serde_json::to_string(row) {
            Ok(line) => {
                if writeln!(out, "{line}").is_err() {
                    return ExitCode::from(2);
                }
            }
            Err(e) => return fail(e),
        }
    }
    if out.flush().is_err() {
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}
