//! A fresh PostgreSQL database for a test on the machine's server (127.0.0.1:5432, user
//! `postgres`, trust auth; `CROUPIER_TEST_PG` overrides the server URL): created as
//! `floor_test_<random>`, dropped when the test ends. Without a server a test is skipped
//! locally and fails under CI (`CI` set), where `.ci/run` installs and starts Debian's
//! `postgresql`.
#![allow(dead_code)]

use sqlx::postgres::PgPool;
use sqlx::{Connection, PgConnection};

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

/// Creates a fresh database, or `None` (skipped) when no server answers outside CI.
pub async fn fresh() -> Option<TestDb> {
    let admin = format!("{}/postgres", server());
    let mut conn = match PgConnection::connect(&admin).await {
        Ok(c) => c,
        Err(e) => {
            if std::env::var_os("CI").is_some() {
                panic!("CI: PostgreSQL is not reachable at {admin}: {e} (.ci/run installs and starts Debian's postgresql)");
            }
            // Past the harness's output capture (which would hide it behind an "ok"): the
            // run shows which tests did not run.
            let _ = std::io::Write::write_fmt(
                &mut std::io::stderr(),
                format_args!("\nSKIPPED (this test did not run): PostgreSQL is not reachable at {admin}: {e}\n"),
            );
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
