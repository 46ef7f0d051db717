//! The casino floor (`croupier floor`) against a real PostgreSQL (a fresh database per
//! test, `support/pg.rs`) and a real `nats-server` started here (`support/nats.rs`).
//!
//! - Three demo tables publish while the broker is SIGKILLed and restarted and the floor
//!   is SIGKILLed and restarted; at the end the floor holds every row of every table
//!   exactly once, byte for byte as each table's SQLite log has it, all verified, no alarm.
//! - A table log tampered with on the broker (one payload altered, one row missing):
//!   exactly one `chain_break` and one `gap` alarm, on the right rows; an intact table
//!   beside it raises none.
//! - A table restored from a backup and continued by the operator, a broker that loses
//!   its store, and blocked commits: the floor follows the branch and the new streams
//!   without a restart and raises `timeline` and `stall` alarms (issue #31).

use crate::common;
use crate::floor_check;
use crate::nats;
use crate::pg;
use crate::pit;
use crate::proc;
use crate::roles;
use crate::studio_table;

use croupier::table::TableConfig;
use nats::Nats;
use pg::{floor_rows, rows_of};
use pit::{add_supervisor, pit_floor, raise_dispute, until_settled, PitClient};
use proc::{announced, spawn_args};
use sqlx::{PgPool, Row};
use std::path::Path;
use std::time::{Duration, Instant};
use studio_table::Table;
use tokio::time::sleep;

mod disputes;
mod ingest;
mod pit_page;
mod timeline;

impl Table {
    async fn wait_log_rows(&self, rows: usize) {
        let started = Instant::now();
        while self.rows().await.len() <= rows {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{} deals",
                self.id
            );
            sleep(Duration::from_millis(200)).await;
        }
    }
}

fn spawn_floor(nats: &str, db: &str, keys: &Path, log: &Path) -> std::process::Child {
    spawn_floor_with(nats, db, keys, log, &[])
}

/// A floor with more arguments, trusting the tables' keys pinned in `keys`.
fn spawn_floor_with(
    nats: &str,
    db: &str,
    keys: &Path,
    log: &Path,
    extra: &[&str],
) -> std::process::Child {
    let mut args = roles::floor_unbound(nats, db, keys.to_str().expect("utf-8 path"));
    args.extend_from_slice(extra);
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
    spawn_args(&args, log)
}

/// `croupier_floor_rows_total` in a floor's scrape.
fn committed(metrics: &str) -> f64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix("croupier_floor_rows_total "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .unwrap_or_else(|| panic!("croupier_floor_rows_total in {metrics}"))
}

/// A floor serving its pit page and `/metrics` on a free port.
fn spawn_bound_floor(nats: &str, db: &str, keys: &Path, log: &Path) -> std::process::Child {
    spawn_floor_with(nats, db, keys, log, &["--bind", "127.0.0.1:0"])
}

/// The key a log a test makes by hand for `table` is signed with (a fixed secret each).
fn hand_keys(table: &str) -> croupier::trust::TableKeys {
    let mut secret = [7u8; 32];
    for (i, b) in table.bytes().enumerate().take(32) {
        secret[i] = b;
    }
    croupier::trust::TableKeys::from_secrets(secret, [0; 32])
}

/// The keys file in `dir` pinning the hand-made logs' keys of `tables`.
fn hand_keys_file(dir: &Path, tables: &[&str]) -> std::path::PathBuf {
    let path = dir.join("table-keys.toml");
    studio_table::pin_public_keys(
        &path,
        tables.iter().map(|t| (*t, hand_keys(t).public_hex())),
    );
    path
}

async fn count(pool: &PgPool, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.expect(sql)
}

async fn wait_floor_rows(pool: &PgPool, at_least: i64, floor_log: &Path) {
    let started = Instant::now();
    loop {
        let n = count(pool, "SELECT count(*) FROM floor_events").await;
        if n >= at_least {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the floor ingests (has {n} rows; log: {})",
            std::fs::read_to_string(floor_log).unwrap_or_default()
        );
        sleep(Duration::from_millis(200)).await;
    }
}

/// A table's log long enough (more than 50 rows) to be a real session.
fn real_session(id: &str, rows: usize) {
    assert!(rows > 50, "{id}: a real session ({rows} rows)");
}
