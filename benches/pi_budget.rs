//! The table on a Raspberry Pi's budget (issue #37, item 3): the real `croupier run` binary
//! in a control group limited to a quarter of one core and 256 MB, dealing about four cards
//! a second (the built-in demo: simulated shoe on a PTY, demo players; no dispute window
//! between rounds), publishing every row to a real `nats-server` (JetStream), with 100
//! viewers on the table's own `/ws/public`.
//!
//!     cargo bench --bench pi_budget -- [--seconds 30] [--viewers 100] [--pace-ms 190]
//!                                       [--cpu-percent 25] [--memory-mb 256] [--check]
//!
//! It prints, for the measured window:
//! - **card → delta at the viewers**: from the row's commit stamp (`at_ms`, taken once the
//!   table has read and checked the card, before the fsync) to a viewer having read the
//!   delta whole, p50/p99/max over every viewer's copy of every message;
//! - the cards dealt per second (the table's own `croupier_cards_read_total`);
//! - **false alarms**: the table's `croupier_alarms_total` must not move, and the systemd
//!   watchdog (`WATCHDOG_USEC` = 2 s, so the table pings every second) must never go
//!   unfed for longer than it allows;
//! - **RSS**: the largest `VmRSS` sampled every second and `VmHWM` at the end, beside the
//!   group's own peak;
//! - the table's CPU as a share of one core, and how often the group's quota throttled it.
//!
//! The group is made by the benchmark and removed after it: cgroup v2 (`cpu.max`,
//! `memory.max`) where the machine mounts it as its only hierarchy, else v1 (`cpu`'s
//! `cfs_quota_us`, `memory`'s `limit_in_bytes`). Making one needs root (or a delegated
//! subtree); without one the benchmark fails rather than measure an unlimited table.
//! `--check` exits non-zero when a goal is missed (p99 ≤ 10 ms, no false alarm, RSS ≤
//! 40 MB); CI runs it briefly without `--check` on the debug build (`.ci/run`), so that it
//! keeps working, not to hold a debug build to the release goals.

#[path = "support/announce.rs"]
mod announce;
#[path = "support/args.rs"]
mod args;
#[path = "../tests/support/nats.rs"]
mod nats;
#[path = "../tests/support/skip.rs"]
mod skip;
#[path = "support/viewers.rs"]
mod viewers;

use args::Args;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use viewers::{connect_paced, percentile, proc_cpu_ticks, proc_rss_kb, raw_viewer, Stats};

/// The watchdog interval the benchmark asks of the table: it pings every half of it.
const WATCHDOG: Duration = Duration::from_secs(2);
/// The CFS period the quota is a share of (the kernel's default).
const PERIOD_US: u64 = 100_000;

/// A control group made for the table, removed on drop.
struct Budget {
    /// Every directory the group is made of (one in v2; `cpu` and `memory` in v1).
    dirs: Vec<PathBuf>,
    v2: bool,
}

impl Budget {
    /// A group allowing `cpu_percent` of one core and `memory` bytes.
    fn create(name: &str, cpu_percent: u64, memory: u64) -> Result<Budget, String> {
        let root = Path::new("/sys/fs/cgroup");
        let quota = PERIOD_US * cpu_percent / 100;
        let write = |dir: &Path, file: &str, value: &str| {
            std::fs::write(dir.join(file), value)
                .map_err(|e| format!("{}: {e}", dir.join(file).display()))
        };
        if root.join("cgroup.controllers").exists() {
            // v2: the controllers must be enabled for the root's children.
            let _ = std::fs::write(root.join("cgroup.subtree_control"), "+cpu +memory");
            let dir = root.join(name);
            std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let budget = Budget {
                dirs: vec![dir.clone()],
                v2: true,
            };
            write(&dir, "cpu.max", &format!("{quota} {PERIOD_US}"))?;
            write(&dir, "memory.max", &memory.to_string())?;
            let _ = write(&dir, "memory.swap.max", "0");
            return Ok(budget);
        }
        let (cpu, mem) = (root.join("cpu").join(name), root.join("memory").join(name));
        let mut budget = Budget {
            dirs: Vec::new(),
            v2: false,
        };
        for dir in [&cpu, &mem] {
            std::fs::create_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            budget.dirs.push(dir.clone());
        }
        write(&cpu, "cpu.cfs_period_us", &PERIOD_US.to_string())?;
        write(&cpu, "cpu.cfs_quota_us", &quota.to_string())?;
        write(&mem, "memory.limit_in_bytes", &memory.to_string())?;
        let _ = write(&mem, "memory.memsw.limit_in_bytes", &memory.to_string());
        Ok(budget)
    }

    /// The `cgroup.procs` files a process writes its pid to, to join.
    fn procs(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|d| d.join("cgroup.procs")).collect()
    }

    fn read(&self, file: &str) -> Option<String> {
        self.dirs
            .iter()
            .find_map(|d| std::fs::read_to_string(d.join(file)).ok())
    }

    /// How many periods the quota throttled, and for how long in all.
    fn throttled(&self) -> (u64, Duration) {
        let stat = self.read("cpu.stat").unwrap_or_default();
        let value = |key: &str| {
            stat.lines()
                .find_map(|l| l.strip_prefix(key)?.trim().parse::<u64>().ok())
                .unwrap_or(0)
        };
        let time = if self.v2 {
            Duration::from_micros(value("throttled_usec "))
        } else {
            Duration::from_nanos(value("throttled_time "))
        };
        (value("nr_throttled "), time)
    }

    /// The group's peak memory use (page cache included), where the kernel keeps one.
    fn memory_peak(&self) -> Option<u64> {
        let file = if self.v2 {
            "memory.peak"
        } else {
            "memory.max_usage_in_bytes"
        };
        self.read(file)?.trim().parse().ok()
    }
}

impl Drop for Budget {
    fn drop(&mut self) {
        for dir in &self.dirs {
            // The table has exited; its group empties a moment later.
            for _ in 0..50 {
                if std::fs::remove_dir(dir).is_ok() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}

/// The table: started inside the group (a shell joins it, then execs the binary, so not
/// one instruction of the table runs outside), with a notification socket for the watchdog.
struct Table {
    child: Child,
    addr: String,
    _dir: tempfile::TempDir,
}

impl Drop for Table {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the watchdog listener saw.
#[derive(Default)]
struct Pings {
    count: AtomicU64,
    /// The longest time between two pings while measuring, in ms.
    longest_ms: AtomicU64,
    measuring: AtomicBool,
}

fn start_table(budget: &Budget, pace_ms: u64, nats: &str, pings: Arc<Pings>) -> Table {
    let dir = tempfile::tempdir().expect("tempdir");
    let pace = format!("pace_ms = {pace_ms}");
    let edits = [
        ("pace_ms = 400", pace.as_str()),
        ("window_seconds = 5", "window_seconds = 0"),
    ];
    let publish = format!("\n[publish]\nnats_url = \"{nats}\"\n");
    let cfg = announce::config_in(dir.path(), &edits, &publish);
    let sock_path = dir.path().join("notify.sock");
    let manager = UnixDatagram::bind(&sock_path).expect("notify socket");
    let join: String = budget
        .procs()
        .iter()
        .map(|p| format!("echo $$ > {:?} && ", p.display().to_string()))
        .collect();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("{join}exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_croupier"))
        .args(["run", "--config"])
        .arg(&cfg)
        .env("NOTIFY_SOCKET", &sock_path)
        .env("WATCHDOG_USEC", WATCHDOG.as_micros().to_string())
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start croupier in the group");
    std::thread::spawn(move || {
        let mut buf = [0u8; 512];
        let mut last: Option<Instant> = None;
        while let Ok(n) = manager.recv(&mut buf) {
            if !buf[..n].windows(10).any(|w| w == b"WATCHDOG=1") {
                continue;
            }
            let now = Instant::now();
            if let (Some(before), true) = (last, pings.measuring.load(Ordering::SeqCst)) {
                let gap = u64::try_from(now.duration_since(before).as_millis()).unwrap_or(0);
                pings.longest_ms.fetch_max(gap, Ordering::SeqCst);
                pings.count.fetch_add(1, Ordering::SeqCst);
            }
            last = Some(now);
        }
    });
    let addr = announce::address(&mut child);
    Table {
        child,
        addr,
        _dir: dir,
    }
}

/// The sum of a metric's samples whose line starts with `prefix`, from the table's
/// `/metrics`.
async fn metric(addr: &str, prefix: &str) -> u64 {
    let text =
        croupier::web::client::request(addr, "GET", "/metrics", None, Duration::from_secs(10))
            .await
            .map(|(_, body)| body)
            .unwrap_or_default();
    text.lines()
        .filter(|l| l.starts_with(prefix))
        .filter_map(|l| l.rsplit_once(' ')?.1.trim().parse::<f64>().ok())
        .map(|v| v as u64)
        .sum()
}

fn kb(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix(field)?
                .trim()
                .strip_suffix("kB")?
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

fn main() {
    let args = Args::from_env();
    if args.listing() {
        return;
    }
    let seconds: u64 = args.number("--seconds", 30);
    let viewers: usize = args.number("--viewers", 100);
    let pace: u64 = args.number("--pace-ms", 190);
    let cpu_percent: u64 = args.number("--cpu-percent", 25);
    let memory_mb: u64 = args.number("--memory-mb", 256);
    let check = args.flag("--check");
    let bin = nats::nats_server().expect("nats-server (Debian's package) is needed");
    let name = format!("croupier-pi-budget-{}", std::process::id());
    let budget = Budget::create(&name, cpu_percent, memory_mb << 20).unwrap_or_else(|e| {
        panic!("cannot make the control group (root or a delegated cgroup is needed): {e}")
    });
    let dir = tempfile::tempdir().expect("tempdir");
    let broker = nats::Nats::start(&bin, dir.path());
    let pings = Arc::new(Pings::default());
    let table = start_table(&budget, pace, &broker.url(), Arc::clone(&pings));
    let pid = table.child.id();
    let rt = viewers::runtime(1);
    let stats = Arc::new(Stats::new());
    let ready = Arc::new(AtomicU64::new(0));
    let (report, goals_met) = rt.block_on(async {
        let (connected, _) = connect_paced(viewers, &ready, |_| {
            let (a, st, r) = (table.addr.clone(), Arc::clone(&stats), Arc::clone(&ready));
            tokio::spawn(raw_viewer(a, "/ws/public".into(), st, r));
        })
        .await;
        // The demo's first round under way, the viewers' first snapshots read.
        tokio::time::sleep(Duration::from_secs(3)).await;
        let cards0 = metric(&table.addr, "croupier_cards_read_total{outcome=\"applied\"}").await;
        let alarms0 = metric(&table.addr, "croupier_alarms_total").await;
        let (throttled0, throttled_for0) = budget.throttled();
        let cpu0 = proc_cpu_ticks(pid);
        let t0 = Instant::now();
        stats.measuring.store(true, Ordering::SeqCst);
        pings.measuring.store(true, Ordering::SeqCst);
        let mut rss_max = 0;
        while t0.elapsed() < Duration::from_secs(seconds) {
            tokio::time::sleep(Duration::from_secs(1)).await;
            rss_max = rss_max.max(proc_rss_kb(pid));
        }
        stats.measuring.store(false, Ordering::SeqCst);
        pings.measuring.store(false, Ordering::SeqCst);
        let wall = t0.elapsed().as_secs_f64();
        let cpu = (proc_cpu_ticks(pid) - cpu0) as f64 / 100.0;
        let cards = metric(&table.addr, "croupier_cards_read_total{outcome=\"applied\"}").await
            - cards0;
        let alarms = metric(&table.addr, "croupier_alarms_total").await - alarms0;
        let (throttled1, throttled_for1) = budget.throttled();
        let hist: Vec<u64> = stats.hist.iter().map(|h| h.load(Ordering::SeqCst)).collect();
        let got = stats.messages.load(Ordering::SeqCst);
        let max = hist.iter().rposition(|c| *c > 0).unwrap_or(0);
        let (p50, p99) = (percentile(&hist, 0.50), percentile(&hist, 0.99));
        let hwm_mb = kb(pid, "VmHWM:") as f64 / 1024.0;
        let rss_mb = rss_max as f64 / 1024.0;
        let longest_ping = pings.longest_ms.load(Ordering::SeqCst);
        let silent = stats.silent.load(Ordering::SeqCst);
        let peak = budget
            .memory_peak()
            .map_or("–".to_string(), |b| format!("{:.0} MB", b as f64 / 1048576.0));
        let watchdog_ok =
            pings.count.load(Ordering::SeqCst) > 0 && longest_ping < WATCHDOG.as_millis() as u64;
        let report = format!(
            "| {cpu_percent} % of a core, {memory_mb} MB | {connected}/{viewers} | {:.1} | {got} | {p50} ms | {p99} ms | {max} ms | {silent} | {alarms} | {longest_ping} ms | {rss_mb:.1} MB | {hwm_mb:.1} MB | {peak} | {:.1} % | {} ({:.2} s) |",
            cards as f64 / wall,
            cpu / wall * 100.0,
            throttled1 - throttled0,
            (throttled_for1 - throttled_for0).as_secs_f64(),
        );
        let goals = [
            ("card → delta p99 ≤ 10 ms", p99 <= 10 && got > 0),
            ("no alarm raised", alarms == 0),
            ("the watchdog fed throughout", watchdog_ok),
            ("no silent drop", silent == 0),
            ("RSS ≤ 40 MB", hwm_mb <= 40.0),
            ("cards dealt", cards > 0),
        ];
        let mut met = true;
        let mut lines = report;
        for (goal, ok) in goals {
            met &= ok;
            lines += &format!("\n{}: {goal}", if ok { "met" } else { "MISSED" });
        }
        (lines, met)
    });
    println!("the table in a control group ({}), demo pace {pace} ms, publishing to nats-server; measured {seconds} s", if budget.v2 { "cgroup v2" } else { "cgroup v1" });
    println!("| budget | viewers | cards/s | delivered | p50 | p99 | max | silent drops | alarms | longest watchdog gap | RSS (max sampled) | VmHWM | group's memory peak | table CPU (of one core) | throttled periods (time) |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    println!("{report}");
    rt.shutdown_timeout(Duration::from_secs(2));
    drop(table);
    drop(broker);
    drop(budget);
    if check && !goals_met {
        std::process::exit(1);
    }
}
