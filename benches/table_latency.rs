//! Card latency of the table service: the last byte of a card frame written on the PTY →
//! the delta for that card received by a subscriber, with the durable commit (WAL,
//! synchronous=FULL) in between. `cargo bench --bench table_latency`.
//!
//! Two runs over the same legal session (≥ 10,000 cards; bets and decisions go through the
//! input channel and are not timed):
//! - `barcode4`: the bench writes each card's line on the PTY master itself, so the clock
//!   starts exactly when the last byte is written;
//! - `croupier-v1`: the simulated shoe sends CRC frames and waits for ACKs; the clock starts
//!   when the bench asks the simulator to deal, a little before the frame is written, so
//!   this figure is an upper bound.
//!
//! Before them, two yardsticks in the same run: the store's durable append of one card row
//! and nothing else, and its append of the very rows the table writes for this session
//! (each input with the engine's events: a settling card's row carries the settlement and
//! its projections), with the process's CPU per row over it.

use croupier::app::{self, Started};
use croupier::engine::{Engine, Input, Variant};
use croupier::sim::{Style, TableSim};
use croupier::store::Source;
use croupier::table::{TableConfig, TableHandle, Update};
use croupier_drivers::proto::barcode::Barcode4;
use croupier_drivers::proto::line::LineFormat;
use croupier_drivers::shoe::config::Dialect;
use croupier_drivers::sim::pty::Pty;
use croupier_drivers::sim::{SimConfig, SimShoe};
use croupier_drivers::ShoeItem;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

#[path = "support/viewers.rs"]
mod viewers;

const MIN_CARDS: usize = 10_000;
const WARM_UP: usize = 200;

fn session(variant: &Arc<Variant>) -> Vec<Input> {
    let mut engine = Engine::new(Arc::clone(variant));
    let mut sim = TableSim::new(Arc::clone(variant), 42, Style::Steady { seats: 3 });
    let mut inputs = Vec::new();
    let mut events = Vec::new();
    let mut cards = 0;
    while cards < MIN_CARDS + WARM_UP
        || !matches!(engine.expectation(), croupier::engine::Expectation::Bets)
    {
        let input = sim.next_input(&engine);
        events.clear();
        engine.apply(&input, &mut events).expect("legal session");
        if matches!(input, Input::Card(_)) {
            cards += 1;
        }
        inputs.push(input);
    }
    inputs
}

fn config(dir: &Path, port: &Path, dialect: Dialect) -> TableConfig {
    let mut c = TableConfig::embedded().expect("built-in config");
    c.table.id = "bench".into();
    c.table.variant = "ultimate".into();
    c.store.path = dir.join("bench.db");
    c.http.bind = "127.0.0.1:0".into();
    c.shoe.simulated = false;
    c.shoe.serial.port = port.to_path_buf();
    c.shoe.serial.dialect = dialect;
    c.demo.players = false;
    // Rounds follow each other at once: no dispute window between them.
    c.disputes.window_seconds = 0;
    c
}

async fn start(
    config: TableConfig,
) -> (
    TableHandle,
    oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    let (tx, rx) = oneshot::channel::<Started>();
    let (stop, stop_rx) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        app::run(
            config,
            async move {
                let _ = stop_rx.await;
            },
            move |s| {
                let _ = tx.send(s);
            },
        )
        .await
        .expect("service runs");
    });
    let handle = rx.await.expect("started").handle;
    let mut watch = handle.watch();
    tokio::time::timeout(
        Duration::from_secs(10),
        watch.wait_for(|s| s.shoe.link == "connected"),
    )
    .await
    .expect("connects")
    .expect("running");
    (handle, stop, task)
}

/// One card's latency, and whether its row settled a round (the row then carries the
/// round's settlement and its projections, the heaviest commit a card makes).
struct Sample {
    took: Duration,
    settled: bool,
}

/// Whether a row's events settle a round.
fn settles(events: &[croupier::engine::Event]) -> bool {
    events
        .iter()
        .any(|e| matches!(e, croupier::engine::Event::RoundSettled(_)))
}

/// A store of its own in `dir`, for the yardsticks (the table is not running).
async fn bench_store(dir: &Path) -> croupier::store::Store {
    croupier::store::Store::open(&dir.join("bench.db"), "bench", "bench", "ultimate")
        .await
        .expect("store")
        .store
}

/// Plays `inputs`; `deal` puts one card on the wire and returns when the clock starts.
async fn play<F, Fut>(handle: &TableHandle, inputs: &[Input], mut deal: F) -> Vec<Sample>
where
    F: FnMut(ShoeItem) -> Fut,
    Fut: std::future::Future<Output = Instant>,
{
    let mut sub = handle.subscribe();
    let _ = sub.next().await; // the initial snapshot
    let mut samples = Vec::with_capacity(inputs.len());
    for input in inputs {
        let item = match input {
            Input::Card(c) => ShoeItem::Card(*c),
            other => {
                handle
                    .submit(other.clone(), Source::Api)
                    .await
                    .expect("accepted");
                // Drain its delta.
                let _ = sub.next().await;
                continue;
            }
        };
        let t0 = deal(item).await;
        loop {
            match sub.next().await.expect("table running") {
                Update::Delta(d) => {
                    if let croupier::store::Record::Input { input: got, .. } = &d.record {
                        if got == input {
                            samples.push(Sample {
                                took: t0.elapsed(),
                                settled: settles(&d.events),
                            });
                            break;
                        }
                    }
                }
                Update::Resync(_) => panic!("the bench subscriber lagged"),
            }
        }
    }
    samples.drain(..WARM_UP.min(samples.len()));
    samples
}

/// The whole run's figures, then those of the cards that settled a round.
fn report_cards(name: &str, samples: Vec<Sample>) {
    let settling: Vec<Duration> = samples
        .iter()
        .filter(|s| s.settled)
        .map(|s| s.took)
        .collect();
    report(name, samples.into_iter().map(|s| s.took).collect());
    if !settling.is_empty() {
        report("  of which cards settling a round", settling);
    }
}

fn report(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |q: f64| {
        let i = ((samples.len() as f64 - 1.0) * q).round() as usize;
        samples[i].as_secs_f64() * 1e3
    };
    println!(
        "{name}: {} cards  p50 {:.3} ms  p90 {:.3} ms  p99 {:.3} ms  p99.9 {:.3} ms  max {:.3} ms",
        samples.len(),
        at(0.5),
        at(0.9),
        at(0.99),
        at(0.999),
        at(1.0)
    );
}

async fn barcode4(inputs: &[Input], dir: &Path, name: &str) {
    let pty = Pty::open().expect("pty");
    let (handle, stop, task) = start(config(dir, pty.path(), Dialect::Barcode4)).await;
    let pty = Arc::new(pty);
    let samples = play(&handle, inputs, |item| {
        let pty = Arc::clone(&pty);
        async move {
            let line = Barcode4.encode(item).expect("a card");
            pty.write_all(&line).await.expect("write");
            Instant::now()
        }
    })
    .await;
    report_cards(name, samples);
    let _ = stop.send(());
    let _ = task.await;
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let variant = Arc::new(
            Variant::built_in("ultimate")
                .expect("known")
                .expect("valid"),
        );
        // barcode4 cannot say "cut card": the session's cut cards (and every input that
        // is not a card) go through the input channel, untimed.
        let inputs = session(&variant);

        // The durable append alone (one card row, fsync'd), for comparison.
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = bench_store(dir.path()).await;
        let mut samples = Vec::new();
        for input in inputs.iter().filter(|i| matches!(i, Input::Card(_))) {
            let record = croupier::store::Record::Input {
                source: Source::Shoe,
                input: input.clone(),
            };
            let t0 = Instant::now();
            store.append(&record, &[], 1).await.expect("append");
            samples.push(t0.elapsed());
        }
        samples.drain(..WARM_UP);
        report("store append alone (one card row, committed)", samples);
        drop(store);

        // The store's append of the very rows the table writes for this session (every
        // input with the engine's events, so a settling card's row carries the round's
        // settlement and its projections), without the table: the yardstick for the
        // durable path that does the same storage work. Only the cards are timed.
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = bench_store(dir.path()).await;
        let mut engine = Engine::new(Arc::clone(&variant));
        let mut events = Vec::new();
        let mut samples = Vec::new();
        // The process's CPU over the whole session (every row, not only the cards): what
        // the storage alone costs per row, the floor under the table's CPU per row.
        let cpu0 = viewers::proc_cpu_ns(std::process::id());
        for input in &inputs {
            events.clear();
            engine.apply(input, &mut events).expect("legal session");
            let record = croupier::store::Record::Input {
                source: Source::Shoe,
                input: input.clone(),
            };
            let t0 = Instant::now();
            store.append(&record, &events, 1).await.expect("append");
            if matches!(input, Input::Card(_)) {
                samples.push(Sample {
                    took: t0.elapsed(),
                    settled: settles(&events),
                });
            }
        }
        let cpu = viewers::proc_cpu_ns(std::process::id()).saturating_sub(cpu0);
        samples.drain(..WARM_UP);
        report_cards(
            "store append alone (the session's own rows, projections included)",
            samples,
        );
        println!(
            "  CPU per row (the whole process, {} rows): {:.3} ms",
            inputs.len(),
            cpu as f64 / 1e6 / inputs.len() as f64
        );
        drop(store);

        // barcode4: the bench is the shoe and writes each line itself.
        let dir = tempfile::tempdir().expect("tempdir");
        barcode4(
            &inputs,
            dir.path(),
            "barcode4 (exact: from the last byte written)",
        )
        .await;
        // The same with the database on tmpfs, where fsync costs nothing: the software
        // path alone, to tell it from the disk.
        if let Ok(dir) = tempfile::tempdir_in("/dev/shm") {
            barcode4(&inputs, dir.path(), "barcode4, database on tmpfs (no disk)").await;
        }

        // croupier-v1: the simulated shoe frames, CRCs and retransmits.
        let dir = tempfile::tempdir().expect("tempdir");
        let items: Vec<ShoeItem> = inputs
            .iter()
            .filter_map(|i| match i {
                Input::Card(c) => Some(ShoeItem::Card(*c)),
                _ => None,
            })
            .collect();
        let sim = Arc::new(
            SimShoe::start(SimConfig {
                items,
                ..SimConfig::default()
            })
            .expect("sim"),
        );
        let (handle, stop, task) =
            start(config(dir.path(), &sim.path(), Dialect::CroupierV1)).await;
        let samples = play(&handle, &inputs, |_| {
            let sim = Arc::clone(&sim);
            async move {
                let t0 = Instant::now();
                sim.deal(1).await.expect("deal");
                t0
            }
        })
        .await;
        report_cards("croupier-v1 (upper bound: from the deal request)", samples);
        let _ = stop.send(());
        let _ = task.await;
    });
}
