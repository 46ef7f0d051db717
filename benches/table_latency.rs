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
//! Side by side with the durable `barcode4` run, two yardsticks: the store's durable append
//! of one card row and nothing else, and its append of the very rows the table writes for
//! this session (each input with the engine's events: a settling card's row carries the
//! settlement and its projections), with the process's CPU per row over it. The three take
//! turns a slice of the session at a time, so they meet the same spells of the disk.

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
/// Inputs per slice of the side-by-side run (about 790 cards, a fraction of a second to a
/// few seconds each way, depending on the disk).
const SLICE: usize = 1_000;

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

/// Plays `inputs` and times every card (warm-up included: the caller drops it); `deal`
/// puts one card on the wire and returns when the clock starts. `sub` is a subscription
/// whose initial snapshot has been read.
async fn play<F, Fut>(
    handle: &TableHandle,
    sub: &mut croupier::table::Subscription,
    inputs: &[Input],
    mut deal: F,
) -> Vec<Sample>
where
    F: FnMut(ShoeItem) -> Fut,
    Fut: std::future::Future<Output = Instant>,
{
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
    samples
}

/// A subscription to `handle` past its initial snapshot.
async fn subscribe(handle: &TableHandle) -> croupier::table::Subscription {
    let mut sub = handle.subscribe();
    let _ = sub.next().await;
    sub
}

/// `samples` without the warm-up's.
fn warmed<T>(mut samples: Vec<T>) -> Vec<T> {
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

/// The barcode4 shoe on a PTY of its own: the bench writes each card's line itself, so
/// the clock starts when the line's last byte is written.
struct Barcode4Shoe(Arc<Pty>);

impl Barcode4Shoe {
    fn open() -> Self {
        Self(Arc::new(Pty::open().expect("pty")))
    }

    fn path(&self) -> &Path {
        self.0.path()
    }

    /// Deals `item`: its line written on the PTY, and the instant the last byte went.
    fn deal(&self, item: ShoeItem) -> impl std::future::Future<Output = Instant> {
        let pty = Arc::clone(&self.0);
        async move {
            let line = Barcode4.encode(item).expect("a card");
            pty.write_all(&line).await.expect("write");
            Instant::now()
        }
    }
}

/// The software path: the whole session on a table whose database is on tmpfs.
async fn barcode4_tmpfs(inputs: &[Input], dir: &Path, name: &str) {
    let shoe = Barcode4Shoe::open();
    let (handle, stop, task) = start(config(dir, shoe.path(), Dialect::Barcode4)).await;
    let mut sub = subscribe(&handle).await;
    let samples = play(&handle, &mut sub, inputs, |item| shoe.deal(item)).await;
    report_cards(name, warmed(samples));
    let _ = stop.send(());
    let _ = task.await;
}

/// The store's append of one card row and nothing else, for each card of `inputs`.
async fn append_card_rows(store: &mut croupier::store::Store, inputs: &[Input]) -> Vec<Duration> {
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
    samples
}

/// The store's append of the very rows the table writes for `inputs` (each with the
/// engine's events, so a settling card's row carries the round's settlement and its
/// projections), without the table; only the cards are timed. `engine` is where the
/// session stands.
async fn append_session_rows(
    store: &mut croupier::store::Store,
    engine: &mut Engine,
    inputs: &[Input],
) -> Vec<Sample> {
    let mut events = Vec::new();
    let mut samples = Vec::new();
    for input in inputs {
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
    samples
}

/// The durable path and its two yardsticks side by side: the session in slices of
/// `SLICE` inputs, each slice played on the table (database on disk) and then appended
/// by the store alone twice (one card row per card; the session's own rows), so that all
/// three meet the same spells of this disk rather than three minutes of their own.
async fn durable_side_by_side(variant: &Arc<Variant>, inputs: &[Input]) {
    let table_dir = tempfile::tempdir().expect("tempdir");
    let shoe = Barcode4Shoe::open();
    let (handle, stop, task) =
        start(config(table_dir.path(), shoe.path(), Dialect::Barcode4)).await;
    let mut sub = subscribe(&handle).await;
    let one_dir = tempfile::tempdir().expect("tempdir");
    let mut one_store = bench_store(one_dir.path()).await;
    let rows_dir = tempfile::tempdir().expect("tempdir");
    let mut rows_store = bench_store(rows_dir.path()).await;
    let mut engine = Engine::new(Arc::clone(variant));
    let (mut table, mut one, mut rows) = (Vec::new(), Vec::new(), Vec::new());
    // The process's CPU over the session's rows appended alone (every row, not only the
    // cards): what the storage alone costs per row, the floor under the table's CPU per
    // row. The table is idle meanwhile, its timers aside.
    let mut rows_cpu = 0;
    for slice in inputs.chunks(SLICE) {
        table.extend(play(&handle, &mut sub, slice, |item| shoe.deal(item)).await);
        one.extend(append_card_rows(&mut one_store, slice).await);
        let cpu0 = viewers::proc_cpu_ns(std::process::id());
        rows.extend(append_session_rows(&mut rows_store, &mut engine, slice).await);
        rows_cpu += viewers::proc_cpu_ns(std::process::id()).since(&cpu0);
    }
    report("store append alone (one card row, committed)", warmed(one));
    report_cards(
        "store append alone (the session's own rows, projections included)",
        warmed(rows),
    );
    println!(
        "  CPU per row (the whole process, {} rows): {:.3} ms",
        inputs.len(),
        rows_cpu as f64 / 1e6 / inputs.len() as f64
    );
    report_cards(
        "barcode4 (exact: from the last byte written)",
        warmed(table),
    );
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

        durable_side_by_side(&variant, &inputs).await;
        // The same with the database on tmpfs, where the sync costs nothing: the software
        // path alone, to tell it from the disk.
        if let Ok(dir) = tempfile::tempdir_in("/dev/shm") {
            barcode4_tmpfs(&inputs, dir.path(), "barcode4, database on tmpfs (no disk)").await;
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
        let mut sub = subscribe(&handle).await;
        let samples = play(&handle, &mut sub, &inputs, |_| {
            let sim = Arc::clone(&sim);
            async move {
                let t0 = Instant::now();
                sim.deal(1).await.expect("deal");
                t0
            }
        })
        .await;
        report_cards(
            "croupier-v1 (upper bound: from the deal request)",
            warmed(samples),
        );
        let _ = stop.send(());
        let _ = task.await;
    });
}
