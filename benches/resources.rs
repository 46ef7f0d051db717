//! Resource figures of the real `croupier run` binary (release build) on the built-in
//! default config — simulated shoe on a PTY, demo players — with public viewers on
//! `/ws/public` (issue #8, item 9):
//!
//! - **start-up to READY**: from spawn to the `READY=1` datagram on a notification
//!   socket this benchmark creates (`NOTIFY_SOCKET`, as systemd does for `Type=notify`),
//!   and on to the first `/readyz` 200 (the shoe's link up). A fresh database each start.
//! - **RSS**: `VmRSS` before the viewers, its maximum (sampled every second) while they
//!   watch, and `VmHWM` (the peak) at the end.
//! - **CPU**: utime + stime over the window, as a share of one core, in two states:
//!   *dealing* — the default config, the demo playing a round about every few seconds;
//!   *idle* — the same config with `demo.players = false`: the table open, the shoe
//!   connected (croupier-v1 heartbeats), the viewers connected, nothing dealt.
//!
//!     cargo bench --bench resources -- [--viewers 100] [--seconds 20] [--starts 5]
//!
//! Prints `/proc/loadavg` before and after each part: the figures mean little on a
//! loaded machine.

#[path = "support/announce.rs"]
mod announce;
#[path = "support/args.rs"]
mod args;

use args::Args;
use croupier::process::ProcessFigures;
use croupier::web::client::request;
use futures::StreamExt;
use std::os::unix::net::UnixDatagram;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A started service.
struct Server {
    child: Child,
    addr: String,
    /// Spawn → `READY=1`.
    ready: Duration,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
}

/// Starts the binary on the default config (a fresh database, any free port; without
/// the demo players when `demo` is false) and waits for `READY=1`.
fn start(demo: bool, env: &[(String, String)]) -> Server {
    let dir = tempfile::tempdir().expect("tempdir");
    let quiet = [("players = true", "players = false")];
    let cfg = announce::config_in(dir.path(), if demo { &[] } else { &quiet }, "");
    let sock_path = dir.path().join("notify.sock");
    let manager = UnixDatagram::bind(&sock_path).expect("notify socket");
    manager
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut command = Command::new(env!("CARGO_BIN_EXE_croupier"));
    command
        .args(["run", "--config"])
        .arg(&cfg)
        .env("NOTIFY_SOCKET", &sock_path)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in env {
        command.env(k, v);
    }
    let spawned = Instant::now();
    let mut child = command.spawn().expect("start croupier");
    let mut buf = [0u8; 512];
    let ready = loop {
        let n = manager.recv(&mut buf).expect("READY=1 within 30 s");
        if buf[..n].starts_with(b"READY=1") {
            break spawned.elapsed();
        }
    };
    let addr = announce::address(&mut child);
    Server {
        child,
        addr,
        ready,
        _dir: dir,
    }
}

/// Polls `/readyz` until 200; returns when (from `since`).
async fn until_ready(addr: &str, since: Instant) -> Duration {
    loop {
        if let Ok((200, _)) = request(addr, "GET", "/readyz", None, Duration::from_secs(2)).await {
            return since.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// Cards applied so far, from the service's own `/metrics`.
async fn cards(addr: &str) -> u64 {
    let Ok((200, text)) = request(addr, "GET", "/metrics", None, Duration::from_secs(5)).await
    else {
        return 0;
    };
    text.lines()
        .find_map(|l| l.strip_prefix("croupier_cards_read_total{outcome=\"applied\"} "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1000.0)
}

/// `n` viewers on `/ws/public`, each reading until the server closes; returns once every
/// one has its first message.
async fn viewers(addr: &str, n: usize) -> Vec<tokio::task::JoinHandle<()>> {
    let got = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..n {
        let url = format!("ws://{addr}/ws/public");
        let got = Arc::clone(&got);
        tasks.push(tokio::spawn(async move {
            let Ok((ws, _)) = tokio_tungstenite::connect_async(url.as_str()).await else {
                return;
            };
            let (_sink, mut stream) = ws.split();
            let mut first = true;
            while let Some(Ok(_)) = stream.next().await {
                if first {
                    got.fetch_add(1, Ordering::SeqCst);
                    first = false;
                }
            }
        }));
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while got.load(Ordering::SeqCst) < n && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(got.load(Ordering::SeqCst), n, "every viewer connected");
    tasks
}

/// One steady-state measurement: RSS before/with the viewers, CPU over `seconds`.
async fn steady(label: &str, demo: bool, n: usize, seconds: u64, env: &[(String, String)]) {
    let load_before = loadavg();
    let server = start(demo, env);
    let pid = server.child.id();
    until_ready(&server.addr, Instant::now()).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let alone = ProcessFigures::of(pid);
    let tasks = viewers(&server.addr, n).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let cards0 = cards(&server.addr).await;
    let before = ProcessFigures::of(pid);
    let t0 = Instant::now();
    let mut rss_max = 0;
    while t0.elapsed() < Duration::from_secs(seconds) {
        tokio::time::sleep(Duration::from_secs(1)).await;
        rss_max = rss_max.max(ProcessFigures::of(pid).rss_bytes);
    }
    let after = ProcessFigures::of(pid);
    let cpu = (after.cpu_seconds - before.cpu_seconds) / t0.elapsed().as_secs_f64() * 100.0;
    let dealt = cards(&server.addr).await - cards0;
    println!(
        "| {label} | {n} | {dealt} | {} | {} | {} | {cpu:.2} % | {} | {load_before} → {} |",
        mb(alone.rss_bytes),
        mb(rss_max),
        mb(after.rss_peak_bytes),
        after.threads,
        loadavg(),
    );
    for t in tasks {
        t.abort();
    }
    drop(server);
}

fn main() {
    let args = Args::from_env();
    if args.listing() {
        return;
    }
    let n: usize = args.number("--viewers", 100);
    let seconds: u64 = args.number("--seconds", 20);
    let starts: usize = args.number("--starts", 5);
    // Extra environment for the server, e.g. `--env MALLOC_ARENA_MAX=2` (repeatable).
    let env: Vec<(String, String)> = args
        .all("--env")
        .into_iter()
        .filter_map(|v| v.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        println!("croupier run, default config (simulated shoe on a PTY, demo players), release build");
        println!("server environment: {env:?}; machine load before: {}", loadavg());
        println!();
        println!("| start | spawn → READY=1 | spawn → /readyz 200 | RSS at READY |");
        println!("|---|---|---|---|");
        let mut readies = Vec::new();
        let mut readyz = Vec::new();
        for i in 1..=starts {
            let since = Instant::now();
            let server = start(true, &env);
            let rss = ProcessFigures::of(server.child.id()).rss_bytes;
            // Measured from this side's spawn call, like READY (`since` is a few µs earlier).
            let ready_z = until_ready(&server.addr, since).await;
            println!("| {i} | {} | {} | {} |", ms(server.ready), ms(ready_z), mb(rss));
            readies.push(server.ready);
            readyz.push(ready_z);
        }
        println!(
            "| median | {} | {} | |",
            ms(median(readies)),
            ms(median(readyz))
        );
        println!();
        println!("| state | viewers | cards dealt in the window | RSS before viewers | RSS max with viewers | VmHWM | CPU (of one core) over {seconds} s | threads | load avg (1, 5, 15 min) |");
        println!("|---|---|---|---|---|---|---|---|---|");
        steady("dealing (demo)", true, n, seconds, &env).await;
        steady("idle (no demo)", false, n, seconds, &env).await;
    });
}
