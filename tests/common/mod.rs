//! Shared by the service tests: scripted sessions, configs, and a driver that feeds a
//! session to a table — cards through a simulated shoe on a real PTY, everything else
//! through the table's input channel or its HTTP API.
#![allow(dead_code)]

use croupier::engine::{Engine, Event, Input, RoundResult, SeatBets, Variant};
use croupier::sim::{Style, TableSim};
use croupier::table::TableConfig;
use croupier_drivers::ShoeItem;
use std::path::Path;
use std::sync::Arc;

/// Main bets only, seat by seat (or box by box).
pub fn seat_bets(seats: &[(u8, i64)]) -> Vec<SeatBets> {
    seats
        .iter()
        .map(|&(seat, main)| SeatBets {
            seat,
            main,
            ..SeatBets::default()
        })
        .collect()
}

/// A round's main bets, seat by seat.
pub fn bets(seats: &[(u8, i64)]) -> Input {
    Input::Bets(seat_bets(seats))
}

/// The built-in variant `stem`.
pub fn variant(stem: &str) -> Arc<Variant> {
    Arc::new(
        Variant::built_in(stem)
            .expect("known variant")
            .expect("valid variant"),
    )
}

/// A legal session of `rounds` settled rounds (random bets, side bets and decisions),
/// as the table would receive it, plus what a fresh engine makes of it.
pub fn session(stem: &str, seed: u64, rounds: usize) -> (Vec<Input>, Vec<RoundResult>, String) {
    let v = variant(stem);
    let mut engine = Engine::new(Arc::clone(&v));
    let mut sim = TableSim::new(Arc::clone(&v), seed, Style::Random);
    let mut inputs = Vec::new();
    let mut results = Vec::new();
    let mut events = Vec::new();
    while results.len() < rounds {
        let input = sim.next_input(&engine);
        events.clear();
        engine
            .apply(&input, &mut events)
            .expect("the sim sends legal inputs");
        for e in events.drain(..) {
            if let Event::RoundSettled(r) = e {
                results.push(*r);
            }
        }
        inputs.push(input);
    }
    (inputs, results, engine.expectation().to_string())
}

/// Whether the shoe delivers this input.
pub fn from_shoe(input: &Input) -> bool {
    matches!(input, Input::Card(_) | Input::CutCard)
}

/// A simulated shoe on a PTY holding the shoe items of `inputs`, in order.
pub fn session_shoe(inputs: &[Input]) -> croupier_drivers::sim::SimShoe {
    croupier_drivers::sim::SimShoe::start(croupier_drivers::sim::SimConfig {
        items: shoe_items(inputs),
        ..croupier_drivers::sim::SimConfig::default()
    })
    .expect("pty shoe")
}

/// Feeds `inputs` to a running table: shoe items dealt by `sim` through the PTY (each
/// taken before the next), the rest submitted directly.
pub async fn feed_session(
    handle: &croupier::table::TableHandle,
    sim: &croupier_drivers::sim::SimShoe,
    inputs: &[Input],
) {
    let mut watch = handle.watch();
    for input in inputs {
        if from_shoe(input) {
            let before = watch.borrow().seq;
            assert_eq!(sim.deal(1).await.expect("deal").len(), 1);
            tokio::time::timeout(
                std::time::Duration::from_secs(5),
                watch.wait_for(|s| s.seq > before),
            )
            .await
            .expect("taken")
            .expect("running");
        } else {
            handle
                .submit(input.clone(), croupier::store::Source::Api)
                .await
                .expect("input");
        }
    }
}

/// The shoe items of `inputs`, in order.
pub fn shoe_items(inputs: &[Input]) -> Vec<ShoeItem> {
    inputs
        .iter()
        .filter_map(|i| match i {
            Input::Card(c) => Some(ShoeItem::Card(*c)),
            Input::CutCard => Some(ShoeItem::CutCard),
            _ => None,
        })
        .collect()
}

/// The built-in config adapted for a test: serial shoe on `port` (a PTY), no demo, fake
/// buttons, the database in `dir`, any free port.
pub fn config(dir: &Path, port: &Path, stem: &str) -> TableConfig {
    let mut c = TableConfig::embedded().expect("built-in config");
    c.table.id = "t1".into();
    c.table.variant = stem.into();
    c.store.path = dir.join("croupier.db");
    c.http.bind = "127.0.0.1:0".into();
    c.shoe.simulated = false;
    c.shoe.serial.port = port.to_path_buf();
    c.shoe.serial.reconnect_initial_ms = 20;
    c.shoe.serial.reconnect_max_ms = 200;
    c.demo.players = false;
    // Sessions made by the engine's simulator bet any amount the game allows.
    c.table.bet_unit = 1;
    // Scripted sessions open the next round at once; the dispute tests set a window.
    c.disputes.window_seconds = 0;
    c
}

/// The built-in configuration as a file in `dir` for the real binary, the demo on
/// (simulated shoe, demo players): its database in `dir`, any free port, and `edits` (text
/// replacements, in order, each of which must find its text) on top.
pub fn demo_config_file(dir: &Path, edits: &[(&str, &str)]) -> std::path::PathBuf {
    let db = format!("path = {:?}", dir.join("croupier.db").display().to_string());
    let mut text = croupier::table::config::DEFAULT_TOML.to_string();
    let places = [
        ("path = \"data/croupier.db\"", db.as_str()),
        ("bind = \"127.0.0.1:8080\"", "bind = \"127.0.0.1:0\""),
    ];
    for (from, to) in places.iter().chain(edits) {
        assert!(text.contains(from), "{from} is in the configuration");
        text = text.replace(from, to);
    }
    let path = dir.join("table.toml");
    std::fs::write(&path, text).expect("write config");
    TableConfig::load(&path).expect("test config is valid");
    path
}

/// The same as a file for the real binary.
pub fn config_file(dir: &Path, port: &Path, stem: &str) -> std::path::PathBuf {
    // Sessions made by the engine's simulator bet any amount the game allows, so these
    // tables take any minor unit; the betting unit has its own tests (`tests/it/remote_play/`).
    let text = croupier::table::config::DEFAULT_TOML
        .replace("bet_unit = 10", "bet_unit = 1")
        .replace("id = \"table-1\"", "id = \"t1\"")
        .replace("variant = \"deluxe\"", &format!("variant = \"{stem}\""))
        .replace(
            "path = \"data/croupier.db\"",
            &format!("path = {:?}", dir.join("croupier.db").display().to_string()),
        )
        .replace("bind = \"127.0.0.1:8080\"", "bind = \"127.0.0.1:0\"")
        .replace("simulated = true", "simulated = false")
        .replace(
            "port = \"/dev/croupier-shoe\"",
            &format!("port = {:?}", port.display().to_string()),
        )
        .replace("reconnect_initial_ms = 100", "reconnect_initial_ms = 20")
        .replace("reconnect_max_ms = 5000", "reconnect_max_ms = 200")
        .replace("players = true", "players = false")
        .replace("window_seconds = 5", "window_seconds = 0");
    let path = dir.join("table.toml");
    std::fs::write(&path, text).expect("write config");
    TableConfig::load(&path).expect("test config is valid");
    path
}

/// A table of `variant` (a built-in variant's stem, or a variant file's path) for remote
/// play without the demo dealer, dealt from a new simulated `croupier-v1` shoe on a PTY
/// (the test deals): [`config_file`] with a betting countdown of
/// `betting` seconds and a decision timer of `decision` seconds. Returns its temporary
/// directory (the database goes there), the shoe and the config file.
pub fn no_demo_table(
    variant: &str,
    betting: u64,
    decision: u64,
) -> (
    tempfile::TempDir,
    croupier_drivers::sim::SimShoe,
    std::path::PathBuf,
) {
    let dir = tempfile::tempdir().expect("tempdir");
    let sim = croupier_drivers::sim::SimShoe::start(croupier_drivers::sim::SimConfig::default())
        .expect("pty shoe");
    let path = config_file(dir.path(), &sim.path(), variant);
    let text = std::fs::read_to_string(&path)
        .expect("config")
        .replace(
            "betting_seconds = 15",
            &format!("betting_seconds = {betting}"),
        )
        .replace(
            "decision_seconds = 20",
            &format!("decision_seconds = {decision}"),
        );
    std::fs::write(&path, text).expect("write config");
    TableConfig::load(&path).expect("valid config");
    (dir, sim, path)
}

/// The table part of the wallet transaction ids of the table in `db` (its only table), on
/// its current first timeline: `<id>~<eight hex digits>` (`wallet::journal::tx_table`).
pub async fn tx_table(db: &Path) -> String {
    let pool = croupier::auth::open_pool(db).await.expect("pool");
    let (id, timeline): (String, String) = sqlx::query_as("SELECT id, timeline FROM tables")
        .fetch_one(&pool)
        .await
        .expect("the table's row");
    pool.close().await;
    format!("{id}~{}", &timeline[..8])
}

/// `croupier player add` on `cfg`: the token of the local launch link it prints.
pub fn launch_token(cfg: &Path, name: &str, balance: &str) -> String {
    let out = croupier(
        &[
            "player",
            "add",
            "--config",
            &cfg.display().to_string(),
            "--name",
            name,
            "--balance",
            balance,
        ],
        None,
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{}", self::text(&out));
    let link = text
        .split_whitespace()
        .find(|w| w.contains("/play#t="))
        .unwrap_or_else(|| panic!("no launch link in {text:?}"));
    assert!(link.starts_with("http://127.0.0.1:"), "{link}");
    link.split("#t=").nth(1).expect("token").to_string()
}

/// `cards` as items for the simulated shoe.
pub fn cards_for_shoe(cards: &[&str]) -> Vec<ShoeItem> {
    cards
        .iter()
        .map(|c| ShoeItem::Card(c.parse().expect("card")))
        .collect()
}

/// Every input in table `t1`'s log at `db` (the log verified); panics on any other record.
pub async fn logged_inputs(db: &Path) -> Vec<Input> {
    let reader = croupier::store::Reader::open(db).await.expect("reader");
    reader
        .log("t1")
        .await
        .expect("the log verifies")
        .into_iter()
        .map(|r| match r.record {
            croupier::store::Record::Input { input, .. } => input,
            other => panic!("unexpected {other:?}"),
        })
        .collect()
}

/// `inputs` as a scenario file for `croupier replay` (format: ../shared/scenarios/README.md),
/// or `None` if one of them has no form here (inputs and bet fields added later).
pub fn scenario(stem: &str, inputs: &[Input]) -> Option<String> {
    use serde_json::{json, Map, Value};
    let mut events = Vec::with_capacity(inputs.len());
    for input in inputs {
        events.push(match input {
            Input::Card(c) => Value::String(c.to_string()),
            Input::CutCard => Value::String("CUT".into()),
            Input::Shuffle => json!({"shoe": "shuffle"}),
            Input::Decision { seat, action } => {
                json!({"seat": seat.to_string(), "do": action.name()})
            }
            Input::Bonus { seat, multiplier } => {
                json!({"seat": seat.to_string(), "bonus_multiplier": multiplier})
            }
            Input::Bets(bets) => {
                let mut seats = Map::new();
                for b in bets {
                    let mut kinds = Map::new();
                    kinds.insert("main".into(), Value::from(b.main));
                    for (name, amount) in &b.side {
                        kinds.insert(name.clone(), Value::from(*amount));
                    }
                    if b.timer_ms > 0 {
                        kinds.insert("timer_ms".into(), Value::from(b.timer_ms));
                    }
                    seats.insert(b.seat.to_string(), Value::Object(kinds));
                }
                let mut event = json!({ "bets": seats });
                let seated: Map<String, Value> = bets
                    .iter()
                    .filter_map(|b| Some((b.seat.to_string(), Value::from(b.player.clone()?))))
                    .collect();
                if !seated.is_empty() {
                    event["seated"] = Value::Object(seated);
                }
                let mut behind = Map::new();
                for b in bets {
                    for bb in &b.behind {
                        let mut kinds = Map::new();
                        kinds.insert("main".into(), Value::from(bb.main));
                        for (name, amount) in &bb.side {
                            kinds.insert(name.clone(), Value::from(*amount));
                        }
                        kinds.insert("follow_double".into(), Value::from(bb.follow_double));
                        kinds.insert("follow_split".into(), Value::from(bb.follow_split));
                        if bb.timer_ms > 0 {
                            kinds.insert("timer_ms".into(), Value::from(bb.timer_ms));
                        }
                        let player = behind
                            .entry(bb.player.clone())
                            .or_insert_with(|| Value::Object(Map::new()));
                        player[b.seat.to_string()] = Value::Object(kinds);
                    }
                }
                if !behind.is_empty() {
                    event["behind"] = Value::Object(behind);
                }
                event
            }
            Input::PlayerBets(players) => {
                let mut by_player = Map::new();
                for p in players {
                    let mut boxes = Map::new();
                    for b in &p.boxes {
                        let mut kinds = Map::new();
                        kinds.insert("main".into(), Value::from(b.main));
                        for (name, amount) in &b.side {
                            kinds.insert(name.clone(), Value::from(*amount));
                        }
                        if b.let_it_play {
                            kinds.insert("let_it_play".into(), Value::Bool(true));
                        }
                        boxes.insert(b.seat.to_string(), Value::Object(kinds));
                    }
                    by_player.insert(p.player.clone(), Value::Object(boxes));
                }
                json!({ "players": by_player })
            }
            Input::PlayerDecision {
                player,
                seat,
                action,
            } => json!({"player": player, "box": seat.to_string(), "do": action.name()}),
            Input::Tick { now_ms } => json!({ "tick": now_ms }),
            #[allow(unreachable_patterns)]
            _ => return None,
        });
    }
    Some(json!({"variant": stem, "events": events}).to_string())
}

/// Runs the real `croupier replay` on `inputs` and checks every round it prints against
/// `results`: same hands, outcomes, stakes and returns. Returns false (and checks nothing)
/// when the session has inputs the scenario writer here cannot express.
pub fn assert_replay_cli_agrees(
    dir: &Path,
    stem: &str,
    inputs: &[Input],
    results: &[RoundResult],
) -> bool {
    let Some(text) = scenario(stem, inputs) else {
        eprintln!(
            "croupier replay not compared: the session has inputs with no scenario form here"
        );
        return false;
    };
    let file = dir.join("session.json");
    std::fs::write(&file, text).expect("write scenario");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_croupier"))
        .arg("replay")
        .arg(&file)
        .output()
        .expect("croupier replay runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(doc["halted"].is_null(), "{}", doc["halted"]);
    let rounds = doc["rounds"].as_array().expect("rounds");
    assert_eq!(rounds.len(), results.len());
    for (printed, stored) in rounds.iter().zip(results) {
        assert_eq!(printed["round"], stored.round);
        let hands = printed["hands"].as_array().expect("hands");
        assert_eq!(hands.len(), stored.hands.len());
        for (p, s) in hands.iter().zip(&stored.hands) {
            assert_eq!(p["seat"], s.seat.to_string());
            assert_eq!(p["outcome"], s.outcome.as_str());
            assert_eq!(p["staked"], s.staked);
            assert_eq!(p["returned"], s.returned);
        }
        for b in &stored.bets {
            let at = match &b.player {
                Some(player) => &printed["behind"][&**player],
                None => &printed["returns"],
            };
            assert_eq!(
                at[b.seat.to_string()][b.kind.name()],
                b.returned,
                "round {} seat {} {}",
                stored.round,
                b.seat,
                b.kind.name()
            );
        }
    }
    true
}

/// Sends one seat's bet to `POST /api/input` in the background (a write the table must
/// make), authenticated with `headers` (a supervisor's: the local token, say); the task
/// ends with the answer, once the row is durable.
pub fn spawn_a_bet(
    addr: String,
    headers: Vec<(String, String)>,
) -> tokio::task::JoinHandle<Result<(u16, String), croupier::web::client::ClientError>> {
    tokio::spawn(async move {
        let body = r#"{"bets": [{"seat": 1, "main": 100, "side": []}]}"#;
        let headers: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        croupier::web::client::request_with(
            &addr,
            "POST",
            "/api/input",
            Some(body),
            &headers,
            std::time::Duration::from_secs(20),
        )
        .await
        .map(|r| (r.status, r.body))
    })
}

/// The `Authorization` header of the local token of the service on database `db`.
pub fn local_token_header(db: &Path) -> Vec<(String, String)> {
    let token = croupier::auth::local_token::read(db).expect("the service's local token");
    vec![("Authorization".into(), format!("Bearer {token}"))]
}

/// Waits (at most 15 s) until the table publishes a snapshot for which `f` holds; returns it.
pub async fn until_snapshot(
    handle: &croupier::table::TableHandle,
    what: &str,
    f: impl Fn(&croupier::table::Snapshot) -> bool,
) -> croupier::table::Snapshot {
    let mut watch = handle.watch();
    let snap = tokio::time::timeout(std::time::Duration::from_secs(15), watch.wait_for(|s| f(s)))
        .await
        .unwrap_or_else(|_| panic!("{what}: not within 15 s: {:?}", handle.snapshot()))
        .expect("table running");
    (**snap).clone()
}

/// Seat `seat` stands, through the table's API.
pub async fn stand(h: &croupier::table::TableHandle, seat: u8) {
    h.submit(
        Input::Decision {
            seat,
            action: croupier::engine::Action::Stand,
        },
        croupier::store::Source::Api,
    )
    .await
    .expect("stand");
}

/// `GET /metrics` at `addr`, which must answer 200: the exposition text.
pub async fn metrics(addr: &str) -> String {
    let (status, text) = croupier::web::client::request(
        addr,
        "GET",
        "/metrics",
        None,
        std::time::Duration::from_secs(10),
    )
    .await
    .unwrap_or_else(|e| panic!("scrape {addr}: {e}"));
    assert_eq!(status, 200, "{addr}: {text}");
    text
}

/// Removes every row after `seq` from the log at `db`, the way someone with the file would
/// (its no-delete trigger dropped first): how many rows went.
pub async fn cut_log(db: &Path, seq: u64) -> u64 {
    use sqlx::{ConnectOptions, Executor};
    let mut conn = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(db)
        .connect()
        .await
        .expect("connect");
    conn.execute("DROP TRIGGER events_no_delete")
        .await
        .expect("drop");
    conn.execute(format!("DELETE FROM events WHERE seq > {seq}").as_str())
        .await
        .expect("delete")
        .rows_affected()
}

/// A simulated shoe on a PTY holding `cards`, in order.
pub fn dealing(cards: &[&str]) -> croupier_drivers::sim::SimShoe {
    croupier_drivers::sim::SimShoe::start(croupier_drivers::sim::SimConfig {
        items: cards_for_shoe(cards),
        ..croupier_drivers::sim::SimConfig::default()
    })
    .expect("pty shoe")
}

/// The next message on a WebSocket, within `step`.
pub async fn next_message<S>(
    ws: &mut S,
    step: std::time::Duration,
) -> tokio_tungstenite::tungstenite::Message
where
    S: futures::Stream<
            Item = Result<
                tokio_tungstenite::tungstenite::Message,
                tokio_tungstenite::tungstenite::Error,
            >,
        > + Unpin,
{
    use futures::StreamExt;
    tokio::time::timeout(step, ws.next())
        .await
        .expect("in time")
        .expect("open")
        .expect("message")
}

/// `table`'s log in the database at `db`, verified.
pub async fn log_of(db: &Path, table: &str) -> Vec<croupier::store::LogRow> {
    let reader = croupier::store::Reader::open(db).await.expect("reader");
    reader.log(table).await.expect("log")
}

/// A decision timer of one seat that ran out, as the table's log holds it.
#[derive(Debug, Clone)]
pub struct LoggedTimeout {
    /// The tick row that ran it out.
    pub seq: u64,
    /// The round.
    pub round: u64,
    /// The hand (0 for an insurance question).
    pub hand: u8,
    /// What the variant's timeout rule decided.
    pub action: croupier::engine::Action,
    /// How many cards the hand held when the timer ran out.
    pub cards_then: usize,
    /// The hand's cards when its round settled.
    pub cards: Vec<croupier::cards::Card>,
    /// Their best total then.
    pub total: u8,
}

/// Replays `log` (a table of variant `stem`) through the engine, as recovery does: the
/// tick rows' sequence numbers, and every timer of `seat`'s that ran out, with the hand as
/// it was then and as its round settled. Asserts the bets that open each round time the
/// seat (the log says who is timed).
pub fn logged_timeouts(
    log: &[croupier::store::LogRow],
    stem: &str,
    seat: u8,
) -> (Vec<u64>, Vec<LoggedTimeout>) {
    use croupier::engine::Place;
    use croupier::store::Record;
    let mut engine = Engine::new(variant(stem));
    let (mut ticks, mut out) = (Vec::new(), Vec::<LoggedTimeout>::new());
    let mut cards: std::collections::HashMap<u8, usize> = Default::default();
    let mut round = 0;
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
        let timed_out = events.iter().any(|e| matches!(e, Event::DecisionTimeout));
        if matches!(input, Input::Tick { .. }) {
            ticks.push(row.seq);
        }
        for e in &events {
            match e {
                Event::RoundOpened { round: r } => {
                    round = *r;
                    cards.clear();
                }
                Event::CardDealt {
                    to: Place::Hand { seat: s, hand },
                    ..
                } if *s == seat => *cards.entry(*hand).or_default() += 1,
                Event::Decided {
                    seat: s,
                    hand,
                    action,
                } if timed_out && *s == seat => out.push(LoggedTimeout {
                    seq: row.seq,
                    round,
                    hand: *hand,
                    action: *action,
                    cards_then: cards.get(hand).copied().unwrap_or(0),
                    cards: Vec::new(),
                    total: 0,
                }),
                Event::RoundSettled(r) => {
                    for t in out.iter_mut().filter(|t| t.round == r.round) {
                        if let Some(h) = r.hands.iter().find(|h| h.seat == seat && h.hand == t.hand)
                        {
                            t.cards = h.cards.clone();
                            t.total = h.total;
                        }
                    }
                }
                _ => {}
            }
        }
    }
    (ticks, out)
}

/// The kind of each row in `table`'s log, in order.
pub async fn record_kinds(reader: &croupier::store::Reader, table: &str) -> Vec<&'static str> {
    let log = reader.log(table).await.expect("log");
    log.iter().map(|r| r.record.kind()).collect()
}

/// Runs the `croupier` binary with `args`, `stdin` written to it; its output.
pub fn croupier(args: &[&str], stdin: Option<&str>) -> std::process::Output {
    use std::io::Write;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_croupier"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("croupier runs");
    if let Some(text) = stdin {
        child
            .stdin
            .as_mut()
            .expect("stdin")
            .write_all(text.as_bytes())
            .expect("write stdin");
    }
    drop(child.stdin.take());
    child.wait_with_output().expect("output")
}

/// Restores the backup `backup` over the database `db` as the guide tells it
/// (docs/src/alarms.md): the stopped table's WAL files gone, the backup and its anchor
/// copied over the live ones.
pub fn restore(backup: &Path, db: &Path) {
    for ext in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", db.display()));
    }
    std::fs::copy(backup, db).expect("restore");
    std::fs::copy(
        croupier::store::anchor::path_for(backup),
        croupier::store::anchor::path_for(db),
    )
    .expect("restore the anchor");
}

/// A command's stdout and stderr, for messages.
pub fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Table `t1` (Deluxe) recovered from the database `t.db` in `dir`, with its command
/// receiver (to run its loop).
pub async fn recover_table(
    dir: &Path,
) -> (
    croupier::table::Table,
    croupier::table::TableHandle,
    tokio::sync::mpsc::Receiver<croupier::table::Command>,
) {
    let opened = croupier::store::Store::open(&dir.join("t.db"), "t1", "t", "deluxe")
        .await
        .expect("store");
    let (table, handle, rx, _) = croupier::table::Table::recover(
        "t1",
        "t",
        "deluxe",
        variant("deluxe"),
        Ok((opened.store, opened.log)),
    );
    (table, handle, rx)
}

/// Submits `input` to the table (source: API) and waits for its answer.
pub async fn table_input(
    t: &mut croupier::table::Table,
    input: Input,
) -> Result<u64, croupier::table::SubmitError> {
    let (reply, rx) = tokio::sync::oneshot::channel();
    t.handle(croupier::table::Command::Input {
        input,
        source: croupier::store::Source::Api,
        reply: Some(reply),
    })
    .await;
    rx.await.expect("answered")
}

/// `POST path` with a JSON `body` to `addr` from the source address `from` (any
/// 127.x.y.z reaches a service on loopback): how the lockout tests are several clients.
pub async fn post_json_from(
    addr: std::net::SocketAddr,
    from: &str,
    path: &str,
    body: &str,
) -> croupier::web::client::Reply {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind(std::net::SocketAddr::new(from.parse().expect("ip"), 0))
        .expect("bind the source address");
    let mut tcp = socket.connect(addr).await.expect("connect");
    let req = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    tcp.write_all(req.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    tcp.read_to_end(&mut raw).await.expect("read");
    croupier::web::client::parse("x", &raw).expect("http")
}
