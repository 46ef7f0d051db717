//! Ultimate for a remote player: 21+3 by its name, and the automatic re-bet clipped to the
//! balance.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ultimate_player_bets_21_plus_3_by_its_name_and_is_paid_exactly() {
    timeout(Duration::from_secs(240), async {
        let (_dir, db, p) = one_player("ultimate", "Uma").await;
        let s = state(&p).await;
        assert_eq!(s["game"]["side_bets"][0]["name"], "21+3", "{s}");
        assert_eq!(s["game"]["play_behind"], false);
        taken(&p, "/api/play/join", r#"{"seat": 4}"#).await;
        until(&p, 30, "a betting window", |s| s["betting"]["open"] == true).await;
        // Deluxe's pair is no Ultimate bet; nor is play behind.
        refuses(&p, "/api/play/bet", r#"{"main": 1000, "side": {"pair": 500}}"#, 422, "unknown_side_bet").await;
        refuses(&p, "/api/play/behind", r#"{"seat": 1, "main": 500}"#, 409, "no_play_behind").await;
        assert_eq!(state(&p).await["balance"], 50_000);
        let body = taken(&p, "/api/play/bet", r#"{"main": 1000, "side": {"21+3": 500}}"#).await;
        let placed: Value = serde_json::from_str(&body).expect("json");
        let r = placed["round"].as_u64().expect("round");
        assert_eq!(placed["balance"], 48_500);
        let tx = common::tx_table(&db).await;
        assert_eq!(placed["txs"], serde_json::json!([
            format!("{tx}:{r}:4:main.1:debit"),
            format!("{tx}:{r}:4:side-21+3.1:debit"),
        ]));
        stand_until_result(&p, r).await;
        // Ultimate re-bets the round's bet in the next window (`funds.auto_rebet`, once the
        // round is credited): withdrawn here, its stakes come back.
        rebet_window(&p, r).await;
        taken(&p, "/api/play/bet", r#"{"main": 0}"#).await;
        let balance = state(&p).await["balance"].as_i64().expect("balance");
        assert!(p.terminate(), "clean stop");
        assert_eq!(
            ledger_rows(&db, &format!("SELECT staked FROM settlements WHERE round = {r} AND seat = 4 AND kind = '21+3'")).await,
            500
        );
        assert_eq!(balance, by_the_log(&db, 50_000, "seat = 4 AND player = ''").await);
        no_open_stakes(&db).await;
    })
    .await
    .expect("bounded");
}

/// Waits for the next betting window after round `after` with the automatic re-bet on the
/// player's seat: the state then.
async fn rebet_window(p: &proc::Proc, after: u64) -> Value {
    until(p, 90, "a window with the re-bet", |s| {
        s["betting"]["open"] == true
            && s["betting"]["round"].as_u64() > Some(after)
            && s["betting"]["my_rebet"].is_object()
    })
    .await
}

/// What `play::funds::rebet` makes of `main` + 21+3 `side` with `balance` (Ultimate):
/// the main bet and the side bets, or `None` below the minimum.
fn rebet_of(balance: i64, main: i64, side: i64) -> Option<(i64, Value)> {
    let v = croupier::engine::Variant::built_in("ultimate")
        .expect("shipped")
        .expect("valid");
    let mut seats = vec![croupier::engine::SeatBets {
        seat: 4,
        main,
        side: vec![("21+3".to_string(), side)],
        player: Some("uma".into()),
        ..Default::default()
    }];
    croupier::play::funds::rebet(&v, "uma", balance, &mut seats);
    let b = seats.pop()?;
    Some((b.main, serde_json::json!(b.side)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ultimate_rebets_the_previous_bet_in_each_window_clipped_to_the_balance() {
    timeout(Duration::from_secs(600), async {
        let (dir, db, p) = one_player("ultimate", "Uma").await;
        let cfg = dir.path().join("table.toml").display().to_string();
        taken(&p, "/api/play/join", r#"{"seat": 4}"#).await;
        until(&p, 30, "a betting window", |s| s["betting"]["open"] == true).await;
        let body = taken(&p, "/api/play/bet", r#"{"main": 1000, "side": {"21+3": 500}}"#).await;
        let r1 = serde_json::from_str::<Value>(&body).expect("json")["round"].as_u64().expect("round");
        stand_until_result(&p, r1).await;

        // The next window: the same bet, debited, without the player doing anything.
        let s = rebet_window(&p, r1).await;
        let r2 = s["betting"]["round"].as_u64().expect("round");
        assert_eq!(s["betting"]["my_bet"], 1000, "{s}");
        assert_eq!(s["betting"]["my_side"], serde_json::json!([["21+3", 500]]), "{s}");
        assert_eq!(s["betting"]["my_rebet"], serde_json::json!({"clipped": false}), "{s}");
        let after_r1 = by_the_log(&db, 50_000, "seat = 4 AND player = ''").await;
        assert_eq!(s["balance"].as_i64(), Some(after_r1 - 1500), "{s}");
        assert_eq!(
            ledger_rows(&db, &format!("SELECT COALESCE(SUM(amount), 0) FROM wallet_journal WHERE round = {r2} AND seat = 4 AND state = 'committed' AND line IN ('main.1', 'side-21+3.1')")).await,
            1500,
            "the re-bet went through the wallet, line by line"
        );

        // The player may change it: 10 + 21+3 1000, then takes all but €5.00 out of the
        // wallet. Unless the 21+3 wins, the next re-bet is clipped to the balance.
        let mut withdrawn = 0;
        let mut last = r2;
        let mut clipped = false;
        for _ in 0..3 {
            let body = taken(&p, "/api/play/bet", r#"{"main": 10, "side": {"21+3": 1000}}"#).await;
            let placed: Value = serde_json::from_str(&body).expect("json");
            assert_eq!(placed["round"].as_u64(), Some(last), "{body}");
            let out = placed["balance"].as_i64().expect("balance") - 500;
            let (ok, text) = croupier(&["player", "credit", "--config", &cfg, "uma", &format!("-{}.{:02}", out / 100, out % 100)]);
            assert!(ok, "{text}");
            withdrawn += out;
            assert_eq!(state(&p).await["balance"], 500);
            stand_until_result(&p, last).await;
            let s = rebet_window(&p, last).await;
            let round = s["betting"]["round"].as_u64().expect("round");
            let balance = by_the_log(&db, 50_000 - withdrawn, "seat = 4 AND player = ''").await;
            let (main, side) = rebet_of(balance, 10, 1000).expect("above the minimum");
            assert_eq!((s["betting"]["my_bet"].as_i64(), &s["betting"]["my_side"]), (Some(main), &side), "{s}");
            let total = main + side[0][1].as_i64().unwrap_or(0);
            assert_eq!(s["balance"].as_i64(), Some(balance - total), "{s}");
            last = round;
            if balance < 1010 {
                // "The maximum available": all of it, the 21+3 cut down to what is left.
                assert_eq!((main, total), (10, balance), "{s}");
                assert_eq!(s["betting"]["my_rebet"], serde_json::json!({"clipped": true}), "{s}");
                assert_eq!(s["balance"], 0, "{s}");
                clipped = true;
                break;
            }
        }
        assert!(clipped, "a re-bet was clipped to the balance");
        // And withdraw it: the stakes come back.
        taken(&p, "/api/play/bet", r#"{"main": 0}"#).await;
        let s = state(&p).await;
        assert!(s["betting"]["my_rebet"].is_null(), "{s}");
        let balance = s["balance"].as_i64().expect("balance");
        assert!(p.terminate(), "clean stop");
        assert_eq!(balance, by_the_log(&db, 50_000 - withdrawn, "seat = 4 AND player = ''").await);
        no_open_stakes(&db).await;
    })
    .await
    .expect("bounded");
}

/// Uma on seat 4 of the Ultimate demo table (one_player: €500.00) with €40.00 on round r1,
/// played out with her page gone after the bet: the directory, the database, the process
/// (calling as the table's staff), her token and r1.
async fn uma_bets_40_and_goes() -> (tempfile::TempDir, PathBuf, proc::Proc, String, u64) {
    let (dir, db, mut p) = one_player("ultimate", "Uma").await;
    let token = p.headers[0].1.trim_start_matches("Bearer ").to_string();
    taken(&p, "/api/play/join", r#"{"seat": 4}"#).await;
    until(&p, 30, "a betting window", |s| s["betting"]["open"] == true).await;
    let body = taken(&p, "/api/play/bet", r#"{"main": 4000}"#).await;
    let r1 = serde_json::from_str::<Value>(&body).expect("json")["round"]
        .as_u64()
        .expect("round");
    p.headers = common::local_token_header(&db);
    (dir, db, p, token, r1)
}

/// Issue #58 item 4, the outside finding: Uma's session is revoked while her €40.00 round
/// is in play and her page is gone. "Your bet from the previous round within the same game
/// session is automatically rebet": not in a session that ended — she is staked in no later
/// round, her balance moves by that round's settlement only, seat 4 is freed (so no window
/// waits for her), and when she comes back with a new link her page says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_ultimate_player_is_staked_in_no_later_round_and_told_why_on_return() {
    timeout(Duration::from_secs(300), async {
        let (dir, db, mut p, _token, r1) = uma_bets_40_and_goes().await;
        let cfg = dir.path().join("table.toml").display().to_string();
        let staff = p.headers.clone();
        until_table(&mut p, &staff, 30, "round r1 in play", |s| s["round"]["number"] == r1).await;
        let (ok, text) = croupier(&["player", "revoke", "uma", "--config", &cfg]);
        assert!(ok && text.contains("1 session(s) revoked"), "{text}");
        // Three more rounds played by the demo's seats.
        until_table(&mut p, &staff, 240, "three rounds after r1", |s| {
            s["last_result"]["round"].as_u64() >= Some(r1 + 3)
        })
        .await;
        let after = nothing_moved_after(&db, "uma", r1, "seat = 4 AND player = ''").await;
        assert_eq!(
            ledger_rows(&db, &format!("SELECT staked FROM settlements WHERE round = {r1} AND seat = 4 AND kind = 'main'")).await,
            4000,
            "r1 is hers, and settled"
        );
        let s = p.get("/api/status").await;
        assert_eq!(s["remote"]["seats"], serde_json::json!([]), "{s}");

        // Back with a new link: her page is told why seat 4 went, and nothing moved.
        let (ok, link) = croupier(&["player", "link", "uma", "--config", &cfg]);
        assert!(ok, "{link}");
        as_player(&mut p, link.trim().rsplit_once("#t=").expect("a link").1);
        let s = state(&p).await;
        assert_eq!(s["released"]["reason"], "revoked", "{s}");
        assert_eq!(s["released"]["seats"], serde_json::json!([4]), "{s}");
        assert!(s["released"]["round"].as_u64() >= Some(r1), "{s}");
        assert_eq!((s["seat"].clone(), s["balance"].as_i64()), (Value::Null, Some(after)), "{s}");
        // Joining again reads the note.
        taken(&p, "/api/play/join", r#"{"seat": 4}"#).await;
        assert!(state(&p).await["released"].is_null());
        assert!(p.terminate(), "clean stop");
    })
    .await
    .expect("bounded");
}

/// Issue #58 item 4: Uma bets, then her tab closes (her link still valid). The re-bet waits
/// for her page "on return to the betting stage", which never comes: nothing is staked in
/// the next round, and after a whole round without a word from her (`[play]
/// away_after_rounds = 1`) seat 4 is freed. Her page, back, says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ultimate_player_whose_page_is_gone_is_not_rebet_and_is_told_why_on_return() {
    timeout(Duration::from_secs(300), async {
        let (_dir, db, mut p, token, r1) = uma_bets_40_and_goes().await;
        let staff = p.headers.clone();
        until_table(&mut p, &staff, 240, "seat 4 freed after r1", |s| {
            s["last_result"]["round"].as_u64() > Some(r1)
                && s["remote"]["seats"] == serde_json::json!([])
        })
        .await;
        let after = nothing_moved_after(&db, "uma", r1, "seat = 4 AND player = ''").await;
        as_player(&mut p, &token);
        let s = state(&p).await;
        assert_eq!(s["released"]["reason"], "away", "{s}");
        assert_eq!(s["released"]["rounds"], 1, "{s}");
        assert_eq!(s["released"]["seats"], serde_json::json!([4]), "{s}");
        assert_eq!(s["balance"].as_i64(), Some(after), "{s}");
        assert!(p.terminate(), "clean stop");
    })
    .await
    .expect("bounded");
}
