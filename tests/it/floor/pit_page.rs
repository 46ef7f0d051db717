//! The pit page: tables, rounds and shift reports as the table recorded them; served over TLS,
//! never framed, and badges not told apart.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pit_page_shows_tables_rounds_and_reports_as_the_table_recorded_them() {
    let Some((bin, db)) = pg::broker_and_db().await else {
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
    let keys = studio_table::keys_file(dir.path(), &[&table]);
    let (floor, addr) = pit_floor(&url, &db.url, &keys, &floor_log, &[]).await;

    // A few settled rounds, then the log stops growing.
    until_settled(&table.db, "pit-r", 4).await;
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

    let mut pit = PitClient::new(addr);
    let page = pit.send("GET", "/floor", None).await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("croupier — pit"));
    assert_eq!(pit.send("GET", "/floor/api/tables", None).await.status, 401);
    assert_eq!(pit.send("GET", "/floor/api/me", None).await.status, 401);
    // Three failures lock sup2, even with the right secret afterwards; sup1 is unaffected.
    for _ in 0..3 {
        assert_eq!(pit.login("sup2", "wrong-secret").await, 401);
    }
    assert_eq!(pit.login("sup2", "pit-boss-2").await, 429, "locked");
    assert_eq!(pit.login("nobody", "pit-boss-1").await, 401);
    assert_eq!(pit.login("sup1", "pit-boss-1").await, 200);
    // Who the session is, as the login said it.
    assert_eq!(pit.get("/floor/api/me").await["badge"], "sup1");

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
    let settled = pit.settled("pit-r").await;
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
    // The hold's own handle and result: every bet, side bets included.
    assert_eq!(
        report[0]["total_handle"].as_i64(),
        Some(handle + side_handle)
    );
    assert_eq!(report[0]["total_result"].as_i64(), Some(house + side));
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
        "table,from_ms,to_ms,rounds,handle,house_result,hold_percent,side_handle,side_result,clock_steps,total_handle,total_result"
    );
    let hold = (house + side) as f64 * 100.0 / (handle + side_handle) as f64;
    assert_eq!(
        lines[1],
        format!(
            "pit-r,0,9999999999999,{},{handle},{house},{hold:.2},{side_handle},{side},0,{},{}",
            results.len(),
            handle + side_handle,
            house + side
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

/// Issue #32 item 10: the pit page over TLS (`--https-cert`, `--https-key`) with a `Secure`
/// session cookie; the table's CSP and frame headers on its page, its script a file of its
/// own (no inline script); a known badge and an unknown one answer alike, failure for
/// failure, so the answers do not tell which badges exist.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pit_page_over_tls_never_framed_and_badges_not_told_apart() {
    let Some((bin, db)) = pg::broker_and_db().await else {
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
    // No table here: the keys file pins none.
    let keys = studio_table::keys_file(dir.path(), &[]);
    let (floor, addr) = pit_floor(
        &url,
        &db.url,
        &keys,
        &dir.path().join("floor.log"),
        &["--https-cert", &cert_s, "--https-key", &key_s],
    )
    .await;
    assert!(floor.announce.contains("https://"), "{}", floor.announce);
    let pit = croupier::web::client::Endpoint::pinned(&addr, &cert_pem).expect("pem");
    let send = |method: &'static str, path: &'static str, body: Option<String>| {
        let pit = &pit;
        async move {
            pit.send(method, path, body.as_deref(), &[])
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

/// `POST /floor/api/login` from the source address `from` (any 127.x.y.z reaches the
/// floor): the status and the error code, if any.
async fn login_from(addr: &str, from: &str, badge: &str, secret: &str) -> (u16, String) {
    let body = serde_json::json!({"badge": badge, "secret": secret}).to_string();
    let addr = addr.parse().expect("addr");
    let reply = common::post_json_from(addr, from, "/floor/api/login", &body).await;
    let code = serde_json::from_str::<serde_json::Value>(&reply.body)
        .ok()
        .and_then(|v| v["code"].as_str().map(str::to_string))
        .unwrap_or_default();
    (reply.status, code)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pit_lockout_holds_whoever_logs_in_from_another_address() {
    let Some((bin, db)) = pg::broker_and_db().await else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let broker = Nats::start(&bin, dir.path());
    add_supervisor(&db.url, "sup1", "pit-boss-1");
    // No table here: the keys file pins none.
    let keys = studio_table::keys_file(dir.path(), &[]);
    let (_floor, addr) = pit_floor(
        &broker.url(),
        &db.url,
        &keys,
        &dir.path().join("floor.log"),
        &[],
    )
    .await;
    let guesser = "127.0.0.7";
    for _ in 0..3 {
        assert_eq!(
            login_from(&addr, guesser, "sup1", "wrong-secret").await.0,
            401
        );
    }
    // The badge's owner logs in from the pit's own machine, inside the guesser's lockout.
    assert_eq!(
        login_from(&addr, "127.0.0.1", "sup1", "pit-boss-1").await.0,
        200
    );
    // The guesser's lockout holds: the right and a wrong secret answer alike.
    let right = login_from(&addr, guesser, "sup1", "pit-boss-1").await;
    let wrong = login_from(&addr, guesser, "sup1", "wrong-secret").await;
    assert_eq!(right, (429, "locked".to_string()), "the right secret");
    assert_eq!(wrong, right, "a wrong secret answers as the right one");
}
