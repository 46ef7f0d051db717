//! A cancellation refunds every bet exactly once, even when the real binary is SIGKILLed
//! in the middle of confirming it: after each restart either the cancellation is durable
//! (one refund line per bet, one `resolve` row) or it never happened (the dispute is still
//! open and the supervisor confirms again) — never both, never twice.

use crate::common;
use crate::proc;

use common::config_file;
use croupier::cards::Card;
use croupier::store::Reader;
use croupier_drivers::sim::{SimConfig, SimShoe};
use croupier_drivers::ShoeItem;
use proc::{spawn, Proc};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;
use tokio::time::{sleep, timeout};

const ROUNDS: u64 = 12;

async fn wait_seq(p: &Proc, seq: u64) -> Value {
    p.get(&format!("/api/status?after={seq}&wait_ms=5000"))
        .await
}

async fn post_ok(p: &Proc, path: &str, body: Value) -> Value {
    let (status, reply) = p.post(path, &body.to_string()).await;
    assert_eq!(status, 200, "POST {path}: {reply}");
    serde_json::from_str(&reply).expect("json")
}

/// The round's settlement lines and the log's resolve rows for `dispute`.
async fn recorded(db: &Path, round: i64, dispute: u64) -> (Vec<(i64, String, i64, i64)>, usize) {
    let reader = Reader::open(db).await.expect("reader");
    let lines = reader.settlement_lines("t1", round).await.expect("lines");
    let resolves = reader
        .log("t1")
        .await
        .expect("log")
        .iter()
        .filter(
            |r| matches!(&r.record, croupier::store::Record::Resolve(x) if x.dispute == dispute),
        )
        .count();
    (lines, resolves)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancellation_killed_mid_confirm_refunds_exactly_once() {
    timeout(Duration::from_secs(300), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("croupier.log");
        let db = dir.path().join("croupier.db");
        let sim = SimShoe::start(SimConfig::default()).expect("pty shoe");
        let cfg = config_file(dir.path(), &sim.path(), "deluxe");
        let mut rng = fastrand::Rng::with_seed(0x5EED);
        let (mut landed, mut lost) = (0, 0);
        for round in 1..=ROUNDS {
            let p = spawn(&cfg, &log).await;
            let s = p.get("/api/status").await;
            assert_eq!(s["state"], "open", "{s}");
            let seq = s["seq"].as_u64().expect("seq");
            // Two seats bet; four cards of the deal come out of the shoe.
            let bets = json!({"bets": [{"seat": 1, "main": 100, "side": [["pair", 10]]}, {"seat": 2, "main": 250, "side": []}]});
            post_ok(&p, "/api/input", bets).await;
            let cards: Vec<ShoeItem> = (0..4)
                .map(|j| ShoeItem::Card(Card::from_index(((round * 4 + j) % 52) as usize).expect("card")))
                .collect();
            sim.load(cards).await.expect("load");
            let mut at = wait_seq(&p, seq).await["seq"].as_u64().expect("seq");
            for _ in 0..4 {
                sim.deal(1).await.expect("deal");
                at = wait_seq(&p, at).await["seq"].as_u64().expect("seq");
            }
            let dispute = post_ok(&p, "/api/disputes", json!({"seat": 1, "reason": "the shoe jammed, deal again"})).await["dispute"]
                .as_u64()
                .expect("id");
            let preview = post_ok(&p, &format!("/api/disputes/{dispute}/propose"), json!({"resolution": {"op": "cancel"}, "reason": "misdeal"})).await;
            // Confirm (with the service's credentials, naming the proposal), and kill the
            // process somewhere around the commit.
            let addr = p.addr.clone();
            let headers = p.headers.clone();
            let named = json!({"proposal": preview["proposal"]}).to_string();
            let confirm = tokio::spawn(async move {
                let h: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                let _ = croupier::web::client::request_with(
                    &addr,
                    "POST",
                    &format!("/api/disputes/{dispute}/confirm"),
                    Some(&named),
                    &h,
                    Duration::from_secs(5),
                )
                .await;
            });
            sleep(Duration::from_micros(rng.u64(0..4_000))).await;
            p.kill();
            let _ = confirm.await;
            // Restart: durable or not, never half.
            let p = spawn(&cfg, &log).await;
            let s = p.get("/api/status").await;
            let (lines, resolves) = recorded(&db, round as i64, dispute).await;
            match s["state"].as_str() {
                Some("open") => {
                    landed += 1;
                    assert_eq!(resolves, 1);
                }
                Some("disputed") => {
                    lost += 1;
                    assert_eq!((lines.len(), resolves), (0, 0), "nothing of it was applied");
                    assert!(s["dispute"]["proposal"].is_null(), "a proposal does not survive a restart");
                    let preview = post_ok(&p, &format!("/api/disputes/{dispute}/propose"), json!({"resolution": {"op": "cancel"}, "reason": "misdeal"})).await;
                    post_ok(&p, &format!("/api/disputes/{dispute}/confirm"), json!({"proposal": preview["proposal"]})).await;
                }
                other => panic!("unexpected state {other:?}: {s}"),
            }
            // Confirming again changes nothing.
            let again = json!({"proposal": "0".repeat(64)}).to_string();
            let (status, _) = p.post(&format!("/api/disputes/{dispute}/confirm"), &again).await;
            assert_eq!(status, 404);
            let (lines, resolves) = recorded(&db, round as i64, dispute).await;
            assert_eq!(resolves, 1, "round {round}: one resolution");
            assert_eq!(
                lines,
                [
                    (1, "main".to_string(), 100, 100),
                    (1, "pair".to_string(), 10, 10),
                    (2, "main".to_string(), 250, 250)
                ],
                "round {round}: every bet refunded exactly once"
            );
            let s = p.get("/api/status").await;
            assert_eq!(s["last_result"]["cancelled"], true);
            assert!(p.terminate(), "SIGTERM stops it cleanly");
        }
        eprintln!("{landed} cancellations were durable when killed, {lost} were not");
    })
    .await
    .expect("in time");
}
