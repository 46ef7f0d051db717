//! A small seamless-wallet server for the tests of the HTTP wallet adapter
//! (`tests/it/http_wallet.rs`) and of tables that pay through it (`tests/it/studio/`): axum on a
//! free port, balances in memory, every transaction id applied once, requests signed as
//! docs/src/remote-play.md says; every balance change kept, in order ([`Movement`]).
#![allow(dead_code)]

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One balance change the server made: a transaction applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Movement {
    /// Its id (`<table>~<timeline>:<round>:<seat>:<line>:<kind>`).
    pub tx: String,
    /// The player.
    pub player: String,
    /// What it did to the balance: −stake for a debit, +amount for a credit, the debit's
    /// stake back for a rollback of an applied debit (0 for one of a debit never applied).
    pub delta: i64,
}

/// The secret requests are signed with.
pub const SECRET: &str = "a-wallet-secret-of-enough-length";

/// The wallet's state.
#[derive(Default)]
pub struct Server {
    /// Balances by player.
    pub balances: Mutex<HashMap<String, i64>>,
    /// Applied transactions: id → (operation, amount).
    pub applied: Mutex<HashMap<String, (String, i64)>>,
    /// Every balance change, in order.
    pub movements: Mutex<Vec<Movement>>,
    /// Requests seen per id.
    pub seen: Mutex<HashMap<String, usize>>,
    /// Answer this many more requests too late (after applying them).
    pub slow: AtomicUsize,
    /// Answer 503 without applying anything.
    pub down: AtomicBool,
}

impl Server {
    /// A server where `players` hold these balances.
    pub fn with(players: &[(&str, i64)]) -> Arc<Server> {
        let server = Server::default();
        server
            .balances
            .lock()
            .expect("lock")
            .extend(players.iter().map(|(p, balance)| (p.to_string(), *balance)));
        Arc::new(server)
    }
}

async fn handle(
    State(s): State<Arc<Server>>,
    Path(op): Path<String>,
    headers: HeaderMap,
    body: String,
) -> (StatusCode, Json<Value>) {
    let mut mac = Hmac::<Sha256>::new_from_slice(SECRET.as_bytes()).expect("key");
    mac.update(body.as_bytes());
    let good = hex::encode(mac.finalize().into_bytes());
    if headers
        .get("x-croupier-signature")
        .and_then(|v| v.to_str().ok())
        != Some(good.as_str())
    {
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({"error": "bad_signature"})),
        );
    }
    if s.down.load(Ordering::SeqCst) {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"error": "down"})),
        );
    }
    let v: Value = serde_json::from_str(&body).expect("json");
    let player = v["player"].as_str().unwrap_or_default().to_string();
    let tx = v["tx"].as_str().unwrap_or_default().to_string();
    let amount = v["amount"].as_i64().unwrap_or(0);
    *s.seen.lock().expect("lock").entry(tx.clone()).or_default() += 1;
    let answer = {
        let mut balances = s.balances.lock().expect("lock");
        let mut applied = s.applied.lock().expect("lock");
        match balances.get(&player).copied() {
            None => (
                StatusCode::NOT_FOUND,
                json!({"error": "unknown_player", "player": player}),
            ),
            Some(balance) if op == "balance" => (StatusCode::OK, json!({ "balance": balance })),
            Some(balance) => {
                let undone = format!("{}rollback", tx.trim_end_matches("debit"));
                if op == "debit" && applied.contains_key(&undone) {
                    (
                        StatusCode::CONFLICT,
                        json!({"error": "rolled_back", "tx": tx}),
                    )
                } else if let Some((o, a)) = applied.get(&tx) {
                    if *o == op && (op == "rollback" || *a == amount) {
                        (StatusCode::OK, json!({ "balance": balance }))
                    } else {
                        (StatusCode::CONFLICT, json!({"error": "conflict", "tx": tx}))
                    }
                } else {
                    let delta = match op.as_str() {
                        "debit" => -amount,
                        "credit" => amount,
                        _ => {
                            let reference = v["ref"].as_str().unwrap_or_default();
                            applied.get(reference).map_or(0, |(_, a)| *a)
                        }
                    };
                    if balance + delta < 0 {
                        (
                            StatusCode::PAYMENT_REQUIRED,
                            json!({"error": "insufficient_funds", "balance": balance, "amount": amount}),
                        )
                    } else {
                        balances.insert(player.clone(), balance + delta);
                        applied.insert(tx.clone(), (op.clone(), amount));
                        s.movements.lock().expect("lock").push(Movement {
                            tx: tx.clone(),
                            player: player.clone(),
                            delta,
                        });
                        (StatusCode::OK, json!({"balance": balance + delta}))
                    }
                }
            }
        }
    };
    if s.slow.load(Ordering::SeqCst) > 0 {
        s.slow.fetch_sub(1, Ordering::SeqCst);
        // Applied, but the answer comes after the adapter gave up on it.
        tokio::time::sleep(Duration::from_millis(800)).await;
    }
    (answer.0, Json(answer.1))
}

/// Serves `server` on a free port: its URL (`http://ADDR/wallet`).
pub async fn start(server: Arc<Server>) -> String {
    start_on(server, "127.0.0.1").await
}

/// [`start`] on `host` (a test network's address, say).
pub async fn start_on(server: Arc<Server>, host: &str) -> String {
    let app = Router::new()
        .route("/wallet/{op}", post(handle))
        .with_state(server);
    let listener = tokio::net::TcpListener::bind((host, 0))
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}/wallet")
}
