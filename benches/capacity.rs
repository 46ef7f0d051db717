//! How many tables one studio carries (issue #61 item 4): N real `croupier run` processes
//! (Deluxe, the demo dealer and players at `--pace-ms`, each with its own SQLite log)
//! publish to a real three-node `nats-server` cluster with their streams on three
//! replicas; two `croupier relay`s serve `--viewers-per-table` WebSocket viewers of every
//! table (half on each), and `croupier floor` ingests every table's log into a fresh
//! PostgreSQL database. N rises step by step (`--tables`, the tables of a step stay for
//! the next) until a table's card → viewer p99 passes `--p99-limit-ms` or the floor lags
//! a table by more than `--floor-lag-ms`.
//!
//!     cargo bench --bench capacity -- [--tables 10,25,50,75,100] [--viewers-per-table 100]
//!         [--seconds 20] [--pace-ms 150] [--p99-limit-ms 1000] [--floor-lag-ms 2000]
//!
//! Per step, two windows of `--seconds`:
//!
//! 1. **The relays**: delivery latency (a public message's `at_ms` — its row's commit
//!    time — to a viewer having read it whole; most rows are cards), per table and over
//!    all; resyncs and silent drops; rows and cards committed; the floor's lag behind each
//!    table at the window's end; and each process's CPU (`/proc/PID/task/*/schedstat`)
//!    and memory, and the publishers' acknowledgement times (every table's
//!    `croupier_publish_ack_seconds`), from which the per-unit costs: broker CPU per table, relay CPU per 1,000
//!    viewers and messages per relay core, floor and PostgreSQL CPU per row, memory per
//!    table and per viewer.
//! 2. **nats-server's own WebSocket listener beside them**: as many viewers again, each a
//!    NATS client over WebSocket (spread over the three nodes) subscribed to its table's
//!    public subject — what a studio could serve viewers with instead of relays. Its cost
//!    is the cluster's CPU above what it used without them (the mean of the first window
//!    and a third one after they left); its messages per core are set beside the
//!    relays'.
//!
//! Everything shares this machine's cores, the viewers (this process) included; the
//! figures go in the guide (docs/src/benchmarks.md, "Capacity") with how they were taken.
//! Needs `nats-server` (Debian's package), PostgreSQL at 127.0.0.1:5432 (user postgres,
//! trust; `CROUPIER_TEST_PG` overrides) and a file-descriptor limit above twice the
//! viewers.

#[path = "support/announce.rs"]
mod announce;
#[path = "support/args.rs"]
mod args;
#[path = "../tests/support/nats.rs"]
mod nats;
#[path = "../tests/support/nats_cluster.rs"]
mod nats_cluster;
#[path = "../tests/support/pg.rs"]
mod pg;
#[path = "../tests/common/proc.rs"]
mod proc;
#[path = "../tests/support/prom.rs"]
mod prom;
#[path = "support/scrape.rs"]
mod scrape;
#[path = "../tests/support/skip.rs"]
mod skip;
#[path = "../tests/support/studio_table.rs"]
mod studio_table;
#[path = "support/viewers.rs"]
mod viewers;

use args::Args;
use croupier::engine::Input;
use croupier::store::Record;
use nats_cluster::Cluster;
use proc::{announced, spawn_args, Proc};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use studio_table::Table;
use viewers::{
    connect_paced, nats_ws_viewer, percentile, proc_cpu_ns, proc_rss_kb, raw_viewer, Stats,
    ThreadCounts,
};

/// What the bench was asked.
struct Plan {
    steps: Vec<usize>,
    viewers_per_table: usize,
    seconds: u64,
    pace_ms: u64,
    p99_limit_ms: usize,
    floor_lag_ms: i64,
}

/// A process whose CPU and memory a window reads.
struct Watched {
    pids: Vec<u32>,
}

impl Watched {
    fn cpu(&self) -> Vec<ThreadCounts> {
        self.pids.iter().map(|p| proc_cpu_ns(*p)).collect()
    }

    /// CPU seconds since `before` (the same pids, in order).
    fn cpu_since(&self, before: &[ThreadCounts]) -> f64 {
        self.cpu()
            .iter()
            .zip(before)
            .map(|(now, then)| now.since(then))
            .sum::<u64>() as f64
            / 1e9
    }

    fn rss_mb(&self) -> f64 {
        self.pids.iter().map(|p| proc_rss_kb(*p)).sum::<u64>() as f64 / 1024.0
    }
}

/// This process's open-file limit, raised to its hard limit: each viewer is a socket here.
fn file_limit() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit(2) on this process with a valid struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 1024;
        }
        lim.rlim_cur = lim.rlim_max;
        let _ = libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
    }
    lim.rlim_cur
}

/// PostgreSQL's processes (the postmaster and its backends), by `comm`.
fn postgres_pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
                .filter(|pid| {
                    std::fs::read_to_string(format!("/proc/{pid}/comm"))
                        .is_ok_and(|c| c.trim() == "postgres")
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Rows and card rows in `table`'s log, and its newest row's commit time.
async fn log_of(table: &Table) -> (u64, u64, i64) {
    let reader = croupier::store::Reader::open(&table.db)
        .await
        .expect("the table's log");
    let log = reader.log(&table.id).await.expect("log");
    let cards = log
        .iter()
        .filter(|r| {
            matches!(
                r.record,
                Record::Input {
                    input: Input::Card(_),
                    ..
                }
            )
        })
        .count() as u64;
    (log.len() as u64, cards, log.last().map_or(0, |r| r.at_ms))
}

/// The newest commit time the floor holds of each table.
async fn floor_newest(pool: &sqlx::PgPool) -> BTreeMap<String, i64> {
    sqlx::query_as::<_, (String, i64)>(
        "SELECT table_id, coalesce(max(at_ms), 0) FROM floor_events GROUP BY table_id",
    )
    .fetch_all(pool)
    .await
    .unwrap_or_default()
    .into_iter()
    .collect()
}

/// A histogram's cumulative buckets: each upper bound in seconds and its count.
type Buckets = Vec<(f64, u64)>;

/// Each table's publisher acknowledgement-time histogram (`croupier_publish_ack_seconds`):
/// each bucket's upper bound in seconds and its cumulative count. A table whose scrape
/// fails is left out, and said on stderr.
async fn ack_buckets(tables: &[Table]) -> BTreeMap<String, Buckets> {
    let mut out = BTreeMap::new();
    let mut missing = Vec::new();
    for t in tables {
        match scrape::scrape(&t.addr()).await {
            Ok(metrics) => {
                let buckets = scrape::buckets(&metrics, "croupier_publish_ack_seconds");
                out.insert(t.id.clone(), buckets);
            }
            Err(e) => missing.push(format!("{}: {e}", t.id)),
        }
    }
    if !missing.is_empty() {
        eprintln!(
            "acknowledgement times read from {} of {} tables; not from {}",
            out.len(),
            tables.len(),
            missing.join("; ")
        );
    }
    out
}

/// Every table's buckets summed, for the tables read both times.
fn summed(
    before: &BTreeMap<String, Buckets>,
    after: &BTreeMap<String, Buckets>,
) -> (Buckets, Buckets) {
    let mut sums = (BTreeMap::new(), BTreeMap::new());
    for (table, a) in after {
        let Some(b) = before.get(table) else {
            continue;
        };
        for (into, buckets) in [(&mut sums.0, b), (&mut sums.1, a)] {
            for (le, n) in buckets {
                into.entry(le.to_bits()).or_insert((*le, 0u64)).1 += n;
            }
        }
    }
    let sorted = |m: BTreeMap<u64, (f64, u64)>| {
        let mut v: Buckets = m.into_values().collect();
        v.sort_by(|x, y| x.0.total_cmp(&y.0));
        v
    };
    (sorted(sums.0), sorted(sums.1))
}

/// The bucket bound the slowest acknowledgement between two readings fell in ("≤ 200 ms"),
/// or "–" when there were none: where a table's worst delay came from the cluster.
fn slowest_ack(before: Option<&Buckets>, after: Option<&Buckets>) -> String {
    match (before, after) {
        (Some(b), Some(a)) => ack_quantile(b, a, 1.0),
        _ => "–".into(),
    }
}

/// The `q` quantile's bucket bound, in milliseconds, of the acknowledgements between two
/// readings of [`ack_buckets`] (a bound, not an interpolation: "at most").
fn ack_quantile(before: &[(f64, u64)], after: &[(f64, u64)], q: f64) -> String {
    let counts: Vec<(f64, u64)> = after
        .iter()
        .map(|(le, n)| {
            let was = before.iter().find(|(b, _)| b == le).map_or(0, |b| b.1);
            (*le, n.saturating_sub(was))
        })
        .collect();
    let total = counts.last().map_or(0, |c| c.1);
    if total == 0 {
        return "–".into();
    }
    let want = (total as f64 * q).ceil() as u64;
    match counts.iter().find(|(_, n)| *n >= want) {
        Some((le, _)) if le.is_finite() => format!("≤ {:.0} ms", le * 1000.0),
        _ => "> 30 s".into(),
    }
}

/// One step's figures.
struct Step {
    line: String,
    passed: bool,
}

/// The studio: cluster, database, relays, floor, and the tables started so far.
struct Studio {
    cluster: Cluster,
    pool: sqlx::PgPool,
    relays: Vec<Proc>,
    floor: Proc,
    tables: Vec<Table>,
    /// The relays' logs: where a table's consumer that had to be made again says so.
    relay_logs: Vec<std::path::PathBuf>,
    /// Each table's viewers' counters (relay viewers), by table index.
    stats: Vec<Arc<Stats>>,
    ready: Arc<AtomicU64>,
}

impl Studio {
    fn parties(&self) -> [Watched; 5] {
        [
            Watched {
                pids: (0..self.cluster.nodes.len())
                    .filter_map(|i| self.cluster.pid(i))
                    .collect(),
            },
            Watched {
                pids: self.relays.iter().map(|r| r.child.id()).collect(),
            },
            Watched {
                pids: vec![self.floor.child.id()],
            },
            Watched {
                pids: postgres_pids(),
            },
            Watched {
                pids: self
                    .tables
                    .iter()
                    .filter_map(|t| t.proc.as_ref().map(|p| p.child.id()))
                    .collect(),
            },
        ]
    }

    /// Rows, cards and newest commit time of every table.
    async fn logs(&self) -> Vec<(u64, u64, i64)> {
        let mut out = Vec::new();
        for t in &self.tables {
            out.push(log_of(t).await);
        }
        out
    }
}

async fn step(studio: &mut Studio, plan: &Plan, n: usize, dir: &Path, urls: &str) -> Step {
    // The new tables, dealing, listed on both relays, then their viewers.
    let first_new = studio.tables.len();
    for k in first_new..n {
        let id = format!("t{k:03}");
        let mut t = Table::clustered(dir, &id, "deluxe", urls);
        t.edit(&[("pace_ms = 25", &format!("pace_ms = {}", plan.pace_ms))]);
        t.start(true).await;
        studio.tables.push(t);
    }
    for t in &studio.tables[first_new..] {
        for r in &studio.relays {
            announce::listed(&r.addr, &t.id).await;
        }
    }
    for k in first_new..n {
        studio.stats.push(Arc::new(Stats::new()));
        let id = studio.tables[k].id.clone();
        let relays: Vec<String> = studio.relays.iter().map(|r| r.addr.clone()).collect();
        let (stats, ready) = (Arc::clone(&studio.stats[k]), Arc::clone(&studio.ready));
        connect_paced(plan.viewers_per_table, &studio.ready, |i| {
            let path = format!("/ws/public?table={id}");
            tokio::spawn(raw_viewer(
                relays[i % relays.len()].clone(),
                path,
                Arc::clone(&stats),
                Arc::clone(&ready),
            ));
        })
        .await;
    }
    let viewers = n * plan.viewers_per_table;
    // The new tables past their first rounds, the viewers past their first views.
    tokio::time::sleep(Duration::from_secs(5)).await;

    // Window 1: the relays.
    let parties = studio.parties();
    let before: Vec<Vec<ThreadCounts>> = parties.iter().map(Watched::cpu).collect();
    let me = proc_cpu_ns(std::process::id());
    let logs0 = studio.logs().await;
    let acks0 = ack_buckets(&studio.tables).await;
    let relay_logs0 = log_sizes(&studio.relay_logs);
    let t0 = Instant::now();
    for s in &studio.stats {
        s.measuring.store(true, Ordering::SeqCst);
    }
    tokio::time::sleep(Duration::from_secs(plan.seconds)).await;
    for s in &studio.stats {
        s.measuring.store(false, Ordering::SeqCst);
    }
    let wall = t0.elapsed().as_secs_f64();
    let cpu: Vec<f64> = parties
        .iter()
        .zip(&before)
        .map(|(p, b)| p.cpu_since(b))
        .collect();
    let viewers_cpu = proc_cpu_ns(std::process::id()).since(&me) as f64 / 1e9;
    let acks1 = ack_buckets(&studio.tables).await;
    let resumed = resumptions(&studio.relay_logs, &relay_logs0);
    let logs1 = studio.logs().await;
    let floor = floor_newest(&studio.pool).await;
    let rss: Vec<f64> = parties.iter().map(Watched::rss_mb).collect();
    let [broker_cpu, relay_cpu, floor_cpu, pg_cpu, tables_cpu] =
        [cpu[0], cpu[1], cpu[2], cpu[3], cpu[4]];

    let rows: u64 = logs1.iter().zip(&logs0).map(|(a, b)| a.0 - b.0).sum();
    let cards: u64 = logs1.iter().zip(&logs0).map(|(a, b)| a.1 - b.1).sum();
    let floor_lag = studio
        .tables
        .iter()
        .zip(&logs1)
        .map(|(t, l)| l.2 - floor.get(&t.id).copied().unwrap_or(0))
        .max()
        .unwrap_or(0)
        .max(0);
    let mut all = vec![0u64; studio.stats[0].hist.len()];
    let mut worst = (0usize, String::new());
    let (mut delivered, mut resyncs, mut silent) = (0u64, 0u64, 0u64);
    for (t, s) in studio.tables.iter().zip(&studio.stats) {
        let hist: Vec<u64> = s.hist.iter().map(|h| h.swap(0, Ordering::SeqCst)).collect();
        for (a, h) in all.iter_mut().zip(&hist) {
            *a += h;
        }
        if hist.iter().sum::<u64>() > 0 {
            let p99 = percentile(&hist, 0.99);
            if p99 >= worst.0 {
                worst = (p99, t.id.clone());
            }
        } else {
            worst = (usize::MAX, format!("{} (nothing delivered)", t.id));
        }
        delivered += s.messages.swap(0, Ordering::SeqCst);
        resyncs += s.resyncs.swap(0, Ordering::SeqCst);
        silent += s.silent.swap(0, Ordering::SeqCst);
    }
    let public_rate = delivered as f64 / wall;

    // Window 2: the same viewers again, on nats-server's WebSocket listener.
    let ws = Arc::new(Stats::new());
    let ws_ready = Arc::new(AtomicU64::new(0));
    let mut ws_tasks = Vec::new();
    let nodes: Vec<String> = studio
        .cluster
        .nodes
        .iter()
        .filter_map(|n| n.websocket.map(|p| format!("{}:{p}", n.host)))
        .collect();
    let ids: Vec<String> = studio.tables.iter().map(|t| t.id.clone()).collect();
    connect_paced(viewers, &ws_ready, |i| {
        let subject = croupier::broker::subjects::public(&ids[i % ids.len()]);
        ws_tasks.push(tokio::spawn(nats_ws_viewer(
            nodes[i % nodes.len()].clone(),
            subject,
            Arc::clone(&ws),
            Arc::clone(&ws_ready),
        )));
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let broker_before = parties[0].cpu();
    let ws_wall = ws.measure(plan.seconds).await;
    let broker_ws_cpu = parties[0].cpu_since(&broker_before);
    let ws_hist: Vec<u64> = ws.hist.iter().map(|h| h.load(Ordering::SeqCst)).collect();
    let ws_got = ws.messages.load(Ordering::SeqCst);
    for task in ws_tasks {
        task.abort();
    }
    // The listener's own cost: the cluster's CPU above what it spent without it, before
    // and again after (the machine's other work moves both alike).
    tokio::time::sleep(Duration::from_secs(2)).await;
    let broker_after = parties[0].cpu();
    let t2 = Instant::now();
    tokio::time::sleep(Duration::from_secs(plan.seconds)).await;
    let without = (broker_cpu / wall
        + parties[0].cpu_since(&broker_after) / t2.elapsed().as_secs_f64())
        / 2.0;
    let ws_cost = broker_ws_cpu / ws_wall - without;

    let p99 = percentile(&all, 0.99);
    let passed = worst.0 <= plan.p99_limit_ms && floor_lag <= plan.floor_lag_ms && silent == 0;
    let ack_sums = summed(&acks0, &acks1);
    let worst_line = format!(
        "{}, its slowest acknowledgement {}, the relays' consumers of its stream made again {} times in the window{} ({} for every table; missed heartbeats with the consumer kept: {} for it, {} for every table)",
        worst.1,
        slowest_ack(acks0.get(&worst.1), acks1.get(&worst.1)),
        resumed.get(&worst.1).map_or(0, |r| r.0),
        resumed
            .get(&worst.1)
            .map_or(String::new(), |r| format!(", first after: {}", r.1)),
        resumed.values().map(|r| r.0).sum::<u64>(),
        resumed.get(&worst.1).map_or(0, |r| r.2),
        resumed.values().map(|r| r.2).sum::<u64>()
    );
    let per_table_mb = rss[4] / n as f64;
    let line = format!(
        "| {n} | {viewers} | {:.0} | {:.1} | {} ms | {} ms | {} ms ({}) | {floor_lag} ms | {resyncs} | {silent} | {:.1} % | {:.0} µs | {:.1} % | {:.0} | {:.2} ms | {:.2} ms | {:.1} % | {per_table_mb:.1} MB | {:.0} | {:.0} MB | {:.1} KB | {:.0} MB | {:.0} MB | {:.1} % | {} | {} ms | {}, {} | {} |",
        rows as f64 / wall,
        cards as f64 / wall / n as f64,
        percentile(&all, 0.50),
        p99,
        worst.0,
        worst_line,
        broker_cpu / wall / n as f64 * 100.0,
        broker_cpu * 1e6 / (rows.max(1)) as f64,
        relay_cpu / wall / (viewers as f64 / 1000.0) * 100.0,
        if relay_cpu > 0.0 { delivered as f64 / relay_cpu } else { 0.0 },
        floor_cpu * 1e3 / rows.max(1) as f64,
        pg_cpu * 1e3 / rows.max(1) as f64,
        tables_cpu / wall / n as f64 * 100.0,
        public_rate,
        rss[1],
        rss[1] * 1024.0 / viewers.max(1) as f64,
        rss[0],
        rss[2],
        viewers_cpu / wall * 100.0,
        if ws_cost > 0.0 {
            format!("{:.0}", ws_got as f64 / ws_wall / ws_cost)
        } else {
            "–".into()
        },
        if ws_got > 0 { percentile(&ws_hist, 0.99) } else { 0 },
        ack_quantile(&ack_sums.0, &ack_sums.1, 0.50),
        ack_quantile(&ack_sums.0, &ack_sums.1, 0.99),
        if passed { "yes" } else { "**no**" },
    );
    Step { line, passed }
}

/// Each file's length now (0 if it cannot be read).
fn log_sizes(paths: &[std::path::PathBuf]) -> Vec<u64> {
    paths
        .iter()
        .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
        .collect()
}

/// Per table, from the relays' logs after `from` (each log's length then): how many times
/// following its public stream failed and was resumed (each a consumer made again after a
/// missed heartbeat or an error, and a second or more of that table's messages held back
/// on that relay), the first such error, and after how many missed heartbeats the
/// consumer was kept (`relay::tables::heartbeat`).
fn resumptions(paths: &[std::path::PathBuf], from: &[u64]) -> BTreeMap<String, (u64, String, u64)> {
    let mut out: BTreeMap<String, (u64, String, u64)> = BTreeMap::new();
    for (path, &start) in paths.iter().zip(from) {
        let text = std::fs::read(path).unwrap_or_default();
        let start = usize::try_from(start).unwrap_or(usize::MAX).min(text.len());
        for line in String::from_utf8_lossy(&text[start..]).lines() {
            let failed = line.contains("following the public stream failed");
            let late = line.contains("a missed heartbeat, the consumer kept");
            if !failed && !late {
                continue;
            }
            let table = line
                .split_once("table=\"")
                .and_then(|(_, rest)| rest.split_once('"'))
                .map_or("?", |(t, _)| t);
            let said = out.entry(table.to_string()).or_default();
            if late {
                said.2 += 1;
                continue;
            }
            said.0 += 1;
            if said.1.is_empty() {
                said.1 = line.split_once("error=").map_or("", |(_, e)| e).to_string();
            }
        }
    }
    out
}

fn main() {
    let args = Args::from_env();
    if args.listing() {
        return;
    }
    let plan = Plan {
        steps: args.numbers("--tables", "10,25,50,75,100"),
        viewers_per_table: args.number("--viewers-per-table", 100),
        seconds: args.number("--seconds", 20),
        pace_ms: args.number("--pace-ms", 150),
        p99_limit_ms: args.number("--p99-limit-ms", 1000),
        floor_lag_ms: args.number("--floor-lag-ms", 2000),
    };
    let Some(bin) = nats::nats_server() else {
        return;
    };
    let rt = viewers::runtime(2);
    rt.block_on(async {
        let Some(db) = pg::fresh().await else {
            return;
        };
        let dir = tempfile::tempdir().expect("tempdir");
        // `CROUPIER_BENCH_KEEP=1` keeps every party's log (and store) for a look after.
        if std::env::var_os("CROUPIER_BENCH_KEEP").is_some() {
            eprintln!("keeping {}", dir.path().display());
        }
        let dir = Keep(Some(dir));
        let cluster = Cluster::start_with_websocket(&bin, dir.path(), 3);
        cluster.wait_healthy(Duration::from_secs(60)).await;
        let urls = cluster.urls();
        // Every table's key made before anyone starts, so the relays and the floor pin
        // the tables of every step from their own start.
        let most = plan.steps.iter().copied().max().unwrap_or(0);
        let ids: Vec<String> = (0..most).map(|k| format!("t{k:03}")).collect();
        let keys: Vec<(&str, String)> = ids
            .iter()
            .map(|id| {
                let db = dir.path().join(format!("{id}.db"));
                let keys = croupier::trust::TableKeys::load_or_create(
                    &croupier::trust::keys::path_for(&db),
                )
                .expect("the table's key file");
                (id.as_str(), keys.public_hex())
            })
            .collect();
        let keys_file = dir.path().join("table-keys.toml");
        studio_table::pin_public_keys(&keys_file, keys);
        let keys_file = keys_file.display().to_string();
        let role = |args: &[&str], log: &str| {
            let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
            spawn_args(&args, &dir.path().join(log))
        };
        let mut relays = Vec::new();
        for k in 0..2 {
            relays.push(
                announced(role(
                    &[
                        "relay",
                        "--nats",
                        &urls,
                        "--bind",
                        "127.0.0.1:0",
                        "--table-keys",
                        &keys_file,
                    ],
                    &format!("relay-{k}.log"),
                ))
                .await,
            );
        }
        let floor = announced(role(
            &[
                "floor",
                "--nats",
                &urls,
                "--database",
                &db.url,
                "--table-keys",
                &keys_file,
            ],
            "floor.log",
        ))
        .await;
        let mut studio = Studio {
            cluster,
            pool: db.pool().await,
            relays,
            relay_logs: (0..2)
                .map(|k| dir.path().join(format!("relay-{k}.log")))
                .collect(),
            floor,
            tables: Vec::new(),
            stats: Vec::new(),
            ready: Arc::new(AtomicU64::new(0)),
        };
        println!(
            "{} tables at most: Deluxe, demo pace {} ms, on a 3-node JetStream cluster (R3); 2 relays, {} viewers per table; the floor into PostgreSQL; {} s windows; limits: a table's p99 {} ms, the floor {} ms behind",
            most, plan.pace_ms, plan.viewers_per_table, plan.seconds, plan.p99_limit_ms, plan.floor_lag_ms
        );
        println!("| tables | viewers | rows/s | cards/s per table | p50 | p99 | worst table's p99 | floor lag | resyncs | silent drops | broker CPU per table | broker CPU per row | relay CPU per 1,000 viewers | messages per relay CPU second | floor CPU per row | PostgreSQL CPU per row | CPU per table | RSS per table | messages/s delivered | relays' RSS | relays' RSS per viewer | broker RSS | floor RSS | viewers' CPU (this process) | nats-server WebSocket: messages per CPU second | its p99 | publisher's acknowledgement p50, p99 | within limits |");
        println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        let _ = std::io::stdout().flush();
        let mut largest = 0;
        let files = file_limit();
        for &n in &plan.steps {
            // Both windows' viewers at once, and room for the rest.
            let needed = (2 * n * plan.viewers_per_table + 1000) as u64;
            if needed > files {
                println!("{n} tables: {needed} open files wanted, the limit is {files} (`ulimit -n`): stopped here");
                break;
            }
            let s = step(&mut studio, &plan, n, dir.path(), &urls).await;
            println!("{}", s.line);
            let _ = std::io::stdout().flush();
            if !s.passed {
                break;
            }
            largest = n;
        }
        println!("largest N within the limits: {largest}");
        // What a message weighs on the wire (payload and headers, as the streams hold
        // them): what the network side of the capacity model is built from.
        if let Some(t) = studio.tables.first() {
            let first = urls.split(',').next().unwrap_or_default().to_string();
            let js = async_nats::jetstream::new(async_nats::connect(first).await.expect("connect"));
            for (what, prefix) in [
                ("public message", croupier::broker::subjects::DEFAULT_PUBLIC_STREAM),
                ("log row", croupier::broker::subjects::DEFAULT_LOG_STREAM),
            ] {
                let name = croupier::broker::subjects::stream(prefix, &t.id);
                if let Ok(mut stream) = js.get_stream(&name).await {
                    if let Ok(info) = stream.info().await {
                        println!(
                            "{what} ({name}): {:.0} bytes on average over {} messages",
                            info.state.bytes as f64 / info.state.messages.max(1) as f64,
                            info.state.messages
                        );
                    }
                }
            }
        }
        for t in &mut studio.tables {
            t.kill();
        }
        studio.pool.close().await;
    });
    rt.shutdown_timeout(Duration::from_secs(2));
}

/// The run's directory, removed at the end unless `CROUPIER_BENCH_KEEP` is set.
struct Keep(Option<tempfile::TempDir>);

impl Keep {
    fn path(&self) -> &std::path::Path {
        self.0
            .as_ref()
            .map_or(std::path::Path::new("."), |d| d.path())
    }
}

impl Drop for Keep {
    fn drop(&mut self) {
        if std::env::var_os("CROUPIER_BENCH_KEEP").is_some() {
            if let Some(d) = self.0.take() {
                let _ = d.keep();
            }
        }
    }
}
