//! The table's own clocks for remote players: a decision after its timer refused with the
//! close, the countdown and the decision timer run without the demo dealer across restarts,
//! and a refused bet change that leaves the standing bet.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_after_its_timer_is_refused_with_the_close_and_takes_nothing() {
    timeout(Duration::from_secs(240), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = config(dir.path());
        let p = seated(&cfg, "Finn", "500.00", r#"{"seat": 4}"#).await;
        for _ in 0..10 {
            until(&p, 30, "a betting window", |s| s["betting"]["open"] == true).await;
            let body = taken(&p, "/api/play/bet", r#"{"main": 1000}"#).await;
            let round = serde_json::from_str::<Value>(&body).expect("json")["round"].clone();
            // Wait for a decision asked of seat 4 (not insurance), or the round's end.
            let s = until(&p, 30, "a decision or the result", |s| {
                s["turn"]["kind"] == "decision" || s["view"]["last_result"]["round"] == round
            })
            .await;
            if s["turn"]["kind"] != "decision" {
                continue;
            }
            let balance = s["balance"].as_i64().expect("balance");
            // Let the timer (3 s) run out: the table ticks the engine, which plays the
            // sheet's timeout rule. Wait until the player's state shows the window closed
            // (bounded), so the decision below is late for sure.
            sleep(Duration::from_millis(3_500)).await;
            until(&p, 30, "the decision window's close", |s| {
                s["turn"]["kind"] != "decision"
            })
            .await;
            let (status, body) = p
                .post("/api/play/decision", r#"{"action": "double"}"#)
                .await;
            assert_eq!(status, 409, "{body}");
            let late: Value = serde_json::from_str(&body).expect("json");
            assert_eq!(late["error"]["code"], "decision_closed", "{late}");
            let closed = &late["error"]["closed"];
            assert_eq!(closed["round"], round);
            assert!(
                closed["seq"].as_u64() > Some(0) && closed["at_ms"].as_i64() > Some(0),
                "{closed}"
            );
            assert_eq!(
                state(&p).await["balance"],
                balance,
                "a late double takes nothing"
            );
            // The timeout was played by the engine (auto-play) on the table's tick.
            let s = until(&p, 30, "the result", |s| {
                s["view"]["last_result"]["round"] == round
            })
            .await;
            assert!(s["view"]["round"]["number"] == round);
            assert!(p.terminate(), "clean stop");
            let db = dir.path().join("croupier.db");
            let reader = croupier::store::Reader::open(&db).await.expect("reader");
            let log = reader.log("table-1").await.expect("log");
            // The timeout is the engine's, on a tick the table logged at the deadline:
            // replaying the log shows that tick ending seat 4's decision with the sheet's
            // rule (Deluxe: auto-play), and the bets that opened the round timed seat 4.
            let (ticks, timeouts) = timeouts_in(&log, 4);
            let close = closed["seq"].as_u64().expect("seq");
            assert!(
                timeouts.contains(&(close, croupier::engine::Action::AutoPlay)),
                "the close answered is the tick that auto-played seat 4: {closed} vs {timeouts:?} (ticks {ticks:?})"
            );
            return;
        }
        panic!("no decision asked of seat 4 in ten rounds");
    })
    .await
    .expect("bounded");
}

fn shoe(cards: &[&str]) -> Vec<croupier_drivers::ShoeItem> {
    common::cards_for_shoe(cards)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_demo_dealer_the_table_runs_the_countdown_and_the_decision_timer_across_restarts(
) {
    use croupier::engine::Input;
    use croupier::store::Record;
    timeout(Duration::from_secs(240), async {
        // Long enough that a loaded machine still bets and sees the decision in time.
        let (dir, sim, cfg) = common::no_demo_table("deluxe", 6, 4);
        let db = dir.path().join("croupier.db");
        let log = dir.path().join("log");
        let token = add_player(&cfg, "Gus", "500.00");
        let mut p = proc::spawn(&cfg, &log).await;
        let staff = p.headers.clone();
        as_player(&mut p, &token);
        let s = state(&p).await;
        assert_eq!(
            s["free_seats"],
            serde_json::json!([1, 2, 3, 4, 5, 6, 7]),
            "no demo seats"
        );
        taken(&p, "/api/play/join", r#"{"seat": 4}"#).await;

        // The dealer opens betting: with a remote player seated, it is a countdown.
        p.headers = staff.clone();
        taken(&p, "/api/betting/open", "").await;
        as_player(&mut p, &token);
        let s = until(&p, 10, "the countdown", |s| s["betting"]["open"] == true).await;
        assert!(s["betting"]["remaining_ms"].as_u64() <= Some(6_000), "{s}");

        // A crash mid-countdown: the log holds its opening, so the restart has it open
        // again, with no more than its own length left; the seat is still Gus's.
        p.kill();
        let mut p = proc::spawn(&cfg, &log).await;
        as_player(&mut p, &token);
        let s = until(&p, 10, "the countdown again", |s| {
            s["betting"]["open"] == true
        })
        .await;
        assert!(s["betting"]["remaining_ms"].as_u64() <= Some(6_000), "{s}");
        assert_eq!(s["seat"], 4, "the seat survives the restart: {s}");
        let body = taken(&p, "/api/play/bet", r#"{"main": 1000}"#).await;
        let round = serde_json::from_str::<Value>(&body).expect("json")["round"].clone();

        // Nobody closes the window: the table does, at its deadline.
        let s = until(&p, 15, "the round opens", |s| {
            s["betting"]["open"] == false && s["view"]["round"]["number"] == round
        })
        .await;
        assert!(s["betting"]["closed"]["seq"].as_u64() > Some(0), "{s}");

        // The dealer deals: seat 4 has 8 against a 9 and is asked to decide.
        sim.load(shoe(&["5H", "9C", "3D", "7S", "2C", "4D", "8H"]))
            .await
            .expect("load");
        assert_eq!(sim.deal(4).await.expect("deal").len(), 4);
        let s = until(&p, 15, "seat 4's decision", |s| {
            s["turn"]["kind"] == "decision"
        })
        .await;
        assert!(s["turn"]["remaining_ms"].as_u64() <= Some(4_000), "{s}");

        // A crash mid-decision: the restart waits on the same deadline (the time the table
        // was down does not count), then the table's tick plays the sheet's timeout rule.
        p.kill();
        let mut p = proc::spawn(&cfg, &log).await;
        let staff = p.headers.clone();
        as_player(&mut p, &token);
        let s = until(&p, 15, "the decision again", |s| {
            s["turn"]["kind"] == "decision"
        })
        .await;
        assert!(s["turn"]["remaining_ms"].as_u64() <= Some(4_000), "{s}");
        // The dealer's API may not decide for Gus: refused, and nothing changes (the
        // auto-play below is what the timeout rule gives, not a stand).
        p.headers = staff;
        let (status, body) = p
            .post("/api/decision", r#"{"seat": 4, "action": "stand"}"#)
            .await;
        assert_eq!(status, 409, "{body}");
        assert_eq!(code_of(&body), "seat_is_remote", "{body}");
        as_player(&mut p, &token);
        until(&p, 15, "the timeout", |s| s["turn"].is_null()).await;
        let (status, body) = p.post("/api/play/decision", r#"{"action": "stand"}"#).await;
        assert_eq!(status, 409, "{body}");
        let late: Value = serde_json::from_str(&body).expect("json");
        assert_eq!(late["error"]["code"], "decision_closed", "{late}");

        // Auto-play (Deluxe): the hand of 8 takes cards while 11 or less; the dealer
        // deals them, then the dealer's own card.
        assert_eq!(sim.deal(3).await.expect("deal").len(), 3);
        let s = until(&p, 15, "the result", |s| {
            s["view"]["last_result"]["round"] == round
        })
        .await;
        let hand = s["view"]["last_result"]["hands"]
            .as_array()
            .expect("hands")
            .iter()
            .find(|h| h["seat"] == 4)
            .cloned()
            .expect("seat 4");
        assert_eq!(
            hand["cards"],
            serde_json::json!(["5H", "3D", "2C", "4D"]),
            "{s}"
        );
        assert_eq!(hand["returned"], 2_000, "14 against a dealer bust: {s}");
        until(&p, 10, "the win credited", |s| s["balance"] == 51_000).await;
        assert!(p.terminate(), "clean stop");

        // The log: the countdown's opening and its close by a tick at or past its deadline;
        // a tick just before the card that opened the decision (its deadline counts from
        // it) and the tick at the deadline that auto-played seat 4, also after the restart.
        let reader = croupier::store::Reader::open(&db).await.expect("reader");
        let rows = reader.log("t1").await.expect("log");
        let (_, countdown_deadline) = rows
            .iter()
            .find_map(|r| match r.record {
                Record::Countdown {
                    at_ms, deadline_ms, ..
                } => Some((at_ms, deadline_ms)),
                _ => None,
            })
            .expect("a countdown row");
        let ticks: Vec<(u64, u64)> = rows
            .iter()
            .filter_map(|r| match &r.record {
                Record::Input {
                    input: Input::Tick { now_ms },
                    ..
                } => Some((r.seq, *now_ms)),
                _ => None,
            })
            .collect();
        assert!(
            ticks.iter().any(|(_, ms)| *ms >= countdown_deadline),
            "{ticks:?}"
        );
        let (_, timeouts) = timeouts_in(&rows, 4);
        let (timeout_seq, action) = *timeouts.first().expect("a timeout of seat 4");
        assert_eq!(action, croupier::engine::Action::AutoPlay);
        let opened_at = ticks
            .iter()
            .rfind(|(seq, _)| *seq < timeout_seq)
            .map(|(_, ms)| *ms)
            .expect("the tick that opened the wait");
        let fired_at = ticks
            .iter()
            .find(|(seq, _)| *seq == timeout_seq)
            .map(|(_, ms)| *ms)
            .expect("the timeout's tick");
        assert!(
            fired_at >= opened_at + 4_000,
            "the deadline held: {ticks:?}"
        );
        // Replaying the log (as `croupier replay` does) plays the same timeout.
        let inputs: Vec<Input> = rows
            .iter()
            .filter_map(|r| match &r.record {
                Record::Input { input, .. } => Some(input.clone()),
                _ => None,
            })
            .collect();
        let variant = croupier::engine::Variant::built_in("deluxe")
            .expect("shipped")
            .expect("valid");
        let mut engine = croupier::engine::Engine::new(std::sync::Arc::new(variant));
        let mut events = Vec::new();
        for input in &inputs {
            engine.apply(input, &mut events).expect("replays");
        }
        assert!(events
            .iter()
            .any(|e| matches!(e, croupier::engine::Event::DecisionTimeout)));
        // And `croupier replay` of the log as a scenario (ticks and timed seats included)
        // plays the same round: seat 4's hand auto-played to 14.
        let text = common::scenario("deluxe", &inputs).expect("every input has a form");
        let file = dir.path().join("from-log.json");
        std::fs::write(&file, text).expect("write scenario");
        let (ok, out) = croupier(&["replay", &file.display().to_string()]);
        assert!(ok, "{out}");
        let replayed: Value = serde_json::from_str(&out).expect("json");
        let last = replayed["rounds"]
            .as_array()
            .and_then(|r| r.last())
            .cloned()
            .expect("a round");
        let seat4 = last["hands"]
            .as_array()
            .expect("hands")
            .iter()
            .find(|h| h["seat"] == "4")
            .cloned()
            .expect("seat 4");
        assert_eq!(
            seat4["cards"],
            serde_json::json!(["5H", "3D", "2C", "4D"]),
            "{replayed}"
        );
        assert_eq!(seat4["outcome"], "win");
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_bet_change_leaves_the_standing_bet_and_odd_stakes_are_refused() {
    timeout(Duration::from_secs(120), async {
        // No demo dealer (it would close the window once the player has bet): the window
        // stays open for its whole countdown.
        let (dir, _shoe, cfg) = common::no_demo_table("deluxe", 120, 20);
        // The shipped table's betting unit (€0.10), which the shared test config lifts.
        let text = std::fs::read_to_string(&cfg).expect("config");
        std::fs::write(&cfg, text.replace("bet_unit = 1", "bet_unit = 10")).expect("write");
        let token = add_player(&cfg, "Ina", "30.00");
        let mut p = proc::spawn(&cfg, &dir.path().join("log")).await;
        let staff = p.headers.clone();
        as_player(&mut p, &token);
        taken(&p, "/api/play/join", r#"{"seat": 4}"#).await;
        p.headers = staff;
        taken(&p, "/api/betting/open", "").await;
        as_player(&mut p, &token);
        until(&p, 10, "the countdown", |s| s["betting"]["open"] == true).await;
        // An odd stake (€25.01) is not a multiple of the table's betting unit (€0.10 on
        // the shipped table.toml): refused, nothing placed.
        let (status, body) = p.post("/api/play/bet", r#"{"main": 2501}"#).await;
        assert_eq!(
            (status, code_of(&body).as_str()),
            (422, "invalid_bet"),
            "{body}"
        );
        assert!(body.contains("betting unit"), "{body}");
        let s = state(&p).await;
        assert_eq!(
            (s["betting"]["my_bet"].clone(), s["balance"].clone()),
            (Value::Null, 3000.into())
        );
        taken(&p, "/api/play/bet", r#"{"main": 2500}"#).await;
        // A replacement the balance cannot cover (€40.00 with €25.00 + €5.00) is refused
        // and changes nothing: the standing bet and its stake stay.
        let (status, body) = p.post("/api/play/bet", r#"{"main": 4000}"#).await;
        assert_eq!(
            (status, code_of(&body).as_str()),
            (409, "insufficient_funds"),
            "{body}"
        );
        let s = state(&p).await;
        assert_eq!(s["betting"]["my_bet"], 2500, "the bet stands: {s}");
        assert_eq!(s["balance"], 500);
        assert_eq!(s["view"]["betting"]["bets"][0]["main"], 2500, "{s}");
        // One an odd stake replaces: refused too, the bet stands.
        let (status, _) = p.post("/api/play/bet", r#"{"main": 2505}"#).await;
        assert_eq!(status, 422);
        assert_eq!(state(&p).await["betting"]["my_bet"], 2500);
        // What the balance covers goes through.
        let body = taken(&p, "/api/play/bet", r#"{"main": 3000}"#).await;
        assert_eq!(
            serde_json::from_str::<Value>(&body).expect("json")["balance"],
            0
        );
        assert!(p.terminate(), "clean stop");
    })
    .await
    .expect("bounded");
}
