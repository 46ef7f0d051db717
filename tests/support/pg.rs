//! A fresh PostgreSQL database for a test on the machine's server (127.0.0.1:5432, user
//! `postgres`, trust auth; `CROUPIER_TEST_PG` overrides the server URL): created as
//! `floor_test_<random>`, dropped when the test ends. Without a server a test is skipped
//! locally and fails under CI (`CI` set), where `.ci/run` installs and starts Debian's
//! `postgresql`.
#![allow(dead_code)]

// The skip helper, declared once at the tests' root (tests/it/main.rs).
use crate::skip;

use sqlx::postgres::PgPool;
use sqlx::{Connection, PgConnection, Row};

/// The server, without a database name.
fn server() -> String {
    std::env::var("CROUPIER_TEST_PG")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into())
}

/// A database that is dropped with this value.
pub struct TestDb {
    /// Its name.
    pub name: String,
    /// Its URL.
    pub url: String,
}

/// `nats-server` and a fresh database, what a studio test with the floor needs, or `None`
/// (skipped, as [`fresh`] and `nats::nats_server` say) when either is missing.
pub async fn broker_and_db() -> Option<(std::path::PathBuf, TestDb)> {
    let bin = super::nats::nats_server()?;
    Some((bin, fresh().await?))
}

/// Creates a fresh database, or `None` (skipped) when no server answers outside CI.
pub async fn fresh() -> Option<TestDb> {
    let admin = format!("{}/postgres", server());
    let mut conn = match PgConnection::connect(&admin).await {
        Ok(c) => c,
        Err(e) => {
            if std::env::var_os("CI").is_some() {
                panic!("CI: PostgreSQL is not reachable at {admin}: {e} (.ci/run installs and starts Debian's postgresql)");
            }
            skip::skipped(format_args!("PostgreSQL is not reachable at {admin}: {e}"));
            return None;
        }
    };
    let name = format!("floor_test_{:016x}", fastrand::u64(..));
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&mut conn)
        .await
        .expect("CREATE DATABASE");
    let _ = conn.close().await;
    Some(TestDb {
        url: format!("{}/{name}", server()),
        name,
    })
}

impl TestDb {
    /// A pool on it.
    pub async fn pool(&self) -> PgPool {
        PgPool::connect(&self.url)
            .await
            .expect("connect to the test database")
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let admin = format!("{}/postgres", server());
        let name = self.name.clone();
        // Drop runs inside the test's runtime: a thread with its own.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async {
                if let Ok(mut c) = PgConnection::connect(&admin).await {
                    let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                        .execute(&mut c)
                        .await;
                }
            });
        })
        .join();
    }
}

/// `table`'s rows on the floor: (seq, kind, at_ms, hash, payload) in row order.
pub async fn floor_rows(pool: &PgPool, table: &str) -> Vec<(i64, String, i64, Vec<u8>, String)> {
    rows_of(pool, "floor_events", table).await
}

/// `table`'s rows in `relation` (`floor_events`, every row; `floor_history`, along its
/// current branch): (seq, kind, at_ms, hash, payload) in row order.
pub async fn rows_of(
    pool: &PgPool,
    relation: &str,
    table: &str,
) -> Vec<(i64, String, i64, Vec<u8>, String)> {
    sqlx::query(&format!(
        "SELECT seq, kind, at_ms, hash, payload FROM {relation} WHERE table_id = $1 ORDER BY seq"
    ))
    .bind(table)
    .fetch_all(pool)
    .await
    .expect("floor rows")
    .iter()
    .map(|r| {
        (
            r.get("seq"),
            r.get("kind"),
            r.get("at_ms"),
            r.get("hash"),
            r.get("payload"),
        )
    })
    .collect()
}
