//! systemd readiness and watchdog of the relay and the floor, through the real binary and a
//! fake notification socket, as their units (`systemd/croupier-relay.service`,
//! `croupier-floor.service`: `Type=notify`, `WatchdogSec=`) expect: `READY=1` once the relay
//! listens, or once the floor has its database and its broker; then `WATCHDOG=1` at the
//! interval systemd asks for; `STOPPING=1` on SIGTERM. A relay whose broker dies stays
//! alive (it reconnects by itself), so it keeps pinging; a floor that cannot reach its
//! database does not say READY.
//!
//! Needs `nats-server` (and PostgreSQL for the floor): skipped locally without them, fails
//! under CI (`.ci/run` installs both).

use crate::nats;
use crate::notify;
use crate::proc;
use crate::roles;

use notify::{collect_async, pings};
use std::os::unix::net::UnixDatagram;
use std::process::Command;
use std::time::Duration;

/// `croupier ARGS` as systemd starts a `Type=notify` unit with `WatchdogSec=` twice
/// `every_ms`: its notifications go to `sock`.
fn under_systemd(
    args: &[&str],
    log: &std::path::Path,
    sock: &std::path::Path,
    every_ms: u64,
) -> Command {
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
    let mut command = proc::command_args(&args, log);
    command
        .env("NOTIFY_SOCKET", sock)
        .env("WATCHDOG_USEC", (every_ms * 2 * 1000).to_string());
    command
}

/// The first message is READY (with `status`), and pings follow it.
fn ready_first(messages: &[String], status: &str) {
    let first = messages.first().map(String::as_str).unwrap_or("");
    assert!(
        first.starts_with("READY=1\n") && first.contains(status),
        "READY with {status:?} first: {messages:?}"
    );
    assert_eq!(
        messages.iter().filter(|m| m.starts_with("READY=1")).count(),
        1,
        "READY once: {messages:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_relay_is_ready_once_listening_and_pings_with_or_without_its_broker() {
    let Some(bin) = nats::nats_server() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tmp");
    let mut broker = nats::Nats::start(&bin, dir.path());
    let keys = dir.path().join("table-keys.toml");
    std::fs::write(
        &keys,
        croupier::trust::pinned::PinnedKeys::default().to_text(),
    )
    .expect("keys file");
    let sock_path = dir.path().join("notify.sock");
    let manager = UnixDatagram::bind(&sock_path).expect("bind notify socket");
    let url = broker.url();
    let keys = keys.display().to_string();
    let args = roles::relay(&url, &keys);
    let child = under_systemd(&args, &dir.path().join("relay.log"), &sock_path, 100)
        .spawn()
        .expect("spawn the relay");
    let relay = proc::announced(child).await;

    let healthy = collect_async(&manager, Duration::from_millis(1000)).await;
    ready_first(&healthy, &format!("relay serving http://{}/", relay.addr));
    assert!(pings(&healthy) >= 4, "pings every 100 ms: {healthy:?}");

    // No broker: the relay is alive (it serves /readyz 503 and reconnects by itself), so
    // systemd must not restart it.
    broker.kill();
    let alone = collect_async(&manager, Duration::from_millis(1000)).await;
    assert!(pings(&alone) >= 4, "pings without the broker: {alone:?}");

    assert!(relay.terminate(), "exits 0 on SIGTERM");
    let last = collect_async(&manager, Duration::from_millis(300)).await;
    assert!(last.iter().any(|m| m == "STOPPING=1"), "{last:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_floor_is_ready_with_its_database_and_broker_and_pings() {
    let Some(roles::Needs { dir, broker, db }) = roles::needs().await else {
        return;
    };
    let url = broker.url();
    let sock_path = dir.path().join("notify.sock");
    let manager = UnixDatagram::bind(&sock_path).expect("bind notify socket");
    let log = dir.path().join("floor.log");
    // No table: the keys file pins none.
    let keys = dir.path().join("table-keys.toml");
    std::fs::write(
        &keys,
        croupier::trust::pinned::PinnedKeys::default().to_text(),
    )
    .expect("keys file");
    let keys = keys.display().to_string();

    // A database that does not answer: no READY (the driver keeps trying for its acquire
    // timeout, then the floor exits for systemd to restart it).
    let nowhere = "postgres://postgres@127.0.0.1:1/nowhere";
    let args = [
        "floor",
        "--nats",
        &url,
        "--database",
        nowhere,
        "--table-keys",
        &keys,
    ];
    let mut refused = under_systemd(&args, &log, &sock_path, 100)
        .spawn()
        .expect("spawn the floor");
    let quiet = collect_async(&manager, Duration::from_millis(1500)).await;
    assert!(
        quiet.is_empty(),
        "said something without a database: {quiet:?}"
    );
    let _ = refused.kill();
    let _ = refused.wait();

    let args = roles::floor(&url, &db.url, &keys);
    let child = under_systemd(&args, &log, &sock_path, 100)
        .spawn()
        .expect("spawn the floor");
    let floor = proc::announced(child).await;
    let healthy = collect_async(&manager, Duration::from_millis(1500)).await;
    ready_first(&healthy, "floor ingesting");
    assert!(pings(&healthy) >= 5, "pings every 100 ms: {healthy:?}");

    assert!(floor.terminate(), "exits 0 on SIGTERM");
    let last = collect_async(&manager, Duration::from_millis(300)).await;
    assert!(last.iter().any(|m| m == "STOPPING=1"), "{last:?}");
}
