//! `croupier backup` against a live table: the demo deals rounds while the backup is taken;
//! the copy verifies (integrity check, hash chain) and is recallable; a tampered copy fails
//! verification; an existing file is never overwritten; the copy and its anchor are 0600.

use crate::proc;

use sqlx::{Connection, Executor};
use std::process::Command;
use std::time::Duration;

/// Runs `croupier ARGS` under the usual umask 022, whatever the test's own.
fn croupier(args: &[&str]) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(env!("CARGO_BIN_EXE_croupier"));
    command.args(args);
    // SAFETY: umask(2) between fork and exec touches only the child.
    unsafe {
        command.pre_exec(|| {
            libc::umask(0o022);
            Ok(())
        });
    }
    command.output().expect("run croupier")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backup_of_a_live_table_verifies_and_tampering_is_caught() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("live.db");
    let cfg = dir.path().join("table.toml");
    let text = croupier::table::config::DEFAULT_TOML
        .replace(
            "path = \"data/croupier.db\"",
            &format!("path = {:?}", db.display().to_string()),
        )
        .replace("bind = \"127.0.0.1:8080\"", "bind = \"127.0.0.1:0\"")
        .replace("pace_ms = 400", "pace_ms = 5");
    std::fs::write(&cfg, text).expect("config");
    let live = proc::spawn(&cfg, &dir.path().join("croupier.log")).await;
    // Let the demo deal until a few rounds are in the log (most of the test's 10 s on a
    // quiet machine; up to a minute under a full parallel test run).
    let mut settled = 0;
    for _ in 0..1200 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        settled = live.get("/api/status").await["rounds_settled"]
            .as_u64()
            .unwrap_or(0);
        if settled >= 3 {
            break;
        }
    }
    assert!(settled >= 3, "the demo settles rounds");

    // Online: the table keeps dealing while the copy is taken.
    let copy = dir.path().join("backup.db");
    let cfg_s = cfg.to_str().expect("utf-8");
    let out = croupier(&["backup", copy.to_str().expect("utf-8"), "--config", cfg_s]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("hash chain intact"), "{said}");
    // The copy holds what the live database holds (accounts, sessions, secrets, the
    // wallet's journal): private like the live files, whatever the umask (the command
    // runs under the usual 022, under which the copy was 0644).
    for file in [copy.clone(), croupier::store::anchor::path_for(&copy)] {
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&file).expect("the copy").permissions(),
        );
        assert_eq!(mode & 0o777, 0o600, "{}", file.display());
    }
    let verified = croupier::store::verify(&copy)
        .await
        .expect("the copy verifies");
    let (_, rows, last) = verified.tables[0].clone();
    assert!(rows > 0 && last as usize == rows, "{verified:?}");
    let recall = croupier(&[
        "recall",
        "--db",
        copy.to_str().expect("utf-8"),
        "--last",
        "2",
    ]);
    assert!(recall.status.success());
    assert!(String::from_utf8_lossy(&recall.stdout).contains("round"));

    // Never over an existing file.
    let again = croupier(&["backup", copy.to_str().expect("utf-8"), "--config", cfg_s]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("never overwrites"));
    live.kill();

    // Alter one logged row in the copy (bypassing the append-only triggers): caught.
    let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{}", copy.display()))
        .await
        .expect("open copy");
    conn.execute("DROP TRIGGER events_no_update")
        .await
        .expect("drop trigger");
    conn.execute("UPDATE events SET at_ms = at_ms + 1 WHERE seq = 2")
        .await
        .expect("tamper");
    conn.close().await.expect("close");
    let err = croupier::store::verify(&copy)
        .await
        .expect_err("tampering is caught");
    assert!(err.to_string().contains("seq 2"), "{err}");
}
