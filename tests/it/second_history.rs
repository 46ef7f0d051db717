//! A table given a second history, through the real binary without a broker (issue #58
//! items 1 and 2): the demo table's own public feed watched by a viewer who saves every
//! reveal, then
//! - a database restored from a backup taken with a round in play — the up card out, the
//!   hole card not yet dealt —: the restored timeline voids that round first (every stake
//!   returned), and no face-down card of the new history opens with a nonce the lost
//!   history revealed (52 cards tried with every one);
//! - a log cut back inside a round (before its hole card) together with its anchor, and
//!   played on: the hole card dealt again is sealed under a new nonce;
//! - the database and its anchor gone and a new log begun with `run --init` beside the
//!   same key, its rounds numbered from 1 again: no face-down card opens with a nonce the
//!   first log revealed.

use crate::common;
use crate::mid_round;
use crate::proc;
use crate::public_check;
use crate::seals;

use croupier::engine::Input;
use croupier::store::{LogRow, Reader, Record, Source, TimelineCause};
use mid_round::{backup_mid_round, follower, last_view};
use public_check::Viewer;
use std::path::Path;
use std::time::Duration;
use tokio::time::{sleep, timeout};

/// The demo table with every seat taken by a demo player at a brisk pace — seven second
/// cards between the dealer's up card and the hole card — and a 1 s dispute window.
fn config(dir: &Path) -> std::path::PathBuf {
    common::demo_config_file(
        dir,
        &[
            ("pace_ms = 400", "pace_ms = 100"),
            ("seats = 3", "seats = 7"),
            ("window_seconds = 5", "window_seconds = 1"),
        ],
    )
}

async fn log(db: &Path) -> Vec<LogRow> {
    common::log_of(db, "table-1").await
}

/// Waits until the viewer has seen round `round` settled and its hole card revealed, and
/// `more` rounds after it settled.
async fn until_settled(v: &Viewer, round: u64, more: u64) {
    for _ in 0..1200 {
        let revealed = seals::seen(&v.values())
            .nonces
            .iter()
            .any(|(r, _)| *r == round);
        let last = v
            .values()
            .iter()
            .filter(|m| m["type"] == "result")
            .filter_map(|m| m["result"]["round"].as_u64())
            .max()
            .unwrap_or(0);
        if revealed && last >= round + more {
            return;
        }
        sleep(Duration::from_millis(100)).await;
    }
    panic!("round {round} and {more} more settled: {:?}", last_view(v));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restore_mid_round_voids_the_round_and_no_face_down_card_opens_with_a_lost_nonce() {
    timeout(Duration::from_secs(400), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = config(dir.path());
        let db = dir.path().join("croupier.db");
        let p = proc::spawn(&cfg, &dir.path().join("run.log")).await;
        let lost = Viewer::connect(&p.addr, "table-1", None).await;
        let (backup, round) = backup_mid_round(dir.path(), &cfg, &lost).await;
        let backed = log(&backup).await.len();
        // The lost history plays the round on: its hole card dealt and revealed, its
        // stakes settled; and two rounds more.
        until_settled(&lost, round, 2).await;
        assert!(p.terminate(), "clean stop");

        // The restore, as the guide tells it: the backup and its anchor over the live ones.
        common::restore(&backup, &db);
        let p = proc::spawn(&cfg, &dir.path().join("run.log")).await;
        let restored = Viewer::connect(&p.addr, "table-1", None).await;
        let settled = |v: &Viewer| v.values().iter().filter(|m| m["type"] == "result").count();
        for _ in 0..1200 {
            if settled(&restored) >= 4 {
                break;
            }
            sleep(Duration::from_millis(100)).await;
        }
        if settled(&restored) < 4 {
            let said = std::fs::read_to_string(dir.path().join("run.log")).unwrap_or_default();
            let tail: Vec<&str> = said.lines().rev().take(60).collect();
            panic!(
                "the restored table deals on: {} results; its view {:?}; its log ends:\n{}",
                settled(&restored),
                last_view(&restored),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            );
        }
        assert!(p.terminate(), "clean stop");

        // The attack: every face-down card the restored table showed, tried with every
        // nonce the lost history revealed — its interrupted round's among them.
        let old = seals::seen(&lost.values());
        assert!(
            old.nonces.iter().any(|(r, _)| *r == round),
            "the lost history revealed round {round}'s hole card"
        );
        let new = seals::seen(&restored.values());
        assert!(new.commitments.len() >= 3, "{new:?}");
        let named = seals::named("table-1", &new.commitments, &old.nonces);
        assert!(
            named.is_empty(),
            "face-down cards named by the lost history's nonces: {named:?}"
        );

        // The restored log: the backup's rows, the new timeline, then the round voided by
        // the table itself before anything else, every stake back.
        let after = log(&db).await;
        assert!(
            matches!(
                &after[backed].record,
                Record::Timeline {
                    cause: TimelineCause::Restored { .. },
                    ..
                }
            ),
            "{:?}",
            after[backed].record
        );
        assert!(
            matches!(
                &after[backed + 1].record,
                Record::Input {
                    source: Source::Restore,
                    input: Input::CancelRound
                }
            ),
            "the interrupted round voided first: {:?}",
            after[backed + 1].record
        );
        let results = Reader::open(&db)
            .await
            .expect("reader")
            .results("table-1")
            .await
            .expect("results");
        let voided = results
            .iter()
            .find(|r| r.round == round)
            .expect("the round's result");
        assert!(voided.cancelled, "{voided:?}");
        assert!(
            !voided.bets.is_empty() && voided.bets.iter().all(|b| b.returned == b.staked),
            "{voided:?}"
        );
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_cut_inside_a_round_and_played_on_seals_the_hole_card_under_a_new_nonce() {
    timeout(Duration::from_secs(300), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = config(dir.path());
        let db = dir.path().join("croupier.db");
        let p = proc::spawn(&cfg, &dir.path().join("run.log")).await;
        let first = Viewer::connect(&p.addr, "table-1", None).await;
        until_settled(&first, 3, 0).await;
        assert!(p.terminate(), "clean stop");

        // The row that recorded round 3's hole card: the log is cut just before it, with
        // its anchor (whoever can write both files), and played on from there.
        let rows = log(&db).await;
        let mut f = follower(&cfg);
        let hole = rows
            .iter()
            .find(|row| {
                let (s, _) = f.follow(row).expect("replays");
                s.round.number == 3 && s.round.dealer.len() == 2
            })
            .expect("round 3's hole card")
            .seq;
        assert!(common::cut_log(&db, hole - 1).await > 0);
        std::fs::remove_file(croupier::store::anchor::path_for(&db)).expect("anchor");
        let _ = std::fs::remove_file(croupier::store::spill::path_for(&db));
        let p = proc::spawn(&cfg, &dir.path().join("run.log")).await;
        let second = Viewer::connect(&p.addr, "table-1", None).await;
        until_settled(&second, 3, 1).await;
        assert!(p.terminate(), "clean stop");

        let old = seals::seen(&first.values());
        // The second viewer follows the played-on table itself, which publishes only its
        // own log's rounds: a viewer that joined after round 3's hole card was turned over
        // (a loaded machine starts the table dealing before it connects) has the
        // commitment from the reveal.
        let new = seals::seen_with_reveals(&second.values());
        assert!(new.commitments.iter().any(|(r, _)| *r == 3), "{new:?}");
        let named = seals::named("table-1", &new.commitments, &old.nonces);
        assert!(
            named.is_empty(),
            "face-down cards named by the first history's nonces: {named:?}"
        );
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_log_begun_beside_the_same_key_seals_its_hole_cards_under_new_nonces() {
    timeout(Duration::from_secs(300), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = config(dir.path());
        let db = dir.path().join("croupier.db");
        let key = croupier::trust::keys::path_for(&db);
        let p = proc::spawn(&cfg, &dir.path().join("run.log")).await;
        let first = Viewer::connect(&p.addr, "table-1", None).await;
        until_settled(&first, 3, 0).await;
        assert!(p.terminate(), "clean stop");
        let key_before = std::fs::read(&key).expect("the table's key");

        // The database lost with its anchor; the operator begins a new log beside the key.
        for ext in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{ext}", db.display()));
        }
        let _ = std::fs::remove_file(croupier::store::anchor::path_for(&db));
        let _ = std::fs::remove_file(croupier::store::spill::path_for(&db));
        let p = proc::announced(proc::spawn_raw_with(
            &cfg,
            &dir.path().join("run.log"),
            &["--init"],
        ))
        .await;
        let second = Viewer::connect(&p.addr, "table-1", None).await;
        until_settled(&second, 3, 0).await;
        assert!(p.terminate(), "clean stop");
        assert_eq!(
            std::fs::read(&key).expect("the table's key"),
            key_before,
            "the same key signs the new log"
        );

        // Rounds 1-3 again, under the same key: none of their face-down cards opens with
        // a nonce the first log revealed for its own rounds 1-3.
        let old = seals::seen(&first.values());
        // The new log's stream holds only its own rounds: a reveal's commitment is its own.
        let new = seals::seen_with_reveals(&second.values());
        for round in 1..=3 {
            assert!(
                old.nonces.iter().any(|(r, _)| *r == round)
                    && new.commitments.iter().any(|(r, _)| *r == round),
                "round {round} sealed in both logs: {old:?} {new:?}"
            );
        }
        let named = seals::named("table-1", &new.commitments, &old.nonces);
        assert!(
            named.is_empty(),
            "face-down cards named by the first log's nonces: {named:?}"
        );
    })
    .await
    .expect("bounded");
}
