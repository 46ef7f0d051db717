//! Load benchmark of the public stream (loopback only, bounded in time): the real
//! `croupier run` binary plays Deluxe rounds with its demo players and simulated shoe, and
//! N WebSocket viewers follow `/ws/public` from this process. Reports per N: messages per
//! viewer, p50/p99/max delivery latency (publish `at_ms` → received), server CPU and RSS,
//! resyncs (announced) and silent drops (a gap in `n` without a resync).
//!
//!     cargo bench --bench viewers -- [--viewers 1000,5000,10000] [--seconds 20] [--pace-ms 100]
//!         [--client raw|tungstenite]
//!
//! The viewers share the machine's cores with the server, so what they cost themselves
//! lengthens what is measured. `raw` (the default) is a lean client that checks the
//! server's bytes itself: a hand-written handshake (the accept key checked), then frames
//! parsed from one reused buffer; `tungstenite` is tokio-tungstenite, read without
//! splitting the stream (the split's lock cost a few percent). Both cost the viewers about
//! 5–7 µs of CPU per message on the development VM, mostly in the kernel.
//!
//! Needs a file-descriptor limit above N (each side holds one socket per viewer).

#[path = "support/announce.rs"]
mod announce;
#[path = "support/args.rs"]
mod args;
#[path = "support/viewers.rs"]
mod viewers;

use args::Args;
use std::io::Write;
use std::process::Child;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use viewers::{
    connect_paced, percentile, proc_cpu_ticks, proc_rss_kb, raw_viewer, tungstenite_viewer, Stats,
};

fn start_server(dir: &std::path::Path, pace_ms: u64) -> (Child, String) {
    let pace = format!("pace_ms = {pace_ms}");
    let edits = [("pace_ms = 400", pace.as_str()), ("seats = 3", "seats = 5")];
    let cfg = announce::config_in(dir, &edits, "");
    announce::start(&["run".as_ref(), "--config".as_ref(), cfg.as_os_str()])
}

fn run(viewers: usize, seconds: u64, pace_ms: u64, raw: bool) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut child, addr) = start_server(dir.path(), pace_ms);
    let pid = child.id();
    let rt = viewers::runtime(2);
    let stats = Arc::new(Stats::new());
    let ready = Arc::new(AtomicU64::new(0));
    let line = rt.block_on(async {
        let (connected, connect_s) = connect_paced(viewers, &ready, |_| {
            let (a, st, r) = (addr.clone(), Arc::clone(&stats), Arc::clone(&ready));
            if raw {
                tokio::spawn(raw_viewer(a, "/ws/public".into(), st, r));
            } else {
                tokio::spawn(tungstenite_viewer(a, "/ws/public".into(), st, r));
            }
        })
        .await;
        tokio::time::sleep(Duration::from_secs(2)).await;
        let cpu0 = proc_cpu_ticks(pid);
        let me = std::process::id();
        let mine0 = proc_cpu_ticks(me);
        let n0 = stats.max_n.load(Ordering::SeqCst);
        let wall = stats.measure(seconds).await;
        let cpu = (proc_cpu_ticks(pid) - cpu0) as f64 / 100.0 / wall * 100.0;
        let mine = (proc_cpu_ticks(me) - mine0) as f64 / 100.0 / wall * 100.0;
        let load = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|l| l.split_whitespace().next().map(str::to_owned))
            .unwrap_or_default();
        let rss = proc_rss_kb(pid);
        let published = stats.max_n.load(Ordering::SeqCst) - n0;
        let hist: Vec<u64> = stats
            .hist
            .iter()
            .map(|h| h.load(Ordering::SeqCst))
            .collect();
        let got = stats.messages.load(Ordering::SeqCst);
        let max = hist.iter().rposition(|c| *c > 0).unwrap_or(0);
        format!(
            "| {viewers} | {connected} in {connect_s:.1} s | {published} | {got} ({:.0}/s) | {} ms | {} ms | {max} ms | {cpu:.0} % | {:.0} MB | {mine:.0} % | {load} | {} | {} | {} |",
            got as f64 / wall,
            percentile(&hist, 0.50),
            percentile(&hist, 0.99),
            rss as f64 / 1024.0,
            stats.resyncs.load(Ordering::SeqCst),
            stats.silent.load(Ordering::SeqCst),
            stats.closed.load(Ordering::SeqCst),
        )
    });
    println!("{line}");
    let _ = std::io::stdout().flush();
    let _ = child.kill();
    let _ = child.wait();
    rt.shutdown_timeout(Duration::from_secs(2));
}

fn main() {
    let args = Args::from_env();
    let viewers = args.numbers("--viewers", "1000,5000,10000");
    let seconds: u64 = args.number("--seconds", 20);
    let pace: u64 = args.number("--pace-ms", 100);
    let raw = match args.value("--client").as_deref() {
        None | Some("raw") => true,
        Some("tungstenite") => false,
        Some(other) => panic!("--client raw|tungstenite, not {other}"),
    };
    if args.listing() {
        return;
    }
    println!(
        "public viewers on loopback ({} client); demo pace {pace} ms; measured {seconds} s after connecting",
        if raw { "raw" } else { "tungstenite" }
    );
    println!("| viewers | connected | published | received (rate) | p50 | p99 | max | server CPU (of one core) | server RSS | viewers' CPU | load avg | resyncs | silent drops | closed |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for n in viewers {
        run(n, seconds, pace, raw);
    }
}
