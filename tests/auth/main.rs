//! Accounts, roles and the audit log against the real service (issue #6): the role ×
//! endpoint matrix over every route, lockout, sessions (logout, expiry, idle, CSRF), TLS,
//! configuration changes in the audit log, and tamper detection by `croupier audit verify`.

#[path = "../common/mod.rs"]
mod common;
#[path = "../support/running.rs"]
#[allow(dead_code)]
mod running;

use common::{croupier, text};
use croupier::auth::Role;
use croupier::web::auth::Access;
use croupier::web::client::request_with;
use croupier_drivers::sim::{SimConfig, SimShoe};
use serde_json::Value;
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::timeout;

mod audit;
mod lockout;
mod openapi;
mod routes;
mod sessions;

const STEP: Duration = Duration::from_secs(20);

async fn call(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&str>,
    cookie: &str,
) -> (u16, Value) {
    let headers: Vec<(&str, &str)> = if cookie.is_empty() {
        vec![]
    } else {
        vec![("Cookie", cookie)]
    };
    let reply = request_with(&addr.to_string(), method, path, body, &headers, STEP)
        .await
        .expect("request");
    (
        reply.status,
        serde_json::from_str(&reply.body).unwrap_or(Value::String(reply.body)),
    )
}

fn code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("")
}

#[path = "../common/proc.rs"]
mod common_proc;

async fn audit_rows(db: &Path) -> Vec<croupier::store::audit::AuditRow> {
    let pool = croupier::auth::open_pool(db).await.expect("pool");
    let mut conn = pool.acquire().await.expect("conn");
    let rows = croupier::store::audit::rows_since(&mut conn, 0)
        .await
        .expect("rows");
    drop(conn);
    pool.close().await;
    rows
}
