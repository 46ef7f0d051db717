//! The table service started in-process for a test, and stopped cleanly.

use croupier::app::{self, ServiceError, Started};
use croupier::table::{TableConfig, TableHandle, TableState};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::timeout;

/// A running service.
pub struct Running {
    /// The table.
    pub handle: TableHandle,
    /// Its HTTP address.
    pub addr: SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), ServiceError>>,
}

/// Starts the service and waits until the shoe is connected.
pub async fn start(config: TableConfig) -> Running {
    start_with_clock(config, croupier::auth::time::SystemClock::shared()).await
}

/// [`start`] with sessions and lockouts timed by `clock`.
pub async fn start_with_clock(
    config: TableConfig,
    clock: std::sync::Arc<dyn croupier::auth::time::Clock>,
) -> Running {
    let (tx, rx) = oneshot::channel::<Started>();
    let (stop, stop_rx) = oneshot::channel::<()>();
    let task = tokio::spawn(app::run_with_clock(
        config,
        clock,
        async move {
            let _ = stop_rx.await;
        },
        move |s| {
            let _ = tx.send(s);
        },
    ));
    let s = timeout(Duration::from_secs(20), rx)
        .await
        .expect("service starts in time")
        .expect("service starts");
    if s.handle.snapshot().state != TableState::Broken {
        let mut watch = s.handle.watch();
        timeout(
            Duration::from_secs(10),
            watch.wait_for(|s| s.shoe.link == "connected"),
        )
        .await
        .expect("the shoe connects")
        .expect("table running");
    }
    Running {
        handle: s.handle,
        addr: s.addr,
        stop,
        task,
    }
}

impl Running {
    /// Stops the service; it must stop cleanly within 15 s.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        timeout(Duration::from_secs(15), self.task)
            .await
            .expect("stops in time")
            .expect("no panic")
            .expect("clean stop");
    }
}

/// What a test table keeps beside its service ([`served`]): its directory and its shoe
/// (the service loses the shoe when this is dropped).
#[allow(dead_code)] // the tests that start their own service
pub struct Fixture {
    /// The table's directory.
    pub dir: tempfile::TempDir,
    /// The simulated shoe on a PTY.
    pub sim: croupier_drivers::sim::SimShoe,
}

#[allow(dead_code)]
impl Fixture {
    /// The table's database.
    pub fn db(&self) -> std::path::PathBuf {
        self.dir.path().join("croupier.db")
    }
}

/// A service on `variant` with the test configuration (`common::config`) on a fresh
/// directory, its cards from a simulated shoe, the test users ([`USERS`]) in its database:
/// where a test of the HTTP edge starts.
#[allow(dead_code)]
pub async fn served(variant: &str) -> (Running, Fixture) {
    served_with(variant, |_| {}).await
}

/// [`served`] with `edit` applied to the configuration first.
#[allow(dead_code)]
pub async fn served_with(variant: &str, edit: impl FnOnce(&mut TableConfig)) -> (Running, Fixture) {
    served_on(variant, edit, croupier::auth::time::SystemClock::shared()).await
}

/// [`served_with`] with sessions and lockouts timed by `clock`.
#[allow(dead_code)]
pub async fn served_on(
    variant: &str,
    edit: impl FnOnce(&mut TableConfig),
    clock: std::sync::Arc<dyn croupier::auth::time::Clock>,
) -> (Running, Fixture) {
    let dir = tempfile::tempdir().expect("tempdir");
    let sim = croupier_drivers::sim::SimShoe::start(croupier_drivers::sim::SimConfig::default())
        .expect("pty shoe");
    let mut config = crate::common::config(dir.path(), &sim.path(), variant);
    edit(&mut config);
    add_users(&config.store.path).await;
    let run = start_with_clock(config, clock).await;
    (run, Fixture { dir, sim })
}

/// The test accounts [`add_users`] creates: (badge, role, secret).
pub const USERS: [(&str, croupier::auth::Role, &str); 3] = [
    ("d1", croupier::auth::Role::Dealer, "1111"),
    ("s1", croupier::auth::Role::Supervisor, "2222"),
    ("a1", croupier::auth::Role::Admin, "admin-password"),
];

/// Creates [`USERS`] in the database at `db` through the library (as `croupier user add`
/// does), before or while the service runs.
pub async fn add_users(db: &std::path::Path) {
    let pool = croupier::auth::open_pool(db).await.expect("accounts pool");
    for (badge, role, secret) in USERS {
        croupier::auth::accounts::add(&pool, "test", badge, badge, role, secret)
            .await
            .expect("add user");
    }
    pool.close().await;
}

/// The secret of the test user with `role`.
pub fn user(role: croupier::auth::Role) -> (&'static str, &'static str) {
    let (badge, _, secret) = USERS
        .iter()
        .find(|(_, r, _)| *r == role)
        .expect("a test user per role");
    (badge, secret)
}

/// Logs in over HTTP; returns the `Cookie` header value.
pub async fn login(addr: SocketAddr, badge: &str, secret: &str) -> String {
    let body = serde_json::json!({"badge": badge, "secret": secret}).to_string();
    let reply = croupier::web::client::request_with(
        &addr.to_string(),
        "POST",
        "/api/login",
        Some(&body),
        &[],
        Duration::from_secs(20),
    )
    .await
    .expect("login request");
    assert_eq!(reply.status, 200, "login {badge}: {}", reply.body);
    reply.session_cookie().expect("a session cookie")
}

/// Logs in as the test user with `role`.
pub async fn login_as(addr: SocketAddr, role: croupier::auth::Role) -> String {
    let (badge, secret) = user(role);
    login(addr, badge, secret).await
}

/// JavaScript that logs the page in as the test user with `role` (the session cookie is
/// set for the page's origin) and answers the HTTP status; the login screen has its own
/// tests, so layout tests and benchmarks start logged in.
#[allow(dead_code)]
pub fn page_login_script(role: croupier::auth::Role) -> String {
    let (badge, secret) = user(role);
    format!(
        "fetch('/api/login', {{method: 'POST', headers: {{'content-type': 'application/json'}}, \
         body: JSON.stringify({{badge: '{badge}', secret: '{secret}'}})}}).then(r => r.status)"
    )
}

/// A request to the service at `addr` with `headers`: the status and the answer as JSON
/// (as a JSON string when it is not JSON).
#[allow(dead_code)]
pub async fn call(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&str>,
    headers: &[(&str, &str)],
) -> (u16, serde_json::Value) {
    let reply = croupier::web::client::request_with(
        &addr.to_string(),
        method,
        path,
        body,
        headers,
        Duration::from_secs(20),
    )
    .await
    .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
    (
        reply.status,
        serde_json::from_str(&reply.body).unwrap_or(serde_json::Value::String(reply.body)),
    )
}

/// An error answer's code ("" for none).
#[allow(dead_code)]
pub fn code(v: &serde_json::Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("")
}

/// The audit log's rows in the database at `db`.
#[allow(dead_code)]
pub async fn audit_rows(db: &std::path::Path) -> Vec<croupier::store::audit::AuditRow> {
    let pool = croupier::auth::open_pool(db).await.expect("pool");
    let mut conn = pool.acquire().await.expect("conn");
    let rows = croupier::store::audit::rows_since(&mut conn, 0)
        .await
        .expect("rows");
    drop(conn);
    pool.close().await;
    rows
}
