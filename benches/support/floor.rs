//! What this machine charges a process for a row's durable commit and its acknowledged
//! publication, with nothing else in the process (`cargo bench --bench row_floor`; the relay
//! bench prints it beside the table's own figure).
#![allow(dead_code)] // the relay bench uses one mode

use super::viewers::{proc_cpu_ns, proc_voluntary_switches};
use std::time::Duration;

/// A published row's payload of `size` bytes.
pub fn payload(size: usize) -> String {
    format!("{{\"card\":\"{}\"}}", "x".repeat(size.saturating_sub(12)))
}

/// What each mode does per row.
#[derive(Clone, Copy, Debug)]
pub enum Mode {
    /// Nothing but waking for the row: the runtime's own cost of a row's pace.
    Wake,
    /// The durable commit alone.
    Commit,
    /// The publication alone.
    Publish,
    /// The commit, then the publication of the committed row (the table's order).
    Both,
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
    // The table's own writer (`Store::append`: in place on this thread, `synchronous =
    // FULL`, its checkpointer every ten seconds) and its own log stream and subject.
    let mut store =
        croupier::store::Store::open(&dir.path().join("floor.db"), "floor", "floor", "ultimate")
            .await
            .expect("store")
            .store;
    let table = format!("floor-{mode:?}").to_lowercase();
    let client = async_nats::connect(nats_url).await.expect("connect");
    let js = async_nats::jetstream::new(client);
    js.get_or_create_stream(croupier::broker::streams::StreamNames::default().log(&table))
        .await
        .expect("stream");
    let subject = croupier::broker::subjects::log(&table);
    let record = croupier::store::Record::Input {
        source: croupier::store::Source::Shoe,
        input: croupier::engine::Input::Card("QH".parse().expect("card")),
    };
    let committing = matches!(mode, Mode::Commit | Mode::Both);
    if committing {
        // The WAL in its steady state, as a table's after its first checkpoint: a row
        // overwrites blocks the file has rather than growing it (an `fdatasync` that would
        // also commit the file's new size to the file system's journal).
        for _ in 0..rows {
            store.append(&record, &[], 1).await.expect("warm-up append");
        }
        // On a connection of its own, as the table's checkpointer does.
        rusqlite::Connection::open(store.path())
            .and_then(|c| c.query_row("PRAGMA wal_checkpoint(RESTART)", [], |_| Ok(())))
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
            store.append(&record, &[], 1).await.expect("append");
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
