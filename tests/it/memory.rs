//! Issue #17 item 12: the memory a storm of connections takes is given back once they are
//! gone. The real binary (debug build, the default config on a PTY shoe) takes 2,000
//! `/ws/public` viewers at once; when they leave, its resident memory must fall back at
//! least halfway to where it was before the storm. Before `process::trim_after_storms`
//! glibc kept the freed pages (measured: 32.8 MB → 51.4 MB with the viewers → 51.6 MB ten
//! seconds after they left).

use crate::common;
use crate::proc;

use croupier_drivers::sim::pty::Pty;
use std::time::Duration;

const VIEWERS: usize = 2_000;

/// A `/ws/public` viewer: the upgrade answered with 101.
async fn viewer(addr: &str) -> tokio::net::TcpStream {
    let (status, s) = proc::raw_upgrade(addr, "/ws/public").await;
    assert_eq!(status, 101);
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
    let before = proc::rss_kb(pid);

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
    proc::assert_storm_memory_given_back(pid, before, viewers).await;
    run.kill();
}
