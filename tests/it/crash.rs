//! kill -9 at any moment loses nothing: the real binary is SIGKILLed at many random points
//! of a scripted multi-round session (while booting and replaying, between inputs, while
//! a card is being read and recorded) and restarted each time; the recorded inputs and
//! settlements must equal the uninterrupted session exactly — no card lost or doubled.
//!
//! The harness plays the shoe (a simulated `croupier-v1` shoe on a real PTY that outlives
//! the table process) and the seat terminals (the HTTP API). After each restart it asks
//! the table how many inputs it has, and goes on from there: a card that was out of the
//! shoe but not yet durable when the process died is fed again, as a dealer would re-feed
//! it when the panel still asks for it.

use crate::common;
use crate::proc;

use common::{config_file, from_shoe, session, shoe_items};
use croupier::store::Reader;
use croupier_drivers::sim::{SimConfig, SimShoe};
use proc::{spawn, spawn_raw, Proc};
use serde_json::Value;
use std::time::Duration;
use tokio::time::{sleep, timeout};

const MIN_KILLS: usize = 60;

async fn status_after(p: &Proc, seq: u64) -> Value {
    p.get(&format!("/api/status?after={seq}&wait_ms=5000"))
        .await
}

async fn settle(p: &Proc, sim: &SimShoe) -> Value {
    // Connected, every frame the shoe sent acknowledged, and no change for 150 ms.
    let mut s = p.get("/api/status").await;
    for _ in 0..200 {
        if s["shoe"]["link"] == "connected" {
            break;
        }
        sleep(Duration::from_millis(20)).await;
        s = p.get("/api/status").await;
    }
    assert_eq!(s["shoe"]["link"], "connected", "{s}");
    timeout(Duration::from_secs(10), sim.settled())
        .await
        .expect("the shoe's frames are acknowledged")
        .expect("sim running");
    loop {
        sleep(Duration::from_millis(150)).await;
        let again = p.get("/api/status").await;
        if again["seq"] == s["seq"] {
            return again;
        }
        s = again;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_at_random_points_loses_and_doubles_nothing() {
    timeout(Duration::from_secs(600), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("croupier.log");
        let (inputs, expected, expecting) = session("deluxe", 11, 10);
        let items = shoe_items(&inputs);
        let sim = SimShoe::start(SimConfig::default()).expect("pty shoe");
        let cfg = config_file(dir.path(), &sim.path(), "deluxe");
        let mut rng = fastrand::Rng::with_seed(0xC0FFEE);
        let (mut kills, mut boot_kills, mut in_flight_kills) = (0, 0, 0);
        // After a kill with an input in flight: was it durable (kept) or not (re-fed)?
        let (mut kept, mut refed) = (0, 0);
        let mut in_flight: Option<usize> = None;
        loop {
            // Now and then, kill while it boots: opening, verifying, replaying the log.
            if rng.u8(..8) == 0 {
                let mut child = spawn_raw(&cfg, &log);
                std::thread::sleep(Duration::from_micros(rng.u64(0..80_000)));
                let _ = child.kill();
                let _ = child.wait();
                kills += 1;
                boot_kills += 1;
                continue;
            }
            let p = spawn(&cfg, &log).await;
            let s = settle(&p, &sim).await;
            assert_eq!(s["state"], "open", "after {kills} kills: {s}");
            let n = s["inputs"].as_u64().expect("inputs") as usize;
            assert!(n <= inputs.len());
            if let Some(sent) = in_flight.take() {
                assert!(n == sent || n + 1 == sent, "sent {sent}, table has {n}");
                if n == sent {
                    kept += 1;
                } else {
                    refed += 1;
                }
            }
            let cards_done = inputs[..n].iter().filter(|i| from_shoe(i)).count();
            sim.load(items[cards_done..].to_vec()).await.expect("load");
            if n == inputs.len() && kills >= MIN_KILLS {
                assert_eq!(s["expecting"], expecting.as_str());
                assert!(p.terminate(), "SIGTERM stops it cleanly with status 0");
                break;
            }
            // Send a few inputs, each durable before the next, and kill while the last
            // one is on its way: on the wire, in the engine, in the commit, or just after.
            let k = rng.usize(1..=6);
            let mut seq = s["seq"].as_u64().expect("seq");
            let mut pending = None;
            for (j, input) in inputs.iter().enumerate().skip(n).take(k) {
                let last = j + 1 == (n + k).min(inputs.len());
                if from_shoe(input) {
                    assert_eq!(sim.deal(1).await.expect("deal").len(), 1);
                } else {
                    let body = serde_json::to_string(input).expect("json");
                    if last {
                        let addr = p.addr.clone();
                        let headers = p.headers.clone();
                        pending = Some(tokio::spawn(async move {
                            let headers: Vec<(&str, &str)> = headers
                                .iter()
                                .map(|(k, v)| (k.as_str(), v.as_str()))
                                .collect();
                            let _ = croupier::web::client::request_with(
                                &addr,
                                "POST",
                                "/api/input",
                                Some(&body),
                                &headers,
                                Duration::from_secs(5),
                            )
                            .await;
                        }));
                    } else {
                        let (status, reply) = p.post("/api/input", &body).await;
                        assert_eq!(status, 200, "input {j} {input:?}: {reply}");
                    }
                }
                if !last {
                    let now = status_after(&p, seq).await;
                    assert!(now["seq"].as_u64() > Some(seq), "input {j} taken: {now}");
                    seq = now["seq"].as_u64().unwrap_or(seq);
                } else {
                    in_flight_kills += 1;
                    in_flight = Some(j + 1);
                }
            }
            // The kill lands 20 µs to 5 ms after the last input went out, spread evenly
            // on a log scale, so that it falls before the commit and after it on a fast
            // disk as on a slow one; slept on a blocking thread, precise to the OS's
            // timer (tokio's rounds up to whole milliseconds, which on a fast machine
            // put every kill after the commit).
            let micros = (20.0 * (5_000.0_f64 / 20.0).powf(rng.f64())) as u64;
            tokio::task::spawn_blocking(move || {
                std::thread::sleep(Duration::from_micros(micros));
            })
            .await
            .expect("the kill's delay");
            p.kill();
            if let Some(task) = pending {
                let _ = task.await;
            }
            kills += 1;
        }
        eprintln!(
            "{kills} kills: {boot_kills} while booting, {in_flight_kills} with an input in \
             flight ({kept} of those were already durable, {refed} were not and were re-fed)"
        );
        assert!(kills >= MIN_KILLS);
        assert!(
            kept > 0 && refed > 0,
            "kills landed on both sides of the commit"
        );

        // The log holds the session exactly, and the settlements are the uninterrupted ones.
        let reader = Reader::open(&dir.path().join("croupier.db"))
            .await
            .expect("reader");
        let logged = common::logged_inputs(&dir.path().join("croupier.db")).await;
        assert_eq!(logged.len(), inputs.len(), "no input lost or doubled");
        assert_eq!(logged, inputs);
        assert_eq!(reader.results("t1").await.expect("results"), expected);
        common::assert_replay_cli_agrees(dir.path(), "deluxe", &logged, &expected);
    })
    .await
    .expect("bounded");
}
