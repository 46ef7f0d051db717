//! `croupier user ...` and `croupier audit ...`: accounts and the audit log, straight on
//! the database. They never take the table service's `<db>.lock` (that guards the event
//! log's single writer): they write accounts and audit rows in short `BEGIN IMMEDIATE`
//! transactions, so they work while the service runs.
//!
//! Secrets are never taken from the command line (it shows in `ps` and shell history):
//! with `--secret-stdin` the first line of standard input is the secret (scripts), else the
//! terminal asks twice without echo.

use croupier::auth::{self, accounts, Role};
use croupier::store::audit;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("croupier: {message}");
    ExitCode::from(2)
}

/// The audit actor of a command: `cli:<unix user>`.
pub fn cli_actor() -> String {
    let name = nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .map(|u| u.name)
        .unwrap_or_else(|| format!("uid{}", nix::unistd::getuid()));
    format!("cli:{name}")
}

/// The database: `--db`, else the config's `store.path` (built-in config by default).
pub fn database(config: Option<&Path>, db: Option<PathBuf>) -> Result<PathBuf, ExitCode> {
    if let Some(db) = db {
        return Ok(db);
    }
    let c = match config {
        Some(p) => croupier::table::TableConfig::load(p),
        None => croupier::table::TableConfig::embedded(),
    }
    .map_err(fail)?;
    Ok(c.store.path)
}

/// Reads a secret: a line of stdin with `from_stdin`, else a no-echo prompt on the
/// terminal (twice when `confirm`).
pub fn read_secret(from_stdin: bool, confirm: bool) -> Result<String, String> {
    let stdin = std::io::stdin();
    if from_stdin {
        let mut line = String::new();
        stdin
            .lock()
            .read_line(&mut line)
            .map_err(|e| format!("reading the secret from stdin: {e}"))?;
        return Ok(line.trim_end_matches(['\n', '\r']).to_string());
    }
    if !stdin.is_terminal() {
        return Err(
            "no terminal to ask for the secret: pass it on stdin with --secret-stdin".into(),
        );
    }
    let first = prompt("Secret (PIN or password): ")?;
    if confirm && prompt("Again: ")? != first {
        return Err("the two entries differ".into());
    }
    Ok(first)
}

fn prompt(text: &str) -> Result<String, String> {
    use nix::sys::termios::{tcgetattr, tcsetattr, LocalFlags, SetArg};
    let stdin = std::io::stdin();
    eprint!("{text}");
    let _ = std::io::stderr().flush();
    let saved = tcgetattr(&stdin).map_err(|e| format!("terminal: {e}"))?;
    let mut quiet = saved.clone();
    quiet.local_flags.remove(LocalFlags::ECHO);
    tcsetattr(&stdin, SetArg::TCSANOW, &quiet).map_err(|e| format!("terminal: {e}"))?;
    let mut line = String::new();
    let read = stdin.lock().read_line(&mut line);
    let _ = tcsetattr(&stdin, SetArg::TCSANOW, &saved);
    eprintln!();
    read.map_err(|e| format!("reading the secret: {e}"))?;
    Ok(line.trim_end_matches(['\n', '\r']).to_string())
}

/// What `croupier user` does.
pub enum UserAction {
    /// Add an account.
    Add {
        /// Badge id.
        badge: String,
        /// Name.
        name: String,
        /// Role.
        role: String,
        /// Secret from stdin.
        secret_stdin: bool,
    },
    /// Disable (or re-enable) an account.
    Disable {
        /// Badge id.
        badge: String,
        /// Re-enable instead.
        enable: bool,
        /// Why.
        reason: String,
    },
    /// A new secret (also unlocks).
    Passwd {
        /// Badge id.
        badge: String,
        /// Secret from stdin.
        secret_stdin: bool,
        /// Why.
        reason: String,
    },
    /// Unlock after failed logins.
    Unlock {
        /// Badge id.
        badge: String,
        /// Why.
        reason: String,
    },
    /// List accounts.
    List {
        /// As JSON.
        json: bool,
    },
}

/// `croupier user ...`.
pub async fn user(action: UserAction, config: Option<PathBuf>, db: Option<PathBuf>) -> ExitCode {
    let path = match database(config.as_deref(), db) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let pool = match auth::open_pool(&path).await {
        Ok(p) => p,
        Err(e) => return fail(format!("{}: {e}", path.display())),
    };
    let actor = cli_actor();
    let result = match action {
        UserAction::Add {
            badge,
            name,
            role,
            secret_stdin,
        } => {
            let role: Role = match role.parse() {
                Ok(r) => r,
                Err(e) => return fail(e),
            };
            let secret = match read_secret(secret_stdin, true) {
                Ok(s) => s,
                Err(e) => return fail(e),
            };
            accounts::add(&pool, &actor, &badge, &name, role, &secret)
                .await
                .map(|u| println!("added {} ({}, {})", u.badge, u.name, u.role))
        }
        UserAction::Disable {
            badge,
            enable,
            reason,
        } => accounts::set_disabled(&pool, &actor, &badge, !enable, &reason)
            .await
            .map(|u| {
                println!(
                    "{} is {}",
                    u.badge,
                    if u.disabled {
                        "disabled (its sessions ended)"
                    } else {
                        "enabled"
                    }
                )
            }),
        UserAction::Passwd {
            badge,
            secret_stdin,
            reason,
        } => {
            let secret = match read_secret(secret_stdin, true) {
                Ok(s) => s,
                Err(e) => return fail(e),
            };
            accounts::passwd(&pool, &actor, &badge, &secret, &reason)
                .await
                .map(|()| println!("{badge} has a new secret (unlocked; its sessions ended)"))
        }
        UserAction::Unlock { badge, reason } => accounts::unlock(&pool, &actor, &badge, &reason)
            .await
            .map(|()| println!("{badge} is unlocked")),
        UserAction::List { json } => accounts::list(&pool).await.map(|users| {
            if json {
                for u in &users {
                    println!("{}", serde_json::to_string(u).unwrap_or_default());
                }
                return;
            }
            let now = auth::sessions_now_ms();
            println!("{:<12} {:<10} {:<24} state", "badge", "role", "name");
            for u in &users {
                let state = if u.disabled {
                    "disabled".to_string()
                } else if u.locked_at(now) {
                    format!(
                        "LOCKED until {}",
                        audit::rfc3339(u.locked_until_ms.unwrap_or(0))
                    )
                } else {
                    "active".to_string()
                };
                println!(
                    "{:<12} {:<10} {:<24} {state}",
                    u.badge,
                    u.role.as_str(),
                    u.name
                );
            }
        }),
    };
    pool.close().await;
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(e),
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
async fn open_read_only(
    config: Option<PathBuf>,
    db: Option<PathBuf>,
) -> Result<(PathBuf, sqlx::SqliteConnection), ExitCode> {
    let path = database(config.as_deref(), db)?;
    let conn = read_only(&path).await.map_err(fail)?;
    Ok((path, conn))
}

/// `croupier audit verify`: exit 0 when the chain is intact, 1 naming the first bad row,
/// 2 when the database cannot be read.
pub async fn audit_verify(config: Option<PathBuf>, db: Option<PathBuf>) -> ExitCode {
    let (path, mut conn) = match open_read_only(config, db).await {
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
pub async fn audit_export(config: Option<PathBuf>, db: Option<PathBuf>, since: u64) -> ExitCode {
    let (_, mut conn) = match open_read_only(config, db).await {
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
