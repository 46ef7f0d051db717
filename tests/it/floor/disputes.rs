//! A dispute raised at a table resolved from the floor.

use super::*;

/// Waits (at most 30 s) until the floor's first tile shows `n` open disputes (`what`
/// names the wait).
async fn until_open_disputes(pit: &PitClient, n: u64, what: &str) {
    let started = Instant::now();
    loop {
        let t = pit.get("/floor/api/tables").await;
        if t[0]["open_disputes"].as_u64() == Some(n) {
            return;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "{what}: {t}");
        sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dispute_raised_at_a_table_is_resolved_from_the_floor() {
    let Some((bin, db)) = pg::broker_and_db().await else {
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
    table.wait_log_rows(10).await;

    add_supervisor(&db.url, "sup1", "pit-boss-1");
    let floor_log = dir.path().join("floor.log");
    let key_arg = key.display().to_string();
    let keys = studio_table::keys_file(dir.path(), &[&table]);
    let (floor, addr) =
        pit_floor(&url, &db.url, &keys, &floor_log, &["--floor-key", &key_arg]).await;

    // The dealer raises a dispute at the table: the round halts.
    let dispute = raise_dispute(&p, "seat 1 says the card was misread").await;

    let mut pit = PitClient::new(addr);
    assert_eq!(pit.login("sup1", "pit-boss-1").await, 200);
    // The floor sees the open dispute.
    until_open_disputes(&pit, 1, "open dispute shown").await;

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
            croupier::store::Record::Resolve(x)
                if x.dispute == dispute && x.proposed_by == "floor:sup1" && x.confirmed_by == "floor:sup1"
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
    until_open_disputes(&pit, 0, "resolved on the floor").await;
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
