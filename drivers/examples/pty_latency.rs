//! Latency from the last byte of a frame written on the PTY master to the event delivered
//! by `SerialShoe`, per dialect; prints p50/p99/max.
//!
//! `cargo run --release -p croupier-drivers --example pty_latency [-- SAMPLES]`

use std::sync::Arc;
use std::time::{Duration, Instant};

use croupier_drivers::card::Card;
use croupier_drivers::proto::ascii::AsciiSuitRank;
use croupier_drivers::proto::barcode::Barcode4;
use croupier_drivers::proto::line::LineFormat;
use croupier_drivers::proto::v1::{Body, Frame};
use croupier_drivers::shoe::config::{Dialect, ShoeConfig};
use croupier_drivers::shoe::{SerialShoe, Shoe};
use croupier_drivers::sim::pty::Pty;
use croupier_drivers::{ShoeEvent, ShoeItem};

fn wire(dialect: Dialect, i: usize) -> Vec<u8> {
    let card = Card::from_index(i % 52).expect("index below 52");
    match dialect {
        Dialect::CroupierV1 => Frame::new((i % 255) as u8 + 1, Body::Card(card)).to_wire(),
        Dialect::AsciiSuitRank => AsciiSuitRank::default()
            .encode(ShoeItem::Card(card))
            .expect("cards encode"),
        Dialect::Barcode4 => Barcode4.encode(ShoeItem::Card(card)).expect("cards encode"),
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

async fn measure(dialect: Dialect, samples: usize) -> Vec<Duration> {
    let pty = Arc::new(Pty::open().expect("openpty"));
    let mut shoe = SerialShoe::spawn(ShoeConfig {
        port: pty.path().to_path_buf(),
        dialect,
        ..ShoeConfig::default()
    })
    .expect("valid config");
    assert!(matches!(
        shoe.next_event().await,
        Some(ShoeEvent::Connected { .. })
    ));
    // Drain the host's ACKs so the PTY buffer never fills.
    let drain = Arc::clone(&pty);
    let drainer = tokio::spawn(async move {
        let mut buf = [0u8; 256];
        while drain.read(&mut buf).await.is_ok_and(|n| n > 0) {}
    });
    let mut latencies = Vec::with_capacity(samples);
    for i in 0..samples {
        let bytes = wire(dialect, i);
        pty.write_all(&bytes).await.expect("write");
        let written = Instant::now();
        loop {
            match shoe.next_event().await.expect("driver running") {
                ShoeEvent::Card(_) => break,
                ShoeEvent::Fault(f) => panic!("fault: {f}"),
                _ => {}
            }
        }
        latencies.push(written.elapsed());
    }
    drainer.abort();
    latencies.sort();
    latencies
}

#[tokio::main]
async fn main() {
    let samples = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000);
    println!("{samples} cards per dialect, last byte written -> event delivered");
    for dialect in [
        Dialect::CroupierV1,
        Dialect::AsciiSuitRank,
        Dialect::Barcode4,
    ] {
        let l = measure(dialect, samples).await;
        println!(
            "{:<16} p50 {:>6.1} µs   p99 {:>6.1} µs   max {:>7.1} µs",
            dialect.name(),
            percentile(&l, 0.50).as_secs_f64() * 1e6,
            percentile(&l, 0.99).as_secs_f64() * 1e6,
            percentile(&l, 1.0).as_secs_f64() * 1e6,
        );
    }
}
