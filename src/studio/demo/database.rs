//! The floor's PostgreSQL database for the demo: a fresh one made on the server `--pg`
//! names, migrated with the demo pit account, and dropped at the end. Apart from the
//! processes, since a demo runs without it (and without the floor) when PostgreSQL does
//! not answer.

use super::{any_port, output::say, Demo, DemoError, PIT_BADGE};
use crate::floor::{accounts, FloorDb};
use sqlx::{Connection, PgConnection};
use std::time::Duration;

impl Demo {
    /// The floor on a fresh database of `options.pg`'s server, with the demo pit account,
    /// taking the tables pinned in `keys`; `None` (said on stdout) when the server does not
    /// answer.
    pub(super) async fn start_floor(
        &mut self,
        nats: &str,
        host: &str,
        keys: &std::path::Path,
    ) -> Result<Option<(String, String)>, DemoError> {
        let admin = self.options.pg.clone();
        let connect = tokio::time::timeout(Duration::from_secs(5), PgConnection::connect(&admin));
        let mut conn = match connect.await {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => {
                say(&format!("floor: not started, PostgreSQL does not answer ({e}); start it or name one with --pg URL"));
                return Ok(None);
            }
            Err(_) => {
                say("floor: not started, PostgreSQL did not answer within 5 s; start it or name one with --pg URL");
                return Ok(None);
            }
        };
        let mut raw = [0u8; 4];
        getrandom::fill(&mut raw).map_err(|e| DemoError::Floor(e.to_string()))?;
        let name = format!("croupier_demo_{}_{}", std::process::id(), hex::encode(raw));
        // The name is ours (digits and hex), so it is safe in the statement's text.
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&mut conn)
            .await
            .map_err(|e| DemoError::Floor(format!("CREATE DATABASE {name}: {e}")))?;
        let _ = conn.close().await;
        self.database = Some(name.clone());
        let url = with_database(&admin, &name);
        let secret = pit_account(&url).await?;
        let floor = self.start_service(
            "floor",
            vec![
                "floor".into(),
                "--nats".into(),
                nats.into(),
                "--database".into(),
                url.into(),
                "--bind".into(),
                any_port(host).into(),
                "--table-keys".into(),
                keys.as_os_str().to_owned(),
            ],
        )?;
        let addr = self.services[floor].address().await?;
        Ok(Some((format!("http://{addr}/floor"), secret)))
    }
}

/// `url` (`postgres://USER@HOST:PORT/DB?OPTIONS`) naming database `name` instead.
fn with_database(url: &str, name: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("postgres", url));
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    let authority = rest.split_once('/').map_or(rest, |(a, _)| a);
    match query {
        Some(q) => format!("{scheme}://{authority}/{name}?{q}"),
        None => format!("{scheme}://{authority}/{name}"),
    }
}

/// Adds the demo pit account to the floor's database `url` (migrating it first); answers
/// its new random password.
async fn pit_account(url: &str) -> Result<String, DemoError> {
    let mut raw = [0u8; 6];
    getrandom::fill(&mut raw).map_err(|e| DemoError::Floor(e.to_string()))?;
    // Random: the pit page may listen beyond loopback (`--bind-host`).
    let secret = format!("demo-{}", hex::encode(raw));
    let db = FloorDb::open(url, 1)
        .await
        .map_err(|e| DemoError::Floor(e.to_string()))?;
    accounts::add(db.pool(), PIT_BADGE, "Demo pit boss", &secret)
        .await
        .map_err(|e| DemoError::Floor(e.to_string()))?;
    db.pool().close().await;
    Ok(secret)
}

/// `DROP DATABASE name` on the server of `admin` (its sessions ended first).
pub(super) async fn drop_database(admin: &str, name: &str) -> Result<(), sqlx::Error> {
    let mut conn = PgConnection::connect(admin).await?;
    sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .execute(&mut conn)
        .await?;
    conn.close().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_gets_its_own_database_on_the_same_server() {
        assert_eq!(
            with_database("postgres://postgres@127.0.0.1:5432/postgres", "d"),
            "postgres://postgres@127.0.0.1:5432/d"
        );
        assert_eq!(
            with_database("postgres://u:p@h/x?sslmode=disable", "d"),
            "postgres://u:p@h/d?sslmode=disable"
        );
        assert_eq!(with_database("postgres://h:1", "d"), "postgres://h:1/d");
    }
}
