//! What this machine charges a process for a row's durable commit and its acknowledged
//! publication, with nothing else in the process (`cargo bench --bench row_floor`; the relay
//! bench prints it beside the table's own figure).
#![allow(dead_code)] // the relay bench uses one mode

use super::viewers::{proc_cpu_ns, proc_voluntary_switches};
use std::time::Duration;

/// A row's payload of `size` bytes.
pub fn payload(size: usize) -> String {
    format!("{{\"card\":\"{}\"}}", "x".repeat(size.saturating_sub(12)))
}

/// A two-worker tokio runtime, like the table's on a two-core machine.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// What each mode does per row.
#[derive(Clone, Copy, Debug)]
pub enum Mode {
    /// Nothing but waking for the row: the runtime's own cost of a row's pace.
    Wake,
    /// The commit without its `fdatasync` (`synchronous = NORMAL`): not durable, shown
    /// only to tell SQLite's share from the disk's.
    CommitUnsynced,
    /// The durable commit alone.
    Commit,
    /// The publication alone.
    Publish,
    /// The commit, then the publication of the committed row (the table's order).
    Both,
}

/// A connection set up as the table's direct writer sets up its own (`store/direct.rs`).
fn writer(path: &std::path::Path, synced: bool) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(path).expect("open");
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
        .expect("wal");
    assert_eq!(mode, "wal");
    conn.pragma_update(None, "synchronous", if synced { "FULL" } else { "NORMAL" })
        .expect("sync");
    conn.pragma_update(None, "wal_autocheckpoint", 0)
        .expect("autocheckpoint");
    conn.execute_batch(
        "CREATE TABLE events (
            table_id TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL,
            payload TEXT NOT NULL, at_ms INTEGER NOT NULL, hash BLOB NOT NULL,
            PRIMARY KEY (table_id, seq)) WITHOUT ROWID;",
    )
    .expect("schema");
    conn
}

/// `rows` rows of `mode`, one every `pace` (0: back to back), against the broker at
/// `nats_url`: this process's CPU per row in milliseconds and its voluntary context switches
/// per row, all threads counted (the runtime's, SQLite runs on the caller's).
pub async fn cost(
    mode: Mode,
    rows: u64,
    pace: Duration,
    payload: &str,
    nats_url: &str,
) -> (f64, f64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let conn = writer(
        &dir.path().join("floor.db"),
        !matches!(mode, Mode::CommitUnsynced),
    );
    let client = async_nats::connect(nats_url).await.expect("connect");
    let js = async_nats::jetstream::new(client);
    let name = format!("FLOOR_{mode:?}").to_uppercase();
    js.get_or_create_stream(async_nats::jetstream::stream::Config {
        name: name.clone(),
        subjects: vec![format!("{name}.>")],
        ..Default::default()
    })
    .await
    .expect("stream");
    let subject = format!("{name}.rows");
    let mut insert = conn
        .prepare_cached("INSERT INTO events VALUES ('t', ?1, 'card', ?2, ?3, ?4)")
        .expect("statement");
    let hash = [7u8; 32];
    let committing = matches!(mode, Mode::CommitUnsynced | Mode::Commit | Mode::Both);
    if committing {
        // The table's WAL is in its steady state: the checkpointer copies it back every ten
        // seconds and the next commit starts it again from its beginning, so a row
        // overwrites blocks the file already has instead of growing it (an `fdatasync`
        // that also commits the file's new size to the file system's journal). Here too:
        // as many rows written first, then the WAL restarted.
        for seq in 1..=rows {
            insert
                .execute(rusqlite::params![
                    seq as i64,
                    payload,
                    seq as i64,
                    &hash[..]
                ])
                .expect("warm-up insert");
        }
        conn.query_row("PRAGMA wal_checkpoint(RESTART)", [], |_| Ok(()))
            .expect("checkpoint");
    }
    let pid = std::process::id();
    // Settled first: the runtime's threads started, the connection's pages cached.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let cpu0 = proc_cpu_ns(pid);
    let sw0 = proc_voluntary_switches(pid);
    // Paced as the demo dealer paces the table: one timerfd wake-up a row (a tokio timer
    // this far away wakes the runtime twice, and the floor would count one wake too many).
    let alarm = croupier::clock::Alarm::new();
    assert!(alarm.on_timerfd(), "a timerfd for the pace");
    let mut next = tokio::time::Instant::now();
    for seq in 1..=rows {
        if !pace.is_zero() {
            next += pace;
            alarm
                .sleep(next.saturating_duration_since(tokio::time::Instant::now()))
                .await;
        }
        if committing {
            let key = (rows + seq) as i64;
            insert
                .execute(rusqlite::params![key, payload, key, &hash[..]])
                .expect("insert");
        }
        if matches!(mode, Mode::Publish | Mode::Both) {
            let mut headers = async_nats::HeaderMap::new();
            headers.insert("Nats-Msg-Id", seq.to_string().as_str());
            js.publish_with_headers(subject.clone(), headers, payload.to_owned().into())
                .await
                .expect("publish")
                .await
                .expect("acknowledged");
        }
    }
    let cpu = proc_cpu_ns(pid).since(&cpu0) as f64 / 1e6 / rows as f64;
    let sleeps = proc_voluntary_switches(pid).since(&sw0) as f64 / rows as f64;
    (cpu, sleeps)
}
