//! `croupier user ...`: accounts, straight on the database. It never takes the table
//! service's `<db>.lock` (that guards the event log's single writer): it writes accounts
//! and audit rows in short `BEGIN IMMEDIATE` transactions, so it works while the service
//! runs.
//!
//! Secrets are never taken from the command line (it shows in `ps` and shell history):
//! with `--secret-stdin` the first line of standard input is the secret (scripts), else the
//! terminal asks twice without echo.

use super::args::TableArgs;
use super::fail;
use clap::Subcommand;
use croupier::auth::{self, accounts, Role};
use croupier::store::audit;
use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

/// `croupier user …`.
#[derive(Subcommand)]
pub enum UserCommand {
    /// Adds an account. The secret (a PIN of 4-12 digits or a password of 8-128
    /// characters) is asked on the terminal, or read from stdin with --secret-stdin; never
    /// on the command line.
    Add {
        /// Badge id (letters, digits, '-', '_').
        #[arg(long)]
        badge: String,
        /// The person's name.
        #[arg(long)]
        name: String,
        /// dealer, supervisor or admin.
        #[arg(long)]
        role: String,
        /// Read the secret from the first line of stdin.
        #[arg(long)]
        secret_stdin: bool,
    },
    /// Disables an account (it cannot log in; its sessions end).
    Disable {
        /// Badge id.
        #[arg(long)]
        badge: String,
        /// Why (recorded in the audit log).
        #[arg(long, default_value = "")]
        reason: String,
    },
    /// Re-enables a disabled account.
    Enable {
        /// Badge id.
        #[arg(long)]
        badge: String,
        /// Why (recorded in the audit log).
        #[arg(long, default_value = "")]
        reason: String,
    },
    /// Sets a new secret; also unlocks the account and ends its sessions.
    Passwd {
        /// Badge id.
        #[arg(long)]
        badge: String,
        /// Read the secret from the first line of stdin.
        #[arg(long)]
        secret_stdin: bool,
        /// Why (recorded in the audit log).
        #[arg(long, default_value = "")]
        reason: String,
    },
    /// Unlocks an account locked by failed logins.
    Unlock {
        /// Badge id.
        #[arg(long)]
        badge: String,
        /// Why (recorded in the audit log).
        #[arg(long, default_value = "")]
        reason: String,
    },
    /// Lists the accounts.
    List {
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
}

/// The audit actor of a command: `cli:<unix user>`.
fn cli_actor() -> String {
    let name = nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .map(|u| u.name)
        .unwrap_or_else(|| format!("uid{}", nix::unistd::getuid()));
    format!("cli:{name}")
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

/// `croupier user ...`.
pub async fn user(command: UserCommand, table: TableArgs) -> ExitCode {
    let path = match table.database() {
        Ok(p) => p,
        Err(code) => return code,
    };
    let pool = match auth::open_pool(&path).await {
        Ok(p) => p,
        Err(e) => return fail(format!("{}: {e}", path.display())),
    };
    let actor = cli_actor();
    let result = match command {
        UserCommand::Add {
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
        UserCommand::Disable { badge, reason } => {
            accounts::set_disabled(&pool, &actor, &badge, true, &reason)
                .await
                .map(said_disabled)
        }
        UserCommand::Enable { badge, reason } => {
            accounts::set_disabled(&pool, &actor, &badge, false, &reason)
                .await
                .map(said_disabled)
        }
        UserCommand::Passwd {
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
        UserCommand::Unlock { badge, reason } => accounts::unlock(&pool, &actor, &badge, &reason)
            .await
            .map(|()| println!("{badge} is unlocked")),
        UserCommand::List { json } => accounts::list(&pool).await.map(|users| {
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

/// What `disable` and `enable` print: the state the account is left in.
fn said_disabled(u: accounts::User) {
    println!(
        "{} is {}",
        u.badge,
        if u.disabled {
            "disabled (its sessions ended)"
        } else {
            "enabled"
        }
    )
}
