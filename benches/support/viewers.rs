//! The WebSocket viewers of the load benchmarks (`viewers`, `relay`): a lean raw client and
//! tokio-tungstenite, each recording delivery latency (`at_ms` → read whole), resyncs and
//! silent drops (a gap in `n` not announced by a resync); and the `/proc` readings.
#![allow(dead_code)]

use futures::StreamExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;

/// The viewers' runtime: `workers` threads, so the benchmark's own share of the machine is
/// what it says.
pub fn runtime(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .expect("runtime")
}

const BUCKETS: usize = 10_001; // 1 ms each; the last one is "10 s or more"

pub struct Stats {
    pub hist: Vec<AtomicU64>,
    pub messages: AtomicU64,
    pub resyncs: AtomicU64,
    pub silent: AtomicU64,
    pub closed: AtomicU64,
    pub max_n: AtomicU64,
    pub measuring: AtomicBool,
}

impl Stats {
    /// Counts what arrives for `seconds`, from now: the wall time that took, in seconds.
    pub async fn measure(&self, seconds: u64) -> f64 {
        let t0 = Instant::now();
        self.measuring.store(true, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_secs(seconds)).await;
        self.measuring.store(false, Ordering::SeqCst);
        t0.elapsed().as_secs_f64()
    }

    /// Empty counters, not measuring yet.
    pub fn new() -> Stats {
        Stats {
            hist: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            messages: AtomicU64::new(0),
            resyncs: AtomicU64::new(0),
            silent: AtomicU64::new(0),
            closed: AtomicU64::new(0),
            max_n: AtomicU64::new(0),
            measuring: AtomicBool::new(false),
        }
    }
}

pub fn now_ms() -> u64 {
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

pub fn proc_cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map(|x| x.1).unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    // fields 14 and 15 (utime, stime) are at 11 and 12 after the ")".
    f.get(11).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0)
        + f.get(12).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0)
}

/// What each thread of a process had counted at one moment, by thread id.
pub struct ThreadCounts(std::collections::BTreeMap<u64, u64>);

impl ThreadCounts {
    /// What the threads counted since `earlier`: each thread's own difference, a thread
    /// born since counting from zero. A thread that ended since is left out with only
    /// what it counted after `earlier` (a sum over the threads alive at each end would
    /// subtract all it had counted: the bench once read a table's CPU per row as 0.19 ms
    /// where it was 1.1 ms, because a blocking thread that had hashed the demo accounts'
    /// PINs at the start ended, idle, inside the window).
    pub fn since(&self, earlier: &ThreadCounts) -> u64 {
        self.0
            .iter()
            .map(|(tid, n)| n.saturating_sub(earlier.0.get(tid).copied().unwrap_or(0)))
            .sum()
    }
}

/// CPU time of every thread `pid` has now, in nanoseconds (the first field of each
/// `/proc/PID/task/TID/schedstat`): exact where `/proc/PID/stat` counts 10 ms ticks, which
/// a table using a millisecond per row at a few rows a second would round to nothing.
/// Take the difference with [`ThreadCounts::since`].
pub fn proc_cpu_ns(pid: u32) -> ThreadCounts {
    per_thread(pid, "schedstat", |s| {
        s.split_whitespace().next()?.parse().ok()
    })
}

/// What `read` finds in `/proc/PID/task/TID/<file>` of every thread `pid` has now.
fn per_thread(pid: u32, file: &str, read: impl Fn(&str) -> Option<u64>) -> ThreadCounts {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return ThreadCounts(Default::default());
    };
    ThreadCounts(
        tasks
            .flatten()
            .filter_map(|t| {
                let tid = t.file_name().to_str()?.parse().ok()?;
                let text = std::fs::read_to_string(t.path().join(file)).ok()?;
                Some((tid, read(&text)?))
            })
            .collect(),
    )
}

/// Voluntary context switches of every thread `pid` has now (each time a thread went to
/// sleep to wait: a parked runtime worker, an fsync, a futex), from
/// `/proc/PID/task/TID/status`. Unlike the CPU time it does not move with what a virtual
/// machine's host is doing, so it tracks how many times a row wakes the process (it does
/// fall when the machine itself is busy: a worker then finds work instead of sleeping).
/// Take the difference with [`ThreadCounts::since`].
pub fn proc_voluntary_switches(pid: u32) -> ThreadCounts {
    per_thread(pid, "status", |s| {
        s.lines()
            .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
            .and_then(|v| v.trim().parse().ok())
    })
}

pub fn proc_rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

/// Counts one received message (`text`, read whole at `received`).
pub fn record(stats: &Stats, text: &str, received: u64, last_n: &mut Option<u64>) {
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
pub async fn tungstenite_viewer(
    addr: String,
    path: String,
    stats: Arc<Stats>,
    ready: Arc<AtomicU64>,
) {
    let url = format!("ws://{addr}{path}");
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
async fn raw_handshake(addr: &str, path: &str) -> Option<(tokio::net::TcpStream, Vec<u8>)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.ok()?;
    let key = {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(fastrand::u128(..).to_le_bytes())
    };
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
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
pub async fn raw_viewer(addr: String, path: String, stats: Arc<Stats>, ready: Arc<AtomicU64>) {
    use tokio::io::AsyncReadExt;
    let (mut stream, mut buf) = loop {
        match raw_handshake(&addr, &path).await {
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

/// A viewer of nats-server's own WebSocket listener (`addr`): a NATS client over
/// WebSocket (tokio-tungstenite, headers on, as a viewer that checks the table's signature
/// in them needs) subscribed to `subject`, each message's payload counted as the relay's
/// viewers count theirs. NATS frames may split or join protocol lines: they are read
/// from one buffer.
pub async fn nats_ws_viewer(
    addr: String,
    subject: String,
    stats: Arc<Stats>,
    ready: Arc<AtomicU64>,
) {
    use futures::SinkExt;
    let url = format!("ws://{addr}");
    let config = WebSocketConfig::default().read_buffer_size(8 * 1024);
    let mut ws = loop {
        match tokio_tungstenite::connect_async_with_config(url.as_str(), Some(config), false).await
        {
            Ok((ws, _)) => break ws,
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    };
    let hello = format!(
        "CONNECT {{\"verbose\":false,\"pedantic\":false,\"headers\":true,\"no_responders\":true,\"protocol\":1}}\r\nSUB {subject} 1\r\nPING\r\n"
    );
    if ws
        .send(Message::Binary(hello.into_bytes().into()))
        .await
        .is_err()
    {
        stats.closed.fetch_add(1, Ordering::Relaxed);
        return;
    }
    let mut counted = false;
    let mut buf: Vec<u8> = Vec::new();
    let mut last_n: Option<u64> = None;
    'read: while let Some(Ok(msg)) = ws.next().await {
        let received = now_ms();
        match msg {
            Message::Binary(b) => buf.extend_from_slice(&b),
            Message::Text(t) => buf.extend_from_slice(t.as_bytes()),
            Message::Close(_) => break,
            _ => continue,
        }
        while let Some(eol) = buf.windows(2).position(|w| w == b"\r\n") {
            let line = String::from_utf8_lossy(&buf[..eol]).into_owned();
            let mut used = eol + 2;
            if line.starts_with("MSG ") || line.starts_with("HMSG ") {
                let parts: Vec<&str> = line.split(' ').collect();
                let total: usize = parts[parts.len() - 1].parse().unwrap_or(0);
                let headers: usize = if line.starts_with("HMSG ") {
                    parts[parts.len() - 2].parse().unwrap_or(0)
                } else {
                    0
                };
                if buf.len() < used + total + 2 {
                    break;
                }
                if let Ok(text) = std::str::from_utf8(&buf[used + headers..used + total]) {
                    record(&stats, text, received, &mut last_n);
                }
                used += total + 2;
            } else if line == "PING" {
                if ws
                    .send(Message::Binary(b"PONG\r\n".to_vec().into()))
                    .await
                    .is_err()
                {
                    break 'read;
                }
            } else if line == "PONG" && !counted {
                // The answer to the PING after SUB: subscribed.
                counted = true;
                ready.fetch_add(1, Ordering::SeqCst);
            } else if line.starts_with("-ERR") {
                break 'read;
            }
            buf.drain(..used);
        }
    }
    stats.closed.fetch_add(1, Ordering::Relaxed);
}

pub fn percentile(hist: &[u64], p: f64) -> usize {
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

/// Starts `viewers` viewers, `spawn(i)` each, pacing the handshakes (the listen backlog is
/// finite), then waits up to a minute for `ready` to count them all: how many connected,
/// and in how many seconds.
pub async fn connect_paced(
    viewers: usize,
    ready: &AtomicU64,
    mut spawn: impl FnMut(usize),
) -> (u64, f64) {
    let start = Instant::now();
    for i in 0..viewers {
        spawn(i);
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
    (ready.load(Ordering::SeqCst), start.elapsed().as_secs_f64())
}
