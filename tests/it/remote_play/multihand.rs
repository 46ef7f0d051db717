//! Multihand for a remote player: three boxes bet and decided, paid exactly; a box that won
//! lets its whole return play.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_multihand_player_bets_three_boxes_decides_each_hand_and_is_paid_exactly() {
    timeout(Duration::from_secs(300), async {
        let (_dir, db, p) = one_player("multihand", "Mia").await;
        let s = state(&p).await;
        assert_eq!(s["game"]["common_draw"], true, "{s}");
        assert_eq!(s["game"]["boxes"], 3);
        assert_eq!(s["free_seats"], serde_json::json!([]));
        refuses(&p, "/api/play/join", r#"{"seat": 2}"#, 409, "no_seats").await;
        taken(&p, "/api/play/join", "{}").await;
        until(&p, 30, "a betting window", |s| s["betting"]["open"] == true).await;
        // Refusals change nothing: a box out of range, a special the game lacks, a seat bet.
        refuses(&p, "/api/play/boxes", r#"{"boxes": [{"box": 1, "main": 1000}, {"box": 4, "main": 1000}]}"#, 422, "box_out_of_range").await;
        refuses(&p, "/api/play/boxes", r#"{"boxes": [{"box": 1, "main": 1000, "side": {"royal_match": 100}}]}"#, 422, "unknown_side_bet").await;
        refuses(&p, "/api/play/bet", r#"{"main": 1000}"#, 409, "common_draw").await;
        assert_eq!(state(&p).await["balance"], 50_000);
        assert_eq!(ledger_rows(&db, "SELECT COUNT(*) FROM wallet_journal").await, 0);

        let bet = r#"{"boxes": [{"box": 1, "main": 1000, "side": {"21+3": 100}}, {"box": 2, "main": 2000}, {"box": 3, "main": 3000}]}"#;
        let body = taken(&p, "/api/play/boxes", bet).await;
        let placed: Value = serde_json::from_str(&body).expect("json");
        assert_eq!(placed["balance"], 50_000 - 6_100, "{placed}");
        let round = placed["round"].clone();
        let r = round.as_u64().expect("round");
        let tx = common::tx_table(&db).await;
        let txs: Vec<&str> = placed["txs"].as_array().expect("txs").iter().filter_map(Value::as_str).collect();
        assert_eq!(
            txs,
            [
                format!("{tx}:{r}:1:main@mia.1:debit"),
                format!("{tx}:{r}:1:side-21+3@mia.1:debit"),
                format!("{tx}:{r}:2:main@mia.1:debit"),
                format!("{tx}:{r}:3:main@mia.1:debit"),
            ]
        );
        let (_, decided) = play_boxes_until_result(&p, r).await;
        assert!(decided >= 1, "the player decided on the boxes");
        until(&p, 30, "the result", |s| s["view"]["last_result"]["round"] == round).await;
        // A box out of range in a decision is not a turn of hers.
        let (status, body) = decide(&p, r#"{"action": "stand", "box": 9}"#).await;
        assert_eq!(status, 409, "{body}");
        let balance = final_balance(p).await;
        assert_eq!(
            ledger_rows(&db, &format!("SELECT COALESCE(SUM(staked), 0) FROM settlements WHERE round = {r} AND player = 'mia' AND kind = 'main'")).await,
            6_000,
            "three boxes' main bets"
        );
        balance_is_the_logs(&db, "mia", balance, "player = 'mia'").await;
        for b in 1..=3 {
            assert_eq!(
                ledger_count(&db, &format!("{tx}:{r}:{b}:settle@mia:credit")).await,
                1,
                "box {b} credited once"
            );
        }
        no_open_stakes(&db).await;
    })
    .await
    .expect("bounded");
}

/// Hits each of the player's boxes below 15 and stands from 15 (declining insurance) until
/// round `r`'s result is shown: the state then, and how many decisions the table took.
async fn play_boxes_until_result(p: &proc::Proc, r: u64) -> (Value, usize) {
    let mut decided = 0;
    // A round takes seconds; one that has no result after two minutes is stuck, and says
    // where (a loaded suite once ran a multihand test into its 300 s bound without a word).
    let started = std::time::Instant::now();
    for _ in 0..2400 {
        let s = state(p).await;
        if s["view"]["last_result"]["round"] == r {
            return (s, decided);
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "round {r} has no result after {:?} ({decided} decisions taken): {s}",
            started.elapsed()
        );
        for t in s["turns"].as_array().cloned().unwrap_or_default() {
            let b = t["seat"].as_u64().expect("box");
            let action = if t["kind"] == "insurance" {
                "no_insurance"
            } else {
                let total = s["hands"]
                    .as_array()
                    .and_then(|h| h.iter().find(|h| h["seat"] == b && h["hand"] == t["hand"]))
                    .and_then(|h| h["total"].as_u64())
                    .unwrap_or(0);
                if total >= 15 {
                    "stand"
                } else {
                    "hit"
                }
            };
            let (status, body) =
                decide(p, &format!(r#"{{"action": "{action}", "box": {b}}}"#)).await;
            assert!(status == 200 || status == 409, "{body}");
            if status == 200 && t["kind"] == "decision" {
                decided += 1;
            }
        }
        sleep(Duration::from_millis(50)).await;
    }
    panic!("no result for round {r}: {}", state(p).await);
}

/// Posts `body` to `POST /api/play/boxes`: the status and the error's code.
async fn boxes_refused(p: &proc::Proc, body: &str) -> (u16, String) {
    let (status, body) = p.post("/api/play/boxes", body).await;
    (status, code_of(&body))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_multihand_box_that_won_lets_its_whole_return_play_and_exactly_that_is_debited() {
    timeout(Duration::from_secs(300), async {
        let (dir, db, p) = one_player("multihand", "Mia").await;
        taken(&p, "/api/play/join", "{}").await;
        until(&p, 30, "a betting window", |s| s["betting"]["open"] == true).await;
        // No win last round: refused, nothing taken.
        assert_eq!(
            boxes_refused(&p, r#"{"boxes": [{"box": 1, "let_it_play": true}]}"#).await,
            (409, "let_it_play_no_win".to_string())
        );
        assert_eq!(
            boxes_refused(
                &p,
                r#"{"boxes": [{"box": 1, "main": 1000, "let_it_play": true}]}"#
            )
            .await,
            (422, "invalid_bet".to_string())
        );
        assert_eq!(state(&p).await["balance"], 50_000);
        assert_eq!(
            ledger_rows(&db, "SELECT COUNT(*) FROM wallet_journal").await,
            0
        );

        // Bet box 1 until it wins (bounded rounds), summing what each round moved.
        let mut win = None;
        let mut net = 0;
        for _ in 0..12 {
            until(&p, 40, "a betting window", |s| s["betting"]["open"] == true).await;
            let body = taken(
                &p,
                "/api/play/boxes",
                r#"{"boxes": [{"box": 1, "main": 1000}]}"#,
            )
            .await;
            let r = serde_json::from_str::<Value>(&body).expect("json")["round"]
                .as_u64()
                .expect("round");
            let (s, _) = play_boxes_until_result(&p, r).await;
            let main = s["view"]["last_result"]["bets"]
                .as_array()
                .and_then(|b| {
                    b.iter().find(|b| {
                        b["player"] == s["public_name"] && b["seat"] == 1 && b["kind"] == "main"
                    })
                })
                .cloned()
                .expect("box 1's main bet settled");
            let (staked, returned) = (
                main["staked"].as_i64().expect("staked"),
                main["returned"].as_i64().expect("returned"),
            );
            net += returned - staked;
            if returned > staked {
                win = Some((r, returned));
                break;
            }
        }
        let (won_round, returned) = win.expect("box 1 won within twelve rounds");
        // The next window may open before the win's credit is in the balance (the table
        // does not wait on the wallet): wait for both, the balance exactly what was moved.
        let s = until(&p, 40, "the next betting window, the win credited", |s| {
            s["betting"]["open"] == true && s["balance"] == 50_000 + net
        })
        .await;
        assert_eq!(
            s["betting"]["let_it_play"],
            serde_json::json!([{"box": 1, "main": returned}]),
            "{s}"
        );
        let before = s["balance"].as_i64().expect("balance");
        // Box 2 did not win: refused whole.
        assert_eq!(
            boxes_refused(
                &p,
                r#"{"boxes": [{"box": 1, "let_it_play": true}, {"box": 2, "let_it_play": true}]}"#
            )
            .await,
            (409, "let_it_play_no_win".to_string())
        );
        let body = taken(
            &p,
            "/api/play/boxes",
            r#"{"boxes": [{"box": 1, "let_it_play": true}]}"#,
        )
        .await;
        let placed: Value = serde_json::from_str(&body).expect("json");
        let r = placed["round"].as_u64().expect("round");
        assert_eq!(r, won_round + 1);
        assert_eq!(
            placed["balance"],
            before - returned,
            "the whole return is staked again: {placed}"
        );
        let tx = common::tx_table(&db).await;
        let tx = format!("{tx}:{r}:1:main@mia.1:debit");
        assert_eq!(placed["txs"], serde_json::json!([tx]));
        assert_eq!(
            ledger_rows(
                &db,
                &format!("SELECT amount FROM wallet_ledger WHERE tx_id = '{tx}'")
            )
            .await,
            returned
        );
        let (s, _) = play_boxes_until_result(&p, r).await;
        let staked = s["view"]["last_result"]["bets"]
            .as_array()
            .and_then(|b| {
                b.iter().find(|b| {
                    b["player"] == s["public_name"] && b["seat"] == 1 && b["kind"] == "main"
                })
            })
            .map(|b| b["staked"].clone())
            .expect("settled");
        assert_eq!(
            staked, returned,
            "the engine staked the return (the player only hits and stands)"
        );

        let balance = final_balance(p).await;
        balance_is_the_logs(&db, "mia", balance, "player = 'mia'").await;
        no_open_stakes(&db).await;
        // Each round opened with a betting countdown: the normal start of a round where
        // remote players bet, logged at INFO, never a WARN.
        let log = std::fs::read_to_string(dir.path().join("log")).expect("the service's log");
        assert!(
            log.contains("betting countdown for round"),
            "the countdowns are logged"
        );
        let warned: Vec<&str> = log
            .lines()
            .filter(|l| l.contains("WARN") && l.contains("betting countdown"))
            .collect();
        assert!(warned.is_empty(), "{warned:#?}");
    })
    .await
    .expect("bounded");
}

/// Issue #58 item 4 on a common draw: Mia's session is revoked by the platform while her
/// boxes are in play. Nothing of hers moves by itself after it (Let it play stakes a box's
/// return only when she asks, from a live session): no later stake, her balance the log's;
/// at the next betting window she is taken off the table, so the window no longer waits for
/// her; her page, back with a new session, says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_multihand_player_whose_session_ended_is_taken_off_the_table_and_staked_nothing() {
    timeout(Duration::from_secs(300), async {
        let (dir, db, mut p) = one_player("multihand", "Mia").await;
        let cfg = dir.path().join("table.toml").display().to_string();
        let (ok, key) = croupier(&["player", "platform-key", "--config", &cfg]);
        assert!(ok, "{key}");
        let platform = vec![(
            "Authorization".to_string(),
            format!("Bearer {}", key.trim()),
        )];
        taken(&p, "/api/play/join", "{}").await;
        until(&p, 30, "a betting window", |s| s["betting"]["open"] == true).await;
        let bet = r#"{"boxes": [{"box": 1, "main": 1000}, {"box": 2, "main": 2000}]}"#;
        let body = taken(&p, "/api/play/boxes", bet).await;
        let r1 = serde_json::from_str::<Value>(&body).expect("json")["round"]
            .as_u64()
            .expect("round");
        p.headers = platform;
        let body = taken(&p, "/api/play/sessions/revoke", r#"{"player": "mia"}"#).await;
        assert_eq!(
            serde_json::from_str::<Value>(&body).expect("json")["revoked"],
            1
        );
        let staff = common::local_token_header(&db);
        until_table(
            &mut p,
            &staff,
            120,
            "Mia taken off the table after r1",
            |s| {
                s["last_result"]["round"].as_u64() >= Some(r1)
                    && s["remote"]["unseated"] == serde_json::json!([])
            },
        )
        .await;
        let after = nothing_moved_after(&db, "mia", r1, "player = 'mia'").await;
        let (ok, link) = croupier(&["player", "link", "mia", "--config", &cfg]);
        assert!(ok, "{link}");
        as_player(&mut p, link.trim().rsplit_once("#t=").expect("a link").1);
        let s = state(&p).await;
        assert_eq!(s["released"]["reason"], "revoked", "{s}");
        assert_eq!(s["released"]["seats"], serde_json::json!([]), "{s}");
        assert_eq!(
            (s["unseated"].as_bool(), s["balance"].as_i64()),
            (Some(false), Some(after)),
            "{s}"
        );
        assert!(p.terminate(), "clean stop");
    })
    .await
    .expect("bounded");
}
