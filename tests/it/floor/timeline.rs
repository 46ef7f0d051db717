//! Issue #31 on the floor: a restored table continued by the operator, a wiped broker and a
//! stalled table.

use super::*;

/// The table's history as the floor holds it (`floor_history`: along the current branch).
async fn floor_history(pool: &PgPool, table: &str) -> Vec<(i64, String, i64, Vec<u8>, String)> {
    rows_of(pool, "floor_history", table).await
}

/// Restarts `t` quiet and waits until the floor's history of it is its log, row for row.
async fn settle_on_the_floor(t: &mut Table, pool: &PgPool, floor_log: &Path) {
    t.stop();
    t.start(false).await;
    let started = Instant::now();
    let mut matched_at = None;
    loop {
        let want = t.rows().await;
        let got = floor_history(pool, &t.id).await;
        if got == want {
            // The quiet twin may still write a round's `final` row: stable for 2 s.
            match matched_at {
                Some(at) if Instant::now().duration_since(at) > Duration::from_secs(2) => return,
                Some(_) => {}
                None => matched_at = Some(Instant::now()),
            }
        } else {
            matched_at = None;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "{}: the floor's history has {} of {} rows; log: {}",
            t.id,
            got.len(),
            want.len(),
            std::fs::read_to_string(floor_log).unwrap_or_default()
        );
        sleep(Duration::from_millis(200)).await;
    }
}

async fn alarm_kinds(pool: &PgPool, table: &str) -> Vec<String> {
    sqlx::query_scalar("SELECT kind FROM floor_alarms WHERE table_id = $1 ORDER BY id")
        .bind(table)
        .fetch_all(pool)
        .await
        .expect("alarms")
}

/// Issue #31 on the floor, with the real binaries: a table restored from a backup after
/// the floor took its lost rows, continued by the operator — the floor follows the new
/// branch without a restart, its history is the table's log row for row, the superseded
/// rows are kept apart, and a `timeline` alarm says so; the broker then loses its store
/// and the table publishes into new streams — the floor follows; and a floor whose
/// commits are blocked raises a `stall` alarm after `--stall-seconds`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_floor_follows_a_restored_table_a_wiped_broker_and_alarms_a_stall() {
    let Some((bin, db)) = pg::broker_and_db().await else {
        return;
    };
    tokio::time::timeout(Duration::from_secs(400), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut broker = Nats::start(&bin, dir.path());
        let url = broker.url();
        let pool = db.pool().await;
        let floor_log = dir.path().join("floor.log");
        let mut t = Table::new(dir.path(), "pit-r", &url);
        t.start(true).await;
        // A stall is a floor that takes nothing for this long: 10 s, not less, so that a
        // loaded machine's slow commit (seen at 3 s beside CI and the suite) is not one,
        // and "nothing else alarmed" below holds.
        let keys = studio_table::keys_file(dir.path(), &[&t]);
        let keys = keys.to_str().expect("utf-8 path");
        let args = ["floor", "--nats", &url, "--database", &db.url, "--stall-seconds", "10", "--table-keys", keys];
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
        let floor = announced(spawn_args(&args, &floor_log)).await;
        t.wait_log_rows(20).await;
        let backup = dir.path().join("pit-r-backup.db");
        let cfg = t.demo.display().to_string();
        let out = common::croupier(&["backup", backup.to_str().expect("utf-8"), "--config", &cfg], None);
        assert!(out.status.success(), "{}", common::text(&out));
        let backed = croupier::store::Reader::open(&backup)
            .await
            .expect("backup")
            .log("pit-r")
            .await
            .expect("log")
            .len();
        t.wait_log_rows(backed + 30).await;
        // The floor takes the tail the restore will lose.
        settle_on_the_floor(&mut t, &pool, &floor_log).await;
        t.stop();
        let lost_head = t.rows().await.len();

        // Restored; the publisher refuses; the operator continues.
        // The restore, as the guide tells it: the backup and its anchor over the live ones.
        common::restore(&backup, &t.db);
        // Started, it refuses to publish over the floor's history, and says so: the floor
        // raises a `fork` alarm before the operator acts.
        t.start(false).await;
        let started = Instant::now();
        while !alarm_kinds(&pool, "pit-r").await.contains(&"fork".to_string()) {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "a fork alarm; log: {}",
                std::fs::read_to_string(&floor_log).unwrap_or_default()
            );
            sleep(Duration::from_millis(200)).await;
        }
        t.stop();
        let idle = t.idle.display().to_string();
        let out = common::croupier(&["timeline", "continue", "--config", &idle], None);
        assert!(out.status.success(), "{}", common::text(&out));
        t.start(true).await;
        let now = t.rows().await.len();
        t.wait_log_rows(now + 20).await;
        settle_on_the_floor(&mut t, &pool, &floor_log).await;
        let kinds = alarm_kinds(&pool, "pit-r").await;
        assert_eq!(
            kinds,
            ["fork", "timeline"],
            "the restored table's refusal, then the branch"
        );
        let superseded: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM floor_events WHERE table_id = 'pit-r' AND branch = '' AND seq > $1",
        )
        .bind(backed as i64)
        .fetch_one(&pool)
        .await
        .expect("count");
        assert_eq!(superseded as usize, lost_head - backed, "the superseded rows are kept");
        let branch: String =
            sqlx::query_scalar("SELECT branch FROM floor_tables WHERE table_id = 'pit-r'")
                .fetch_one(&pool)
                .await
                .expect("branch");
        assert_eq!(branch.len(), 32, "the head is on the continue's branch");
        let unverified: i64 =
            count(&pool, "SELECT count(*) FROM floor_history WHERE verified <> 'ok'").await;
        assert_eq!(unverified, 0, "every row of the history verified");

        // The broker loses its store while the floor runs: the table publishes its log
        // into new streams; the floor follows without a restart.
        broker.wipe();
        t.stop();
        t.start(true).await;
        let now = t.rows().await.len();
        t.wait_log_rows(now + 15).await;
        settle_on_the_floor(&mut t, &pool, &floor_log).await;
        assert_eq!(
            alarm_kinds(&pool, "pit-r").await,
            ["fork", "timeline"],
            "nothing else alarmed"
        );

        // The floor's commits blocked: the stream holds rows it cannot take.
        let mut lock = pool.begin().await.expect("tx");
        sqlx::query("LOCK TABLE floor_tables IN ACCESS EXCLUSIVE MODE")
            .execute(&mut *lock)
            .await
            .expect("lock");
        t.stop();
        t.start(true).await;
        let started = Instant::now();
        loop {
            let stalls: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM floor_alarms WHERE table_id = 'pit-r' AND kind = 'stall'",
            )
            .fetch_one(&db.pool().await)
            .await
            .expect("count");
            if stalls == 1 {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "a stall alarm; log: {}",
                std::fs::read_to_string(&floor_log).unwrap_or_default()
            );
            sleep(Duration::from_millis(250)).await;
        }
        lock.rollback().await.expect("unlock");
        settle_on_the_floor(&mut t, &pool, &floor_log).await;
        t.stop();
        assert!(floor.terminate(), "the floor stops cleanly");
    })
    .await
    .expect("bounded");
}

/// The pit's pages on table `id` answer from the history the floor holds: every settled
/// round is the table's own (its database at `db`), and the shift report and the open
/// disputes answer.
async fn pit_pages_work(pit: &PitClient, id: &str, db: &Path) {
    let settled = pit.settled(id).await;
    let reader = croupier::store::Reader::open(db).await.expect("reader");
    let expected: Vec<serde_json::Value> = reader
        .results(id)
        .await
        .expect("results")
        .iter()
        .map(|r| serde_json::to_value(r).expect("json"))
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(settled, expected, "the floor's settlements are the table's");
    let report = pit
        .get(&format!(
            "/floor/api/report?from_ms=0&to_ms=9999999999999&table={id}"
        ))
        .await;
    assert_eq!(
        report[0]["rounds"].as_u64(),
        Some(expected.len() as u64),
        "{report}"
    );
    pit.get(&format!("/floor/api/disputes?table={id}")).await;
}

/// How a table gets another history.
enum Another<'a> {
    /// Its database restored from this backup.
    Restore(&'a Path),
    /// Its database gone, a new one made with `run --init` beside its key.
    Anew,
}

/// Stopped, `t` is given `another` history, started quiet (it refuses to publish over the
/// broker's history), stopped, continued by the operator, and deals on its new branch
/// until the floor holds its log row for row.
async fn continue_over(t: &mut Table, another: Another<'_>, pool: &PgPool, floor_log: &Path) {
    t.stop();
    match another {
        Another::Restore(backup) => {
            common::restore(backup, &t.db);
            t.start(false).await;
        }
        Another::Anew => t.start_anew(false).await,
    }
    t.stop();
    let idle = t.idle.display().to_string();
    let out = common::croupier(&["timeline", "continue", "--config", &idle], None);
    let said = common::text(&out);
    assert!(
        out.status.success() && said.contains("begins at row"),
        "{said}"
    );
    t.start(true).await;
    let now = t.rows().await.len();
    t.wait_log_rows(now + 25).await;
    settle_on_the_floor(t, pool, floor_log).await;
}

/// Issue #58 item 3: superseding is transitive. A table continued over its own branches
/// again and again — restored from a backup, then from an older backup than that, then
/// started anew beside its key (`run --init`) — leaves the floor with exactly its log
/// along the newest branch after each continue, and the pit's rounds, report and disputes
/// answering from it (after two nested branches they answered `does_not_replay`: the
/// first branch's rows stood beside the newest's).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_continues_leave_the_floor_with_the_surviving_history_and_the_pit_working() {
    let Some((bin, db)) = pg::broker_and_db().await else {
        return;
    };
    tokio::time::timeout(Duration::from_secs(600), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let broker = Nats::start(&bin, dir.path());
        let url = broker.url();
        let pool = db.pool().await;
        let floor_log = dir.path().join("floor.log");
        add_supervisor(&db.url, "sup1", "pit-boss-1");
        let mut t = Table::new(dir.path(), "pit-n", &url);
        t.start(true).await;
        // The table's key, made at its first start, pinned for the floor (the same key
        // through every continue below: the table keeps its key file).
        let keys = studio_table::keys_file(dir.path(), &[&t]);
        let (floor, addr) = pit_floor(&url, &db.url, &keys, &floor_log, &[]).await;
        let mut pit = PitClient::new(addr);
        assert_eq!(pit.login("sup1", "pit-boss-1").await, 200);
        let cfg = t.demo.display().to_string();
        let backup = |name: &str| {
            let path = dir.path().join(name);
            let out = common::croupier(
                &["backup", path.to_str().expect("utf-8"), "--config", &cfg],
                None,
            );
            assert!(out.status.success(), "{}", common::text(&out));
            path
        };
        t.wait_log_rows(20).await;
        let older = backup("older.db");
        let now = t.rows().await.len();
        t.wait_log_rows(now + 25).await;
        let newer = backup("newer.db");
        let now = t.rows().await.len();
        t.wait_log_rows(now + 25).await;
        settle_on_the_floor(&mut t, &pool, &floor_log).await;
        pit_pages_work(&pit, "pit-n", &t.db).await;
        for another in [
            Another::Restore(&newer),
            Another::Restore(&older),
            Another::Anew,
        ] {
            continue_over(&mut t, another, &pool, &floor_log).await;
            let unverified = count(
                &pool,
                "SELECT count(*) FROM floor_history WHERE table_id = 'pit-n' AND verified <> 'ok'",
            )
            .await;
            assert_eq!(unverified, 0, "every row of the history verified");
            pit_pages_work(&pit, "pit-n", &t.db).await;
        }
        let kinds = alarm_kinds(&pool, "pit-n").await;
        assert_eq!(
            kinds.iter().filter(|k| *k == "timeline").count(),
            3,
            "one branch per continue: {kinds:?}"
        );
        t.stop();
        assert!(floor.terminate(), "the floor stops cleanly");
    })
    .await
    .expect("bounded");
}
