//! `croupier recall` through the real binary on a table dealt through the PTY shoe: what
//! happens between rounds is listed, and a reader that stops early (`| head`) is no error.

use crate::common;
use crate::running;

use common::until_snapshot;
use croupier::engine::Input;
use croupier::store::Source;
use croupier::table::demo::main_bet;
use croupier::table::TableState;
use croupier_drivers::sim::{InjectedFault, SimConfig, SimShoe};
use croupier_drivers::ShoeItem;
use std::process::{Command, Stdio};
use std::time::Duration;
use tokio::time::timeout;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recall_lists_an_alarm_between_rounds_and_survives_a_closed_pipe() {
    timeout(Duration::from_secs(60), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let sim = SimShoe::start(SimConfig {
            // Seat 1: 9H 7C, dealer 5S 6D, then TD for the dealer.
            items: ["9H", "5S", "7C", "6D", "TD"]
                .map(|c| ShoeItem::Card(c.parse().expect("card")))
                .to_vec(),
            ..SimConfig::default()
        })
        .expect("pty shoe");
        let cfg = common::config(dir.path(), &sim.path(), "deluxe");
        let run = running::start(cfg.clone()).await;
        let h = &run.handle;
        h.submit(
            Input::Bets(vec![main_bet(1, 100).expect("bet")]),
            Source::Api,
        )
        .await
        .expect("bets");
        sim.deal(4).await.expect("deal");
        until_snapshot(h, "dealt", |s| s.inputs == 5).await;
        common::stand(h, 1).await;
        sim.deal(1).await.expect("deal");
        until_snapshot(h, "settled", |s| s.round.settled).await;
        // Between rounds: a shoe fault, and its clearing.
        sim.inject(InjectedFault::Garbage(b"\x00garbage\xff\r\n".to_vec()))
            .await
            .expect("inject");
        until_snapshot(h, "locked", |s| s.state == TableState::Locked).await;
        h.clear_alarm("cable reseated".into(), "user:s1".into())
            .await
            .expect("clear");
        run.stop().await;

        let out = Command::new(env!("CARGO_BIN_EXE_croupier"))
            .args(["recall", "--db"])
            .arg(&cfg.store.path)
            .output()
            .expect("recall");
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        let after = text
            .split("-- after round 1:")
            .nth(1)
            .unwrap_or_else(|| panic!("no rows after round 1 in:\n{text}"));
        assert!(
            after.contains("ALARM: the shoe sent an invalid frame"),
            "{text}"
        );
        assert!(after.contains("alarm cleared: cable reseated"), "{text}");
        // As JSON too: the round's log runs to the clearing.
        let out = Command::new(env!("CARGO_BIN_EXE_croupier"))
            .args(["recall", "--json", "--db"])
            .arg(&cfg.store.path)
            .output()
            .expect("recall");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        let kinds: Vec<&str> = doc[0]["log"]
            .as_array()
            .expect("log")
            .iter()
            .filter_map(|r| r["record"]["kind"].as_str())
            .collect();
        assert_eq!(kinds.last(), Some(&"clear"), "{kinds:?}");

        // `croupier recall | head` whose reader has already gone: no panic, success.
        let (read, write) = nix::unistd::pipe().expect("pipe");
        drop(read);
        let out = Command::new(env!("CARGO_BIN_EXE_croupier"))
            .args(["recall", "--db"])
            .arg(&cfg.store.path)
            .stdout(Stdio::from(write))
            .stderr(Stdio::piped())
            .output()
            .expect("recall");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{err}");
        assert!(out.status.success(), "{:?}: {err}", out.status);
    })
    .await
    .expect("bounded");
}
