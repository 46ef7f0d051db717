//! Signals from the outside (issue #32 items 12 and 14): SIGHUP does not stop a live
//! table (it logs that nothing is reloaded and goes on), and a one-shot command whose
//! reader closes the pipe early ends quietly instead of panicking.

use crate::common;
use crate::proc;

use std::process::{Command, Stdio};
use std::time::Duration;

/// The built-in configuration with its database in `dir`, on any free port.
fn default_config(dir: &std::path::Path) -> std::path::PathBuf {
    let cfg = dir.join("table.toml");
    let text = croupier::table::config::DEFAULT_TOML
        .replace(
            "path = \"data/croupier.db\"",
            &format!("path = {:?}", dir.join("t.db").display().to_string()),
        )
        .replace("bind = \"127.0.0.1:8080\"", "bind = \"127.0.0.1:0\"");
    std::fs::write(&cfg, text).expect("config");
    cfg
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_does_not_stop_a_live_table() {
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = default_config(dir.path());
    let log = dir.path().join("table.log");
    let table = proc::spawn(&cfg, &log).await;
    let pid = libc::pid_t::try_from(table.child.id()).expect("pid");
    for _ in 0..3 {
        // SAFETY: kill(2) on the child this test spawned; no memory is involved.
        let sent = unsafe { libc::kill(pid, libc::SIGHUP) };
        assert_eq!(sent, 0, "SIGHUP sent");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let status = table.get("/api/status").await;
    assert!(status["state"].is_string(), "still serving: {status}");
    let text = std::fs::read_to_string(&log).expect("log");
    assert_eq!(
        text.matches("SIGHUP received").count(),
        3,
        "each SIGHUP is logged: {text}"
    );
    assert!(table.terminate(), "and SIGTERM still stops it cleanly");
}

#[test]
fn a_command_whose_reader_goes_away_ends_quietly() {
    for args in [
        &["paytables", "--json"][..],
        &["paytables"][..],
        &["check-variant", "config/variants/deluxe.toml"][..],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_croupier"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        // A reader that went away before the first line (`| head -c 0`): the first
        // write meets a closed pipe, whatever the output's size.
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("wait");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !err.contains("panicked") && !err.contains("Broken pipe"),
            "croupier {args:?}: {err}"
        );
        assert!(
            out.status.success(),
            "croupier {args:?} ends quietly, with success: {:?}",
            out.status
        );
    }
}

/// Opens a `/ws/public` viewer (the upgrade only); answers the status and the connection.
async fn ws_viewer(addr: &str) -> Option<(u16, tokio::net::TcpStream)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.ok()?;
    s.write_all(
        b"GET /ws/public HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
          Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    )
    .await
    .ok()?;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match tokio::time::timeout(Duration::from_secs(10), s.read(&mut byte)).await {
            Ok(Ok(1)) => head.push(byte[0]),
            _ => return None,
        }
    }
    let status = String::from_utf8_lossy(&head)
        .split(' ')
        .nth(1)?
        .parse()
        .ok()?;
    Some((status, s))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_low_open_file_limit_caps_viewers_before_staff_lose_the_table() {
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = default_config(dir.path());
    let log = dir.path().join("table.log");
    let args = [
        std::ffi::OsStr::new("run"),
        "--config".as_ref(),
        cfg.as_os_str(),
    ];
    let mut command = proc::command_args(&args, &log);
    // A hard limit of 256 open files, as a unit or shell might set it.
    proc::with_file_limit(&mut command, 256);
    let table = proc::announced(command.spawn().expect("spawn")).await;
    // More viewers than descriptors: the public cap refuses them before they run out.
    let mut held = Vec::new();
    let mut refused = 0;
    for _ in 0..300 {
        match ws_viewer(&table.addr).await {
            Some((101, s)) => held.push(s),
            Some((503, _)) => refused += 1,
            other => panic!("a viewer got {:?}", other.map(|(s, _)| s)),
        }
    }
    assert!(
        refused > 0 && held.len() < 256 - 64,
        "{} viewers, {refused} refused",
        held.len()
    );
    // Staff routes still answer, at once.
    for (method, path, body, want) in [
        ("GET", "/healthz", None, 200),
        ("GET", "/", None, 200),
        (
            "POST",
            "/api/login",
            Some(r#"{"badge": "201", "secret": "0000"}"#),
            401,
        ),
    ] {
        let (status, text) =
            croupier::web::client::request(&table.addr, method, path, body, Duration::from_secs(5))
                .await
                .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        assert_eq!(status, want, "{method} {path}: {text}");
    }
    let text = std::fs::read_to_string(&log).expect("log");
    assert!(
        text.contains("open-file limit 256"),
        "the log says so: {text}"
    );
    drop(held);
    assert!(table.terminate(), "clean stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_stopped_for_seconds_does_not_take_its_unread_heartbeats_for_a_dead_shoe() {
    use croupier_drivers::sim::{SimConfig, SimShoe};
    let dir = tempfile::tempdir().expect("tmp");
    // The shoe is another process's (here the test's): while the table is stopped, its
    // heartbeats (every second) wait in the PTY.
    let sim = SimShoe::start(SimConfig::default()).expect("pty shoe");
    let cfg = common::config_file(dir.path(), &sim.path(), "deluxe");
    let log = dir.path().join("table.log");
    let table = proc::spawn(&cfg, &log).await;
    let connected = |s: &serde_json::Value| s["shoe"]["link"] == "connected";
    table
        .until("/api/status", "the link comes up", connected)
        .await;
    let pid = libc::pid_t::try_from(table.child.id()).expect("pid");
    for stop in [4, 6] {
        // SAFETY: kill(2) on the child this test spawned.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
        tokio::time::sleep(Duration::from_secs(stop)).await;
        assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
        tokio::time::sleep(Duration::from_secs(2)).await;
        let s = table.get("/api/status").await;
        assert!(
            s["alarm"].is_null() && connected(&s),
            "after a {stop} s stop the table is neither locked nor disconnected: {s}"
        );
    }
    let text = std::fs::read_to_string(&log).expect("log");
    assert!(!text.contains("heartbeat timeout"), "{text}");
    assert!(table.terminate(), "clean stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalls_of_2_5_to_4_seconds_raise_no_false_disconnect_with_either_shoe() {
    use croupier_drivers::sim::{SimConfig, SimShoe};
    let dir = tempfile::tempdir().expect("tmp");
    // An external shoe (the test's): it goes on sending heartbeats while the table is
    // stopped, and they wait in the port.
    let sim = SimShoe::start(SimConfig::default()).expect("pty shoe");
    let outside = dir.path().join("external");
    std::fs::create_dir(&outside).expect("mkdir");
    let external = common::config_file(&outside, &sim.path(), "deluxe");
    // The built-in simulated shoe, in the table's own process: stopped with it, it owes a
    // heartbeat when they both run again. Quiet (no demo players): only the link talks.
    let inside = dir.path().join("built-in");
    std::fs::create_dir(&inside).expect("mkdir");
    let built_in = default_config(&inside);
    let text = std::fs::read_to_string(&built_in)
        .expect("config")
        .replace("players = true", "players = false");
    std::fs::write(&built_in, text).expect("config");
    let tables = [
        (
            "external shoe",
            proc::spawn(&external, &outside.join("log")).await,
            outside.join("log"),
        ),
        (
            "built-in shoe",
            proc::spawn(&built_in, &inside.join("log")).await,
            inside.join("log"),
        ),
    ];
    let connected = |s: &serde_json::Value| s["shoe"]["link"] == "connected";
    for (name, table, _) in &tables {
        table.until("/api/status", name, connected).await;
    }
    let pids: Vec<libc::pid_t> = tables
        .iter()
        .map(|(_, t, _)| libc::pid_t::try_from(t.child.id()).expect("pid"))
        .collect();
    // Around the 3 s heartbeat timeout, each stall starting wherever the last heartbeat
    // left it: the timeout may pass while the table is stopped, just before it runs again.
    for tenths in 25..=40u64 {
        let stall = Duration::from_millis(tenths * 100);
        for &pid in &pids {
            // SAFETY: kill(2) on a child this test spawned.
            assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
        }
        tokio::time::sleep(stall).await;
        for &pid in &pids {
            // SAFETY: as above.
            assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
        }
        tokio::time::sleep(Duration::from_millis(1500)).await;
        for (name, table, _) in &tables {
            let s = table.get("/api/status").await;
            assert!(
                s["alarm"].is_null() && connected(&s),
                "{name}: after a stall of {stall:?} the table is neither locked nor disconnected: {s}"
            );
        }
    }
    for (name, table, log) in tables {
        assert!(table.terminate(), "{name}: clean stop");
        let text = std::fs::read_to_string(&log).expect("log");
        assert!(!text.contains("heartbeat timeout"), "{name}: {text}");
    }
}
