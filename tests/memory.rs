//! Issue #17 item 12: the memory a storm of connections takes is given back once they are
//! gone. The real binary (debug build, the default config on a PTY shoe) takes 2,000
//! `/ws/public` viewers at once; when they leave, its resident memory must fall back at
//! least halfway to where it was before the storm. Before `process::trim_after_storms`
//! glibc kept the freed pages (measured: 32.8 MB → 51.4 MB with the viewers → 51.6 MB ten
//! seconds after they left).

mod common;
#[path = "common/proc.rs"]
mod proc;

use croupier_drivers::sim::pty::Pty;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const VIEWERS: usize = 2_000;

/// Resident memory of `pid` in KiB (`VmRSS` in `/proc/PID/status`).
fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// A `/ws/public` viewer: the upgrade answered with 101.
async fn viewer(addr: &str) -> TcpStream {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.write_all(
        b"GET /ws/public HTTP/1.1\r\nHost: croupier\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
          Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    )
    .await
    .expect("handshake");
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = s.read(&mut buf).await.expect("read");
        assert!(n > 0, "closed during the handshake");
        head.extend_from_slice(&buf[..n]);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 101"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_taken_by_a_connection_storm_is_given_back() {
    let dir = tempfile::tempdir().expect("tmp");
    let pty = Pty::open().expect("pty");
    let cfg = common::config_file(dir.path(), pty.path(), "deluxe");
    let run = proc::announced(proc::spawn_raw(&cfg, &dir.path().join("croupier.log"))).await;
    let pid = run.child.id();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before = rss_kb(pid);

    let mut viewers = Vec::with_capacity(VIEWERS);
    for _ in 0..VIEWERS / 100 {
        let batch: Vec<_> = (0..100)
            .map(|_| {
                tokio::spawn({
                    let addr = run.addr.clone();
                    async move { viewer(&addr).await }
                })
            })
            .collect();
        for v in batch {
            viewers.push(v.await.expect("viewer task"));
        }
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let peak = rss_kb(pid);
    assert!(
        peak >= before + 4 * 1024,
        "the storm took too little memory to tell anything: {before} → {peak} KiB"
    );
    drop(viewers);

    // Back at least halfway, within a generous bound (the trim runs once a second).
    let halfway = before + (peak - before) / 2;
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut now = rss_kb(pid);
    while now > halfway && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(500)).await;
        now = rss_kb(pid);
    }
    assert!(
        now <= halfway,
        "memory not given back: {before} KiB before, {peak} KiB with {VIEWERS} viewers, \
         {now} KiB 30 s after they left (halfway is {halfway})"
    );
    run.kill();
}
