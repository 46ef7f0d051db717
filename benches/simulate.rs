//! `cargo bench --bench simulate`: `croupier simulate`'s rounds per second per core beside
//! freebj's (crates.io, MIT; `cargo install freebj`) on the same rules — 8 decks, S17, DAS,
//! peek, 3:2, one split, no surrender, cut card at 75 % — each on one thread, in the same
//! run; then croupier on every core (scaling), and the allocations per round on its hot
//! path (a counting global allocator). docs/src/benchmarks.md records the figures.
//!
//! `SIM_ROUNDS` sets the rounds (default 2,000,000); `FREEBJ` the freebj binary (default
//! `freebj` on the PATH, then `~/.cargo/bin/freebj`). Without freebj the comparison is
//! reported as skipped and croupier's figures are still printed.

use croupier::engine::Variant;
use croupier::math::simulate::{simulate, Config};
use std::alloc::{GlobalAlloc, Layout, System};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Counts every allocation, to show the hot path does not allocate per round.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The shared rules, as a variant file (Deluxe's shoe and dealer, no surrender, no side
/// bets, no burn, so that both simulators play the same game).
const RULES: &str = r#"
name = "bench: 8 decks, S17, DAS, peek"
[shoe]
decks = 8
new_shoe_every_round = false
cut_card = true
burn = "none"
[deal]
seats = 1
seat_order = "ascending"
dealer_cards = 2
peek_on = ["ace", "ten"]
[dealer]
soft_17 = "stand"
max_cards = 0
[hand]
ace = "one_or_eleven"
natural = "blackjack"
natural_pays = "3:2"
charlie = 0
max_cards = 0
[double]
on = "any_two"
after_split = true
max_per_hand = 1
stand_after_card = true
[split]
max_hands = 2
pairs = "same_value"
not_after_insurance = false
[surrender]
when = "never"
not_against = []
[insurance]
offered = true
cost = "1:2"
pays = "2:1"
even_money = false
[settlement]
ties = "push"
dealer_natural_takes = "all_bets"
[limits]
min = 10
max = 1000000
"#;

fn freebj() -> Option<String> {
    if let Ok(path) = std::env::var("FREEBJ") {
        return Some(path);
    }
    let on_path = Command::new("freebj").arg("--help").output().is_ok();
    if on_path {
        return Some("freebj".into());
    }
    let home = std::env::var("HOME").ok()?;
    let cargo = format!("{home}/.cargo/bin/freebj");
    std::path::Path::new(&cargo).exists().then_some(cargo)
}

/// CPU seconds (user + system) of this process (`children`: of its waited-for children).
fn cpu_seconds(children: bool) -> f64 {
    let who = if children {
        libc::RUSAGE_CHILDREN
    } else {
        libc::RUSAGE_SELF
    };
    // SAFETY: getrusage fills the struct it is given; a zeroed rusage is a valid value.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable rusage.
    unsafe { libc::getrusage(who, &mut u) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(u.ru_utime) + secs(u.ru_stime)
}

fn main() {
    let rounds: u64 = std::env::var("SIM_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000_000);
    let variant = Variant::from_toml("bench.toml", RULES).expect("the bench rules are valid");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let run = |threads: usize, rounds: u64| {
        let config = Config {
            rounds,
            threads,
            seed: 7,
            progress: false,
        };
        simulate(&variant, &config).expect("simulates")
    };
    // Warm-up, and the allocations of a short run against a long one: the difference is
    // what each extra round allocates.
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    run(1, 10_000);
    let short = ALLOCATIONS.load(Ordering::Relaxed) - before;
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let cpu = cpu_seconds(false);
    let one = run(1, rounds);
    let one_cpu = cpu_seconds(false) - cpu;
    let long = ALLOCATIONS.load(Ordering::Relaxed) - before;
    let one_cpu_rate = rounds as f64 / one_cpu;
    let per_round = (long.saturating_sub(short)) as f64 / (rounds - 10_000) as f64;
    println!("rules: 8 decks, S17, DAS, peek, 3:2, one split, no surrender, cut card at 75 %");
    println!(
        "croupier simulate, 1 thread: {rounds} rounds, {:.2} s wall = {:.0} rounds/s, {one_cpu:.2} s CPU = {one_cpu_rate:.0} rounds/s per core (RTP {:.3} %, 95 % CI {:.3}–{:.3} %)",
        one.seconds, one.rounds_per_second, one.main.rtp_pct, one.main.ci95_pct[0], one.main.ci95_pct[1]
    );
    println!("croupier allocations per round on the hot path: {per_round:.2} (the engine's settlement record)");
    if cores > 1 {
        let all = run(cores, rounds);
        println!(
            "croupier simulate, {cores} threads: {:.0} rounds/s = {:.0} per core ({:.2}x one thread)",
            all.rounds_per_second,
            all.rounds_per_second / cores as f64,
            all.rounds_per_second / one.rounds_per_second
        );
    }
    let Some(freebj) = freebj() else {
        println!("freebj: not installed (cargo install freebj): comparison skipped");
        return;
    };
    let args = freebj_args(rounds);
    let started = Instant::now();
    let cpu = cpu_seconds(true);
    let out = Command::new(&freebj).args(&args).output();
    let secs = started.elapsed().as_secs_f64();
    let fb_cpu = cpu_seconds(true) - cpu;
    match out {
        Ok(o) if o.status.success() => {
            let rate = rounds as f64 / secs;
            let cpu_rate = rounds as f64 / fb_cpu;
            println!(
                "freebj {}: {rounds} rounds, {secs:.2} s wall = {rate:.0} rounds/s, {fb_cpu:.2} s CPU = {cpu_rate:.0} rounds/s per core",
                args.join(" ")
            );
            println!(
                "croupier / freebj per core (CPU time): {:.2}x (goal: at least 1.5x); wall clock: {:.2}x",
                one_cpu_rate / cpu_rate,
                one.rounds_per_second / rate
            );
            let text = String::from_utf8_lossy(&o.stdout);
            println!(
                "freebj's own report: {}",
                text.trim().chars().take(600).collect::<String>()
            );
        }
        Ok(o) => println!(
            "freebj failed ({}): {}",
            o.status,
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => println!("freebj could not run: {e}"),
    }
}

/// freebj's flags for the same rules, one thread.
fn freebj_args(rounds: u64) -> Vec<String> {
    [
        "-n",
        &rounds.to_string(),
        "-j",
        "1",
        "-d",
        "8",
        "--ahc",
        "--s17",
        "--das",
        "--db-any2",
        "--no-surr",
        "--max-splits",
        "2",
        "-p",
        "75%",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}
