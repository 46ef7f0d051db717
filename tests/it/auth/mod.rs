//! Accounts, roles and the audit log against the real service (issue #6): the role ×
//! endpoint matrix over every route, lockout, sessions (logout, expiry, idle, CSRF), TLS,
//! configuration changes in the audit log, and tamper detection by `croupier audit verify`.

use crate::common;
use crate::running;

use common::{croupier, text};
use croupier::auth::Role;
use croupier::web::auth::Access;
use croupier::web::client::request_with;
use croupier_drivers::sim::{SimConfig, SimShoe};
use running::{audit_rows, code};
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

/// A request with the session `cookie` ("" for none): the status and the answer.
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
    running::call(addr, method, path, body, &headers).await
}

use crate::proc as common_proc;
