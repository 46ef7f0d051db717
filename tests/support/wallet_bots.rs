//! Remote players betting through the operator's HTTP wallet while a studio test does its
//! worst (`tests/it/studio/restore_wallet.rs`, `tests/it/nemesis.rs`), and the accounting that
//! must hold afterwards: every seat-round's movements at the wallet equal what the log
//! settled for it.
#![allow(dead_code)]

use super::wallet_server::Server;
use croupier::web::client;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::sleep;

/// Where the table serves now (`None` while it is stopped).
pub type Addr = Arc<Mutex<Option<String>>>;

/// A remote player holding `seat` who bets €10.00 in every betting window and doubles
/// whenever the table allows it (stands otherwise, declines insurance), at whatever
/// address the table serves, until `stop`.
pub fn bot(
    addr: Addr,
    token: String,
    seat: u8,
    stop: Arc<AtomicBool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let bearer = format!("Bearer {token}");
        let auth = [("Authorization", bearer.as_str())];
        // The last refusal of a bet, said once (on stderr) until another one or a bet
        // taken: what a run's log shows of a player who could not bet.
        let mut refused: Option<String> = None;
        while !stop.load(Ordering::SeqCst) {
            sleep(Duration::from_millis(50)).await;
            let Some(a) = addr.lock().expect("lock").clone() else {
                continue;
            };
            let send = |path: &'static str, body: String| {
                let a = a.clone();
                let bearer = bearer.clone();
                async move {
                    let auth = [("Authorization", bearer.as_str())];
                    client::request_with(
                        &a,
                        "POST",
                        path,
                        Some(&body),
                        &auth,
                        Duration::from_secs(5),
                    )
                    .await
                    .ok()
                }
            };
            let Ok(r) = client::request_with(
                &a,
                "GET",
                "/api/play/state",
                None,
                &auth,
                Duration::from_secs(5),
            )
            .await
            else {
                continue;
            };
            let Ok(s) = serde_json::from_str::<Value>(&r.body) else {
                continue;
            };
            let turn = &s["turn"];
            let allows = |what: &str| {
                turn["allowed"]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|x| x == what))
            };
            if s["seat"].is_null() {
                let _ = send("/api/play/join", format!(r#"{{"seat": {seat}}}"#)).await;
            } else if s["betting"]["open"] == true && s["betting"]["my_bet"].is_null() {
                let Some(answer) = send("/api/play/bet", r#"{"main": 1000}"#.into()).await else {
                    continue;
                };
                let code = serde_json::from_str::<Value>(&answer.body)
                    .ok()
                    .and_then(|b| b["error"]["code"].as_str().map(str::to_owned));
                if answer.status == 200 {
                    refused = None;
                } else if refused != code {
                    eprintln!(
                        "bot at seat {seat}, round {}: bet refused: {} {}",
                        s["betting"]["round"], answer.status, answer.body
                    );
                    refused = code;
                }
            } else if turn["kind"] == "insurance" {
                let _ = send("/api/play/decision", r#"{"action": "no_insurance"}"#.into()).await;
            } else if allows("double") {
                let _ = send("/api/play/decision", r#"{"action": "double"}"#.into()).await;
            } else if turn.is_object() {
                let _ = send("/api/play/decision", r#"{"action": "stand"}"#.into()).await;
            }
        }
    })
}

/// The players' bots (`players`: name and seat, `tokens` their launch tokens), betting
/// until the flag returned is set.
pub fn bots(addr: &Addr, players: &[(&str, u8)], tokens: &[String]) -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    for ((_, seat), token) in players.iter().zip(tokens) {
        bot(Arc::clone(addr), token.clone(), *seat, Arc::clone(&stop));
    }
    stop
}

/// Every movement at the wallet by (round, seat, player), whatever history's id it came
/// under. A rollback of a debit the wallet never applied moved nothing (its movement is
/// 0) and is no settlement: the soak found two players who had lost their whole balance
/// an hour in, refused every bet, and each refusal's rollback of 0 read as a seat-round
/// the log never settled.
pub fn at_the_wallet(server: &Server) -> BTreeMap<(u64, u8, String), i64> {
    let mut out = BTreeMap::new();
    for m in server.movements.lock().expect("lock").iter() {
        if m.delta == 0 {
            continue;
        }
        // `<table>~<timeline>:<round>:<seat>:<line>:<kind>`
        let parts: Vec<&str> = m.tx.split(':').collect();
        let round = parts[1].parse().expect("round");
        let seat = parts[2].parse().expect("seat");
        *out.entry((round, seat, m.player.clone())).or_default() += m.delta;
    }
    out
}

/// What the log at `db` settled for the remote players (their seats' lines), by (round,
/// seat, player): returned less staked, of the rounds that are final (`players`: name and
/// seat, for lines the log holds without a name).
pub async fn in_the_log(db: &Path, players: &[(&str, u8)]) -> BTreeMap<(u64, u8, String), i64> {
    let pool = croupier::auth::open_pool(db).await.expect("pool");
    let rows: Vec<(i64, i64, String, i64)> = sqlx::query_as(
        "SELECT s.round, s.seat, s.player, SUM(s.returned - s.staked) FROM settlements s \
         JOIN rounds r ON r.table_id = s.table_id AND r.round = s.round \
         WHERE r.final_seq IS NOT NULL GROUP BY s.round, s.seat, s.player",
    )
    .fetch_all(&pool)
    .await
    .expect("settlements");
    pool.close().await;
    let open = stakes_in_flight(db).await;
    assert_eq!(
        open, 0,
        "every stake this log journalled settled or rolled back"
    );
    let mut out = BTreeMap::new();
    for (round, seat, player, net) in rows {
        let seat = seat as u8;
        let player = match players.iter().find(|(_, s)| *s == seat) {
            Some((p, _)) if player.is_empty() => p.to_string(),
            _ if player.is_empty() => continue,
            _ => player,
        };
        out.insert((round as u64, seat, player), net);
    }
    out
}

/// How many stakes the log at `db` journalled that are neither settled nor rolled back.
pub async fn stakes_in_flight(db: &Path) -> i64 {
    let pool = croupier::auth::open_pool(db).await.expect("pool");
    let open: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM wallet_journal WHERE state IN ('pending', 'committed')",
    )
    .fetch_one(&pool)
    .await
    .expect("journal");
    pool.close().await;
    open
}
