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
