//! Deluxe's two-seat and play-behind rules for remote players: a bet behind that follows the
//! seated double, a follower short at the double, and one player on two seats.

use super::*;

/// Ann (€500.00) on seat 4 and Ben (`ben_balance`) at the table without a seat, the
/// binary started on `cfg`: their tokens and the process, calling as Ben.
async fn ann_seated_ben_not(cfg: &Path, ben_balance: &str) -> (String, String, proc::Proc) {
    let ann = add_player(cfg, "Ann", "500.00");
    let ben = add_player(cfg, "Ben", ben_balance);
    let mut p = proc::spawn(cfg, &cfg.with_file_name("log")).await;
    as_player(&mut p, &ann);
    taken(&p, "/api/play/join", r#"{"seat": 4}"#).await;
    as_player(&mut p, &ben);
    (ann, ben, p)
}

/// Once the round is final (after the 1 s dispute window): Ann's and Ben's balances.
async fn final_balances(p: &mut proc::Proc, ann: &str, ben: &str) -> (i64, i64) {
    sleep(Duration::from_millis(2500)).await;
    as_player(p, ben);
    let ben_balance = state(p).await["balance"].as_i64().expect("balance");
    as_player(p, ann);
    let ann_balance = state(p).await["balance"].as_i64().expect("balance");
    (ann_balance, ben_balance)
}

/// Plays `round` (seat 4 Ann's, Ben behind it) to its result: Ben declines insurance, Ann
/// doubles whenever she may, else stands; `on_double` judges each answer to her double.
/// Whether a double of hers was taken. Ben's session may have ended: then only Ann plays.
async fn ann_plays_doubling(
    p: &mut proc::Proc,
    ann: &str,
    ben: &str,
    round: &Value,
    on_double: impl Fn(u16, &str),
) -> bool {
    let mut doubled = false;
    for _ in 0..1200 {
        as_player(p, ben);
        let (status, body) = p.send("GET", "/api/play/state", None).await;
        let s: Value = if status == 200 {
            serde_json::from_str(&body).expect("json")
        } else {
            Value::Null
        };
        if s["view"]["last_result"]["round"] == *round {
            break;
        }
        if s["turn"]["behind"] == true {
            let (status, body) = decide(p, r#"{"action": "no_insurance", "seat": 4}"#).await;
            assert!(status == 200 || status == 409, "{body}");
        }
        as_player(p, ann);
        let s = state(p).await;
        // Ben's page may be gone (his session ended): Ann's shows the result too.
        if s["view"]["last_result"]["round"] == *round {
            break;
        }
        let action = if s["turn"]["kind"] != "insurance" && allows(&s, "double") {
            "double"
        } else {
            stand(&s)
        };
        if !action.is_empty() {
            let (status, body) = decide(p, &format!(r#"{{"action": "{action}"}}"#)).await;
            if action == "double" {
                on_double(status, &body);
                doubled |= status == 200;
            } else {
                assert!(status == 200 || status == 409, "{body}");
            }
        }
        sleep(Duration::from_millis(50)).await;
    }
    doubled
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bet_behind_follows_the_seated_double_with_its_pair_bet_and_balances_to_the_log() {
    timeout(Duration::from_secs(300), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = config_with(dir.path(), &[("betting_seconds = 3", "betting_seconds = 20")]);
        let db = dir.path().join("croupier.db");
        let (ann, ben, mut p) = ann_seated_ben_not(&cfg, "500.00").await;
        // At the table without a seat: the window waits for Ben's bet behind too.
        taken(&p, "/api/play/join", "{}").await;
        let s = until(&p, 30, "a betting window", |s| s["betting"]["open"] == true).await;
        assert_eq!(s["game"]["play_behind"], true, "{s}");
        assert_eq!(s["game"]["side_bets"][0]["name"], "pair", "the variant's names: {s}");

        // Refusals change nothing: a seat without a bet, a side bet Deluxe lacks, a
        // follow behind a seat whose decisions the service does not see.
        refuses(&p, "/api/play/behind", r#"{"seat": 4, "main": 500}"#, 409, "seat_empty").await;
        let (status, body) = p
            .post("/api/play/behind", r#"{"seat": 1, "main": 500, "side": {"21+3": 100}}"#)
            .await;
        assert_eq!((status, code_of(&body).as_str()), (422, "unknown_side_bet"), "{body}");
        let (status, body) = p
            .post("/api/play/behind", r#"{"seat": 1, "main": 500, "follow_double": true}"#)
            .await;
        assert_eq!((status, code_of(&body).as_str()), (409, "follow_unavailable"), "{body}");
        assert_eq!(state(&p).await["balance"], 50_000);
        assert_eq!(ledger_rows(&db, "SELECT COUNT(*) FROM wallet_journal").await, 0);

        let mut followed = None;
        for _ in 0..8 {
            as_player(&mut p, &ann);
            until(&p, 40, "a betting window", |s| s["betting"]["open"] == true).await;
            let body = taken(&p, "/api/play/bet", r#"{"main": 1000}"#).await;
            let round = serde_json::from_str::<Value>(&body).expect("json")["round"].clone();
            as_player(&mut p, &ann);
            refuses(&p, "/api/play/behind", r#"{"seat": 5, "main": 500}"#, 409, "seat_empty").await;
            as_player(&mut p, &ben);
            let bet = r#"{"seat": 4, "main": 500, "side": {"pair": 100}, "follow_double": true}"#;
            let body = taken(&p, "/api/play/behind", bet).await;
            let placed: Value = serde_json::from_str(&body).expect("json");
            assert_eq!(placed["round"], round);
            let txs = placed["txs"].as_array().expect("txs");
            assert_eq!(txs.len(), 2, "{placed}");
            assert!(txs.iter().any(|t| t.as_str().is_some_and(|t| t.ends_with(":4:behind-main@ben.1:debit"))), "{placed}");
            assert!(txs.iter().any(|t| t.as_str().is_some_and(|t| t.ends_with(":4:behind-side-pair@ben.1:debit"))), "{placed}");
            // Ann can neither play behind her own seat.
            as_player(&mut p, &ann);
            refuses(&p, "/api/play/behind", r#"{"seat": 4, "main": 500}"#, 409, "own_seat").await;
            let doubled = ann_plays_doubling(&mut p, &ann, &ben, &round, |status, body| {
                assert!(status == 200 || status == 409, "{body}");
            })
            .await;
            if doubled {
                followed = Some(round);
                break;
            }
        }
        let round = followed.expect("Ann doubled within eight rounds");
        // Final after the dispute window (1 s): every stake settled, each owner apart.
        let (ann_balance, ben_balance) = final_balances(&mut p, &ann, &ben).await;
        assert!(p.terminate(), "clean stop");
        let r = round.as_u64().expect("round");
        // The follow was debited when Ann doubled, from Ben.
        let tx = common::tx_table(&db).await;
        let follow = ledger_rows(&db, &format!(
            "SELECT amount FROM wallet_ledger WHERE tx_id = '{tx}:{r}:4:behind-double@ben.1:debit' AND player_id = 'ben'"
        )).await;
        assert_eq!(follow, 500);
        // The log stakes it: Ben's main line behind seat 4 is 500 + 500.
        assert_eq!(
            ledger_rows(&db, &format!("SELECT staked FROM settlements WHERE round = {r} AND seat = 4 AND player = 'ben' AND kind = 'main'")).await,
            1000
        );
        assert_eq!(
            ledger_rows(&db, &format!("SELECT staked FROM settlements WHERE round = {r} AND seat = 4 AND player = 'ben' AND kind = 'pair'")).await,
            100
        );
        balance_is_the_logs(&db, "ben", ben_balance, "player = 'ben'").await;
        balance_is_the_logs(&db, "ann", ann_balance, "seat = 4 AND player = ''").await;
        assert_eq!(
            ledger_count(&db, &format!("{tx}:{r}:4:behind-settle@ben:credit")).await,
            1,
            "Ben is credited once, apart from Ann"
        );
        no_open_stakes(&db).await;
    })
    .await
    .expect("bounded");
}

/// Plays round `r` standing on every hand (declining insurance), naming the seat of each
/// turn: the seats decided on.
async fn stand_on_each_seat(p: &proc::Proc, r: u64) -> std::collections::BTreeSet<u64> {
    let mut decided = std::collections::BTreeSet::new();
    for _ in 0..1200 {
        let s = state(p).await;
        if s["view"]["last_result"]["round"] == r {
            return decided;
        }
        let action = stand(&s);
        if !action.is_empty() {
            let seat = s["turn"]["seat"].as_u64().expect("the turn says its seat");
            let (status, body) =
                decide(p, &format!(r#"{{"action": "{action}", "seat": {seat}}}"#)).await;
            assert!(status == 200 || status == 409, "{body}");
            if status == 200 && action == "stand" {
                decided.insert(seat);
            }
        }
        sleep(Duration::from_millis(50)).await;
    }
    panic!("no result for round {r}: {}", state(p).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deluxe_player_on_two_seats_has_each_bet_mirrored_or_split_evenly_and_decides_each_seat()
{
    timeout(Duration::from_secs(300), async {
        let (_dir, db, p) = one_player("deluxe", "Dee").await;
        assert_eq!(state(&p).await["game"]["seats_per_player"], 2);
        for seat in [4, 5] {
            taken(&p, "/api/play/join", &format!(r#"{{"seat": {seat}}}"#)).await;
        }
        // "A player can occupy up to two open seats".
        refuses(&p, "/api/play/join", r#"{"seat": 6}"#, 409, "already_seated").await;
        let s = until(&p, 30, "a betting window", |s| s["betting"]["open"] == true).await;
        assert_eq!(s["seats"], serde_json::json!([4, 5]), "{s}");
        refuses(&p, "/api/play/bet", r#"{"seat": 6, "main": 1000}"#, 409, "not_your_seat").await;

        // 1000 on seat 4, the balance covers both: mirrored on seat 5.
        let body = taken(&p, "/api/play/bet", r#"{"seat": 4, "main": 1000}"#).await;
        let placed: Value = serde_json::from_str(&body).expect("json");
        assert_eq!(placed["second_seat"], "mirrored", "{placed}");
        assert_eq!(placed["seat_plays"], serde_json::json!({"4": 1000, "5": 1000}));
        assert_eq!(placed["balance"], 50_000 - 2_000, "{placed}");
        let r1 = placed["round"].as_u64().expect("round");
        let tx = common::tx_table(&db).await;
        let txs: Vec<&str> = placed["txs"].as_array().expect("txs").iter().filter_map(Value::as_str).collect();
        assert_eq!(
            txs,
            [format!("{tx}:{r1}:4:main.1:debit"), format!("{tx}:{r1}:5:main.1:debit")],
            "one debit per seat line"
        );
        let mut decided = stand_on_each_seat(&p, r1).await;
        let staked = |r: u64, seat: u64| {
            format!("SELECT COALESCE(SUM(staked), 0) FROM settlements WHERE round = {r} AND seat = {seat} AND player = '' AND kind = 'main'")
        };
        assert_eq!(ledger_rows(&db, &staked(r1, 4)).await, 1000);
        assert_eq!(ledger_rows(&db, &staked(r1, 5)).await, 1000);

        // 30000 on seat 5 with about 500.00 left: both seats would need 60000, so the plays
        // are split evenly, 15000 a seat.
        // Round 1's credits land once its result is final, a seat line at a time: the
        // balance is read once both have (CI's load read it between the two).
        until(&p, 40, "the next betting window", |s| s["betting"]["open"] == true).await;
        let net = ledger_rows(
            &db,
            &format!("SELECT COALESCE(SUM(returned - staked), 0) FROM settlements WHERE round = {r1} AND seat IN (4, 5) AND player = ''"),
        )
        .await;
        let before = 50_000 + net;
        until(&p, 40, "round 1 credited, bets open", |s| {
            s["betting"]["open"] == true && s["balance"].as_i64() == Some(before)
        })
        .await;
        assert!((30_000..60_000).contains(&before), "{before}");
        let body = taken(&p, "/api/play/bet", r#"{"seat": 5, "main": 30000}"#).await;
        let placed: Value = serde_json::from_str(&body).expect("json");
        assert_eq!(placed["second_seat"], "split_evenly", "{placed}");
        assert_eq!(placed["seat_plays"], serde_json::json!({"4": 15000, "5": 15000}));
        assert_eq!(placed["balance"], before - 30_000, "{placed}");
        let r2 = placed["round"].as_u64().expect("round");
        decided.extend(stand_on_each_seat(&p, r2).await);
        assert_eq!(ledger_rows(&db, &staked(r2, 4)).await, 15_000);
        assert_eq!(ledger_rows(&db, &staked(r2, 5)).await, 15_000);

        // Decisions on each seat (a natural or the dealer's takes a seat's turn away).
        for _ in 0..6 {
            if decided.len() == 2 {
                break;
            }
            until(&p, 40, "the next betting window", |s| s["betting"]["open"] == true).await;
            let body = taken(&p, "/api/play/bet", r#"{"seat": 5, "main": 1000}"#).await;
            let r = serde_json::from_str::<Value>(&body).expect("json")["round"].as_u64().expect("round");
            decided.extend(stand_on_each_seat(&p, r).await);
        }
        assert_eq!(decided, [4, 5].into_iter().collect(), "a decision on each seat");

        sleep(Duration::from_millis(2500)).await;
        let balance = state(&p).await["balance"].as_i64().expect("balance");
        // Leaving frees both seats.
        taken(&p, "/api/play/leave", "{}").await;
        assert_eq!(state(&p).await["seats"], serde_json::json!([]));
        assert!(p.terminate(), "clean stop");
        balance_is_the_logs(&db, "dee", balance, "seat IN (4, 5) AND player = ''").await;
        no_open_stakes(&db).await;
    })
    .await
    .expect("bounded");
}

/// Issue #38 item 2, live: a follower whose wallet no longer covers the follow when the
/// seated player doubles (spent since the bet) takes the double's card as a hit at the
/// original stake — the sheet's "the original coin value remains unchanged" — and the
/// seated player's double goes ahead (before: 409 `follower_short_funds` refused the
/// seated player's double). Nothing is taken from the short wallet, and every balance is
/// the log's. The replay's balance rules do the same (scenario
/// `deluxe-funds-follow-double-short-at-the-double`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_short_at_the_double_takes_a_hit_and_the_seated_double_goes_ahead() {
    timeout(Duration::from_secs(300), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = config_with(dir.path(), &[("betting_seconds = 3", "betting_seconds = 20")]);
        let cfg_s = cfg.display().to_string();
        let db = dir.path().join("croupier.db");
        let (ann, ben, mut p) = ann_seated_ben_not(&cfg, "0.00").await;
        taken(&p, "/api/play/join", "{}").await;
        let credit = |amount: &str| {
            let (ok, out) = croupier(&["player", "credit", "--config", &cfg_s, "ben", amount]);
            assert!(ok, "player credit ben {amount}: {out}");
        };
        let mut short_round = None;
        for _ in 0..8 {
            as_player(&mut p, &ann);
            until(&p, 40, "a betting window", |s| s["betting"]["open"] == true).await;
            let body = taken(&p, "/api/play/bet", r#"{"main": 1000}"#).await;
            let round = serde_json::from_str::<Value>(&body).expect("json")["round"].clone();
            // Ben has exactly his bet and its follow when he bets, then spends the follow.
            as_player(&mut p, &ben);
            let have = state(&p).await["balance"].as_i64().expect("balance");
            credit(&format!("{:.2}", (1000 - have) as f64 / 100.0));
            let bet = r#"{"seat": 4, "main": 500, "follow_double": true}"#;
            taken(&p, "/api/play/behind", bet).await;
            credit("-5.00");
            assert_eq!(state(&p).await["balance"], 0, "the follow is spent");
            let doubled = ann_plays_doubling(&mut p, &ann, &ben, &round, |status, body| {
                // The seated double is never refused for the follower's wallet.
                assert_ne!(code_of(body), "follower_short_funds", "{body}");
                assert!(status == 200 || status == 409, "{body}");
            })
            .await;
            if doubled {
                short_round = Some(round);
                break;
            }
        }
        let round = short_round.expect("Ann doubled within eight rounds");
        let (ann_balance, ben_balance) = final_balances(&mut p, &ann, &ben).await;
        assert!(p.terminate(), "clean stop");
        let r = round.as_u64().expect("round");
        let tx = common::tx_table(&db).await;
        assert_eq!(
            ledger_count(&db, &format!("{tx}:{r}:4:behind-double@ben.1:debit")).await,
            0,
            "nothing taken from the short wallet"
        );
        // Ben's stake stayed 500 (the double's card a hit for him); Ann's was doubled.
        assert_eq!(
            ledger_rows(&db, &format!("SELECT staked FROM settlements WHERE round = {r} AND seat = 4 AND player = 'ben' AND kind = 'main'")).await,
            500
        );
        assert_eq!(
            ledger_rows(&db, &format!("SELECT staked FROM settlements WHERE round = {r} AND seat = 4 AND player = '' AND kind = 'main'")).await,
            2000
        );
        // Ben had 0 when the round began to play: he has exactly what his 500 returned.
        assert_eq!(
            ben_balance,
            ledger_rows(&db, &format!("SELECT returned FROM settlements WHERE round = {r} AND seat = 4 AND player = 'ben' AND kind = 'main'")).await
        );
        balance_is_the_logs(&db, "ann", ann_balance, "seat = 4 AND player = ''").await;
        no_open_stakes(&db).await;
    })
    .await
    .expect("bounded");
}

/// Issue #58 item 4 behind a seat: Ben bets behind Ann's seat, following her doubles, and
/// his session is revoked before she doubles. A session that ended moves no money: nothing
/// is taken from Ben for the follow — his bet plays the double's card as a hit at its own
/// stake, the sheet's default for a bet behind that does not follow — while Ann's double
/// goes ahead; the log's `DoubleShort` names him. (Each round he comes back with a new link,
/// joins and bets again, then loses that session too.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_whose_session_ended_is_not_staked_for_the_seated_double() {
    timeout(Duration::from_secs(300), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = config_with(dir.path(), &[("betting_seconds = 3", "betting_seconds = 20")]);
        let cfg_s = cfg.display().to_string();
        let db = dir.path().join("croupier.db");
        let (ann, _, mut p) = ann_seated_ben_not(&cfg, "500.00").await;
        let mut ended_round = None;
        for _ in 0..8 {
            // Ben at the table first: the window waits for his bet too.
            let (ok, link) = croupier(&["player", "link", "ben", "--config", &cfg_s]);
            assert!(ok, "{link}");
            let ben = link.trim().rsplit_once("#t=").expect("a link").1.to_string();
            as_player(&mut p, &ben);
            taken(&p, "/api/play/join", "{}").await;
            as_player(&mut p, &ann);
            until(&p, 40, "a betting window", |s| s["betting"]["open"] == true).await;
            let body = taken(&p, "/api/play/bet", r#"{"main": 1000}"#).await;
            let round = serde_json::from_str::<Value>(&body).expect("json")["round"].clone();
            as_player(&mut p, &ben);
            let bet = r#"{"seat": 4, "main": 500, "follow_double": true}"#;
            taken(&p, "/api/play/behind", bet).await;
            let (ok, text) = croupier(&["player", "revoke", "ben", "--config", &cfg_s]);
            assert!(ok && text.contains("session(s) revoked"), "{text}");
            let doubled = ann_plays_doubling(&mut p, &ann, &ben, &round, |status, body| {
                assert!(status == 200 || status == 409, "{body}");
            })
            .await;
            if doubled {
                ended_round = Some(round);
                break;
            }
        }
        let round = ended_round.expect("Ann doubled within eight rounds");
        // Final after the dispute window: every stake settled (Ben's too, session or not).
        for _ in 0..300 {
            let open = "SELECT COUNT(*) FROM wallet_journal WHERE state IN ('pending', 'committed')";
            if ledger_rows(&db, open).await == 0 {
                break;
            }
            sleep(Duration::from_millis(100)).await;
        }
        assert!(p.terminate(), "clean stop");
        let ann_balance = ledger_rows(&db, "SELECT balance FROM players WHERE id = 'ann'").await;
        let r = round.as_u64().expect("round");
        let tx = common::tx_table(&db).await;
        assert_eq!(
            ledger_count(&db, &format!("{tx}:{r}:4:behind-double@ben.1:debit")).await,
            0,
            "nothing taken for the follow of a session that ended"
        );
        assert_eq!(
            ledger_rows(&db, &format!("SELECT staked FROM settlements WHERE round = {r} AND seat = 4 AND player = 'ben' AND kind = 'main'")).await,
            500
        );
        assert_eq!(
            ledger_rows(&db, &format!("SELECT staked FROM settlements WHERE round = {r} AND seat = 4 AND player = '' AND kind = 'main'")).await,
            2000,
            "Ann's double went ahead"
        );
        let log = common::log_of(&db, "table-1").await;
        let short = log.iter().any(|row| {
            matches!(&row.record, croupier::store::Record::Input {
                input: croupier::engine::Input::DoubleShort { seat: 4, short }, ..
            } if short == &["ben".to_string()])
        });
        assert!(short, "the log's double names Ben as not following");
        let ben_balance = ledger_rows(&db, "SELECT balance FROM players WHERE id = 'ben'").await;
        balance_is_the_logs(&db, "ben", ben_balance, "player = 'ben'").await;
        balance_is_the_logs(&db, "ann", ann_balance, "seat = 4 AND player = ''").await;
        no_open_stakes(&db).await;
    })
    .await
    .expect("bounded");
}
