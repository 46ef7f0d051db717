//! Signals from the outside (issue #32 items 12 and 14): SIGHUP does not stop a live
//! table (it logs that nothing is reloaded and goes on), and a one-shot command whose
//! reader closes the pipe early ends quietly instead of panicking.

#[path = "common/proc.rs"]
mod proc;

use std::process::{Command, Stdio};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_does_not_stop_a_live_table() {
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = dir.path().join("table.toml");
    let text = croupier::table::config::DEFAULT_TOML
        .replace(
            "path = \"data/croupier.db\"",
            &format!("path = {:?}", dir.path().join("t.db").display().to_string()),
        )
        .replace("bind = \"127.0.0.1:8080\"", "bind = \"127.0.0.1:0\"");
    std::fs::write(&cfg, text).expect("config");
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
