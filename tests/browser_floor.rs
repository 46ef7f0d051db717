//! The pit page (`croupier floor --bind`) in a real Chromium (Debian's `chromium` over the
//! DevTools protocol), with a real PostgreSQL (fresh database), a real `nats-server` and a
//! demo table publishing: a refused login shows the error; a supervisor logs in by the
//! form, sees the table at a glance, opens its rounds by tapping it (every row and the
//! settlement), runs the shift report with its CSV link, and resolves a dispute the dealer
//! raised at the table (preview, confirm: the table's log names `floor:301`). A screenshot at 1280×800 is
//! saved under `target/browser-artifacts/` (or `$CROUPIER_ARTIFACTS`).
//!
//! Without chromium, nats-server or PostgreSQL the test is skipped locally, and fails
//! under CI (`CI` set).

#[path = "support/cdp.rs"]
mod cdp;
#[path = "support/nats.rs"]
mod nats;
#[path = "support/pg.rs"]
mod pg;
#[path = "common/proc.rs"]
mod proc;

use cdp::{artifacts, chromium_present, Browser};
use proc::{announced, spawn, spawn_args};
use std::time::{Duration, Instant};
use tokio::time::sleep;

const STEP: Duration = Duration::from_secs(20);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_supervisor_uses_the_pit_page() {
    if !chromium_present() {
        return;
    }
    let Some(bin) = nats::nats_server() else {
        return;
    };
    let Some(db) = pg::fresh().await else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let broker = nats::Nats::start(&bin, dir.path());
    let url = broker.url();
    let table_db = dir.path().join("pit-b.db");
    let key = dir.path().join("floor.key");
    std::fs::write(&key, "9c3e5a7b1d0f2e4c6a8b0d1f3e5c7a9b\n").expect("key");
    let key_arg = key.display().to_string();
    let cfg = dir.path().join("pit-b.toml");
    let text = croupier::table::config::DEFAULT_TOML
        .replace("id = \"table-1\"", "id = \"pit-b\"")
        .replace(
            "path = \"data/croupier.db\"",
            &format!("path = {:?}", table_db.display().to_string()),
        )
        .replace("bind = \"127.0.0.1:8080\"", "bind = \"127.0.0.1:0\"")
        .replace("pace_ms = 400", "pace_ms = 25")
        + &format!("\n[publish]\nnats_url = \"{url}\"\n")
        + &format!("floor_key = {:?}\n", key.display().to_string());
    std::fs::write(&cfg, text).expect("config");
    let table = spawn(&cfg, &dir.path().join("table.log")).await;

    {
        use std::io::Write;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_croupier"))
            .args([
                "floor-user",
                "--database",
                &db.url,
                "--badge",
                "301",
                "--name",
                "Pit boss",
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("floor-user");
        writeln!(child.stdin.take().expect("stdin"), "pit-boss-1").expect("secret");
        assert!(child.wait().expect("wait").success());
    }
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
    let floor = announced(spawn_args(&args, &dir.path().join("floor.log"))).await;
    let addr = floor
        .announce
        .split("http://")
        .nth(1)
        .and_then(|s| s.split('/').next())
        .expect("pit page address")
        .to_string();

    // A settled round on the table before the supervisor looks.
    let started = Instant::now();
    loop {
        let reader = croupier::store::Reader::open(&table_db)
            .await
            .expect("reader");
        if !reader.results("pit-b").await.expect("results").is_empty() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "the table deals"
        );
        sleep(Duration::from_millis(200)).await;
    }

    let browser = Browser::launch().await;
    let page = browser
        .page(&format!("http://{addr}/floor"), 1280, 800)
        .await;
    page.wait_for("!document.getElementById('login').hidden", STEP)
        .await;
    let login = |badge: &str, secret: &str| {
        format!(
            "document.getElementById('badge').value = {badge:?}; \
             document.getElementById('secret').value = {secret:?}; true"
        )
    };
    page.eval(&login("301", "not-the-secret")).await;
    page.tap("#login button").await;
    page.wait_for(
        "document.getElementById('error').innerText.includes('bad badge or secret')",
        STEP,
    )
    .await;
    assert_eq!(
        page.eval("document.getElementById('pit').hidden").await,
        serde_json::json!(true)
    );

    page.eval(&login("301", "pit-boss-1")).await;
    page.tap("#login button").await;
    page.wait_for(
        "document.querySelectorAll('#tables tbody tr').length === 1 && \
         document.querySelector('#tables tbody tr').innerText.includes('deluxe')",
        STEP,
    )
    .await;
    assert_eq!(page.text("#who").await, "301");

    // Tapping the table opens its rounds: rows and a settlement — even when the finger
    // stays down across the list's 2 s refresh (a row replaced under it lost the tap: seen
    // under load).
    page.tap_held("#tables tbody tr", Duration::from_millis(2500))
        .await;
    page.wait_for(
        "document.querySelectorAll('#rounds .round').length > 0 && \
         document.getElementById('rounds').innerText.includes('Settled: seat')",
        STEP,
    )
    .await;
    // The list follows the table: the demo deals on, and new rounds appear without a tap.
    let shown = page
        .eval("document.querySelectorAll('#rounds .round').length")
        .await
        .as_u64()
        .expect("count");
    page.wait_for(
        &format!("document.querySelectorAll('#rounds .round').length > {shown}"),
        STEP,
    )
    .await;

    // The shift report (the default shift: the last eight hours) and its CSV link.
    page.tap("#report button").await;
    page.wait_for(
        "document.querySelectorAll('#reports tbody tr').length === 1 && \
         document.getElementById('csv').href.includes('format=csv')",
        STEP,
    )
    .await;
    let rounds = page
        .eval("Number(document.querySelector('#reports tbody tr td:nth-child(2)').innerText)")
        .await;
    assert!(
        rounds.as_u64().is_some_and(|n| n >= 1),
        "rounds in the report: {rounds}"
    );
    page.screenshot(&artifacts().join("pit-1280x800.png")).await;

    // The dealer raises a dispute at the table; the supervisor resolves it from the page.
    let started = Instant::now();
    let dispute = loop {
        let (status, body) = table
            .post(
                "/api/disputes",
                r#"{"reason": "player says the card was misread"}"#,
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
    page.wait_for(
        "document.querySelector('#tables tbody tr td:nth-child(6)').innerText === '1'",
        STEP,
    )
    .await;
    page.tap("#tables tbody tr").await;
    page.wait_for(
        &format!("document.getElementById('d-id').value === '{dispute}'"),
        STEP,
    )
    .await;
    page.eval("document.getElementById('d-reason').value = 'the camera shows it was right'; true")
        .await;
    page.tap("#dispute button[type=submit]").await;
    page.wait_for("!document.getElementById('d-confirm').disabled", STEP)
        .await;
    page.tap("#d-confirm").await;
    page.wait_for(
        "document.getElementById('d-preview').innerText.startsWith('Applied at the table')",
        STEP,
    )
    .await;
    page.wait_for(
        "document.querySelector('#tables tbody tr td:nth-child(6)').innerText === '0'",
        STEP,
    )
    .await;
    let reader = croupier::store::Reader::open(&table_db)
        .await
        .expect("reader");
    assert!(reader
        .log("pit-b")
        .await
        .expect("log")
        .iter()
        .any(|r| matches!(
            &r.record,
            croupier::store::Record::Resolve { dispute: d, confirmed_by, .. }
                if *d == dispute && confirmed_by == "floor:301"
        )));

    // Logged out: the login form again.
    page.tap("#logout").await;
    page.wait_for("!document.getElementById('login').hidden", STEP)
        .await;
    browser.close().await;
    assert!(floor.terminate(), "the floor stops cleanly");
}
