//! Card out → pixels: from the simulated shoe being asked to deal a card (its `croupier-v1`
//! frame written on the PTY right after, read by the real serial driver) to the dealer
//! panel in Chromium having rendered the view with that card, at 800×480.
//! `cargo bench --bench panel_latency` (needs Debian's chromium).
//!
//! The page marks each view it draws when `window.markPaints` is set (`panel.js`:
//! `performance.mark("painted SEQ")` in the next animation frame callback, i.e. the frame
//! that paints it). The bench compares the mark with its own clock at the deal, both on
//! the epoch (the page's `performance.timeOrigin + startTime`), after measuring the offset
//! between the two clocks with a round trip. Bets and decisions go through the input
//! channel and are not timed. An upper bound like `table_latency`'s `croupier-v1` row: the
//! clock starts a little before the frame is written.

#[allow(dead_code)] // the tests' Chromium client: this bench needs only part of it
#[path = "../tests/support/cdp.rs"]
mod cdp;
#[path = "../tests/common/mod.rs"]
mod common;
#[allow(dead_code)]
#[path = "../tests/support/running.rs"]
mod running;
#[path = "../tests/support/skip.rs"]
mod skip;

use croupier::engine::{Engine, Expectation, Input};
use croupier::sim::{Style, TableSim};
use croupier::store::Source;
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const CARDS: usize = 1_000;
const WARM_UP: usize = 50;

fn epoch_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

fn session() -> Vec<Input> {
    let variant = common::variant("ultimate");
    let mut engine = Engine::new(Arc::clone(&variant));
    let mut sim = TableSim::new(variant, 7, Style::Steady { seats: 3 });
    let (mut inputs, mut events, mut cards) = (Vec::new(), Vec::new(), 0);
    while cards < CARDS + WARM_UP || !matches!(engine.expectation(), Expectation::Bets) {
        let input = sim.next_input(&engine);
        events.clear();
        engine.apply(&input, &mut events).expect("legal session");
        cards += usize::from(matches!(input, Input::Card(_)));
        inputs.push(input);
    }
    inputs
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() {
    if !cdp::chromium_present() {
        eprintln!("panel_latency: no chromium at {}", cdp::CHROMIUM);
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let inputs = session();
        let dir = tempfile::tempdir().expect("tempdir");
        let sim = common::session_shoe(&inputs);
        let config = common::config(dir.path(), &sim.path(), "ultimate");
        running::add_users(&config.store.path).await;
        let run = running::start(config).await;
        let browser = cdp::Browser::launch().await;
        let panel = browser
            .page(&format!("http://{}/", run.addr), 800, 480)
            .await;
        let login = running::page_login_script(croupier::auth::Role::Dealer);
        assert_eq!(panel.eval(&login).await, json!(200));
        panel.eval("location.reload()").await;
        panel
            .wait_for(
                "document.querySelector('#conn.live')",
                Duration::from_secs(10),
            )
            .await;
        panel.eval("window.markPaints = true").await;
        // The page's epoch clock minus ours, from the best of a few round trips.
        let mut offset = (f64::MAX, 0.0);
        for _ in 0..20 {
            let before = epoch_ms();
            let page = panel
                .eval("performance.timeOrigin + performance.now()")
                .await
                .as_f64()
                .expect("a number");
            let after = epoch_ms();
            if after - before < offset.0 {
                offset = (after - before, page - (before + after) / 2.0);
            }
        }
        let h = &run.handle;
        let mut watch = h.watch();
        let mut lat = Vec::with_capacity(CARDS + WARM_UP);
        for input in &inputs {
            let before = watch.borrow().seq;
            if !common::from_shoe(input) {
                h.submit(input.clone(), Source::Api).await.expect("input");
                continue;
            }
            let t0 = epoch_ms();
            assert_eq!(sim.deal(1).await.expect("deal").len(), 1);
            let seq = watch
                .wait_for(|s| s.seq > before)
                .await
                .expect("running")
                .seq;
            let mark = format!(
                "(() => {{ const e = performance.getEntriesByName('painted {seq}')[0]; \
                 if (e) performance.clearMarks('painted {seq}'); \
                 return e ? performance.timeOrigin + e.startTime : null; }})()"
            );
            let painted = loop {
                if let Some(t) = panel.eval(&mark).await.as_f64() {
                    break t;
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            };
            lat.push(painted - offset.1 - t0);
        }
        let mut timed: Vec<f64> = lat.split_off(WARM_UP.min(lat.len()));
        timed.sort_by(f64::total_cmp);
        println!(
            "panel_latency: {} cards (after {WARM_UP} warm-up), clock offset ±{:.2} ms: \
             p50 {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            timed.len(),
            offset.0 / 2.0,
            percentile(&timed, 0.5),
            percentile(&timed, 0.9),
            percentile(&timed, 0.99),
            timed.last().copied().unwrap_or(0.0)
        );
        browser.close().await;
        run.stop().await;
    });
}
