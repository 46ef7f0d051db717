//! The floor holds a table's log: every row once, byte for byte (`tests/it/floor/`,
//! `tests/it/studio_cluster.rs`).
#![allow(dead_code)]

use super::pg::floor_rows;
use super::studio_table::Table;
use sqlx::PgPool;
use std::path::Path;
use std::time::{Duration, Instant};
use tokio::time::sleep;

/// Waits (up to 90 s) until the floor holds `table`'s whole log, failing as soon as it
/// holds more rows than the log; then requires the two identical. Returns the log's rows.
pub async fn floor_holds_the_log(
    pool: &PgPool,
    table: &Table,
    floor_log: &Path,
) -> Vec<(i64, String, i64, Vec<u8>, String)> {
    floor_holds_the_log_telling(pool, table, floor_log, async || String::new()).await
}

/// [`floor_holds_the_log`], with what `tell` says added to the failure (the broker's side
/// of a floor that stopped: the fifth hour's soak stopped on one that said nothing).
pub async fn floor_holds_the_log_telling(
    pool: &PgPool,
    table: &Table,
    floor_log: &Path,
    tell: impl AsyncFn() -> String,
) -> Vec<(i64, String, i64, Vec<u8>, String)> {
    let started = Instant::now();
    loop {
        let want = table.rows().await;
        let got = floor_rows(pool, &table.id).await;
        assert!(got.len() <= want.len(), "{}: no row twice", table.id);
        if got.len() == want.len() {
            assert!(
                got == want,
                "{}: the floor holds the table's log byte for byte",
                table.id
            );
            return want;
        }
        if started.elapsed() >= Duration::from_secs(90) {
            panic!(
                "{}: the floor has {} of {} rows; {}\nlog: {}",
                table.id,
                got.len(),
                want.len(),
                tell().await,
                std::fs::read_to_string(floor_log).unwrap_or_default()
            );
        }
        sleep(Duration::from_millis(200)).await;
    }
}

/// Every row on the floor verified (its chain followed) and no alarm raised; the alarms
/// are listed if there are any.
pub async fn every_row_verified_and_no_alarm(pool: &PgPool) {
    let unverified: i64 =
        sqlx::query_scalar("SELECT count(*) FROM floor_events WHERE verified <> 'ok'")
            .fetch_one(pool)
            .await
            .expect("unverified rows");
    assert_eq!(unverified, 0, "every row's chain verified");
    // With when each was raised (ms since the epoch), to read against a run's faults.
    let alarms: Vec<String> = sqlx::query_scalar(
        "SELECT kind || ': ' || detail || ' (raised at ' || raised_ms || ' ms)' \
         FROM floor_alarms ORDER BY raised_ms",
    )
    .fetch_all(pool)
    .await
    .expect("alarms");
    assert!(alarms.is_empty(), "no floor alarm: {alarms:?}");
}
