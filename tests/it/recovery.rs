//! A damaged store boots the table locked (out of service) with a clear reason, through
//! the real binary: nothing is applied, clearing the alarm cannot hide it, recall says why.

use crate::common;
use crate::proc;

use common::{config_file, session};
use croupier::store::{Record, Source, Store};
use croupier_drivers::sim::{SimConfig, SimShoe};
use proc::spawn;
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use tokio::time::timeout;

/// Records the first `n` inputs of a session straight into the store, as the table would.
async fn recorded(db: &Path, n: usize) {
    let opened = Store::open(db, "t1", "test", "deluxe").await.expect("open");
    let mut store = opened.store;
    let (inputs, _, _) = session("deluxe", 5, 4);
    for input in inputs.into_iter().take(n) {
        store
            .append(
                &Record::Input {
                    source: Source::Api,
                    input,
                },
                &[],
                1,
            )
            .await
            .expect("append");
    }
    store.close().await.expect("close");
}

/// Boots the binary on `dir`'s database and checks it is out of service, naming `why`.
async fn boots_broken(dir: &Path, why: &[&str]) {
    let sim = SimShoe::start(SimConfig {
        items: vec![croupier_drivers::ShoeItem::Card(
            "QS".parse().expect("card"),
        )],
        ..SimConfig::default()
    })
    .expect("pty shoe");
    let cfg = config_file(dir, &sim.path(), "deluxe");
    let p = spawn(&cfg, &dir.join("croupier.log")).await;
    assert!(p.announce.contains("OUT OF SERVICE"), "{}", p.announce);
    let s = p.get("/api/status").await;
    assert_eq!(s["state"], "broken", "{s}");
    let reason = s["broken"].as_str().expect("a reason").to_string();
    assert!(
        why.iter().any(|w| reason.contains(w)),
        "reason {reason:?} names none of {why:?}"
    );
    // Nothing is applied, and the alarm cannot simply be cleared.
    let (status, body) = p.post("/api/input", r#""shuffle""#).await;
    assert_eq!(status, 503, "{body}");
    let (status, body) = p.post("/api/alarm/clear", r#"{"reason": "try"}"#).await;
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("out of service"), "{body}");
    // A card from the shoe is not silently lost: it is reported as unrecorded.
    assert_eq!(sim.deal(1).await.expect("deal").len(), 1);
    let mut s = p.get("/api/status").await;
    for _ in 0..100 {
        if s["unrecorded"].as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        s = p.get("/api/status").await;
    }
    assert_eq!(s["unrecorded"], serde_json::json!(["QS"]), "{s}");
    assert!(p.terminate(), "a broken table still stops cleanly");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_that_is_not_a_database_boots_out_of_service() {
    timeout(Duration::from_secs(60), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut rng = fastrand::Rng::with_seed(9);
        let junk: Vec<u8> = (0..16_384).map(|_| rng.u8(..)).collect();
        std::fs::write(dir.path().join("croupier.db"), junk).expect("write");
        boots_broken(dir.path(), &["not a database", "croupier.db"]).await;
        // Recall says why too.
        let out = Command::new(env!("CARGO_BIN_EXE_croupier"))
            .args(["recall", "--db"])
            .arg(dir.path().join("croupier.db"))
            .output()
            .expect("recall runs");
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("croupier.db"), "{err}");
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_altered_event_row_breaks_the_hash_chain_and_boots_out_of_service() {
    timeout(Duration::from_secs(60), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("croupier.db");
        recorded(&db, 12).await;
        // Someone edits history with the sqlite3 shell: drops the guard, changes a bet.
        {
            use sqlx::{ConnectOptions, Executor};
            let mut conn = sqlx::sqlite::SqliteConnectOptions::new()
                .filename(&db)
                .connect()
                .await
                .expect("connect");
            conn.execute("DROP TRIGGER events_no_update").await.expect("drop");
            let changed = conn
                .execute("UPDATE events SET payload = replace(payload, '\"main\":', '\"main\":1') WHERE seq = 1")
                .await
                .expect("update");
            assert_eq!(changed.rows_affected(), 1);
        }
        boots_broken(dir.path(), &["event log is broken at seq 1"]).await;
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn damaged_pages_boot_out_of_service() {
    timeout(Duration::from_secs(60), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("croupier.db");
        recorded(&db, 40).await;
        // Scribble over the middle of the file (a disk or SD card going bad).
        let mut bytes = std::fs::read(&db).expect("read");
        assert!(bytes.len() > 3 * 4096, "several pages");
        for b in &mut bytes[2 * 4096 + 8..3 * 4096] {
            *b = 0xA5;
        }
        std::fs::write(&db, bytes).expect("write");
        boots_broken(
            dir.path(),
            &[
                "damaged",
                "malformed",
                "event log is broken",
                "not a database",
            ],
        )
        .await;
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_database_file_boots_out_of_service_and_only_init_makes_a_new_table() {
    timeout(Duration::from_secs(60), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("croupier.db");
        std::fs::write(&db, b"").expect("an empty file");
        boots_broken(dir.path(), &["empty file (0 bytes)"]).await;
        // Nothing created a database in it meanwhile (the accounts' pool neither).
        assert_eq!(std::fs::metadata(&db).expect("still there").len(), 0);
        // `--init` says a new table is wanted.
        let sim = SimShoe::start(SimConfig::default()).expect("pty shoe");
        let cfg = config_file(dir.path(), &sim.path(), "deluxe");
        let p = proc::announced(proc::spawn_raw_with(
            &cfg,
            &dir.path().join("croupier.log"),
            &["--init"],
        ))
        .await;
        // A new table, in service: open, or locked while the QS that came off the shoe
        // during the outage (spilled by `boots_broken`) waits for a supervisor — the spill
        // is taken into the new log once it can be written, and whether that happens
        // before the first line is printed is a race. Never out of service again.
        assert!(
            p.announce.contains("(open)") || p.announce.contains("(LOCKED)"),
            "{}",
            p.announce
        );
        assert!(
            std::fs::metadata(&db).expect("db").len() > 0,
            "a new database"
        );
        drop(p);
        // `--init` never touches a database that holds something.
        let out = Command::new(env!("CARGO_BIN_EXE_croupier"))
            .args(["run", "--init", "--config"])
            .arg(&cfg)
            .output()
            .expect("runs");
        let all = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(all.contains("already holds a database"), "{all}");
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_cut_off_the_end_of_the_log_are_caught_by_the_anchor() {
    timeout(Duration::from_secs(90), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("croupier.db");
        recorded(&db, 12).await;
        // A backup, with its own anchor beside it.
        let copy = dir.path().join("copy.db");
        let out = Command::new(env!("CARGO_BIN_EXE_croupier"))
            .arg("backup")
            .arg(&copy)
            .arg("--db")
            .arg(&db)
            .output()
            .expect("backup");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let copy_anchor = croupier::store::anchor::path_for(&copy);
        assert_eq!(
            croupier::store::anchor::read(&copy_anchor)
                .expect("anchor")
                .expect("beside the backup")
                .seq,
            12
        );
        // Someone removes the last three rows (the chain of what is left is intact).
        assert_eq!(common::cut_log(&db, 9).await, 3);
        boots_broken(dir.path(), &["ends at seq 9, the anchor is at seq 12"]).await;
        // The QS read while out of service is kept in the spill file; this test deals it
        // again below, so it starts the next boot without it.
        std::fs::remove_file(croupier::store::spill::path_for(&db)).expect("spill file");
        // The database removed altogether: refused too, and not re-created.
        for suffix in ["", "-wal", "-shm"] {
            let mut name = db.as_os_str().to_owned();
            name.push(suffix);
            let _ = std::fs::remove_file(std::path::PathBuf::from(name));
        }
        boots_broken(dir.path(), &["does not exist, but its anchor"]).await;
        assert!(!db.exists(), "nothing re-created it");
        // Restored from the backup with its anchor: it opens where the backup ended.
        std::fs::copy(&copy, &db).expect("restore");
        std::fs::copy(&copy_anchor, croupier::store::anchor::path_for(&db)).expect("anchor");
        let sim = SimShoe::start(SimConfig::default()).expect("pty shoe");
        let cfg = config_file(dir.path(), &sim.path(), "deluxe");
        let p = spawn(&cfg, &dir.path().join("croupier.log")).await;
        assert!(!p.announce.contains("OUT OF SERVICE"), "{}", p.announce);
        // The backup's 12 rows, the new timeline a restore begins (row 13), the round the
        // backup ended in voided (row 14: issue #58), then the QS read while the database
        // was missing, taken into the log held for a supervisor.
        let mut status = p.get("/api/status").await;
        for _ in 0..100 {
            if status["seq"] == 15 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
            status = p.get("/api/status").await;
        }
        assert_eq!(status["seq"], 15, "{status}");
        let log = common::log_of(&db, "t1").await;
        assert!(
            matches!(
                &log[12].record,
                croupier::store::Record::Timeline {
                    cause: croupier::store::TimelineCause::Restored { backup_seq: 12, .. },
                    ..
                }
            ),
            "{:?}",
            log[12].record
        );
        assert!(
            matches!(
                &log[13].record,
                croupier::store::Record::Input {
                    source: croupier::store::Source::Restore,
                    input: croupier::engine::Input::CancelRound,
                }
            ),
            "{:?}",
            log[13].record
        );
        assert_eq!(
            status["alarm"]["held"],
            serde_json::json!(["QS"]),
            "{status}"
        );
        assert!(p.terminate());
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_service_on_the_same_database_refuses_to_run() {
    timeout(Duration::from_secs(60), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let sim = SimShoe::start(SimConfig::default()).expect("pty shoe");
        let cfg = config_file(dir.path(), &sim.path(), "deluxe");
        let log = dir.path().join("croupier.log");
        let first = spawn(&cfg, &log).await;
        assert!(first.announce.contains("(open)"), "{}", first.announce);
        // The second one refuses to run at all: it would read cards off the first's shoe.
        let out = Command::new(env!("CARGO_BIN_EXE_croupier"))
            .args(["run", "--config"])
            .arg(&cfg)
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("in use by another croupier"), "{err}");
        let (status, body) = first
            .post(
                "/api/input",
                r#"{"bets": [{"seat": 1, "main": 100, "side": []}]}"#,
            )
            .await;
        assert_eq!(status, 200, "{body}");
        assert!(first.terminate());
    })
    .await
    .expect("bounded");
}
