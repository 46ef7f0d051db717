//! Remote play through the real binary on the built-in default (demo dealer, simulated
//! shoe): `croupier player add` prints a launch link; the player joins a free seat, bets
//! within the countdown, decides when asked, and is credited the round's returns exactly
//! once; a late bet is refused with `betting_closed` and the close's log position. A
//! SIGKILL between a debit and the table's commit ends rolled back, exactly once, at the
//! next start.

mod common;
#[path = "common/proc.rs"]
mod proc;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use tokio::time::{sleep, timeout};

fn config(dir: &Path) -> PathBuf {
    let text = croupier::table::config::DEFAULT_TOML
        .replace(
            "path = \"data/croupier.db\"",
            &format!("path = {:?}", dir.join("croupier.db").display().to_string()),
        )
        .replace("bind = \"127.0.0.1:8080\"", "bind = \"127.0.0.1:0\"")
        .replace("pace_ms = 400", "pace_ms = 40")
        .replace("window_seconds = 5", "window_seconds = 1")
        .replace("betting_seconds = 15", "betting_seconds = 3")
        .replace("decision_seconds = 20", "decision_seconds = 3");
    let path = dir.join("table.toml");
    std::fs::write(&path, text).expect("write config");
    croupier::table::TableConfig::load(&path).expect("valid config");
    path
}

fn croupier(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("croupier runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// `player add`: the token of the launch link it prints.
fn add_player(cfg: &Path, name: &str, balance: &str) -> String {
    common::launch_token(cfg, name, balance)
}

fn as_player(p: &mut proc::Proc, token: &str) {
    p.headers = vec![("Authorization".into(), format!("Bearer {token}"))];
}

async fn state(p: &proc::Proc) -> Value {
    p.get("/api/play/state").await
}

/// Polls the player's state until `f` holds (at most `secs`).
async fn until(p: &proc::Proc, secs: u64, what: &str, f: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..secs * 10 {
        let s = state(p).await;
        if f(&s) {
            return s;
        }
        sleep(Duration::from_millis(100)).await;
    }
    panic!("{what}: {}", state(p).await);
}

/// Replays `log` (Deluxe): the tick rows, and the (seq, action) of every tick that
/// timed out a decision of `seat` (the engine's events for it, as recovery computes them).
fn timeouts_in(
    log: &[croupier::store::LogRow],
    seat: u8,
) -> (Vec<u64>, Vec<(u64, croupier::engine::Action)>) {
    use croupier::engine::{Engine, Event, Input, Variant};
    use croupier::store::Record;
    let variant = Variant::built_in("deluxe")
        .expect("shipped")
        .expect("valid");
    let mut engine = Engine::new(std::sync::Arc::new(variant));
    let (mut ticks, mut out) = (Vec::new(), Vec::new());
    let mut events = Vec::new();
    for row in log {
        let Record::Input { input, .. } = &row.record else {
            continue;
        };
        events.clear();
        engine.apply(input, &mut events).expect("the log replays");
        if let Input::Bets(bets) = input {
            if let Some(b) = bets.iter().find(|b| b.seat == seat) {
                assert!(
                    b.timer_ms > 0,
                    "the remote seat is timed in the bets: {b:?}"
                );
            }
        }
        if matches!(input, Input::Tick { .. }) {
            ticks.push(row.seq);
            if events.iter().any(|e| matches!(e, Event::DecisionTimeout)) {
                for e in &events {
                    if let Event::Decided {
                        seat: s, action, ..
                    } = e
                    {
                        if *s == seat {
                            out.push((row.seq, *action));
                        }
                    }
                }
            }
        }
    }
    (ticks, out)
}

async fn ledger_rows(db: &Path, sql: &str) -> i64 {
    let pool = croupier::auth::open_pool(db).await.expect("pool");
    let n: i64 = sqlx::query_scalar(sql)
        .fetch_one(&pool)
        .await
        .expect("query");
    pool.close().await;
    n
}

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
        let (status, body) = p.post("/api/play/join", r#"{"seat": 4}"#).await;
        assert_eq!(status, 200, "{body}");

        // Bet in the next window: debited at once.
        until(&p, 30, "a betting window", |s| s["betting"]["open"] == true).await;
        let (status, body) = p.post("/api/play/bet", r#"{"main": 2500}"#).await;
        assert_eq!(status, 200, "{body}");
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
                let (status, body) = p
                    .post(
                        "/api/play/decision",
                        &format!(r#"{{"action": "{action}"}}"#),
                    )
                    .await;
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
        let cfg = dir.path().join("table.toml");
        let text = std::fs::read_to_string(config(dir.path())).expect("config")
            .replace("betting_seconds = 3", "betting_seconds = 60");
        std::fs::write(&cfg, text).expect("write");
        let db = dir.path().join("croupier.db");
        let token = add_player(&cfg, "Bob", "100.00");
        let log = dir.path().join("log");
        let mut p = proc::spawn(&cfg, &log).await;
        as_player(&mut p, &token);
        let (status, body) = p.post("/api/play/join", r#"{"seat": 5}"#).await;
        assert_eq!(status, 200, "{body}");
        until(&p, 30, "a betting window", |s| s["betting"]["open"] == true).await;
        let (status, body) = p.post("/api/play/bet", r#"{"main": 4000}"#).await;
        assert_eq!(status, 200, "{body}");
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
async fn the_platform_opens_sessions_and_a_short_balance_refuses_the_bet_whole() {
    timeout(Duration::from_secs(120), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = dir.path().join("table.toml");
        let text = std::fs::read_to_string(config(dir.path()))
            .expect("config")
            .replace("betting_seconds = 3", "betting_seconds = 60");
        std::fs::write(&cfg, text).expect("write");
        let c = cfg.display().to_string();
        let (ok, key) = croupier(&["player", "platform-key", "--config", &c]);
        assert!(ok, "{key}");
        let key = key.trim().to_string();
        let mut p = proc::spawn(&cfg, &dir.path().join("log")).await;
        let body = r#"{"player": "p-77", "name": "Carol"}"#;
        // The local token (staff, admin) is not the platform.
        let (status, _) = p.post("/api/play/sessions", body).await;
        assert_eq!(status, 401);
        p.headers = vec![("Authorization".into(), format!("Bearer {key}"))];
        let (status, reply) = p.post("/api/play/sessions", body).await;
        assert_eq!(status, 200, "{reply}");
        let reply: Value = serde_json::from_str(&reply).expect("json");
        let token = reply["token"].as_str().expect("token").to_string();
        assert_eq!(reply["launch"], format!("/play#t={token}"));
        // The platform's credential is no player.
        let (status, _) = p.post("/api/play/join", r#"{"seat": 6}"#).await;
        assert_eq!(status, 401);
        as_player(&mut p, &token);
        let s = state(&p).await;
        assert_eq!(
            (
                s["player"].as_str(),
                s["name"].as_str(),
                s["balance"].as_i64()
            ),
            (Some("p-77"), Some("Carol"), Some(0))
        );
        let (status, body) = p.post("/api/play/join", r#"{"seat": 6}"#).await;
        assert_eq!(status, 200, "{body}");
        until(&p, 30, "a betting window", |s| s["betting"]["open"] == true).await;
        let (status, body) = p.post("/api/play/bet", r#"{"main": 2500}"#).await;
        assert_eq!(status, 409, "{body}");
        assert_eq!(
            serde_json::from_str::<Value>(&body).expect("json")["error"]["code"],
            "insufficient_funds"
        );
        let s = state(&p).await;
        assert_eq!(s["betting"]["my_bet"], Value::Null, "nothing placed: {s}");
        assert_eq!(s["balance"], 0);
        // Funds arrive (the operator's deposit); the same bet goes through.
        let (ok, text) = croupier(&["player", "credit", "p-77", "30.00", "--config", &c]);
        assert!(ok, "{text}");
        let (status, body) = p.post("/api/play/bet", r#"{"main": 2500}"#).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            serde_json::from_str::<Value>(&body).expect("json")["balance"],
            500
        );
        assert!(p.terminate(), "clean stop");
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doubles_and_insurance_are_debited_and_every_round_balances_to_the_log() {
    timeout(Duration::from_secs(240), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = dir.path().join("table.toml");
        let text = std::fs::read_to_string(config(dir.path()))
            .expect("config")
            .replace("seed = 0", "seed = 15");
        std::fs::write(&cfg, text).expect("write");
        let db = dir.path().join("croupier.db");
        let token = add_player(&cfg, "Dora", "500.00");
        let mut p = proc::spawn(&cfg, &dir.path().join("log")).await;
        as_player(&mut p, &token);
        let (status, body) = p.post("/api/play/join", r#"{"seat": 4}"#).await;
        assert_eq!(status, 200, "{body}");
        let mut last = 0;
        let mut doubled: u32 = 0;
        for _ in 0..6 {
            until(&p, 30, "a betting window", |s| s["betting"]["open"] == true).await;
            let (status, body) = p.post("/api/play/bet", r#"{"main": 1000}"#).await;
            assert_eq!(status, 200, "{body}");
            last = serde_json::from_str::<Value>(&body).expect("json")["round"]
                .as_u64()
                .expect("round");
            let taken = answer_until_result(&p, last, |s| {
                let allowed = s["turn"]["allowed"].as_array().cloned().unwrap_or_default();
                if allowed.contains(&"double".into()) {
                    "double"
                } else if allowed.contains(&"insurance".into()) {
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
        sleep(Duration::from_millis(2500)).await;
        let balance = state(&p).await["balance"].as_i64().expect("balance");
        assert!(p.terminate(), "clean stop");
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
        let token = add_player(&cfg, "Eve", "0.10");
        let mut p = proc::spawn(&cfg, &dir.path().join("log")).await;
        as_player(&mut p, &token);
        let (status, body) = p.post("/api/play/join", r#"{"seat": 4}"#).await;
        assert_eq!(status, 200, "{body}");
        let mut converted = None;
        for _ in 0..10 {
            let s = until(&p, 30, "a betting window", |s| s["betting"]["open"] == true).await;
            // Everything on the bet: nothing left for a double.
            let all = s["balance"].as_i64().expect("balance");
            if all < 10 {
                let (ok, text) = croupier(&["player", "credit", "eve", "0.10", "--config", &c]);
                assert!(ok, "{text}");
                continue;
            }
            let (status, body) = p
                .post("/api/play/bet", &format!(r#"{{"main": {all}}}"#))
                .await;
            assert_eq!(status, 200, "{body}");
            let round = serde_json::from_str::<Value>(&body).expect("json")["round"].clone();
            for _ in 0..600 {
                let s = state(&p).await;
                if s["view"]["last_result"]["round"] == round {
                    break;
                }
                let allowed = s["turn"]["allowed"].as_array().cloned().unwrap_or_default();
                let action = if converted.is_none() && allowed.contains(&"double".into()) {
                    "double"
                } else if s["turn"]["kind"] == "insurance" {
                    "no_insurance"
                } else if s["turn"].is_object() {
                    "stand"
                } else {
                    ""
                };
                if !action.is_empty() {
                    let (status, body) = p
                        .post(
                            "/api/play/decision",
                            &format!(r#"{{"action": "{action}"}}"#),
                        )
                        .await;
                    if action == "double" {
                        assert_eq!(status, 200, "{body}");
                        converted = Some(serde_json::from_str::<Value>(&body).expect("json"));
                        assert_eq!(state(&p).await["balance"], 0, "no double was debited");
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_after_its_timer_is_refused_with_the_close_and_takes_nothing() {
    timeout(Duration::from_secs(240), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = config(dir.path());
        let token = add_player(&cfg, "Finn", "500.00");
        let mut p = proc::spawn(&cfg, &dir.path().join("log")).await;
        as_player(&mut p, &token);
        let (status, body) = p.post("/api/play/join", r#"{"seat": 4}"#).await;
        assert_eq!(status, 200, "{body}");
        for _ in 0..10 {
            until(&p, 30, "a betting window", |s| s["betting"]["open"] == true).await;
            let (status, body) = p.post("/api/play/bet", r#"{"main": 1000}"#).await;
            assert_eq!(status, 200, "{body}");
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

/// A table without the demo dealer (`common::config_file`: id `t1`, the shoe a simulated
/// `croupier-v1` shoe on a PTY the test deals from): nobody but the table runs the windows.
fn no_demo_config(dir: &Path, port: &Path) -> PathBuf {
    // Long enough that a loaded machine still bets and sees the decision in time.
    common::no_demo_play_config(dir, port, 6, 4)
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
        let dir = tempfile::tempdir().expect("tempdir");
        let sim =
            croupier_drivers::sim::SimShoe::start(croupier_drivers::sim::SimConfig::default())
                .expect("pty shoe");
        let cfg = no_demo_config(dir.path(), &sim.path());
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
        let (status, body) = p.post("/api/play/join", r#"{"seat": 4}"#).await;
        assert_eq!(status, 200, "{body}");

        // The dealer opens betting: with a remote player seated, it is a countdown.
        p.headers = staff.clone();
        let (status, body) = p.post("/api/betting/open", "").await;
        assert_eq!(status, 200, "{body}");
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
        let (status, body) = p.post("/api/play/bet", r#"{"main": 1000}"#).await;
        assert_eq!(status, 200, "{body}");
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

/// The test configuration in `dir` with `edits` (text replacements) on top.
fn config_with(dir: &Path, edits: &[(&str, &str)]) -> PathBuf {
    let cfg = config(dir);
    let mut text = std::fs::read_to_string(&cfg).expect("config");
    for (from, to) in edits {
        assert!(text.contains(from), "{from} is in the configuration");
        text = text.replace(from, to);
    }
    std::fs::write(&cfg, text).expect("write");
    croupier::table::TableConfig::load(&cfg).expect("valid config");
    cfg
}

/// The binary on `variant` (a 20 s countdown) with one player, `name` (€500.00), signed
/// in: the directory, the database, the process.
async fn one_player(variant: &str, name: &str) -> (tempfile::TempDir, PathBuf, proc::Proc) {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config_with(
        dir.path(),
        &[
            ("variant = \"deluxe\"", &format!("variant = {variant:?}")),
            ("betting_seconds = 3", "betting_seconds = 20"),
            // The balance rules to the cent (a re-bet clipped to a balance of €5.25); the
            // table's betting unit has its own test.
            ("bet_unit = 10", "bet_unit = 1"),
        ],
    );
    let token = add_player(&cfg, name, "500.00");
    let mut p = proc::spawn(&cfg, &dir.path().join("log")).await;
    as_player(&mut p, &token);
    let db = dir.path().join("croupier.db");
    (dir, db, p)
}

/// Every journalled stake is settled or rolled back.
async fn no_open_stakes(db: &Path) {
    let open = ledger_rows(
        db,
        "SELECT COUNT(*) FROM wallet_journal WHERE state IN ('pending', 'committed')",
    )
    .await;
    assert_eq!(open, 0, "every stake settled or rolled back");
}

fn code_of(body: &str) -> String {
    serde_json::from_str::<Value>(body).expect("json")["error"]["code"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// A player's balance in the log: the opening balance less every stake the log settled
/// for them, plus every return (`seat` and `player` as the settlements hold them).
async fn by_the_log(db: &Path, opening: i64, filter: &str) -> i64 {
    let staked = ledger_rows(
        db,
        &format!("SELECT COALESCE(SUM(staked), 0) FROM settlements WHERE {filter}"),
    )
    .await;
    let returned = ledger_rows(
        db,
        &format!("SELECT COALESCE(SUM(returned), 0) FROM settlements WHERE {filter}"),
    )
    .await;
    opening - staked + returned
}

/// `player`'s balance as shown is what the log says (an opening of 500.00, the settlement
/// rows `filter` picks) and what the embedded ledger holds.
async fn balance_is_the_logs(db: &Path, player: &str, balance: i64, filter: &str) {
    assert_eq!(
        balance,
        by_the_log(db, 50_000, filter).await,
        "{player} by the log"
    );
    assert_eq!(
        ledger_rows(
            db,
            &format!("SELECT balance FROM players WHERE id = '{player}'")
        )
        .await,
        balance,
        "{player} in the ledger"
    );
}

/// How many ledger rows carry transaction id `tx`.
async fn ledger_count(db: &Path, tx: &str) -> i64 {
    ledger_rows(
        db,
        &format!("SELECT COUNT(*) FROM wallet_ledger WHERE tx_id = '{tx}'"),
    )
    .await
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
/// Whether a double of hers was taken.
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
        let s = state(p).await;
        if s["view"]["last_result"]["round"] == *round {
            break;
        }
        if s["turn"]["behind"] == true {
            let (status, body) = p
                .post(
                    "/api/play/decision",
                    r#"{"action": "no_insurance", "seat": 4}"#,
                )
                .await;
            assert!(status == 200 || status == 409, "{body}");
        }
        as_player(p, ann);
        let s = state(p).await;
        let allowed = s["turn"]["allowed"].as_array().cloned().unwrap_or_default();
        let action = if s["turn"]["kind"] == "insurance" {
            "no_insurance"
        } else if allowed.contains(&"double".into()) {
            "double"
        } else if s["turn"].is_object() {
            "stand"
        } else {
            ""
        };
        if !action.is_empty() {
            let (status, body) = p
                .post(
                    "/api/play/decision",
                    &format!(r#"{{"action": "{action}"}}"#),
                )
                .await;
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
        let ann = add_player(&cfg, "Ann", "500.00");
        let ben = add_player(&cfg, "Ben", "500.00");
        let mut p = proc::spawn(&cfg, &dir.path().join("log")).await;
        as_player(&mut p, &ann);
        let (status, body) = p.post("/api/play/join", r#"{"seat": 4}"#).await;
        assert_eq!(status, 200, "{body}");
        as_player(&mut p, &ben);
        // At the table without a seat: the window waits for Ben's bet behind too.
        let (status, body) = p.post("/api/play/join", "{}").await;
        assert_eq!(status, 200, "{body}");
        let s = until(&p, 30, "a betting window", |s| s["betting"]["open"] == true).await;
        assert_eq!(s["game"]["play_behind"], true, "{s}");
        assert_eq!(s["game"]["side_bets"][0]["name"], "pair", "the variant's names: {s}");

        // Refusals change nothing: a seat without a bet, a side bet Deluxe lacks, a
        // follow behind a seat whose decisions the service does not see.
        let (status, body) = p.post("/api/play/behind", r#"{"seat": 4, "main": 500}"#).await;
        assert_eq!((status, code_of(&body).as_str()), (409, "seat_empty"), "{body}");
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
            let (status, body) = p.post("/api/play/bet", r#"{"main": 1000}"#).await;
            assert_eq!(status, 200, "{body}");
            let round = serde_json::from_str::<Value>(&body).expect("json")["round"].clone();
            as_player(&mut p, &ann);
            let (status, body) = p.post("/api/play/behind", r#"{"seat": 5, "main": 500}"#).await;
            assert_eq!((status, code_of(&body).as_str()), (409, "seat_empty"), "{body}");
            as_player(&mut p, &ben);
            let bet = r#"{"seat": 4, "main": 500, "side": {"pair": 100}, "follow_double": true}"#;
            let (status, body) = p.post("/api/play/behind", bet).await;
            assert_eq!(status, 200, "{body}");
            let placed: Value = serde_json::from_str(&body).expect("json");
            assert_eq!(placed["round"], round);
            let txs = placed["txs"].as_array().expect("txs");
            assert_eq!(txs.len(), 2, "{placed}");
            assert!(txs.iter().any(|t| t.as_str().is_some_and(|t| t.ends_with(":4:behind-main@ben.1:debit"))), "{placed}");
            assert!(txs.iter().any(|t| t.as_str().is_some_and(|t| t.ends_with(":4:behind-side-pair@ben.1:debit"))), "{placed}");
            // Ann can neither play behind her own seat.
            as_player(&mut p, &ann);
            let (status, body) = p.post("/api/play/behind", r#"{"seat": 4, "main": 500}"#).await;
            assert_eq!((status, code_of(&body).as_str()), (409, "own_seat"), "{body}");
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_multihand_player_bets_three_boxes_decides_each_hand_and_is_paid_exactly() {
    timeout(Duration::from_secs(300), async {
        let (_dir, db, p) = one_player("multihand", "Mia").await;
        let s = state(&p).await;
        assert_eq!(s["game"]["common_draw"], true, "{s}");
        assert_eq!(s["game"]["boxes"], 3);
        assert_eq!(s["free_seats"], serde_json::json!([]));
        let (status, body) = p.post("/api/play/join", r#"{"seat": 2}"#).await;
        assert_eq!((status, code_of(&body).as_str()), (409, "no_seats"), "{body}");
        let (status, body) = p.post("/api/play/join", "{}").await;
        assert_eq!(status, 200, "{body}");
        until(&p, 30, "a betting window", |s| s["betting"]["open"] == true).await;
        // Refusals change nothing: a box out of range, a special the game lacks, a seat bet.
        let (status, body) = p
            .post("/api/play/boxes", r#"{"boxes": [{"box": 1, "main": 1000}, {"box": 4, "main": 1000}]}"#)
            .await;
        assert_eq!((status, code_of(&body).as_str()), (422, "box_out_of_range"), "{body}");
        let (status, body) = p
            .post("/api/play/boxes", r#"{"boxes": [{"box": 1, "main": 1000, "side": {"royal_match": 100}}]}"#)
            .await;
        assert_eq!((status, code_of(&body).as_str()), (422, "unknown_side_bet"), "{body}");
        let (status, body) = p.post("/api/play/bet", r#"{"main": 1000}"#).await;
        assert_eq!((status, code_of(&body).as_str()), (409, "common_draw"), "{body}");
        assert_eq!(state(&p).await["balance"], 50_000);
        assert_eq!(ledger_rows(&db, "SELECT COUNT(*) FROM wallet_journal").await, 0);

        let bet = r#"{"boxes": [{"box": 1, "main": 1000, "side": {"21+3": 100}}, {"box": 2, "main": 2000}, {"box": 3, "main": 3000}]}"#;
        let (status, body) = p.post("/api/play/boxes", bet).await;
        assert_eq!(status, 200, "{body}");
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
        let (status, body) = p.post("/api/play/decision", r#"{"action": "stand", "box": 9}"#).await;
        assert_eq!(status, 409, "{body}");
        sleep(Duration::from_millis(2500)).await;
        let balance = state(&p).await["balance"].as_i64().expect("balance");
        assert!(p.terminate(), "clean stop");
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ultimate_player_bets_21_plus_3_by_its_name_and_is_paid_exactly() {
    timeout(Duration::from_secs(240), async {
        let (_dir, db, p) = one_player("ultimate", "Uma").await;
        let s = state(&p).await;
        assert_eq!(s["game"]["side_bets"][0]["name"], "21+3", "{s}");
        assert_eq!(s["game"]["play_behind"], false);
        let (status, body) = p.post("/api/play/join", r#"{"seat": 4}"#).await;
        assert_eq!(status, 200, "{body}");
        until(&p, 30, "a betting window", |s| s["betting"]["open"] == true).await;
        // Deluxe's pair is no Ultimate bet; nor is play behind.
        let (status, body) = p.post("/api/play/bet", r#"{"main": 1000, "side": {"pair": 500}}"#).await;
        assert_eq!((status, code_of(&body).as_str()), (422, "unknown_side_bet"), "{body}");
        let (status, body) = p.post("/api/play/behind", r#"{"seat": 1, "main": 500}"#).await;
        assert_eq!((status, code_of(&body).as_str()), (409, "no_play_behind"), "{body}");
        assert_eq!(state(&p).await["balance"], 50_000);
        let (status, body) = p.post("/api/play/bet", r#"{"main": 1000, "side": {"21+3": 500}}"#).await;
        assert_eq!(status, 200, "{body}");
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
        let (status, body) = p.post("/api/play/bet", r#"{"main": 0}"#).await;
        assert_eq!(status, 200, "{body}");
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

/// Stands on every hand and declines insurance ("": nothing asked).
fn stand(s: &Value) -> &'static str {
    if s["turn"]["kind"] == "insurance" {
        "no_insurance"
    } else if s["turn"].is_object() {
        "stand"
    } else {
        ""
    }
}

/// Answers what the table asks of the player with `choose` (its answer to the state, ""
/// when nothing is asked) until round `r`'s result is shown: the answers the table took.
async fn answer_until_result(
    p: &proc::Proc,
    r: u64,
    choose: impl Fn(&Value) -> &'static str,
) -> Vec<&'static str> {
    let mut taken = Vec::new();
    for _ in 0..1200 {
        let s = state(p).await;
        if s["view"]["last_result"]["round"] == r {
            return taken;
        }
        let action = choose(&s);
        if !action.is_empty() {
            let (status, body) = p
                .post(
                    "/api/play/decision",
                    &format!(r#"{{"action": "{action}"}}"#),
                )
                .await;
            assert!(status == 200 || status == 409, "{body}");
            if status == 200 {
                taken.push(action);
            }
        }
        sleep(Duration::from_millis(50)).await;
    }
    panic!("no result for round {r}: {}", state(p).await);
}

/// Stands (and declines insurance) until round `r`'s result is shown.
async fn stand_until_result(p: &proc::Proc, r: u64) {
    answer_until_result(p, r, stand).await;
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
        let (status, body) = p.post("/api/play/join", r#"{"seat": 4}"#).await;
        assert_eq!(status, 200, "{body}");
        until(&p, 30, "a betting window", |s| s["betting"]["open"] == true).await;
        let (status, body) = p.post("/api/play/bet", r#"{"main": 1000, "side": {"21+3": 500}}"#).await;
        assert_eq!(status, 200, "{body}");
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
            let (status, body) = p.post("/api/play/bet", r#"{"main": 10, "side": {"21+3": 1000}}"#).await;
            assert_eq!(status, 200, "{body}");
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
        let (status, body) = p.post("/api/play/bet", r#"{"main": 0}"#).await;
        assert_eq!(status, 200, "{body}");
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
            let (status, body) = p
                .post(
                    "/api/play/decision",
                    &format!(r#"{{"action": "{action}", "seat": {seat}}}"#),
                )
                .await;
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
            let (status, body) = p.post("/api/play/join", &format!(r#"{{"seat": {seat}}}"#)).await;
            assert_eq!(status, 200, "{body}");
        }
        // "A player can occupy up to two open seats".
        let (status, body) = p.post("/api/play/join", r#"{"seat": 6}"#).await;
        assert_eq!((status, code_of(&body).as_str()), (409, "already_seated"), "{body}");
        let s = until(&p, 30, "a betting window", |s| s["betting"]["open"] == true).await;
        assert_eq!(s["seats"], serde_json::json!([4, 5]), "{s}");
        let (status, body) = p.post("/api/play/bet", r#"{"seat": 6, "main": 1000}"#).await;
        assert_eq!((status, code_of(&body).as_str()), (409, "not_your_seat"), "{body}");

        // 1000 on seat 4, the balance covers both: mirrored on seat 5.
        let (status, body) = p.post("/api/play/bet", r#"{"seat": 4, "main": 1000}"#).await;
        assert_eq!(status, 200, "{body}");
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
        until(&p, 40, "the next betting window", |s| s["betting"]["open"] == true).await;
        let before = state(&p).await["balance"].as_i64().expect("balance");
        assert!((30_000..60_000).contains(&before), "{before}");
        let (status, body) = p.post("/api/play/bet", r#"{"seat": 5, "main": 30000}"#).await;
        assert_eq!(status, 200, "{body}");
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
            let (status, body) = p.post("/api/play/bet", r#"{"seat": 5, "main": 1000}"#).await;
            assert_eq!(status, 200, "{body}");
            let r = serde_json::from_str::<Value>(&body).expect("json")["round"].as_u64().expect("round");
            decided.extend(stand_on_each_seat(&p, r).await);
        }
        assert_eq!(decided, [4, 5].into_iter().collect(), "a decision on each seat");

        sleep(Duration::from_millis(2500)).await;
        let balance = state(&p).await["balance"].as_i64().expect("balance");
        // Leaving frees both seats.
        let (status, body) = p.post("/api/play/leave", "{}").await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(state(&p).await["seats"], serde_json::json!([]));
        assert!(p.terminate(), "clean stop");
        balance_is_the_logs(&db, "dee", balance, "seat IN (4, 5) AND player = ''").await;
        no_open_stakes(&db).await;
    })
    .await
    .expect("bounded");
}

/// Hits each of the player's boxes below 15 and stands from 15 (declining insurance) until
/// round `r`'s result is shown: the state then, and how many decisions the table took.
async fn play_boxes_until_result(p: &proc::Proc, r: u64) -> (Value, usize) {
    let mut decided = 0;
    for _ in 0..2400 {
        let s = state(p).await;
        if s["view"]["last_result"]["round"] == r {
            return (s, decided);
        }
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
            let (status, body) = p
                .post(
                    "/api/play/decision",
                    &format!(r#"{{"action": "{action}", "box": {b}}}"#),
                )
                .await;
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
        let (_dir, db, p) = one_player("multihand", "Mia").await;
        let (status, body) = p.post("/api/play/join", "{}").await;
        assert_eq!(status, 200, "{body}");
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

        // Bet box 1 until it wins (bounded rounds).
        let mut win = None;
        for _ in 0..12 {
            until(&p, 40, "a betting window", |s| s["betting"]["open"] == true).await;
            let (status, body) = p
                .post(
                    "/api/play/boxes",
                    r#"{"boxes": [{"box": 1, "main": 1000}]}"#,
                )
                .await;
            assert_eq!(status, 200, "{body}");
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
            if returned > staked {
                win = Some((r, returned));
                break;
            }
        }
        let (won_round, returned) = win.expect("box 1 won within twelve rounds");
        let s = until(&p, 40, "the next betting window", |s| {
            s["betting"]["open"] == true
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
        let (status, body) = p
            .post(
                "/api/play/boxes",
                r#"{"boxes": [{"box": 1, "let_it_play": true}]}"#,
            )
            .await;
        assert_eq!(status, 200, "{body}");
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

        sleep(Duration::from_millis(2500)).await;
        let balance = state(&p).await["balance"].as_i64().expect("balance");
        assert!(p.terminate(), "clean stop");
        balance_is_the_logs(&db, "mia", balance, "player = 'mia'").await;
        no_open_stakes(&db).await;
    })
    .await
    .expect("bounded");
}

/// The status of the player's state with `token`.
async fn status_as(p: &mut proc::Proc, token: &str) -> u16 {
    as_player(p, token);
    p.send("GET", "/api/play/state", None).await.0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_link_or_a_disabled_player_is_refused_on_the_next_request() {
    timeout(Duration::from_secs(120), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = config(dir.path());
        let c = cfg.display().to_string();
        let first = add_player(&cfg, "Alice", "50.00");
        let (ok, link) = croupier(&["player", "link", "alice", "--config", &c]);
        assert!(ok, "{link}");
        let second = link
            .trim()
            .rsplit_once("#t=")
            .expect("a link")
            .1
            .to_string();
        let (ok, key) = croupier(&["player", "platform-key", "--config", &c]);
        assert!(ok, "{key}");
        let key = key.trim().to_string();
        let mut p = proc::spawn(&cfg, &dir.path().join("log")).await;
        assert_eq!(status_as(&mut p, &first).await, 200);
        assert_eq!(status_as(&mut p, &second).await, 200);
        // One link, by the CLI: that token is refused on its next request, on every
        // route; the other link goes on.
        let (ok, text) = croupier(&["player", "revoke", "--link", &link, "--config", &c]);
        assert!(ok, "{text}");
        assert_eq!(status_as(&mut p, &second).await, 401);
        let (status, _) = p.post("/api/play/join", r#"{"seat": 5}"#).await;
        assert_eq!(status, 401, "refused on a write route too");
        assert_eq!(status_as(&mut p, &first).await, 200);
        // Every session of the player, by the platform's API.
        p.headers = vec![("Authorization".into(), format!("Bearer {key}"))];
        let (status, body) = p
            .post("/api/play/sessions/revoke", r#"{"player": "alice"}"#)
            .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            serde_json::from_str::<Value>(&body).expect("json")["revoked"],
            1
        );
        assert_eq!(status_as(&mut p, &first).await, 401);
        // A new session works until the player is disabled; then none opens.
        p.headers = vec![("Authorization".into(), format!("Bearer {key}"))];
        let (status, body) = p.post("/api/play/sessions", r#"{"player": "alice"}"#).await;
        assert_eq!(status, 200, "{body}");
        let third = serde_json::from_str::<Value>(&body).expect("json")["token"]
            .as_str()
            .expect("token")
            .to_string();
        assert_eq!(status_as(&mut p, &third).await, 200);
        let (ok, text) = croupier(&["player", "disable", "alice", "--config", &c]);
        assert!(ok && text.contains("1 session(s) revoked"), "{text}");
        assert_eq!(status_as(&mut p, &third).await, 401);
        p.headers = vec![("Authorization".into(), format!("Bearer {key}"))];
        let (status, body) = p.post("/api/play/sessions", r#"{"player": "alice"}"#).await;
        assert_eq!(
            (status, code_of(&body).as_str()),
            (403, "player_disabled"),
            "{body}"
        );
        let (ok, text) = croupier(&["player", "link", "alice", "--config", &c]);
        assert!(!ok && text.contains("disabled"), "{text}");
        // Enabled again, by the platform: a new link works, the revoked ones stay revoked.
        let (status, body) = p
            .post(
                "/api/play/players/disable",
                r#"{"player": "alice", "disabled": false}"#,
            )
            .await;
        assert_eq!(status, 200, "{body}");
        let (ok, link) = croupier(&["player", "link", "alice", "--config", &c]);
        assert!(ok, "{link}");
        let fourth = link
            .trim()
            .rsplit_once("#t=")
            .expect("a link")
            .1
            .to_string();
        assert_eq!(status_as(&mut p, &fourth).await, 200);
        assert_eq!(status_as(&mut p, &first).await, 401);
        assert_eq!(status_as(&mut p, &third).await, 401);
        // A player's token is not the platform's.
        let (status, _) = p
            .post("/api/play/sessions/revoke", r#"{"player": "alice"}"#)
            .await;
        assert_eq!(status, 401);
        assert!(p.terminate(), "clean stop");
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_bet_change_leaves_the_standing_bet_and_odd_stakes_are_refused() {
    timeout(Duration::from_secs(120), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let sim =
            croupier_drivers::sim::SimShoe::start(croupier_drivers::sim::SimConfig::default())
                .expect("pty shoe");
        // No demo dealer (it would close the window once the player has bet): the window
        // stays open for its whole countdown.
        let cfg = common::no_demo_play_config(dir.path(), &sim.path(), 120, 20);
        // The shipped table's betting unit (€0.10), which the shared test config lifts.
        let text = std::fs::read_to_string(&cfg).expect("config");
        std::fs::write(&cfg, text.replace("bet_unit = 1", "bet_unit = 10")).expect("write");
        let token = add_player(&cfg, "Ina", "30.00");
        let mut p = proc::spawn(&cfg, &dir.path().join("log")).await;
        let staff = p.headers.clone();
        as_player(&mut p, &token);
        let (status, body) = p.post("/api/play/join", r#"{"seat": 4}"#).await;
        assert_eq!(status, 200, "{body}");
        p.headers = staff;
        let (status, body) = p.post("/api/betting/open", "").await;
        assert_eq!(status, 200, "{body}");
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
        let (status, body) = p.post("/api/play/bet", r#"{"main": 2500}"#).await;
        assert_eq!(status, 200, "{body}");
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
        let (status, body) = p.post("/api/play/bet", r#"{"main": 3000}"#).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            serde_json::from_str::<Value>(&body).expect("json")["balance"],
            0
        );
        assert!(p.terminate(), "clean stop");
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
        let ann = add_player(&cfg, "Ann", "500.00");
        let ben = add_player(&cfg, "Ben", "0.00");
        let mut p = proc::spawn(&cfg, &dir.path().join("log")).await;
        as_player(&mut p, &ann);
        let (status, body) = p.post("/api/play/join", r#"{"seat": 4}"#).await;
        assert_eq!(status, 200, "{body}");
        as_player(&mut p, &ben);
        let (status, body) = p.post("/api/play/join", "{}").await;
        assert_eq!(status, 200, "{body}");
        let credit = |amount: &str| {
            let (ok, out) = croupier(&["player", "credit", "--config", &cfg_s, "ben", amount]);
            assert!(ok, "player credit ben {amount}: {out}");
        };
        let mut short_round = None;
        for _ in 0..8 {
            as_player(&mut p, &ann);
            until(&p, 40, "a betting window", |s| s["betting"]["open"] == true).await;
            let (status, body) = p.post("/api/play/bet", r#"{"main": 1000}"#).await;
            assert_eq!(status, 200, "{body}");
            let round = serde_json::from_str::<Value>(&body).expect("json")["round"].clone();
            // Ben has exactly his bet and its follow when he bets, then spends the follow.
            as_player(&mut p, &ben);
            let have = state(&p).await["balance"].as_i64().expect("balance");
            credit(&format!("{:.2}", (1000 - have) as f64 / 100.0));
            let bet = r#"{"seat": 4, "main": 500, "follow_double": true}"#;
            let (status, body) = p.post("/api/play/behind", bet).await;
            assert_eq!(status, 200, "{body}");
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
