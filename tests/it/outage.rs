//! A store that cannot be written, through the real path (PTY shoe → serial driver → table):
//! a really full filesystem (a small tmpfs) and a write lock held by another connection.
//! Every card read meanwhile is kept in the spill file, listed as unrecorded (after a
//! restart too, and by `croupier recall`), and taken into the log as held items once the
//! store works again — without a restart — for a supervisor to decide on.

use crate::common;
use crate::running;

use common::{config, until_snapshot};
use croupier::engine::Input;
use croupier::store::spill::{self, Spilled};
use croupier::store::{Record, Source};
use croupier::table::demo::main_bet;
use croupier::table::dispute::Resolution;
use croupier::table::{SubmitError, TableState};
use croupier_drivers::sim::{SimConfig, SimShoe};
use croupier_drivers::ShoeItem;
use sqlx::{Connection, Executor};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::time::timeout;

fn card(c: &str) -> ShoeItem {
    ShoeItem::Card(c.parse().expect("card"))
}

/// A tmpfs mounted for the test, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(at).expect("mount point");
        let status = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0700")])
            .arg("tmpfs")
            .arg(at)
            .status()
            .expect("run mount");
        assert!(
            status.success(),
            "this test fills a real filesystem: it mounts a small tmpfs, which needs root \
             (or CAP_SYS_ADMIN); run it as root"
        );
        Tmpfs(at.to_path_buf())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// Fills the filesystem holding `dir` with one file until it refuses another byte.
fn fill(dir: &Path) -> PathBuf {
    let path = dir.join("filler");
    let mut f = std::fs::File::create(&path).expect("filler");
    let block = vec![0x5au8; 4096];
    loop {
        match f.write(&block) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
            Err(e) => panic!("filling: {e}"),
        }
    }
    let _ = f.sync_all();
    path
}

/// Empties the WAL into the database file, so that the next commit needs new space.
async fn checkpoint(db: &Path) {
    let mut c = sqlx::SqliteConnection::connect(&format!("sqlite://{}", db.display()))
        .await
        .expect("open db");
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        .await
        .expect("checkpoint");
    c.close().await.expect("close");
}

fn recall(db: &Path) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(["recall", "--last", "5", "--db"])
        .arg(db)
        .output()
        .expect("recall");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A Deluxe table on `cfg` whose PTY shoe holds 9H 5S 7C 6D TD, with seat 1's bet placed
/// and the 9H dealt.
async fn opened_round(
    mut cfg: croupier::table::TableConfig,
    db: Option<PathBuf>,
) -> (running::Running, SimShoe, croupier::table::TableConfig) {
    let sim = SimShoe::start(SimConfig {
        items: ["9H", "5S", "7C", "6D", "TD"]
            .into_iter()
            .map(card)
            .collect(),
        ..SimConfig::default()
    })
    .expect("pty shoe");
    cfg.shoe.serial.port = sim.path();
    if let Some(db) = db {
        cfg.store.path = db;
    }
    let run = running::start(cfg.clone()).await;
    let bets = Input::Bets(vec![main_bet(1, 100).expect("bet")]);
    run.handle.submit(bets, Source::Api).await.expect("bets");
    sim.deal(1).await.expect("deal");
    until_snapshot(&run.handle, "9H applied", |s| s.inputs == 2).await;
    (run, sim, cfg)
}

/// Deals a card whose write fails: the table goes out of service, saying `why`.
async fn deal_out_of_service(run: &running::Running, sim: &SimShoe, why: &str) {
    sim.deal(1).await.expect("deal");
    let snap = until_snapshot(&run.handle, "out of service", |s| {
        s.state == TableState::Broken
    })
    .await;
    assert!(
        snap.broken.as_deref().unwrap_or("").contains(why),
        "{:?}",
        snap.broken
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_keeps_every_card_and_the_table_recovers_when_space_is_freed() {
    timeout(Duration::from_secs(120), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let disk = Tmpfs::mount(&dir.path().join("disk"), "8m");
        let cfg = config(dir.path(), Path::new("/nonexistent"), "deluxe");
        let (run, sim, cfg) = opened_round(cfg, Some(disk.0.join("croupier.db"))).await;
        let db = cfg.store.path.clone();
        let bets = Input::Bets(vec![main_bet(1, 100).expect("bet")]);

        // The disk fills up.
        checkpoint(&db).await;
        let filler = fill(&disk.0);
        deal_out_of_service(&run, &sim, "full").await;
        // The card whose write failed is accounted for, and so is the next one.
        until_snapshot(&run.handle, "5S unrecorded", |s| s.unrecorded == ["5S"]).await;
        sim.deal(1).await.expect("deal");
        until_snapshot(&run.handle, "7C unrecorded", |s| {
            s.unrecorded == ["5S", "7C"]
        })
        .await;
        let spilled: Vec<Spilled> = spill::read(&spill::path_for(&db))
            .expect("spill file")
            .into_iter()
            .map(|e| e.what)
            .collect();
        assert_eq!(
            spilled,
            [Spilled::Item("5S".into()), Spilled::Item("7C".into())]
        );
        assert!(matches!(
            run.handle.submit(bets.clone(), Source::Api).await,
            Err(SubmitError::Broken(_))
        ));
        let metrics = common::metrics(&run.addr.to_string()).await;
        assert!(
            metrics.contains("croupier_cards_read_total{outcome=\"unrecorded\"} 2"),
            "both cards counted unrecorded: {metrics}"
        );
        // `recall` lists them while the table is out of service.
        let recalled = recall(&db);
        assert!(
            recalled.contains("NOT RECORDED") && recalled.contains("5S") && recalled.contains("7C"),
            "{recalled}"
        );
        run.stop().await;

        // A restart on the still-full disk: the cards are still listed.
        let run = running::start(cfg.clone()).await;
        let snap = until_snapshot(&run.handle, "unrecorded after restart", |s| {
            s.unrecorded == ["5S", "7C"]
        })
        .await;
        assert_eq!(snap.inputs, 2);

        // Space is freed: the table takes the cards into the log by itself, held, locked
        // for a supervisor.
        std::fs::remove_file(&filler).expect("free space");
        let snap =
            until_snapshot(&run.handle, "recovered", |s| s.state == TableState::Locked).await;
        let alarm = snap.alarm.expect("alarm");
        assert_eq!(alarm.held, ["5S", "7C"]);
        assert!(alarm.reason.contains("5S 7C"), "{}", alarm.reason);
        assert!(snap.unrecorded.is_empty());
        assert!(snap.broken.is_none());
        // The supervisor voids them: the dealer takes them out of play.
        run.handle
            .clear_alarm("5S 7C taken out of play".into(), "user:s1".into())
            .await
            .expect("clear");
        assert_eq!(run.handle.snapshot().state, TableState::Open);
        run.stop().await;

        let log = common::log_of(&db, "t1").await;
        let kinds: Vec<&str> = log.iter().map(|r| r.record.kind()).collect();
        assert_eq!(kinds, ["input", "input", "recovered", "clear"]);
        assert!(matches!(
            &log[2].record,
            Record::Recovered { items, spill_through: 2, .. } if items == &["5S", "7C"]
        ));
        assert!(matches!(
            &log[3].record,
            Record::Clear { voided, .. } if voided == &["5S", "7C"]
        ));
        // Taken in once: a restart does not take them again.
        let run = running::start(cfg.clone()).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let snap = run.handle.snapshot();
        assert_eq!((snap.state, snap.seq), (TableState::Open, 4));
        assert!(snap.unrecorded.is_empty());
        run.stop().await;
        let recalled = recall(&db);
        assert!(!recalled.contains("NOT RECORDED"), "{recalled}");
        drop(disk);
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_write_lock_puts_the_table_out_of_service_until_it_is_released_in_order() {
    timeout(Duration::from_secs(90), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = config(dir.path(), Path::new("/nonexistent"), "deluxe");
        let (run, sim, cfg) = opened_round(cfg, None).await;
        let db = cfg.store.path.clone();

        // Another process holds the write lock for longer than the busy timeout.
        let mut blocker = sqlx::SqliteConnection::connect(&format!("sqlite://{}", db.display()))
            .await
            .expect("open db");
        blocker.execute("BEGIN EXCLUSIVE").await.expect("lock");
        deal_out_of_service(&run, &sim, "locked").await;
        sim.deal(1).await.expect("deal");
        until_snapshot(&run.handle, "both kept", |s| s.unrecorded == ["5S", "7C"]).await;
        // Retries do not stall the table loop: /healthz stays green while the lock is held.
        for _ in 0..10 {
            let reply = croupier::web::client::request_with(
                &run.addr.to_string(),
                "GET",
                "/healthz",
                None,
                &[],
                Duration::from_secs(5),
            )
            .await
            .expect("healthz");
            assert_eq!(reply.status, 200, "{}", reply.body);
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        blocker.execute("ROLLBACK").await.expect("unlock");
        drop(blocker);

        let snap =
            until_snapshot(&run.handle, "recovered", |s| s.state == TableState::Locked).await;
        assert_eq!(snap.alarm.as_ref().expect("alarm").held, ["5S", "7C"]);
        // The supervisor finds nothing wrong: the held cards are played in their order.
        let id = snap.dispute.as_ref().expect("the alarm's dispute").head.id;
        let preview = run
            .handle
            .propose(
                id,
                Resolution::Reject,
                "the lock was a backup".into(),
                "user:s1".into(),
            )
            .await
            .expect("propose");
        run.handle
            .confirm(id, preview.proposal, "user:s1".into())
            .await
            .expect("confirm");
        let snap = run.handle.snapshot();
        assert_eq!(snap.state, TableState::Open, "{:?}", snap.alarm);
        sim.deal(1).await.expect("deal");
        until_snapshot(&run.handle, "6D applied", |s| s.round.dealer.len() == 2).await;
        run.stop().await;

        // Every card once, in the order it came off the shoe.
        let log = common::log_of(&db, "t1").await;
        let mut cards = Vec::new();
        for row in &log {
            match &row.record {
                Record::Input {
                    input: Input::Card(c),
                    ..
                } => cards.push(c.to_string()),
                Record::Resolve(r) => {
                    cards.retain(|_| false);
                    cards.extend(r.inputs.iter().filter_map(|i| match i {
                        Input::Card(c) => Some(c.to_string()),
                        _ => None,
                    }));
                }
                _ => {}
            }
        }
        assert_eq!(cards, ["9H", "5S", "7C", "6D"]);
    })
    .await
    .expect("bounded");
}
