//! The table service in-process, end to end through a real pseudo-terminal: the simulated
//! shoe writes frames, the real serial driver reads them, the table records and publishes.

use crate::common;
use crate::running;

use common::{config, from_shoe, session, shoe_items, variant};
use croupier::engine::{Code, Input};
use croupier::store::{Reader, Record, Source};
use croupier::table::demo::main_bet;
use croupier::table::{SubmitError, TableHandle, TableState, Update, DELTA_BUFFER};
use croupier_drivers::sim::{InjectedFault, SimConfig, SimShoe};
use croupier_drivers::ShoeItem;
use running::start;
use std::time::Duration;
use tokio::time::timeout;

/// Feeds `inputs`: shoe items through the PTY, the rest through the input channel; waits
/// for each to be durable and published.
async fn drive(handle: &TableHandle, sim: &SimShoe, inputs: &[Input]) {
    let mut watch = handle.watch();
    for (i, input) in inputs.iter().enumerate() {
        if from_shoe(input) {
            let before = watch.borrow().seq;
            let dealt = sim.deal(1).await.expect("sim deals");
            assert_eq!(dealt.len(), 1, "the sim holds the session's cards");
            let snap = timeout(Duration::from_secs(5), watch.wait_for(|s| s.seq > before))
                .await
                .unwrap_or_else(|_| panic!("input {i} ({input:?}) not taken within 5 s"))
                .expect("table running")
                .clone();
            assert_eq!(snap.state, TableState::Open, "input {i}: {:?}", snap.alarm);
        } else {
            handle
                .submit(input.clone(), Source::Api)
                .await
                .unwrap_or_else(|e| panic!("input {i} ({input:?}): {e}"));
        }
    }
}

fn sim_with(items: Vec<ShoeItem>) -> SimShoe {
    SimShoe::start(SimConfig {
        items,
        ..SimConfig::default()
    })
    .expect("pty shoe")
}

/// Plays a `rounds`-round session of `stem` through the PTY shoe, stopping gracefully and
/// recovering halfway, and checks the store against the session and the replays. Returns
/// whether the `croupier replay` command could be compared too.
async fn pty_session(stem: &str, seed: u64, rounds: usize) -> bool {
    let dir = tempfile::tempdir().expect("tempdir");
    let (inputs, expected, expecting) = session(stem, seed, rounds);
    let sim = sim_with(shoe_items(&inputs));
    let cfg = config(dir.path(), &sim.path(), stem);
    let half = inputs.len() / 2;
    let run = start(cfg.clone()).await;
    drive(&run.handle, &sim, &inputs[..half]).await;
    let before = run.handle.snapshot();
    run.stop().await;
    let run = start(cfg.clone()).await;
    let after = run.handle.snapshot();
    assert_eq!(after.seq, before.seq);
    assert_eq!(after.expecting, before.expecting);
    assert_eq!(after.round, before.round);
    assert_eq!(after.shoe.dealt, before.shoe.dealt);
    drive(&run.handle, &sim, &inputs[half..]).await;
    let end = run.handle.snapshot();
    assert_eq!(end.expecting, expecting);
    run.stop().await;

    // The store holds exactly the session — and the table's own clock ticks, where the
    // game times its rounds (IN FOR 6's 24 hours: a tick dates each round) — and the
    // settlements replay computes from the log, ticks and all.
    let reader = Reader::open(&cfg.store.path).await.expect("reader");
    let with_ticks = common::logged_inputs(&cfg.store.path).await;
    assert_eq!(end.inputs, with_ticks.len() as u64);
    let logged: Vec<Input> = with_ticks
        .iter()
        .filter(|i| !matches!(i, Input::Tick { .. }))
        .cloned()
        .collect();
    assert_eq!(logged, inputs);
    let times_rounds = variant(stem).timeouts.round_max_ms > 0;
    assert_eq!(
        with_ticks.len() > logged.len(),
        times_rounds,
        "ticks only where the game times its rounds"
    );
    let logged = with_ticks;
    assert_eq!(reader.results("t1").await.expect("results"), expected);
    let replayed = croupier::replay::run(variant(stem), &logged);
    assert_eq!(replayed.rounds, expected);
    let recalled = reader.recall("t1", 3).await.expect("recall");
    assert_eq!(recalled.len(), 3);
    assert_eq!(
        recalled.last().and_then(|r| r.result.clone()),
        expected.last().cloned()
    );
    // And the `croupier replay` command agrees with the table's settlements.
    common::assert_replay_cli_agrees(dir.path(), stem, &logged, &expected)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deluxe_pty_session_settles_exactly_like_replay_across_a_restart() {
    // Burn by revealed value, cut card, insurance, side bets, splits and doubles.
    timeout(Duration::from_secs(120), pty_session("deluxe", 7, 12))
        .await
        .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_infor6_pty_session_settles_exactly_like_the_replay_command() {
    // A new shoe every round, the IN FOR 6 side bet and its bonus game.
    let compared = timeout(Duration::from_secs(120), pty_session("infor6", 9, 10))
        .await
        .expect("bounded");
    assert!(compared, "this session is expressible as a scenario");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_card_locks_the_table_across_a_restart_until_cleared() {
    timeout(Duration::from_secs(60), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let card = |c: &str| ShoeItem::Card(c.parse().expect("card"));
        let sim = sim_with(vec![card("7H"), card("8S"), card("9D")]);
        let cfg = config(dir.path(), &sim.path(), "deluxe");
        let run = start(cfg.clone()).await;
        let mut watch = run.handle.watch();
        // Bets are expected: a card now is refused and locks the table.
        sim.deal(1).await.expect("deal");
        let snap = timeout(
            Duration::from_secs(5),
            watch.wait_for(|s| s.state == TableState::Locked),
        )
        .await
        .expect("locks")
        .expect("running")
        .clone();
        let alarm = snap.alarm.clone().expect("alarm");
        assert!(alarm.reason.contains("7H"), "{}", alarm.reason);
        assert!(
            alarm.reason.contains("card_not_expected"),
            "{}",
            alarm.reason
        );
        assert!(alarm.expected.contains("bets"), "{}", alarm.expected);
        // Nothing is applied while locked: inputs are refused, cards are held.
        let bets = Input::Bets(vec![main_bet(1, 100).expect("bet")]);
        assert!(matches!(
            run.handle.submit(bets.clone(), Source::Api).await,
            Err(SubmitError::Locked(_))
        ));
        sim.deal(1).await.expect("deal");
        timeout(
            Duration::from_secs(5),
            watch.wait_for(|s| s.alarm.as_ref().is_some_and(|a| a.held.len() == 2)),
        )
        .await
        .expect("held")
        .expect("running");
        run.stop().await;

        // Locked before the restart, locked after it, with the same reason and cards.
        let run = start(cfg.clone()).await;
        let snap = run.handle.snapshot();
        assert_eq!(snap.state, TableState::Locked);
        let again = snap.alarm.clone().expect("alarm");
        assert_eq!(
            (&again.reason, &again.held),
            (&alarm.reason, &vec!["7H".to_string(), "8S".to_string()])
        );

        // Cleared through the HTTP API by a supervisor (a dealer may not), as
        // `croupier alarm clear --badge` does.
        running::add_users(&cfg.store.path).await;
        let addr = run.addr.to_string();
        let post = |cookie: String, path: &'static str, body: &'static str| {
            let addr = addr.clone();
            async move {
                let reply = croupier::web::client::request_with(
                    &addr,
                    "POST",
                    path,
                    Some(body),
                    &[("Cookie", &cookie)],
                    Duration::from_secs(20),
                )
                .await
                .expect("http");
                (reply.status, reply.body)
            }
        };
        let dealer = running::login_as(run.addr, croupier::auth::Role::Dealer).await;
        let (status, body) = post(
            dealer,
            "/api/alarm/clear",
            r#"{"reason": "cards taken out of play"}"#,
        )
        .await;
        assert_eq!(status, 403, "a dealer cannot clear an alarm: {body}");
        assert_eq!(run.handle.snapshot().state, TableState::Locked);
        let supervisor = running::login_as(run.addr, croupier::auth::Role::Supervisor).await;
        let (status, body) = post(
            supervisor.clone(),
            "/api/alarm/clear",
            r#"{"reason": "cards taken out of play"}"#,
        )
        .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(run.handle.snapshot().state, TableState::Open);
        let (status, _) = post(
            supervisor.clone(),
            "/api/alarm/clear",
            r#"{"reason": "again"}"#,
        )
        .await;
        assert_eq!(status, 409, "not locked any more");
        // The clearing is in the audit log, by the supervisor, tied to its event row.
        let clear_seq: u64 = serde_json::from_str::<serde_json::Value>(&body).expect("json")["seq"]
            .as_u64()
            .expect("seq");
        let pool = croupier::auth::open_pool(&cfg.store.path)
            .await
            .expect("pool");
        let mut conn = pool.acquire().await.expect("conn");
        let row = croupier::store::audit::last_of(&mut conn, "alarm_clear")
            .await
            .expect("audit")
            .expect("an alarm_clear row");
        assert_eq!(row.entry.actor, "user:s1");
        assert_eq!(row.entry.reason, "cards taken out of play");
        assert_eq!(row.entry.detail["event_seq"], clear_seq);
        assert_eq!(row.entry.detail["voided"], serde_json::json!(["7H", "8S"]));
        drop(conn);
        pool.close().await;
        // Play resumes; a rule violation from the API is refused, not an alarm.
        let (status, body) = post(
            supervisor,
            "/api/input",
            r#"{"decision": {"seat": 1, "action": "stand"}}"#,
        )
        .await;
        assert_eq!(status, 409, "{body}");
        assert!(
            body.contains("not_your_turn") || body.contains("action_not_allowed"),
            "{body}"
        );
        run.handle
            .submit(bets, Source::Api)
            .await
            .expect("bets after clearing");
        assert_eq!(run.handle.snapshot().state, TableState::Open);

        // A device fault locks it too.
        sim.inject(InjectedFault::Garbage(b"\x00garbage\xff\r\n".to_vec()))
            .await
            .expect("inject");
        let mut watch = run.handle.watch();
        let snap = timeout(
            Duration::from_secs(5),
            watch.wait_for(|s| s.state == TableState::Locked),
        )
        .await
        .expect("fault locks")
        .expect("running")
        .clone();
        assert!(snap
            .alarm
            .clone()
            .expect("alarm")
            .reason
            .contains("invalid frame"));
        run.stop().await;

        let reader = Reader::open(&cfg.store.path).await.expect("reader");
        let kinds = common::record_kinds(&reader, "t1").await;
        assert_eq!(kinds, ["alarm", "held", "clear", "input", "alarm"]);
        let log = reader.log("t1").await.expect("log");
        assert_eq!(
            log[2].record,
            Record::Clear {
                reason: "cards taken out of play".into(),
                voided: vec!["7H".into(), "8S".into()],
                // The supervisor who cleared it is on the record.
                by: "user:s1".into(),
            }
        );
        let _ = Code::CardNotExpected;
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lagging_subscriber_gets_a_resync_snapshot_never_a_gap() {
    timeout(Duration::from_secs(120), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let sim = sim_with(Vec::new());
        let cfg = config(dir.path(), &sim.path(), "ultimate");
        let run = start(cfg).await;
        let mut sub = run.handle.subscribe();
        let Some(Update::Resync(first)) = sub.next().await else {
            panic!("a subscription starts with a snapshot");
        };
        assert_eq!(first.seq, 0);
        // More inputs than the delta buffer while the subscriber does not read. Cards come
        // through the API here (as a supervisor would enter them): only the count matters.
        let (inputs, _, _) = session("ultimate", 3, 200);
        let n = DELTA_BUFFER + 50;
        assert!(inputs.len() > n);
        for input in &inputs[..n] {
            run.handle
                .submit(input.clone(), Source::Api)
                .await
                .expect("accepted");
        }
        let mut last = 0;
        let mut resynced = false;
        while last < n as u64 {
            match sub.next().await.expect("open") {
                Update::Resync(s) => {
                    resynced = true;
                    last = s.seq;
                }
                Update::Delta(d) => {
                    assert_eq!(d.seq, last + 1, "deltas are consecutive after a resync");
                    last = d.seq;
                }
            }
        }
        assert!(resynced, "a lagging subscriber gets a resync");
        // And /metrics counted it.
        let (status, text) = croupier::web::client::request(
            &run.addr.to_string(),
            "GET",
            "/metrics",
            None,
            Duration::from_secs(5),
        )
        .await
        .expect("http");
        assert_eq!(status, 200);
        let resyncs: f64 = text
            .lines()
            .find_map(|l| l.strip_prefix("croupier_lagged_resyncs_total{feed=\"table\"} "))
            .and_then(|v| v.parse().ok())
            .expect("the table's lagged resyncs are exposed");
        assert!(resyncs >= 1.0, "{text}");
        // And it keeps following live.
        run.handle
            .submit(inputs[n].clone(), Source::Api)
            .await
            .expect("accepted");
        match sub.next().await.expect("open") {
            Update::Delta(d) => assert_eq!(d.seq, n as u64 + 1),
            other => panic!("expected a delta, got {other:?}"),
        }
        run.stop().await;
    })
    .await
    .expect("bounded");
}

async fn wait_inputs(handle: &TableHandle, n: usize, what: &str) {
    let mut watch = handle.watch();
    let waited = timeout(
        Duration::from_secs(5),
        watch.wait_for(|s| s.inputs == n as u64),
    )
    .await;
    assert!(
        matches!(waited, Ok(Ok(_))),
        "{what}: {} of {n} inputs",
        handle.snapshot().inputs
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_card_on_the_wire_at_shutdown_is_not_lost() {
    timeout(Duration::from_secs(60), async {
        let dir = tempfile::tempdir().expect("tempdir");
        let (inputs, _, _) = session("deluxe", 21, 2);
        let sim = sim_with(shoe_items(&inputs));
        let cfg = config(dir.path(), &sim.path(), "deluxe");
        let mut sent = 0;
        for round in 0..6 {
            let run = start(cfg.clone()).await;
            // Whatever was on the wire at the last stop has arrived.
            wait_inputs(&run.handle, sent, &format!("restart {round}")).await;
            // Drive up to the next card, deal it and stop at once.
            while sent < inputs.len() && !from_shoe(&inputs[sent]) {
                drive(&run.handle, &sim, &inputs[sent..=sent]).await;
                sent += 1;
            }
            if sent == inputs.len() {
                run.stop().await;
                break;
            }
            sim.deal(1).await.expect("deal");
            sent += 1;
            run.stop().await;
        }
        let run = start(cfg.clone()).await;
        wait_inputs(
            &run.handle,
            sent,
            "every card dealt before a stop is recorded",
        )
        .await;
        assert_eq!(run.handle.snapshot().state, TableState::Open);
        run.stop().await;
        assert_eq!(common::logged_inputs(&cfg.store.path).await, inputs[..sent]);
    })
    .await
    .expect("bounded");
}
