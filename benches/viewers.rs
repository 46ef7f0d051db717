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

use futures::StreamExt;
use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;

const BUCKETS: usize = 10_001; // 1 ms each; the last one is "10 s or more"

struct Stats {
    hist: Vec<AtomicU64>,
    messages: AtomicU64,
    resyncs: AtomicU64,
    silent: AtomicU64,
    closed: AtomicU64,
    max_n: AtomicU64,
    measuring: AtomicBool,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The number after `"key":` near the start of a feed message (they lead the JSON).
fn field(text: &str, key: &str) -> Option<u64> {
    let head = &text[..text.len().min(200)];
    let at = head.find(key)? + key.len();
    let digits: String = head[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

fn proc_cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map(|x| x.1).unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    // fields 14 and 15 (utime, stime) are at 11 and 12 after the ")".
    f.get(11).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0)
        + f.get(12).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0)
}

fn proc_rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

fn start_server(dir: &std::path::Path, pace_ms: u64) -> (Child, String) {
    let text = croupier::table::config::DEFAULT_TOML
        .replace(
            "path = \"data/croupier.db\"",
            &format!("path = {:?}", dir.join("croupier.db").display().to_string()),
        )
        .replace("bind = \"127.0.0.1:8080\"", "bind = \"127.0.0.1:0\"")
        .replace("pace_ms = 400", &format!("pace_ms = {pace_ms}"))
        .replace("seats = 3", "seats = 5");
    let cfg = dir.join("table.toml");
    std::fs::write(&cfg, text).expect("config");
    let mut child = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .arg("run")
        .arg("--config")
        .arg(&cfg)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start croupier");
    let addr = announce::address(&mut child);
    (child, addr)
}

/// Counts one received message (`text`, read whole at `received`).
fn record(stats: &Stats, text: &str, received: u64, last_n: &mut Option<u64>) {
    let (Some(n), Some(at)) = (field(text, "\"n\":"), field(text, "\"at_ms\":")) else {
        return;
    };
    let resync = text[..text.len().min(200)].contains("\"resync\":true");
    stats.max_n.fetch_max(n, Ordering::Relaxed);
    if stats.measuring.load(Ordering::Relaxed) {
        stats.messages.fetch_add(1, Ordering::Relaxed);
        let ms = received.saturating_sub(at) as usize;
        stats.hist[ms.min(BUCKETS - 1)].fetch_add(1, Ordering::Relaxed);
        if resync {
            stats.resyncs.fetch_add(1, Ordering::Relaxed);
        } else if let Some(l) = *last_n {
            if n != l + 1 {
                stats.silent.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    *last_n = Some(n);
}

/// A viewer on tokio-tungstenite, as a Rust client would be written.
async fn tungstenite_viewer(addr: String, stats: Arc<Stats>, ready: Arc<AtomicU64>) {
    let url = format!("ws://{addr}/ws/public");
    // tungstenite zero-fills its whole read chunk before every read (128 KiB by default):
    // with 10k viewers in this process that memset was half of the viewers' CPU, taken
    // from the same two cores the server runs on. A small chunk is plenty (a feed message
    // is a few KiB; the buffer still grows for a larger one) and changes nothing about
    // what is measured: a message counts once it has been read whole.
    let config = WebSocketConfig::default().read_buffer_size(8 * 1024);
    let mut ws = loop {
        match tokio_tungstenite::connect_async_with_config(url.as_str(), Some(config), false).await
        {
            Ok((ws, _)) => break ws,
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    };
    ready.fetch_add(1, Ordering::SeqCst);
    let mut last_n: Option<u64> = None;
    while let Some(Ok(msg)) = ws.next().await {
        let Message::Text(text) = msg else { continue };
        record(&stats, &text, now_ms(), &mut last_n);
    }
    stats.closed.fetch_add(1, Ordering::Relaxed);
}

/// The handshake of a raw viewer; `None` when the server did not switch protocols.
async fn raw_handshake(addr: &str) -> Option<(tokio::net::TcpStream, Vec<u8>)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.ok()?;
    let key = {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(fastrand::u128(..).to_le_bytes())
    };
    let request = format!(
        "GET /ws/public HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.ok()?;
    let mut head = Vec::with_capacity(512);
    let end = loop {
        let mut chunk = [0u8; 512];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        head.extend_from_slice(&chunk[..n]);
        if let Some(at) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let text = String::from_utf8_lossy(&head[..end]).to_ascii_lowercase();
    let accept = croupier::web::wsframe::accept_key(key.as_bytes()).to_ascii_lowercase();
    if !text.starts_with("http/1.1 101")
        || !text.contains(&format!("sec-websocket-accept: {accept}"))
    {
        return None;
    }
    Some((stream, head[end..].to_vec()))
}

/// A lean viewer: the same handshake, then unmasked server frames parsed from one buffer
/// reused for every read. Each text frame is read whole, checked as UTF-8 and counted as
/// the tungstenite viewer counts it; anything that is not a final text or close frame
/// ends the viewer (counted as closed).
async fn raw_viewer(addr: String, stats: Arc<Stats>, ready: Arc<AtomicU64>) {
    use tokio::io::AsyncReadExt;
    let (mut stream, mut buf) = loop {
        match raw_handshake(&addr).await {
            Some(ok) => break ok,
            None => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    };
    ready.fetch_add(1, Ordering::SeqCst);
    let mut filled = buf.len();
    buf.resize(filled.max(4096), 0);
    let mut last_n: Option<u64> = None;
    'read: loop {
        // Every whole frame in the buffer.
        let mut at = 0;
        loop {
            let b = &buf[at..filled];
            if b.len() < 2 {
                break;
            }
            let (head, len) = match b[1] {
                126 if b.len() >= 4 => (4, usize::from(u16::from_be_bytes([b[2], b[3]]))),
                127 if b.len() >= 10 => (
                    10,
                    u64::from_be_bytes(b[2..10].try_into().unwrap()) as usize,
                ),
                126 | 127 => break,
                n if n < 126 => (2, usize::from(n)),
                _ => break 'read, // masked: not from a server
            };
            if b.len() < head + len {
                if head + len > buf.len() {
                    buf.resize(head + len + at, 0);
                }
                break;
            }
            match b[0] {
                0x81 => {
                    let received = now_ms();
                    let Ok(text) = std::str::from_utf8(&b[head..head + len]) else {
                        break 'read;
                    };
                    record(&stats, text, received, &mut last_n);
                }
                0x88 => break 'read,
                _ => break 'read,
            }
            at += head + len;
        }
        buf.copy_within(at..filled, 0);
        filled -= at;
        match stream.read(&mut buf[filled..]).await {
            Ok(0) | Err(_) => break,
            Ok(n) => filled += n,
        }
    }
    stats.closed.fetch_add(1, Ordering::Relaxed);
}

fn percentile(hist: &[u64], p: f64) -> usize {
    let total: u64 = hist.iter().sum();
    let want = ((total as f64) * p).ceil() as u64;
    let mut seen = 0;
    for (i, c) in hist.iter().enumerate() {
        seen += c;
        if seen >= want.max(1) {
            return i;
        }
    }
    hist.len() - 1
}

fn run(viewers: usize, seconds: u64, pace_ms: u64, raw: bool) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut child, addr) = start_server(dir.path(), pace_ms);
    let pid = child.id();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let stats = Arc::new(Stats {
        hist: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
        messages: AtomicU64::new(0),
        resyncs: AtomicU64::new(0),
        silent: AtomicU64::new(0),
        closed: AtomicU64::new(0),
        max_n: AtomicU64::new(0),
        measuring: AtomicBool::new(false),
    });
    let ready = Arc::new(AtomicU64::new(0));
    let line = rt.block_on(async {
        let connect_start = Instant::now();
        for i in 0..viewers {
            let (a, st, r) = (addr.clone(), Arc::clone(&stats), Arc::clone(&ready));
            if raw {
                tokio::spawn(raw_viewer(a, st, r));
            } else {
                tokio::spawn(tungstenite_viewer(a, st, r));
            }
            // Pace the handshakes a little (the listen backlog is finite).
            if i % 200 == 199 {
                while ready.load(Ordering::SeqCst) + 400 < i as u64 {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        while (ready.load(Ordering::SeqCst) as usize) < viewers && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let connected = ready.load(Ordering::SeqCst);
        let connect_s = connect_start.elapsed().as_secs_f64();
        tokio::time::sleep(Duration::from_secs(2)).await;
        let cpu0 = proc_cpu_ticks(pid);
        let me = std::process::id();
        let mine0 = proc_cpu_ticks(me);
        let n0 = stats.max_n.load(Ordering::SeqCst);
        let t0 = Instant::now();
        stats.measuring.store(true, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_secs(seconds)).await;
        stats.measuring.store(false, Ordering::SeqCst);
        let wall = t0.elapsed().as_secs_f64();
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
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let viewers: Vec<usize> = arg("--viewers")
        .unwrap_or_else(|| "1000,5000,10000".into())
        .split(',')
        .filter_map(|x| x.trim().parse().ok())
        .collect();
    let seconds: u64 = arg("--seconds").and_then(|x| x.parse().ok()).unwrap_or(20);
    let pace: u64 = arg("--pace-ms").and_then(|x| x.parse().ok()).unwrap_or(100);
    let raw = match arg("--client").as_deref() {
        None | Some("raw") => true,
        Some("tungstenite") => false,
        Some(other) => panic!("--client raw|tungstenite, not {other}"),
    };
    if args.iter().any(|a| a == "--list") {
        return; // `cargo bench -- --list` (the harness protocol)
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
