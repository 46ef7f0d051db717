//! systemd readiness and watchdog through the real binary: `READY=1` after start-up, then
//! `WATCHDOG=1` from the table loop — and no pings while that loop is stuck (here: a write
//! blocked behind another connection's exclusive lock on the database), so systemd would
//! restart a hung table. `STOPPING=1` on SIGTERM.

use crate::common;
use crate::notify;
use crate::proc;

use croupier_drivers::sim::pty::Pty;
use notify::{collect_async, pings};
use proc::announced;
use sqlx::{Connection, Executor};
use std::os::unix::net::UnixDatagram;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_after_start_and_a_stalled_loop_stops_the_pings() {
    let dir = tempfile::tempdir().expect("tmp");
    let pty = Pty::open().expect("pty");
    let cfg = common::config_file(dir.path(), pty.path(), "deluxe");
    let sock_path = dir.path().join("notify.sock");
    let manager = UnixDatagram::bind(&sock_path).expect("bind notify socket");
    let log = std::fs::File::create(dir.path().join("croupier.log")).expect("log");
    let child = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(["run", "--config"])
        .arg(&cfg)
        // As systemd sets them for Type=notify with WatchdogSec=200ms.
        .env("NOTIFY_SOCKET", &sock_path)
        .env("WATCHDOG_USEC", "200000")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log))
        .spawn()
        .expect("spawn croupier");
    let mut proc = announced(child).await;
    // The local token: authenticating with it needs no database read (the test below
    // holds the database's write lock).
    proc.use_local_token(&dir.path().join("croupier.db"));

    // READY once start-up is done, then a ping about every 100 ms.
    let healthy = collect_async(&manager, Duration::from_millis(800)).await;
    assert!(
        healthy
            .iter()
            .any(|m| m.starts_with("READY=1\nSTATUS=table t1")),
        "{healthy:?}"
    );
    assert!(pings(&healthy) >= 3, "pings while healthy: {healthy:?}");

    // Stall the table loop: hold the database's write lock, then send an input it must write.
    let db = dir.path().join("croupier.db");
    let mut blocker = sqlx::SqliteConnection::connect(&format!("sqlite://{}", db.display()))
        .await
        .expect("open db");
    blocker.execute("BEGIN EXCLUSIVE").await.expect("lock");
    let post = common::spawn_a_bet(proc.addr.clone(), proc.headers.clone());
    // The pings stop once the loop is stuck in the write: wait for a 500 ms silence (the
    // request may take a moment to reach the table under load), then require a further
    // second of silence. All within SQLite's 5 s busy timeout.
    let silence = tokio::task::spawn_blocking({
        let m = manager.try_clone().expect("clone");
        move || {
            let end = Instant::now() + Duration::from_secs(2);
            let mut buf = [0u8; 64];
            while Instant::now() < end {
                m.set_read_timeout(Some(Duration::from_millis(500)))
                    .expect("timeout");
                if m.recv(&mut buf).is_err() {
                    return true;
                }
            }
            false
        }
    })
    .await
    .expect("watcher");
    assert!(
        silence,
        "the pings never stopped while the table's write was blocked"
    );
    let stalled = collect_async(&manager, Duration::from_millis(1000)).await;
    assert_eq!(
        pings(&stalled),
        0,
        "the loop was stuck but pinged: {stalled:?}"
    );

    // Release: the write completes, the input is answered, the pings resume.
    blocker.execute("ROLLBACK").await.expect("unlock");
    let (status, reply) = post.await.expect("join").expect("answered");
    assert_eq!(status, 200, "{reply}");
    let after = collect_async(&manager, Duration::from_millis(800)).await;
    assert!(pings(&after) >= 3, "pings after the stall: {after:?}");

    assert!(proc.terminate(), "exits 0 on SIGTERM");
    let last = collect_async(&manager, Duration::from_millis(300)).await;
    assert!(last.iter().any(|m| m == "STOPPING=1"), "{last:?}");
}
