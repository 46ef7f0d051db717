//! A player's money through the real binary: joined, bet, decided and paid once; a debit the
//! table never committed rolled back once after a SIGKILL; doubles and insurance debited and
//! every round balanced to the log; a double the balance cannot cover played as a hit.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_joins_bets_decides_and_is_paid_once() {
    timeout(Duration::from_secs(120), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = config(dir.path());
        let db = dir.path().join("croupier.db");
        let token = add_player(&cfg, "Alice", "500.00");
        let mut p = proc::spawn(&cfg, &dir.path().join("log")).await;
        // The page is served; the API wants the player's token, not a staff login.
        let (status, body) = {
            let page = croupier::web::client::request(
                &p.addr,
                "GET",
                "/play",
                None,
                Duration::from_secs(5),
            );
            page.await.expect("page")
        };
        assert_eq!(status, 200);
        assert!(body.contains("/ui/play.js"));
        let (status, body) = p.post("/api/play/join", r#"{"seat": 4}"#).await;
        assert_eq!(status, 401, "the local token is no player: {body}");
        as_player(&mut p, &token);
        let s = state(&p).await;
        assert_eq!(s["balance"], 50_000);
        assert_eq!(
            s["free_seats"],
            serde_json::json!([4, 5, 6, 7]),
            "the demo holds 1-3"
        );
        let (status, body) = p.post("/api/play/join", r#"{"seat": 2}"#).await;
        assert_eq!(status, 409, "{body}");
        taken(&p, "/api/play/join", r#"{"seat": 4}"#).await;

        // Bet in the next window: debited at once.
        until(&p, 30, "a betting window", |s| s["betting"]["open"] == true).await;
        let body = taken(&p, "/api/play/bet", r#"{"main": 2500}"#).await;
        let placed: Value = serde_json::from_str(&body).expect("json");
        assert_eq!(placed["balance"], 47_500);
        let round = placed["round"].as_u64().expect("round");
        // Every remote player has bet: the window closes, the round opens with the bet.
        let s = until(&p, 10, "the round opens", |s| {
            s["betting"]["open"] == false && s["view"]["round"]["number"] == round
        })
        .await;
        let closed = s["betting"]["closed"].clone();
        assert_eq!(closed["round"], round);
        // A bet now is late: refused with the close's log position and time.
        let (status, body) = p.post("/api/play/bet", r#"{"main": 2500}"#).await;
        assert_eq!(status, 409, "{body}");
        let late: Value = serde_json::from_str(&body).expect("json");
        assert_eq!(late["error"]["code"], "betting_closed");
        assert_eq!(late["error"]["closed"], closed);
        assert!(closed["seq"].as_u64() > Some(0));
        assert_eq!(
            state(&p).await["balance"],
            47_500,
            "a refused bet takes nothing"
        );

        // Answer what the table asks of seat 4 until the round is settled.
        for _ in 0..600 {
            let s = state(&p).await;
            if s["view"]["last_result"]["round"] == round {
                break;
            }
            if let Some(kind) = s["turn"]["kind"].as_str() {
                let action = if kind == "insurance" {
                    "no_insurance"
                } else {
                    "stand"
                };
                let (status, body) = decide(&p, &format!(r#"{{"action": "{action}"}}"#)).await;
                assert!(status == 200 || status == 409, "{body}");
            }
            sleep(Duration::from_millis(100)).await;
        }
        let s = state(&p).await;
        let result = &s["view"]["last_result"];
        assert_eq!(result["round"], round, "{s}");
        // Anonymous viewers never see the platform's player id: the public view, the
        // results and their signed statements name the player by the table's pseudonym.
        let public_name = s["public_name"].as_str().expect("public name").to_string();
        assert!(public_name.starts_with("player-"), "{public_name}");
        let seat4 = s["view"]["round"]["bets"]
            .as_array()
            .expect("bets")
            .iter()
            .find(|b| b["seat"] == 4)
            .cloned()
            .expect("seat 4's bet");
        assert_eq!(seat4["player"], public_name.as_str(), "{s}");
        for path in ["/api/public", "/api/results?last=5"] {
            let (status, body) =
                croupier::web::client::request(&p.addr, "GET", path, None, Duration::from_secs(5))
                    .await
                    .expect("public route");
            assert_eq!(status, 200, "{path}: {body}");
            assert!(
                !body.contains("alice"),
                "{path} shows the player id: {body}"
            );
        }
        let (_, body) = croupier::web::client::request(
            &p.addr,
            "GET",
            "/api/public",
            None,
            Duration::from_secs(5),
        )
        .await
        .expect("public view");
        assert!(body.contains(&public_name), "{body}");
        let returned: i64 = result["hands"]
            .as_array()
            .expect("hands")
            .iter()
            .filter(|h| h["seat"] == 4)
            .map(|h| h["returned"].as_i64().expect("returned"))
            .sum();
        // Credited once the result is final (1 s), and only once.
        let expected = 47_500 + returned;
        until(&p, 10, "the returns are credited", |s| {
            s["balance"] == expected
        })
        .await;
        sleep(Duration::from_millis(1500)).await;
        assert_eq!(state(&p).await["balance"], expected);
        assert!(p.terminate(), "clean stop");
        let tx = common::tx_table(&db).await;
        let credits = ledger_rows(
            &db,
            &format!(
                "SELECT COUNT(*) FROM wallet_ledger WHERE tx_id = '{tx}:{round}:4:settle:credit'"
            ),
        )
        .await;
        assert_eq!(credits, 1);
        let (ok, text) = croupier(&[
            "player",
            "balance",
            "alice",
            "--config",
            &cfg.display().to_string(),
        ]);
        let written = croupier::currency::Currency::euro().format(expected);
        assert!(ok && text.contains(&format!("alice: {written}")), "{text}");
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigkill_between_the_debit_and_the_commit_is_rolled_back_once() {
    timeout(Duration::from_secs(120), async {
        let dir = tempfile::tempdir().expect("tempdir");
        // A long countdown: the bet is debited and waiting in the window when the kill comes.
        let cfg = config_with(dir.path(), &[("betting_seconds = 3", "betting_seconds = 60")]);
        let db = dir.path().join("croupier.db");
        let token = add_player(&cfg, "Bob", "100.00");
        // Carol is at the table and never bets, so the window stays open: once every
        // player present has bet the demo dealer closes it early and commits the bet, which
        // under load could come before the kill.
        let carol = add_player(&cfg, "Carol", "100.00");
        let log = dir.path().join("log");
        let mut p = proc::spawn(&cfg, &log).await;
        as_player(&mut p, &carol);
        taken(&p, "/api/play/join", "{}").await;
        as_player(&mut p, &token);
        taken(&p, "/api/play/join", r#"{"seat": 5}"#).await;
        until(&p, 30, "a betting window", |s| s["betting"]["open"] == true).await;
        let body = taken(&p, "/api/play/bet", r#"{"main": 4000}"#).await;
        let tx = serde_json::from_str::<Value>(&body).expect("json")["tx"]
            .as_str()
            .expect("tx")
            .to_string();
        p.kill();
        // Debited, never committed to the log.
        let sql = format!("SELECT COUNT(*) FROM bets b JOIN wallet_journal j ON j.round = b.round AND j.seat = b.seat WHERE j.tx_id = '{tx}'");
        assert_eq!(ledger_rows(&db, &sql).await, 0);
        assert_eq!(ledger_rows(&db, "SELECT balance FROM players WHERE id = 'bob'").await, 6_000);

        // Restarted twice: the stake comes back at the first start, and only then.
        for _ in 0..2 {
            let mut p = proc::spawn(&cfg, &log).await;
            as_player(&mut p, &token);
            assert_eq!(state(&p).await["balance"], 10_000);
            assert!(p.terminate(), "clean stop");
        }
        let rollbacks = ledger_rows(&db, &format!("SELECT COUNT(*) FROM wallet_ledger WHERE kind = 'rollback' AND ref_tx = '{tx}'")).await;
        assert_eq!(rollbacks, 1);
        let state_of = ledger_rows(&db, &format!("SELECT COUNT(*) FROM wallet_journal WHERE tx_id = '{tx}' AND state = 'rolled_back'")).await;
        assert_eq!(state_of, 1);
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doubles_and_insurance_are_debited_and_every_round_balances_to_the_log() {
    timeout(Duration::from_secs(240), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = config_with(dir.path(), &[("seed = 0", "seed = 15")]);
        let db = dir.path().join("croupier.db");
        let p = seated(&cfg, "Dora", "500.00", r#"{"seat": 4}"#).await;
        let mut last = 0;
        let mut doubled: u32 = 0;
        for _ in 0..6 {
            until(&p, 30, "a betting window", |s| s["betting"]["open"] == true).await;
            let body = taken(&p, "/api/play/bet", r#"{"main": 1000}"#).await;
            last = serde_json::from_str::<Value>(&body).expect("json")["round"]
                .as_u64()
                .expect("round");
            let taken = answer_until_result(&p, last, |s| {
                if allows(s, "double") {
                    "double"
                } else if allows(s, "insurance") {
                    "insurance"
                } else {
                    stand(s)
                }
            })
            .await;
            doubled +=
                u32::try_from(taken.iter().filter(|a| **a == "double").count()).expect("few");
        }
        assert!(doubled > 0, "no double in six rounds");
        // Every stake is settled once the last round is final; the balance is the log's.
        let balance = final_balance(p).await;
        let q = |sql: String| {
            let db = db.clone();
            async move { ledger_rows(&db, &sql).await }
        };
        let staked =
            q("SELECT COALESCE(SUM(staked), 0) FROM settlements WHERE seat = 4".into()).await;
        let returned =
            q("SELECT COALESCE(SUM(returned), 0) FROM settlements WHERE seat = 4".into()).await;
        assert!(staked >= 6 * 1000 + 1000 * i64::from(doubled), "{staked}");
        assert_eq!(balance, 50_000 - staked + returned);
        assert_eq!(
            q("SELECT balance FROM players WHERE id = 'dora'".into()).await,
            balance
        );
        let open = q(
            "SELECT COUNT(*) FROM wallet_journal WHERE state IN ('pending', 'committed')".into(),
        )
        .await;
        assert_eq!(open, 0, "every stake settled or rolled back");
        let credits =
            q("SELECT COUNT(*) FROM wallet_ledger WHERE kind = 'credit'".to_string()).await;
        assert_eq!(credits, 6, "one credit per round, round {last} the last");
        let doubles = q(
            "SELECT COUNT(*) FROM wallet_journal WHERE line LIKE 'double.%' AND state = 'settled'"
                .into(),
        )
        .await;
        assert_eq!(doubles, i64::from(doubled));
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_deluxe_a_double_the_balance_cannot_cover_is_played_as_a_hit() {
    timeout(Duration::from_secs(240), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = config(dir.path());
        let c = cfg.display().to_string();
        let p = seated(&cfg, "Eve", "0.10", r#"{"seat": 4}"#).await;
        let mut converted = None;
        for _ in 0..10 {
            let s = until(&p, 30, "a betting window", |s| s["betting"]["open"] == true).await;
            // Everything the betting unit (10) allows on the bet: less than it left for a
            // double (a blackjack paid 3:2 leaves a balance of 25, say).
            let balance = s["balance"].as_i64().expect("balance");
            let all = balance - balance % 10;
            let left = balance - all;
            if all < 10 {
                let (ok, text) = croupier(&["player", "credit", "eve", "0.10", "--config", &c]);
                assert!(ok, "{text}");
                continue;
            }
            let body = taken(&p, "/api/play/bet", &format!(r#"{{"main": {all}}}"#)).await;
            let round = serde_json::from_str::<Value>(&body).expect("json")["round"].clone();
            for _ in 0..600 {
                let s = state(&p).await;
                if s["view"]["last_result"]["round"] == round {
                    break;
                }
                let action = if converted.is_none() && allows(&s, "double") {
                    "double"
                } else {
                    stand(&s)
                };
                if !action.is_empty() {
                    let (status, body) = decide(&p, &format!(r#"{{"action": "{action}"}}"#)).await;
                    if action == "double" {
                        assert_eq!(status, 200, "{body}");
                        converted = Some(serde_json::from_str::<Value>(&body).expect("json"));
                        assert_eq!(state(&p).await["balance"], left, "no double was debited");
                    }
                }
                sleep(Duration::from_millis(50)).await;
            }
            if converted.is_some() {
                break;
            }
        }
        let answer = converted.expect("a double was offered within ten rounds");
        assert_eq!(
            (answer["action"].as_str(), answer["asked"].as_str()),
            (Some("hit"), Some("double"))
        );
        assert!(p.terminate(), "clean stop");
        let doubles = ledger_rows(
            &dir.path().join("croupier.db"),
            "SELECT COUNT(*) FROM wallet_ledger WHERE tx_id LIKE '%:double.%' AND kind = 'debit'",
        )
        .await;
        assert_eq!(doubles, 0);
    })
    .await
    .expect("bounded");
}
