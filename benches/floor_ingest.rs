//! Rows per second the casino floor ingests into PostgreSQL, sustained: a real
//! `nats-server` (own port and store) holding T tables' log streams of R chained rows each
//! (card rows as a table publishes them, `{"table","seq","at_ms","kind","hash","record"}`),
//! then the floor (`croupier::floor::run`, in this process, 8 connections) started on a
//! fresh PostgreSQL database: the rate from its first committed batch to the last row
//! committed (every row's hash checked, committed, then acknowledged).
//!
//!     cargo bench --bench floor_ingest -- [--tables 20] [--rows 5000]
//!
//! Needs `nats-server` (Debian's package) and PostgreSQL at 127.0.0.1:5432 (user postgres,
//! trust; `CROUPIER_TEST_PG` overrides).

#[path = "support/args.rs"]
mod args;
#[path = "../tests/support/nats.rs"]
mod nats;
#[path = "../tests/support/pg.rs"]
mod pg;
#[path = "../tests/support/skip.rs"]
mod skip;

use args::Args;
use croupier::engine::Input;
use croupier::floor::{FloorConfig, IngestStats};
use croupier::store::{chain_hash, Record, Source};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

const CARDS: [&str; 8] = ["AS", "7H", "KD", "2C", "TS", "9H", "5D", "QC"];

#[tokio::main]
async fn main() {
    let args = Args::from_env();
    let tables: u64 = args.number("--tables", 20);
    let rows: u64 = args.number("--rows", 5000);
    let Some(bin) = nats::nats_server() else {
        return;
    };
    let Some(db) = pg::fresh().await else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let broker = nats::Nats::start(&bin, dir.path());
    let client = async_nats::connect(broker.url()).await.expect("connect");
    let js = async_nats::jetstream::new(client);

    let started = Instant::now();
    let mut bytes = 0usize;
    // Every table's rows signed with a key of its own, pinned for the floor as a studio
    // pins its tables' keys.
    let table_keys = |t: u64| {
        let mut secret = [9u8; 32];
        secret[..8].copy_from_slice(&t.to_le_bytes());
        croupier::trust::TableKeys::from_secrets(secret, [0; 32])
    };
    let mut pinned = croupier::trust::pinned::PinnedKeys::default();
    for t in 0..tables {
        let key = croupier::trust::attest::verifying_key(&table_keys(t).public_hex()).expect("key");
        pinned.insert(&format!("bench-{t}"), key);
    }
    let keys_path = dir.path().join("table-keys.toml");
    std::fs::write(&keys_path, pinned.to_text()).expect("keys file");
    for t in 0..tables {
        let keys = table_keys(t);
        let table = format!("bench-{t}");
        // The table's own log stream, as its publisher makes it.
        js.get_or_create_stream(croupier::broker::streams::StreamNames::default().log(&table))
            .await
            .expect("stream");
        let mut prev = [0u8; 32];
        let mut acks = Vec::new();
        for seq in 1..=rows {
            let card = CARDS[(seq % 8) as usize].parse().expect("card");
            let payload = serde_json::to_string(&Record::Input {
                source: Source::Shoe,
                input: Input::Card(card),
            })
            .expect("json");
            let at_ms = 1_700_000_000_000 + seq as i64;
            let hash = chain_hash(&prev, seq, at_ms, "input", &payload);
            prev = hash;
            let body = format!(
                r#"{{"table":"{table}","seq":{seq},"at_ms":{at_ms},"kind":"input","hash":"{}","record":{payload}}}"#,
                hex::encode(hash)
            );
            bytes += body.len();
            let sig = croupier::trust::wire::sign(
                &keys,
                croupier::trust::wire::LOG,
                &table,
                body.as_bytes(),
            );
            let mut headers = async_nats::HeaderMap::new();
            headers.insert(croupier::broker::subjects::HEADER_SIG, sig.as_str());
            acks.push(
                js.publish_with_headers(format!("croupier.{table}.log"), headers, body.into())
                    .await
                    .expect("publish"),
            );
            if acks.len() >= 1000 {
                for a in acks.drain(..) {
                    a.await.expect("ack");
                }
            }
        }
        for a in acks.drain(..) {
            a.await.expect("ack");
        }
    }
    let total = tables * rows;
    println!(
        "published {total} rows ({tables} tables × {rows}, {} bytes per message on average) in {:.1} s",
        bytes as u64 / total.max(1),
        started.elapsed().as_secs_f64()
    );

    let stats = Arc::new(IngestStats::default());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let config = FloorConfig::new(&broker.url(), &db.url, &keys_path);
    let floor = tokio::spawn(croupier::floor::run(
        config,
        Arc::clone(&stats),
        async move {
            let _ = stopped.await;
        },
        |_| {},
    ));
    // Sustained: from the first committed batch (start-up, migrations and the first
    // stream listing excluded) to the last row.
    let boot = Instant::now();
    while stats.rows.load(Ordering::Relaxed) == 0 {
        assert!(boot.elapsed() < Duration::from_secs(60), "the floor starts");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let first = stats.rows.load(Ordering::Relaxed);
    println!(
        "first batch committed {:.2} s after start",
        boot.elapsed().as_secs_f64()
    );
    let t0 = Instant::now();
    let mut last = (Instant::now(), 0u64);
    loop {
        let n = stats.rows.load(Ordering::Relaxed);
        if n >= total {
            break;
        }
        if last.0.elapsed() >= Duration::from_secs(2) {
            println!("  {n} rows after {:.1} s", t0.elapsed().as_secs_f64());
            last = (Instant::now(), n);
        }
        assert!(t0.elapsed() < Duration::from_secs(600), "ingest finishes");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let secs = t0.elapsed().as_secs_f64();
    let _ = stop.send(());
    let _ = floor.await;
    let pool = db.pool().await;
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM floor_events WHERE verified = 'ok'")
        .fetch_one(&pool)
        .await
        .expect("count");
    assert_eq!(stored as u64, total, "every row stored once, verified");
    println!(
        "floor ingest: {} rows in {secs:.2} s after the first batch = {:.0} rows/s into PostgreSQL (hash-checked, committed, acknowledged)",
        total - first,
        (total - first) as f64 / secs
    );
}
