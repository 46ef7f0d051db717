//! The casino floor (`croupier floor`) against a real PostgreSQL (a fresh database per
//! test, `support/pg.rs`) and a real `nats-server` started here (`support/nats.rs`).
//!
//! - Three demo tables publish while the broker is SIGKILLed and restarted and the floor
//!   is SIGKILLed and restarted; at the end the floor holds every row of every table
//!   exactly once, byte for byte as each table's SQLite log has it, all verified, no alarm.
//! - A table log tampered with on the broker (one payload altered, one row missing):
//!   exactly one `chain_break` and one `gap` alarm, on the right rows; an intact table
//!   beside it raises none.
//! - A table restored from a backup and continued by the operator, a broker that loses
//!   its store, and blocked commits: the floor follows the branch and the new streams
//!   without a restart and raises `timeline` and `stall` alarms (issue #31).

mod common;
#[path = "support/floor_check.rs"]
mod floor_check;
#[path = "support/nats.rs"]
mod nats;
#[path = "support/pg.rs"]
mod pg;
#[path = "common/proc.rs"]
mod proc;
#[path = "support/studio_table.rs"]
mod studio_table;

use croupier::table::TableConfig;
use nats::Nats;
use pg::{floor_rows, rows_of};
use proc::{announced, spawn_args};
use sqlx::{PgPool, Row};
use std::path::Path;
use std::time::{Duration, Instant};
use studio_table::Table;
use tokio::time::sleep;

impl Table {
    async fn wait_rows(&self, rows: usize) {
        let started = Instant::now();
        while self.rows().await.len() <= rows {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{} deals",
                self.id
            );
            sleep(Duration::from_millis(200)).await;
        }
    }
}

fn spawn_floor(nats: &str, db: &str, log: &Path) -> std::process::Child {
    spawn_floor_with(nats, db, log, &[])
}

/// A floor with more arguments.
fn spawn_floor_with(nats: &str, db: &str, log: &Path, extra: &[&str]) -> std::process::Child {
    let mut args = vec!["floor", "--nats", nats, "--database", db];
    args.extend_from_slice(extra);
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
    spawn_args(&args, log)
}

/// `croupier_floor_rows_total` in a floor's scrape.
fn committed(metrics: &str) -> f64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix("croupier_floor_rows_total "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .unwrap_or_else(|| panic!("croupier_floor_rows_total in {metrics}"))
}

/// A floor serving its pit page and `/metrics` on a free port.
fn spawn_bound_floor(nats: &str, db: &str, log: &Path) -> std::process::Child {
    spawn_floor_with(nats, db, log, &["--bind", "127.0.0.1:0"])
}

async fn count(pool: &PgPool, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.expect(sql)
}

async fn wait_floor_rows(pool: &PgPool, at_least: i64, floor_log: &Path) {
    let started = Instant::now();
    loop {
        let n = count(pool, "SELECT count(*) FROM floor_events").await;
        if n >= at_least {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the floor ingests (has {n} rows; log: {})",
            std::fs::read_to_string(floor_log).unwrap_or_default()
        );
        sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_tables_exactly_once_through_a_broker_restart_and_a_killed_floor() {
    let Some(bin) = nats::nats_server() else {
        return;
    };
    let Some(db) = pg::fresh().await else {
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
    let floor = announced(spawn_floor(&url, &db.url, &floor_log)).await;
    for t in &tables {
        t.wait_rows(20).await;
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
    let floor = announced(spawn_floor(&url, &db.url, &floor_log)).await;

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
        assert!(
            want.len() > 50,
            "{}: a real session ({} rows)",
            t.id,
            want.len()
        );
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
    let Some(bin) = nats::nats_server() else {
        return;
    };
    let Some(db) = pg::fresh().await else {
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
    let a = announced(spawn_bound_floor(&url, &db.url, &log_a)).await;
    let b = announced(spawn_bound_floor(&url, &db.url, &log_b)).await;
    wait_floor_rows(&pool, 40, &log_a).await;
    // One dies mid-ingest; the other goes on alone, then the first comes back beside it.
    a.kill();
    let before = count(&pool, "SELECT count(*) FROM floor_events").await;
    wait_floor_rows(&pool, before + 40, &log_b).await;
    let a = announced(spawn_bound_floor(&url, &db.url, &log_a)).await;
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
        assert!(
            want.len() > 50,
            "{}: a real session ({} rows)",
            t.id,
            want.len()
        );
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

/// Publishes `rows` as table `table`'s log: (seq, at_ms, kind, payload, hash).
async fn publish_log(
    js: &async_nats::jetstream::Context,
    table: &str,
    rows: &[(u64, i64, String, String, [u8; 32])],
) {
    js.get_or_create_stream(async_nats::jetstream::stream::Config {
        name: format!("CROUPIER_LOG_{table}"),
        subjects: vec![format!("croupier.{table}.log")],
        ..Default::default()
    })
    .await
    .expect("stream");
    for (seq, at_ms, kind, payload, hash) in rows {
        let body = format!(
            r#"{{"table":"{table}","seq":{seq},"at_ms":{at_ms},"kind":"{kind}","hash":"{}","record":{payload}}}"#,
            hex::encode(hash)
        );
        js.publish(format!("croupier.{table}.log"), body.into())
            .await
            .expect("publish")
            .await
            .expect("ack");
    }
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
    let Some(bin) = nats::nats_server() else {
        return;
    };
    let Some(db) = pg::fresh().await else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let broker = Nats::start(&bin, dir.path());
    let client = async_nats::connect(broker.url()).await.expect("connect");
    let js = async_nats::jetstream::new(client);

    publish_log(&js, "clean", &chained(8)).await;
    let mut log = chained(8);
    // Row 4's record altered after the table hashed it; row 7 never reaches the broker.
    log[3].3 = log[3].3.replace("H\"", "S\"");
    log.remove(6);
    publish_log(&js, "bent", &log).await;

    let floor_log = dir.path().join("floor.log");
    let floor = announced(spawn_floor(&broker.url(), &db.url, &floor_log)).await;
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
    let verdicts: Vec<(i64, String)> =
        sqlx::query("SELECT seq, verified FROM floor_events WHERE table_id = 'bent' ORDER BY seq")
            .fetch_all(&pool)
            .await
            .expect("rows")
            .iter()
            .map(|r| (r.get("seq"), r.get("verified")))
            .collect();
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

/// `floor-user`: adds a supervisor (secret on stdin).
fn add_supervisor(db: &str, badge: &str, secret: &str) {
    use std::io::Write;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args([
            "floor-user",
            "--database",
            db,
            "--badge",
            badge,
            "--name",
            "Pit boss",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("spawn floor-user");
    writeln!(child.stdin.take().expect("stdin"), "{secret}").expect("secret");
    assert!(child.wait().expect("wait").success(), "floor-user {badge}");
}

struct PitClient {
    addr: String,
    cookie: Option<String>,
}

impl PitClient {
    async fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<&str>,
    ) -> croupier::web::client::Reply {
        let headers: Vec<(&str, &str)> =
            self.cookie.iter().map(|c| ("Cookie", c.as_str())).collect();
        croupier::web::client::request_with(
            &self.addr,
            method,
            path,
            body,
            &headers,
            Duration::from_secs(30),
        )
        .await
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"))
    }

    async fn get(&self, path: &str) -> serde_json::Value {
        let r = self.send("GET", path, None).await;
        assert_eq!(r.status, 200, "GET {path}: {}", r.body);
        serde_json::from_str(&r.body).expect("JSON")
    }

    async fn login(&mut self, badge: &str, secret: &str) -> u16 {
        let body = serde_json::json!({"badge": badge, "secret": secret}).to_string();
        let r = self.send("POST", "/floor/api/login", Some(&body)).await;
        if r.status == 200 {
            self.cookie = r
                .headers
                .iter()
                .filter(|(k, _)| k == "set-cookie")
                .filter_map(|(_, v)| v.split(';').next())
                .find(|kv| kv.starts_with("floor_session="))
                .map(str::to_string);
        }
        r.status
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pit_page_shows_tables_rounds_and_reports_as_the_table_recorded_them() {
    let Some(bin) = nats::nats_server() else {
        return;
    };
    let Some(db) = pg::fresh().await else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let broker = Nats::start(&bin, dir.path());
    let url = broker.url();
    let mut table = Table::new(dir.path(), "pit-r", &url);
    table.start(true).await;

    add_supervisor(&db.url, "sup1", "pit-boss-1");
    add_supervisor(&db.url, "sup2", "pit-boss-2");
    let floor_log = dir.path().join("floor.log");
    let args = [
        "floor",
        "--nats",
        &url,
        "--database",
        &db.url,
        "--bind",
        "127.0.0.1:0",
    ];
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
    let floor = announced(spawn_args(&args, &floor_log)).await;
    let addr = floor
        .announce
        .split("http://")
        .nth(1)
        .and_then(|s| s.split('/').next())
        .expect("pit page address")
        .to_string();

    // A few settled rounds, then the log stops growing.
    let started = Instant::now();
    loop {
        let reader = croupier::store::Reader::open(&table.db)
            .await
            .expect("reader");
        if reader.results("pit-r").await.expect("results").len() >= 4 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "the table deals"
        );
        sleep(Duration::from_millis(200)).await;
    }
    table.stop();
    table.start(false).await;
    // The quiet twin may still write (the last round's `final` row after its window).
    sleep(Duration::from_secs(2)).await;
    let want = table.rows().await;
    let pool = db.pool().await;
    let started = Instant::now();
    while floor_rows(&pool, "pit-r").await.len() < want.len() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the floor catches up"
        );
        sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(
        table.rows().await.len(),
        want.len(),
        "the log stopped growing"
    );

    let mut pit = PitClient { addr, cookie: None };
    let page = pit.send("GET", "/floor", None).await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("croupier — pit"));
    assert_eq!(pit.send("GET", "/floor/api/tables", None).await.status, 401);
    // Three failures lock sup2, even with the right secret afterwards; sup1 is unaffected.
    for _ in 0..3 {
        assert_eq!(pit.login("sup2", "wrong-secret").await, 401);
    }
    assert_eq!(pit.login("sup2", "pit-boss-2").await, 429, "locked");
    assert_eq!(pit.login("nobody", "pit-boss-1").await, 401);
    assert_eq!(pit.login("sup1", "pit-boss-1").await, 200);

    let tables = pit.get("/floor/api/tables").await;
    let t = &tables.as_array().expect("array")[0];
    assert_eq!(tables.as_array().map(Vec::len), Some(1));
    assert_eq!(t["table"], "pit-r");
    assert_eq!(t["game"], "deluxe");
    assert_eq!(t["rows"].as_u64(), Some(want.len() as u64));
    assert_eq!(t["lag_rows"].as_u64(), Some(0));
    assert_eq!(t["alarms"].as_u64(), Some(0));
    assert_eq!(t["open_disputes"].as_u64(), Some(0));
    assert!(t["last_card_ms"].as_i64().is_some(), "{t}");

    // Every settled round's settlement is the table's own.
    let reader = croupier::store::Reader::open(&table.db)
        .await
        .expect("reader");
    let results = reader.results("pit-r").await.expect("results");
    let rounds = pit.get("/floor/api/rounds?table=pit-r&last=100000").await;
    let settled: Vec<serde_json::Value> = rounds
        .as_array()
        .expect("rounds")
        .iter()
        .filter(|r| !r["result"].is_null())
        .map(|r| r["result"].clone())
        .collect();
    let expected: Vec<serde_json::Value> = results
        .iter()
        .map(|r| serde_json::to_value(r).expect("json"))
        .collect();
    assert_eq!(settled, expected, "the floor's settlements are the table's");
    assert!(rounds[0]["lines"].as_array().is_some_and(|l| l.len() > 3));

    // Search by round and by card.
    let one = pit.get("/floor/api/rounds?table=pit-r&round=2").await;
    assert_eq!(one.as_array().map(Vec::len), Some(1));
    assert_eq!(one[0]["round"], 2);
    let card = results[0].dealer_cards[0].to_string();
    let with = pit
        .get(&format!(
            "/floor/api/rounds?table=pit-r&card={card}&last=100000"
        ))
        .await;
    let with = with.as_array().expect("rounds");
    assert!(with.iter().any(|r| r["round"] == results[0].round));
    let holds = |r: &croupier::engine::RoundResult| {
        r.dealer_cards
            .iter()
            .chain(r.hands.iter().flat_map(|h| h.cards.iter()))
            .chain(r.burned.iter())
            .any(|c| c.to_string() == card)
    };
    assert_eq!(with.len(), results.iter().filter(|r| holds(r)).count());

    // The shift report over everything: the table's own sums.
    let (mut handle, mut house, mut side_handle, mut side) = (0i64, 0i64, 0i64, 0i64);
    for r in &results {
        for b in &r.bets {
            match b.kind {
                croupier::engine::BetKind::Side(_) => {
                    side_handle += b.staked;
                    side += b.staked - b.returned;
                }
                _ => {
                    handle += b.staked;
                    house += b.staked - b.returned;
                }
            }
        }
    }
    let report = pit
        .get("/floor/api/report?from_ms=0&to_ms=9999999999999")
        .await;
    assert_eq!(report[0]["rounds"].as_u64(), Some(results.len() as u64));
    assert_eq!(report[0]["handle"].as_i64(), Some(handle));
    assert_eq!(report[0]["house_result"].as_i64(), Some(house));
    assert_eq!(report[0]["side_handle"].as_i64(), Some(side_handle));
    assert_eq!(report[0]["side_result"].as_i64(), Some(side));
    // The table's clock never stepped back here: nothing to mark.
    assert_eq!(report[0]["clock_steps"], serde_json::json!([]));
    assert!(handle > 0);
    let csv = pit
        .send(
            "GET",
            "/floor/api/report?from_ms=0&to_ms=9999999999999&format=csv",
            None,
        )
        .await;
    assert_eq!(csv.status, 200);
    let lines: Vec<&str> = csv.body.lines().collect();
    assert_eq!(
        lines[0],
        "table,from_ms,to_ms,rounds,handle,house_result,hold_percent,side_handle,side_result,clock_steps"
    );
    let hold = (house + side) as f64 * 100.0 / (handle + side_handle) as f64;
    assert_eq!(
        lines[1],
        format!(
            "pit-r,0,9999999999999,{},{handle},{house},{hold:.2},{side_handle},{side},0",
            results.len()
        )
    );
    // An empty shift.
    let none = pit.get("/floor/api/report?from_ms=0&to_ms=1").await;
    assert_eq!(none[0]["rounds"].as_u64(), Some(0));

    // Logged out, the session is gone; everything was audited.
    assert_eq!(
        pit.send("POST", "/floor/api/logout", Some("{}"))
            .await
            .status,
        200
    );
    assert_eq!(pit.send("GET", "/floor/api/tables", None).await.status, 401);
    let audit: Vec<(String, String)> =
        sqlx::query("SELECT actor, action FROM floor_audit ORDER BY seq")
            .fetch_all(&pool)
            .await
            .expect("audit")
            .iter()
            .map(|r| (r.get("actor"), r.get("action")))
            .collect();
    for needed in [
        ("sup2", "login_failed"),
        ("sup2", "locked"),
        ("sup2", "login_refused"),
        ("nobody", "login_failed"),
        ("sup1", "login"),
        ("sup1", "report_export"),
        ("sup1", "logout"),
    ] {
        assert!(
            audit.contains(&(needed.0.to_string(), needed.1.to_string())),
            "audit has {needed:?}: {audit:?}"
        );
    }
    table.stop();
    assert!(floor.terminate(), "the floor stops cleanly");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dispute_raised_at_a_table_is_resolved_from_the_floor() {
    let Some(bin) = nats::nats_server() else {
        return;
    };
    let Some(db) = pg::fresh().await else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let broker = Nats::start(&bin, dir.path());
    let url = broker.url();
    let key = dir.path().join("floor.key");
    std::fs::write(&key, "4f1c2b7e9a0d3c5b8e6f1a2d4c7b9e0a\n").expect("key");
    // The table answers the floor with the shared key.
    let table = Table::new(dir.path(), "pit-d", &url);
    let cfg = std::fs::read_to_string(&table.demo).expect("config")
        + &format!("floor_key = {:?}\n", key.display().to_string());
    std::fs::write(&table.demo, cfg).expect("config");
    TableConfig::load(&table.demo).expect("valid config");
    let p = proc::spawn(&table.demo, &table.log).await;
    table.wait_rows(10).await;

    add_supervisor(&db.url, "sup1", "pit-boss-1");
    let floor_log = dir.path().join("floor.log");
    let key_arg = key.display().to_string();
    let args = [
        "floor",
        "--nats",
        &url,
        "--database",
        &db.url,
        "--bind",
        "127.0.0.1:0",
        "--floor-key",
        &key_arg,
    ];
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
    let floor = announced(spawn_args(&args, &floor_log)).await;
    let addr = floor
        .announce
        .split("http://")
        .nth(1)
        .and_then(|s| s.split('/').next())
        .expect("pit page address")
        .to_string();

    // The dealer raises a dispute at the table: the round halts.
    let started = Instant::now();
    let dispute = loop {
        let (status, body) = p
            .post(
                "/api/disputes",
                r#"{"reason": "seat 1 says the card was misread"}"#,
            )
            .await;
        if status == 200 {
            let v: serde_json::Value = serde_json::from_str(&body).expect("json");
            break v["dispute"].as_u64().expect("dispute id");
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "raise: {status} {body}"
        );
        sleep(Duration::from_millis(100)).await;
    };

    let mut pit = PitClient { addr, cookie: None };
    assert_eq!(pit.login("sup1", "pit-boss-1").await, 200);
    // The floor sees the open dispute.
    let started = Instant::now();
    loop {
        let t = pit.get("/floor/api/tables").await;
        if t[0]["open_disputes"].as_u64() == Some(1) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "open dispute shown: {t}"
        );
        sleep(Duration::from_millis(200)).await;
    }

    // A command not signed with the table's key is refused by the table itself.
    let client = async_nats::connect(&url).await.expect("connect");
    let forged = croupier::publish::floor_commands::Command::sign(
        b"not the table's floor key at all",
        "pit-d",
        dispute,
        "sup1",
        croupier::publish::floor_commands::Action::Confirm {
            proposal: "0".repeat(64),
        },
    );
    let reply = client
        .request(
            croupier::publish::floor_commands::subject("pit-d"),
            serde_json::to_vec(&forged).expect("json").into(),
        )
        .await
        .expect("the table answers");
    let reply: serde_json::Value = serde_json::from_slice(&reply.payload).expect("json");
    assert_eq!(reply["code"], "bad_signature", "{reply}");

    // Preview, then confirm, from the pit page.
    let body = serde_json::json!({
        "table": "pit-d", "dispute": dispute, "action": "propose",
        "resolution": {"op": "reject"}, "reason": "camera shows the card was read right",
    })
    .to_string();
    let r = pit.send("POST", "/floor/api/disputes", Some(&body)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let preview: serde_json::Value = serde_json::from_str(&r.body).expect("json");
    let hash = preview["preview"]["proposal"]
        .as_str()
        .expect("hash")
        .to_string();
    // A stale hash is refused, as on the panel.
    let stale = serde_json::json!({
        "table": "pit-d", "dispute": dispute, "action": "confirm", "proposal": "0".repeat(64),
    })
    .to_string();
    let r = pit.send("POST", "/floor/api/disputes", Some(&stale)).await;
    assert_eq!(r.status, 409, "{}", r.body);
    let confirm = serde_json::json!({
        "table": "pit-d", "dispute": dispute, "action": "confirm", "proposal": hash,
    })
    .to_string();
    let r = pit
        .send("POST", "/floor/api/disputes", Some(&confirm))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);

    // The table's log and audit name the floor supervisor; the floor sees it resolved.
    let reader = croupier::store::Reader::open(&table.db)
        .await
        .expect("reader");
    let log = reader.log("pit-d").await.expect("log");
    assert!(
        log.iter().any(|r| matches!(
            &r.record,
            croupier::store::Record::Resolve { dispute: d, proposed_by, confirmed_by, .. }
                if *d == dispute && proposed_by == "floor:sup1" && confirmed_by == "floor:sup1"
        )),
        "a resolve row by floor:sup1"
    );
    let sqlite = sqlx::SqlitePool::connect(&format!("sqlite://{}?mode=ro", table.db.display()))
        .await
        .expect("sqlite");
    let actors: Vec<String> = sqlx::query_scalar("SELECT actor FROM audit")
        .fetch_all(&sqlite)
        .await
        .expect("audit");
    assert!(actors.iter().any(|a| a == "floor:sup1"), "{actors:?}");
    let started = Instant::now();
    loop {
        let t = pit.get("/floor/api/tables").await;
        if t[0]["open_disputes"].as_u64() == Some(0) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "resolved on the floor: {t}"
        );
        sleep(Duration::from_millis(200)).await;
    }
    let floor_audit: Vec<String> =
        sqlx::query_scalar("SELECT action FROM floor_audit WHERE actor = 'sup1' ORDER BY seq")
            .fetch_all(&db.pool().await)
            .await
            .expect("floor audit");
    assert!(floor_audit.contains(&"dispute_propose".to_string()));
    assert!(floor_audit.contains(&"dispute_confirm".to_string()));
    p.kill();
    assert!(floor.terminate(), "the floor stops cleanly");
}

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
    let Some(bin) = nats::nats_server() else {
        return;
    };
    let Some(db) = pg::fresh().await else {
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
        let args = ["floor", "--nats", &url, "--database", &db.url, "--stall-seconds", "3"];
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
        let floor = announced(spawn_args(&args, &floor_log)).await;
        t.wait_rows(20).await;
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
        t.wait_rows(backed + 30).await;
        // The floor takes the tail the restore will lose.
        settle_on_the_floor(&mut t, &pool, &floor_log).await;
        t.stop();
        let lost_head = t.rows().await.len();

        // Restored; the publisher refuses; the operator continues.
        for ext in ["-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{ext}", t.db.display()));
        }
        std::fs::copy(&backup, &t.db).expect("restore");
        std::fs::copy(
            croupier::store::anchor::path_for(&backup),
            croupier::store::anchor::path_for(&t.db),
        )
        .expect("restore the anchor");
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
        t.wait_rows(now + 20).await;
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
        t.wait_rows(now + 15).await;
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
                started.elapsed() < Duration::from_secs(30),
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

/// Issue #32 item 10: the pit page over TLS (`--https-cert`, `--https-key`) with a `Secure`
/// session cookie; the table's CSP and frame headers on its page, its script a file of its
/// own (no inline script); a known badge and an unknown one answer alike, failure for
/// failure, so the answers do not tell which badges exist.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pit_page_over_tls_never_framed_and_badges_not_told_apart() {
    let Some(bin) = nats::nats_server() else {
        return;
    };
    let Some(db) = pg::fresh().await else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let broker = Nats::start(&bin, dir.path());
    let cert =
        rcgen::generate_simple_self_signed(vec!["croupier.local".to_string()]).expect("cert");
    let (cert_pem, key_pem) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert_pem, cert.cert.pem()).expect("write");
    std::fs::write(&key_pem, cert.signing_key.serialize_pem()).expect("write");
    add_supervisor(&db.url, "sup1", "pit-boss-1");
    add_supervisor(&db.url, "sup2", "pit-boss-2");
    let (url, cert_s, key_s) = (
        broker.url(),
        cert_pem.display().to_string(),
        key_pem.display().to_string(),
    );
    let args = [
        "floor",
        "--nats",
        &url,
        "--database",
        &db.url,
        "--bind",
        "127.0.0.1:0",
        "--https-cert",
        &cert_s,
        "--https-key",
        &key_s,
    ];
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
    let floor = announced(spawn_args(&args, &dir.path().join("floor.log"))).await;
    assert!(floor.announce.contains("https://"), "{}", floor.announce);
    let addr = floor
        .announce
        .split("https://")
        .nth(1)
        .and_then(|s| s.split('/').next())
        .expect("pit page address")
        .to_string();
    let pit = croupier::web::client::Endpoint::pinned(&addr, &cert_pem).expect("pem");
    let send = |method: &'static str, path: &'static str, body: Option<String>| {
        let pit = &pit;
        async move {
            pit.send(method, path, body.as_deref(), &[], Duration::from_secs(30))
                .await
                .unwrap_or_else(|e| panic!("{method} {path}: {e}"))
        }
    };
    let header = |r: &croupier::web::client::Reply, name: &str| {
        r.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    // Plain HTTP gets no page.
    assert!(
        croupier::web::client::request(&addr, "GET", "/floor", None, Duration::from_secs(5))
            .await
            .map_or(true, |(status, _)| status != 200)
    );

    let page = send("GET", "/floor", None).await;
    assert_eq!(page.status, 200);
    assert!(header(&page, "content-security-policy").contains("frame-ancestors 'none'"));
    assert!(header(&page, "content-security-policy").contains("script-src 'self'"));
    assert_eq!(header(&page, "x-frame-options"), "DENY");
    assert_eq!(header(&page, "x-content-type-options"), "nosniff");
    assert!(page
        .body
        .contains(r#"<script src="/floor/pit.js"></script>"#));
    assert!(
        !page.body.contains("<script>"),
        "no inline script the CSP would block"
    );
    let script = send("GET", "/floor/pit.js", None).await;
    assert_eq!(script.status, 200);
    assert!(header(&script, "content-type").starts_with("text/javascript"));
    assert!(script.body.contains("/floor/api/login"));

    let login = |badge: &'static str, secret: &'static str| {
        send(
            "POST",
            "/floor/api/login",
            Some(serde_json::json!({"badge": badge, "secret": secret}).to_string()),
        )
    };
    let ok = login("sup1", "pit-boss-1").await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    let cookie = header(&ok, "set-cookie");
    assert!(
        cookie.starts_with("floor_session=")
            && cookie.contains("; Secure")
            && cookie.contains("HttpOnly"),
        "{cookie}"
    );
    // A known badge and an unknown one: the same answers, failure for failure.
    let mut answers = Vec::new();
    for badge in ["sup2", "nobody"] {
        let mut seen = Vec::new();
        for _ in 0..4 {
            let r = login(badge, "wrong-secret").await;
            let code = serde_json::from_str::<serde_json::Value>(&r.body).expect("JSON")["code"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            seen.push((r.status, code));
        }
        answers.push(seen);
    }
    assert_eq!(answers[0], answers[1], "a known badge is told apart");
    assert_eq!(answers[0][3], (429, "locked".to_string()), "{answers:?}");
    assert_eq!(answers[0][2].0, 401, "{answers:?}");
    // The right secret from the locked address stays refused; sup1 is not affected.
    assert_eq!(login("sup2", "pit-boss-2").await.status, 429);
    assert_eq!(login("sup1", "pit-boss-1").await.status, 200);
}
