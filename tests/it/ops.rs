//! `/healthz`, `/readyz` and `/metrics` over real HTTP on the service, with the simulated
//! shoe on a PTY read by the real serial driver: readiness follows alarms and the shoe's
//! link; the metrics parse as Prometheus text and move by exactly what was done (cards
//! dealt, frames rejected, alarms, reconnects, settled rounds, one commit per log row,
//! subscribers); a table loop stuck in a write turns `/healthz` red, and green again.

use crate::common;
use crate::prom;
use crate::running;

use croupier::engine::Input;
use croupier::store::Source;
use croupier::table::demo::main_bet;
use croupier::table::{TableHandle, TableState};
use croupier::web::client::request;
use croupier_drivers::sim::{InjectedFault, SimConfig, SimShoe};
use croupier_drivers::ShoeItem;
use serde_json::Value;
use sqlx::{Connection, Executor};
use std::time::{Duration, Instant};
use tokio::time::timeout;

const STEP: Duration = Duration::from_secs(10);

async fn get(addr: &str, path: &str) -> (u16, String) {
    request(addr, "GET", path, None, STEP)
        .await
        .unwrap_or_else(|e| panic!("GET {path}: {e}"))
}

async fn scrape(addr: &str) -> prom::Scrape {
    let (status, text) = get(addr, "/metrics").await;
    assert_eq!(status, 200, "{text}");
    prom::parse(&text).unwrap_or_else(|e| panic!("not Prometheus text: {e}\n{text}"))
}

async fn readyz(addr: &str) -> (u16, Value) {
    let (status, body) = get(addr, "/readyz").await;
    (status, serde_json::from_str(&body).expect("readyz is JSON"))
}

/// Waits until the published snapshot satisfies `f`.
async fn until(handle: &TableHandle, what: &str, f: impl Fn(&croupier::table::Snapshot) -> bool) {
    let mut watch = handle.watch();
    timeout(STEP, watch.wait_for(|s| f(s)))
        .await
        .unwrap_or_else(|_| panic!("{what}: not within {STEP:?}"))
        .expect("table running");
}

async fn deal(handle: &TableHandle, sim: &SimShoe) {
    let before = handle.snapshot().seq;
    assert_eq!(sim.deal(1).await.expect("deal").len(), 1);
    until(handle, "the card is recorded", |s| s.seq > before).await;
}

/// A temporary directory and an empty simulated shoe.
fn shoe() -> (tempfile::TempDir, SimShoe) {
    let dir = tempfile::tempdir().expect("tempdir");
    (dir, SimShoe::start(SimConfig::default()).expect("pty shoe"))
}

fn card(code: &str) -> ShoeItem {
    ShoeItem::Card(code.parse().expect("card"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_and_metrics_follow_the_table_exactly() {
    timeout(Duration::from_secs(90), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let sim = SimShoe::start(SimConfig {
            // Seat 1: 9H 7C, dealer 5S 6D, then TD for the dealer (21); 4S later.
            items: ["9H", "5S", "7C", "6D", "TD", "4S"].map(card).to_vec(),
            link: Some(dir.path().join("shoe")),
            ..SimConfig::default()
        })
        .expect("pty shoe");
        let run = running::start(common::config(dir.path(), &sim.path(), "deluxe")).await;
        let h = &run.handle;
        let addr = run.addr.to_string();

        assert_eq!(get(&addr, "/healthz").await, (200, "ok\n".to_string()));
        let (status, r) = readyz(&addr).await;
        assert_eq!(status, 200, "{r}");
        assert_eq!(r["ready"], true);
        assert_eq!(r["reasons"], serde_json::json!([]));
        assert_eq!(
            (r["store"].as_str(), r["shoe"].as_str()),
            (Some("ok"), Some("connected"))
        );
        assert!(r["alarm"].is_null());
        assert!(r["clock"]["synchronised"].is_boolean(), "{r}");
        assert_eq!(r["clock"]["source"], "adjtimex", "{r}");
        assert!(r["clock"]["max_error_us"].is_u64(), "{r}");
        // Wall-clock steps (issue #32 item 12): none on a steady machine, and said so.
        assert_eq!(r["clock"]["steps"], 0, "{r}");

        let m = scrape(&addr).await;
        assert_eq!(m.sum("croupier_cards_read_total"), 0.0);
        assert_eq!(m.get("croupier_clock_steps_total"), 0.0);
        assert_eq!(m.get("croupier_commit_latency_seconds_count"), 0.0);
        assert_eq!(m.get("croupier_ready"), 1.0);
        assert_eq!(m.types["croupier_commit_latency_seconds"], "histogram");

        // A round: bets, N = 5 cards through the PTY, a stand; it settles.
        h.submit(
            Input::Bets(vec![main_bet(1, 100).expect("bet")]),
            Source::Api,
        )
        .await
        .expect("bets");
        for _ in 0..4 {
            deal(h, &sim).await;
        }
        common::stand(h, 1).await;
        deal(h, &sim).await;
        assert!(h.snapshot().round.settled);
        let m = scrape(&addr).await;
        assert_eq!(m.get("croupier_cards_read_total{outcome=\"applied\"}"), 5.0);
        assert_eq!(m.sum("croupier_cards_read_total"), 5.0);
        assert_eq!(m.get("croupier_rounds_settled_total"), 1.0);
        assert_eq!(m.sum("croupier_alarms_total"), 0.0);
        assert_eq!(m.sum("croupier_shoe_frames_rejected_total"), 0.0);
        assert!(m.get("croupier_shoe_frames_total") >= 5.0);
        let seq = h.snapshot().seq as f64;
        assert_eq!(seq, 7.0, "bets, 5 cards, stand");
        assert_eq!(m.get("croupier_commit_latency_seconds_count"), seq);
        assert_eq!(
            m.get("croupier_commit_latency_seconds_bucket{le=\"+Inf\"}"),
            seq
        );
        assert!(m.get("croupier_commit_latency_seconds_sum") > 0.0);

        // M = 2 frames of noise: each rejected by the driver, each an alarm row.
        for n in 1..=2usize {
            sim.inject(InjectedFault::Garbage(b"\x00garbage\xff\r\n".to_vec()))
                .await
                .expect("inject");
            until(h, "the fault is recorded", |s| {
                s.alarm.as_ref().is_some_and(|a| 1 + a.also.len() == n)
            })
            .await;
        }
        let (status, r) = readyz(&addr).await;
        assert_eq!(status, 503, "{r}");
        assert_eq!(r["ready"], false);
        assert_eq!(r["reasons"], serde_json::json!(["alarm"]));
        assert!(
            r["alarm"]
                .as_str()
                .is_some_and(|a| a.contains("invalid frame")),
            "{r}"
        );
        // A card while locked is held.
        sim.deal(1).await.expect("deal");
        until(h, "the card is held", |s| {
            s.alarm.as_ref().is_some_and(|a| a.held.len() == 1)
        })
        .await;
        let m = scrape(&addr).await;
        assert_eq!(m.sum("croupier_shoe_frames_rejected_total"), 2.0);
        assert_eq!(m.get("croupier_alarms_total{kind=\"shoe_fault\"}"), 2.0);
        assert_eq!(m.sum("croupier_alarms_total"), 2.0);
        assert_eq!(m.get("croupier_cards_read_total{outcome=\"applied\"}"), 5.0);
        assert_eq!(m.get("croupier_cards_read_total{outcome=\"held\"}"), 1.0);
        assert_eq!(m.get("croupier_ready"), 0.0);
        assert_eq!(m.get("croupier_table_state{state=\"locked\"}"), 1.0);
        assert_eq!(m.get("croupier_shoe_reconnects_total"), 0.0);

        // The shoe unplugged: not ready for the shoe too; plugged back: one reconnect.
        sim.unplug().await.expect("unplug");
        until(h, "the link drops", |s| !s.shoe.connected()).await;
        let (status, r) = readyz(&addr).await;
        assert_eq!(status, 503, "{r}");
        assert_eq!(r["reasons"], serde_json::json!(["shoe", "alarm"]));
        assert!(
            r["shoe"]
                .as_str()
                .is_some_and(|s| s.starts_with("disconnected")),
            "{r}"
        );
        sim.replug().await.expect("replug");
        until(h, "the link is back", |s| s.shoe.connected()).await;
        let m = scrape(&addr).await;
        assert_eq!(m.get("croupier_shoe_reconnects_total"), 1.0);
        assert_eq!(
            m.get("croupier_alarms_total{kind=\"shoe_disconnected\"}"),
            1.0
        );
        assert_eq!(m.get("croupier_shoe_connected"), 1.0);

        // Cleared (by the service's local token, a supervisor's right): ready again. Every
        // log row was one measured commit.
        let token = common::local_token_header(&dir.path().join("croupier.db"));
        let headers: Vec<(&str, &str)> = token
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let reply = croupier::web::client::request_with(
            &addr,
            "POST",
            "/api/alarm/clear",
            Some(r#"{"reason": "checked"}"#),
            &headers,
            STEP,
        )
        .await
        .expect("http");
        assert_eq!(reply.status, 200, "{}", reply.body);
        let (status, r) = readyz(&addr).await;
        assert_eq!(status, 200, "{r}");
        let m = scrape(&addr).await;
        assert_eq!(h.snapshot().state, TableState::Open);
        assert_eq!(
            m.get("croupier_commit_latency_seconds_count"),
            h.snapshot().seq as f64
        );
        run.stop().await;
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribers_are_counted_while_connected() {
    timeout(Duration::from_secs(60), async {
        let (dir, sim) = shoe();
        let run = running::start(common::config(dir.path(), &sim.path(), "deluxe")).await;
        let addr = run.addr.to_string();
        let gauge =
            |m: &prom::Scrape, s: &str| m.get(&format!("croupier_subscribers{{stream=\"{s}\"}}"));
        let m = scrape(&addr).await;
        assert_eq!(gauge(&m, "public_ws"), 0.0);
        let mut viewers = Vec::new();
        for _ in 0..3 {
            let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws/public"))
                .await
                .expect("ws");
            viewers.push(ws);
        }
        // The dealer's socket needs a login: the service's local token will do.
        let mut upgrade =
            tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(
                format!("ws://{addr}/ws/dealer"),
            )
            .expect("request");
        for (k, v) in common::local_token_header(&dir.path().join("croupier.db")) {
            upgrade.headers_mut().insert(
                axum::http::HeaderName::from_bytes(k.as_bytes()).expect("header name"),
                v.parse().expect("header value"),
            );
        }
        let (dealer, _) = tokio_tungstenite::connect_async(upgrade).await.expect("ws");
        let counted = |want: f64, stream: &'static str| {
            let addr = addr.clone();
            async move {
                let end = Instant::now() + STEP;
                loop {
                    let now = gauge(&scrape(&addr).await, stream);
                    if now == want {
                        return;
                    }
                    assert!(Instant::now() < end, "{stream}: {now}, want {want}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        };
        counted(3.0, "public_ws").await;
        counted(1.0, "dealer_ws").await;
        for mut v in viewers.drain(..2) {
            v.close(None).await.expect("close");
        }
        drop(dealer);
        counted(1.0, "public_ws").await;
        counted(0.0, "dealer_ws").await;
        drop(viewers);
        counted(0.0, "public_ws").await;
        run.stop().await;
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_loop_stuck_in_a_write_fails_healthz_until_it_moves() {
    timeout(Duration::from_secs(60), async {
        let (dir, sim) = shoe();
        let cfg = common::config(dir.path(), &sim.path(), "deluxe");
        let run = running::start(cfg.clone()).await;
        let addr = run.addr.to_string();
        assert_eq!(get(&addr, "/healthz").await.0, 200);

        // Another connection holds the write lock; the table's next write waits on it
        // (up to SQLite's 5 s busy timeout), so its loop beats no more.
        let mut blocker =
            sqlx::SqliteConnection::connect(&format!("sqlite://{}", cfg.store.path.display()))
                .await
                .expect("open db");
        blocker.execute("BEGIN EXCLUSIVE").await.expect("lock");
        let stuck = Instant::now();
        let post = common::spawn_a_bet(addr.clone(), common::local_token_header(&cfg.store.path));
        let mut red = None;
        while stuck.elapsed() < Duration::from_millis(4500) {
            let (status, body) = get(&addr, "/healthz").await;
            if status == 503 {
                red = Some(body);
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // Release before the busy timeout would break the table.
        blocker.execute("ROLLBACK").await.expect("unlock");
        let red = red.expect("/healthz stayed 200 while the table loop was stuck");
        assert!(red.starts_with("table loop stalled"), "{red}");
        let (status, reply) = post.await.expect("join").expect("answered");
        assert_eq!(status, 200, "{reply}");
        let end = Instant::now() + STEP;
        while get(&addr, "/healthz").await.0 != 200 {
            assert!(Instant::now() < end, "/healthz stays red after the stall");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // While stuck, /readyz said why too; now it is ready again.
        let (status, r) = readyz(&addr).await;
        assert_eq!(status, 200, "{r}");
        run.stop().await;
    })
    .await
    .expect("bounded");
}
