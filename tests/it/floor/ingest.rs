//! What the floor stores: three tables exactly once through a broker restart and a killed
//! floor, two floors at once storing each row once, and a tampered and a missing row raising
//! alarms.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_tables_exactly_once_through_a_broker_restart_and_a_killed_floor() {
    let Some((bin, db)) = pg::broker_and_db().await else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let mut broker = Nats::start(&bin, dir.path());
    let url = broker.url();
    let pool = db.pool().await;
    let floor_log = dir.path().join("floor.log");

    let mut tables: Vec<Table> = ["pit-a", "pit-b", "pit-c"]
        .iter()
        .map(|id| Table::new(dir.path(), id, &url))
        .collect();
    for t in &mut tables {
        t.start(true).await;
    }
    let keys = studio_table::keys_file(dir.path(), &tables.iter().collect::<Vec<_>>());
    let floor = announced(spawn_floor(&url, &db.url, &keys, &floor_log)).await;
    for t in &tables {
        t.wait_log_rows(20).await;
    }
    wait_floor_rows(&pool, 30, &floor_log).await;

    // The broker dies while the tables deal, and comes back on the same store.
    broker.kill();
    sleep(Duration::from_secs(2)).await;
    broker.restart();
    let before = count(&pool, "SELECT count(*) FROM floor_events").await;
    wait_floor_rows(&pool, before + 30, &floor_log).await;

    // The floor is SIGKILLed mid-ingest; the tables go on; a new floor takes over.
    floor.kill();
    sleep(Duration::from_secs(2)).await;
    let floor = announced(spawn_floor(&url, &db.url, &keys, &floor_log)).await;

    // The logs stop growing; the publishers catch up; the floor must hold them all.
    for t in &mut tables {
        t.quiesce().await;
    }
    for t in &tables {
        let want = floor_check::floor_holds_the_log(&pool, t, &floor_log).await;
        let head: i64 = sqlx::query_scalar("SELECT head_seq FROM floor_tables WHERE table_id = $1")
            .bind(&t.id)
            .fetch_one(&pool)
            .await
            .expect("head");
        assert_eq!(
            head as usize,
            want.len(),
            "{}: the head is the last row",
            t.id
        );
        real_session(&t.id, want.len());
    }
    floor_check::every_row_verified_and_no_alarm(&pool).await;
    assert_eq!(
        count(&pool, "SELECT count(*) FROM floor_tables").await,
        3,
        "three tables"
    );
    // The log is append-only on the floor too.
    assert!(sqlx::query("DELETE FROM floor_events WHERE seq = 1")
        .execute(&pool)
        .await
        .is_err());
    for t in &mut tables {
        t.stop();
    }
    assert!(floor.terminate(), "the floor stops cleanly on SIGTERM");
    drop(pool);
}

/// Two floors at once on one database and one durable consumer (a standby that never
/// stood down, or two active ones): they pull from the same consumer and race for the
/// same commits; the head's compare-and-set lets one win each race and the other start
/// again from the database, so each row is stored once, in order, with no alarm — through
/// one floor SIGKILLed and restarted mid-session while the other goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_floors_at_once_store_each_row_once() {
    let Some((bin, db)) = pg::broker_and_db().await else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let broker = Nats::start(&bin, dir.path());
    let url = broker.url();
    let pool = db.pool().await;
    let (log_a, log_b) = (
        dir.path().join("floor-a.log"),
        dir.path().join("floor-b.log"),
    );
    let mut tables: Vec<Table> = ["two-a", "two-b"]
        .iter()
        .map(|id| Table::new(dir.path(), id, &url))
        .collect();
    for t in &mut tables {
        t.start(true).await;
    }
    let keys = studio_table::keys_file(dir.path(), &tables.iter().collect::<Vec<_>>());
    let a = announced(spawn_bound_floor(&url, &db.url, &keys, &log_a)).await;
    let b = announced(spawn_bound_floor(&url, &db.url, &keys, &log_b)).await;
    wait_floor_rows(&pool, 40, &log_a).await;
    // One dies mid-ingest; the other goes on alone, then the first comes back beside it.
    a.kill();
    let before = count(&pool, "SELECT count(*) FROM floor_events").await;
    wait_floor_rows(&pool, before + 40, &log_b).await;
    let a = announced(spawn_bound_floor(&url, &db.url, &keys, &log_a)).await;
    let before = count(&pool, "SELECT count(*) FROM floor_events").await;
    wait_floor_rows(&pool, before + 40, &log_a).await;
    // The other dies: the one beside it takes over alone.
    let (status, metrics) = b.send("GET", "/metrics", None).await;
    assert_eq!(status, 200);
    let b_rows = committed(&metrics);
    b.kill();
    let before = count(&pool, "SELECT count(*) FROM floor_events").await;
    wait_floor_rows(&pool, before + 40, &log_a).await;
    for t in &mut tables {
        t.quiesce().await;
    }
    for t in &tables {
        let want = floor_check::floor_holds_the_log(&pool, t, &log_a).await;
        real_session(&t.id, want.len());
    }
    floor_check::every_row_verified_and_no_alarm(&pool).await;
    // Both really ingested: b before it died, and a, restarted beside it, once alone.
    let (status, metrics) = a.send("GET", "/metrics", None).await;
    assert_eq!(status, 200, "floor a's /metrics");
    let a_rows = committed(&metrics);
    eprintln!("floor a committed {a_rows} rows after its restart, b {b_rows}");
    assert!(a_rows > 0.0 && b_rows > 0.0, "both floors committed rows");
    for t in &mut tables {
        t.stop();
    }
    assert!(a.terminate(), "floor a stops cleanly");
    drop(pool);
}

/// Publishes `rows` as table `table`'s log: (seq, at_ms, kind, payload, hash), signed with
/// the table's hand-made key (`hand_keys`).
async fn publish_log(
    js: &async_nats::jetstream::Context,
    table: &str,
    rows: &[(u64, i64, String, String, [u8; 32])],
) {
    // The table's own log stream, as its publisher makes it.
    js.get_or_create_stream(croupier::broker::streams::StreamNames::default().log(table))
        .await
        .expect("stream");
    for (seq, at_ms, kind, payload, hash) in rows {
        let body = format!(
            r#"{{"table":"{table}","seq":{seq},"at_ms":{at_ms},"kind":"{kind}","hash":"{}","record":{payload}}}"#,
            hex::encode(hash)
        );
        let sig = croupier::trust::wire::sign(
            &hand_keys(table),
            croupier::trust::wire::LOG,
            table,
            body.as_bytes(),
        );
        let mut headers = async_nats::HeaderMap::new();
        headers.insert(croupier::broker::subjects::HEADER_SIG, sig.as_str());
        js.publish_with_headers(format!("croupier.{table}.log"), headers, body.into())
            .await
            .expect("publish")
            .await
            .expect("ack");
    }
}

/// A broker in `dir` and a JetStream context on it.
async fn broker_and_js(
    bin: &std::path::Path,
    dir: &std::path::Path,
) -> (Nats, async_nats::jetstream::Context) {
    let broker = Nats::start(bin, dir);
    let client = async_nats::connect(broker.url()).await.expect("connect");
    (broker, async_nats::jetstream::new(client))
}

/// Table `table`'s rows on the floor, in order: (seq, verdict).
async fn verdicts(pool: &sqlx::PgPool, table: &str) -> Vec<(i64, String)> {
    sqlx::query("SELECT seq, verified FROM floor_events WHERE table_id = $1 ORDER BY seq")
        .bind(table)
        .fetch_all(pool)
        .await
        .expect("rows")
        .iter()
        .map(|r| (r.get("seq"), r.get("verified")))
        .collect()
}

/// A chained log of `n` held-card rows.
fn chained(n: u64) -> Vec<(u64, i64, String, String, [u8; 32])> {
    let mut prev = [0u8; 32];
    (1..=n)
        .map(|seq| {
            let payload = format!(r#"{{"kind":"held","item":"{}H"}}"#, 2 + seq % 8);
            let at_ms = 1_700_000_000_000 + seq as i64;
            let hash = croupier::store::chain_hash(&prev, seq, at_ms, "held", &payload);
            prev = hash;
            (seq, at_ms, "held".to_string(), payload, hash)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tampered_row_and_a_missing_row_raise_floor_alarms() {
    let Some((bin, db)) = pg::broker_and_db().await else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let (broker, js) = broker_and_js(&bin, dir.path()).await;

    publish_log(&js, "clean", &chained(8)).await;
    let mut log = chained(8);
    // Row 4's record altered after the table hashed it; row 7 never reaches the broker.
    log[3].3 = log[3].3.replace("H\"", "S\"");
    log.remove(6);
    publish_log(&js, "bent", &log).await;

    let floor_log = dir.path().join("floor.log");
    let keys = hand_keys_file(dir.path(), &["clean", "bent"]);
    let floor = announced(spawn_floor(&broker.url(), &db.url, &keys, &floor_log)).await;
    let pool = db.pool().await;
    wait_floor_rows(&pool, 15, &floor_log).await;
    let alarms: Vec<(String, i64, String)> =
        sqlx::query("SELECT table_id, seq, kind FROM floor_alarms ORDER BY table_id, seq")
            .fetch_all(&pool)
            .await
            .expect("alarms")
            .iter()
            .map(|r| (r.get("table_id"), r.get("seq"), r.get("kind")))
            .collect();
    assert_eq!(
        alarms,
        vec![
            ("bent".to_string(), 4, "chain_break".to_string()),
            ("bent".to_string(), 8, "gap".to_string()),
        ]
    );
    let verdicts = verdicts(&pool, "bent").await;
    let expected: Vec<(i64, String)> = [1, 2, 3, 4, 5, 6, 8]
        .iter()
        .map(|&s| {
            let v = match s {
                4 => "break",
                8 => "gap",
                _ => "ok",
            };
            (s, v.to_string())
        })
        .collect();
    assert_eq!(verdicts, expected);
    // The altered row is kept as published: the evidence.
    let stored: String =
        sqlx::query_scalar("SELECT payload FROM floor_events WHERE table_id = 'bent' AND seq = 4")
            .fetch_one(&pool)
            .await
            .expect("row 4");
    assert_eq!(stored, log[3].3);
    assert!(floor.terminate(), "the floor stops cleanly on SIGTERM");
}

/// A durable consumer that delivers nothing while its stream holds rows (seen once in
/// tests/it/studio_cluster.rs under load, after the cluster lost its quorum). Made here by
/// hand: the floor's consumer exists already, starting far past the stream's end. The
/// floor reads the rows from the stream itself, each once, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_that_delivers_nothing_does_not_stall_the_floor() {
    let Some((bin, db)) = pg::broker_and_db().await else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let (broker, js) = broker_and_js(&bin, dir.path()).await;
    publish_log(&js, "stuck", &chained(12)).await;
    let stream = js
        .get_stream(
            croupier::broker::streams::StreamNames::default()
                .log("stuck")
                .name,
        )
        .await
        .expect("the stream");
    stream
        .create_consumer(async_nats::jetstream::consumer::pull::Config {
            deliver_policy: async_nats::jetstream::consumer::DeliverPolicy::ByStartSequence {
                start_sequence: 1_000_000,
            },
            ..croupier::broker::streams::floor_consumer(croupier::floor::DEFAULT_CONSUMER)
        })
        .await
        .expect("a consumer past the stream's end");

    let floor_log = dir.path().join("floor.log");
    let keys = hand_keys_file(dir.path(), &["stuck"]);
    let floor = announced(spawn_floor(&broker.url(), &db.url, &keys, &floor_log)).await;
    let pool = db.pool().await;
    wait_floor_rows(&pool, 12, &floor_log).await;
    let rows = verdicts(&pool, "stuck").await;
    let want: Vec<(i64, String)> = (1..=12).map(|s| (s, "ok".to_string())).collect();
    assert_eq!(rows, want, "every row once, in order, verified");
    let alarms = count(&pool, "SELECT count(*) FROM floor_alarms").await;
    assert_eq!(alarms, 0, "no alarm");
    let log = std::fs::read_to_string(&floor_log).unwrap_or_default();
    assert!(
        log.contains("the consumer delivers nothing while the stream holds more"),
        "the floor says why it reads the stream: {log}"
    );
    assert!(floor.terminate(), "the floor stops cleanly on SIGTERM");
}
