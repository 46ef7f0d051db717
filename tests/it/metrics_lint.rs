//! `/metrics` of a running service (prometheus-client's registry rendered as text 0.0.4)
//! passes `promtool check metrics` (Debian's `prometheus` package) and the strict reader
//! of `support/prom.rs`, after a card has been dealt so that every family has samples.
//! Without promtool the test is skipped locally and fails under CI (`.ci/run` installs it).

use crate::common;
use crate::prom;
use crate::promtool;
use crate::running;

use croupier_drivers::sim::{SimConfig, SimShoe};
use croupier_drivers::ShoeItem;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scrape_passes_promtool() {
    let Some(promtool) = promtool::promtool() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let sim = SimShoe::start(SimConfig {
        items: vec![ShoeItem::Card("9H".parse().expect("card"))],
        ..SimConfig::default()
    })
    .expect("pty shoe");
    let run = running::start(common::config(dir.path(), &sim.path(), "deluxe")).await;
    let addr = run.addr.to_string();
    // A card read while no round is open: an alarm and a refused card, so the labelled
    // counters have non-zero samples too.
    let before = run.handle.snapshot().seq;
    sim.deal(1).await.expect("deal");
    let mut watch = run.handle.watch();
    tokio::time::timeout(Duration::from_secs(10), watch.wait_for(|s| s.seq > before))
        .await
        .expect("the card is recorded")
        .expect("table running");

    let (status, text) =
        croupier::web::client::request(&addr, "GET", "/metrics", None, Duration::from_secs(10))
            .await
            .expect("scrape");
    assert_eq!(status, 200, "{text}");
    let scrape = prom::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(scrape.sum("croupier_cards_read_total") >= 1.0, "{text}");
    assert_eq!(scrape.types["croupier_cards_read_total"], "counter");
    assert_eq!(scrape.types["croupier_commit_latency_seconds"], "histogram");

    let mut child = Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("to promtool");
    let out = child.wait_with_output().expect("promtool ends");
    assert!(
        out.status.success(),
        "promtool check metrics: {}\n{}\n{text}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    run.stop().await;
}
