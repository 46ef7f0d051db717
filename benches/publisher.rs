//! The table's publisher away from its steady state (issue #59), on a real `nats-server` and
//! the real `croupier run` (the built-in Deluxe demo table, dealing at `--pace-ms`, no
//! dispute window):
//!
//! 1. **Catching up.** The broker is killed for `--outage-s` while the table deals on, then
//!    started again on its store: the time from its return until the publisher has every
//!    committed row acknowledged (`/readyz` `publish.lag` 0), and the rows and messages a
//!    second it published meanwhile.
//! 2. **Resuming past a flood.** An anonymous client puts `--foreign` messages on the
//!    table's log and public subjects (the broker is open); the table is stopped and
//!    started again: the time from its announcement until it has acknowledged a row it
//!    committed after the restart, the foreign messages read on the way.
//!
//!     cargo bench --bench publisher -- [--outage-s 30] [--foreign 10000] [--pace-ms 25]
//!
//! Everything shares the machine's cores. Needs `nats-server` (Debian's package).

#[path = "support/announce.rs"]
mod announce;
#[path = "support/args.rs"]
mod args;
#[path = "../tests/support/nats.rs"]
mod nats;
#[path = "../tests/support/prom.rs"]
mod prom;
#[path = "support/scrape.rs"]
mod scrape;
#[path = "../tests/support/skip.rs"]
mod skip;

use args::Args;
use serde_json::Value;
use std::process::Child;
use std::time::{Duration, Instant};

/// The table's `/readyz`.
async fn readyz(addr: &str) -> Value {
    let r = croupier::web::client::request_with(
        addr,
        "GET",
        "/readyz",
        None,
        &[],
        Duration::from_secs(10),
    )
    .await
    .expect("/readyz");
    serde_json::from_str(&r.body).expect("json")
}

/// A metric's value in the table's scrape.
async fn metric(addr: &str, name: &str) -> f64 {
    let metrics = scrape::scrape(addr).await.unwrap_or_else(|e| panic!("{e}"));
    scrape::value(&metrics, name)
}

fn stop(mut child: Child) {
    let _ = sigterm(&child);
    let _ = child.wait();
}

/// SIGTERM, so the table stops as in production.
fn sigterm(child: &Child) -> std::io::Result<()> {
    let status = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()?;
    if status.success() {
        Ok(())
    } else {
        Err(std::io::Error::other("kill failed"))
    }
}

#[tokio::main]
async fn main() {
    let args = Args::from_env();
    if args.listing() {
        return;
    }
    let outage: u64 = args.number("--outage-s", 30);
    let foreign: usize = args.number("--foreign", 10_000);
    let pace_ms: u64 = args.number("--pace-ms", 25);
    let Some(bin) = nats::nats_server() else {
        eprintln!("nats-server is missing: nothing measured");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let mut broker = nats::Nats::start(&bin, dir.path());
    let pace = format!("pace_ms = {pace_ms}");
    // No dispute window: rounds follow one another at the demo's pace.
    let cfg = announce::config_in(
        dir.path(),
        &[
            ("pace_ms = 400", pace.as_str()),
            ("window_seconds = 5", "window_seconds = 0"),
        ],
        &format!("\n[publish]\nnats_url = \"{}\"\n", broker.url()),
    );
    let run = ["run".as_ref(), "--config".as_ref(), cfg.as_os_str()];
    let (table, addr) = announce::start(&run);
    // Publishing, and some history on the broker.
    let started = Instant::now();
    while readyz(&addr).await["publish"]["acked"]
        .as_u64()
        .unwrap_or(0)
        < 50
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the table publishes"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // 1. Catching up after an outage.
    broker.kill();
    tokio::time::sleep(Duration::from_secs(outage)).await;
    let before = readyz(&addr).await;
    let lag = before["publish"]["lag"].as_u64().unwrap_or(0);
    let messages_before = metric(&addr, "croupier_publish_messages_total").await;
    let acked_before = before["publish"]["acked"].as_u64().unwrap_or(0);
    broker.restart();
    let back = Instant::now();
    // From the first row acknowledged after the broker's return (the client's reconnection
    // is not the publisher's pace) to the last.
    let mut moving: Option<(Instant, u64, f64)> = None;
    loop {
        let r = readyz(&addr).await;
        let acked = r["publish"]["acked"].as_u64().unwrap_or(0);
        if moving.is_none() && acked > acked_before {
            let sent = metric(&addr, "croupier_publish_messages_total").await;
            moving = Some((Instant::now(), acked, sent));
        }
        if r["publish"]["lag"].as_u64() == Some(0) && r["publish"]["state"] == "publishing" {
            break;
        }
        assert!(back.elapsed() < Duration::from_secs(600), "catches up: {r}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let took = back.elapsed().as_secs_f64();
    let messages = metric(&addr, "croupier_publish_messages_total").await - messages_before;
    let (first, from_row, from_sent) = moving.unwrap_or((back, acked_before, messages_before));
    let caught = readyz(&addr).await["publish"]["acked"]
        .as_u64()
        .unwrap_or(0);
    let pace = first.elapsed().as_secs_f64();
    let sent = metric(&addr, "croupier_publish_messages_total").await - from_sent;
    println!(
        "catch-up after a {outage} s outage: {lag} rows behind, every row acknowledged {took:.2} s after the broker's return ({messages:.0} messages); from the first acknowledgement on, {} rows and {sent:.0} messages in {pace:.2} s: {:.0} rows/s, {:.0} messages/s (the table dealing on)",
        caught - from_row,
        (caught - from_row) as f64 / pace,
        sent / pace
    );

    // 2. Resuming past a flood of messages it did not sign.
    let client = async_nats::connect(broker.url()).await.expect("anonymous");
    let flood = Instant::now();
    for i in 0..foreign {
        let subject = if i % 2 == 0 {
            "croupier.table-1.log"
        } else {
            "croupier.table-1.public"
        };
        client
            .publish(subject, format!("{{\"foreign\":{i}}}").into())
            .await
            .expect("publish");
    }
    client.flush().await.expect("flush");
    let flooded = flood.elapsed().as_secs_f64();
    stop(table);
    let (table, addr) = announce::start(&run);
    let restarted = Instant::now();
    let committed_at_start = readyz(&addr).await["publish"]["acked"]
        .as_u64()
        .unwrap_or(0)
        + readyz(&addr).await["publish"]["lag"].as_u64().unwrap_or(0);
    loop {
        let r = readyz(&addr).await;
        if r["publish"]["acked"].as_u64().unwrap_or(0) > committed_at_start {
            break;
        }
        assert!(
            restarted.elapsed() < Duration::from_secs(300),
            "resumes: {r}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let took = restarted.elapsed().as_secs_f64();
    let passed_over = readyz(&addr).await["publish"]["foreign"]
        .as_u64()
        .unwrap_or(0);
    println!(
        "resume past {foreign} foreign messages (sent in {flooded:.2} s): a row committed after the restart acknowledged {took:.2} s after the table announced itself ({passed_over} passed over)"
    );
    stop(table);
}
