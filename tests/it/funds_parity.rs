//! One set of balance rules for the live table and the replay (issue #38 item 3): each
//! `*-funds-*` scenario written from the sheets is played twice — through the replay
//! (`replay::run_steps`, the `FundsDesk` in front of the engine) and through the real
//! binary's player API with the embedded wallet (players created with the scenario's
//! balances, bets and decisions posted by them, cards dealt from a PTY shoe, a `funds`
//! event mid-round a `player credit`) — and the two must agree on every settlement line and
//! every balance.
//!
//! A scenario of another reading (`settings`) runs on a table configured with a variant
//! file of that reading, as a studio choosing it would; a scenario the replay halts at a
//! re-bet with nothing to repeat is played up to there.
//!
//! A scenario's account that is a seat number (a seat without a `seated` id) is played by a
//! remote player sitting there (`seat<N>`): on the live table only a player has a wallet.

use crate::common;
use crate::proc;

use croupier::engine::variant::DealMode;
use croupier::engine::Variant;
use croupier::engine::{Action, Input, PlayerBets, SeatBets, SeatId};
use croupier::replay::{self, Step};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::{sleep, timeout};

/// A settlement line as both sides state it: (seat, player behind or "", kind, staked,
/// returned), rounds in order.
type Line = (SeatId, String, String, i64, i64);

/// The live player who holds `account` (a player id, or `seat<N>` for a seat's number).
fn player_of(account: &str) -> String {
    if account.parse::<SeatId>().is_ok() {
        format!("seat{account}")
    } else {
        account.to_string()
    }
}

/// The scenario `stem` from `tests/scenarios`.
fn scenario(stem: &str) -> replay::Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/scenarios")
        .join(format!("{stem}.json"));
    let text = std::fs::read_to_string(&path).expect("scenario");
    replay::parse(&text).expect("a valid scenario")
}

/// The scenario's variant: the shipped one, under the scenario's other reading where it
/// names one (`settings`).
fn variant_of(s: &replay::Scenario) -> Arc<Variant> {
    let shipped = common::variant(&s.variant);
    if s.settings.is_empty() {
        return shipped;
    }
    Arc::new(
        shipped
            .with_settings("scenario", &s.settings)
            .expect("the scenario's settings are valid"),
    )
}

/// The replay's side: every settlement line, the known balances at the end, and how many
/// of the scenario's events it played (all, or up to the one it halted at — a re-bet with
/// nothing to repeat).
fn replayed(s: &replay::Scenario) -> (Vec<Vec<Line>>, BTreeMap<String, i64>, usize) {
    let r = replay::run_steps(variant_of(s), &s.steps);
    let played = match &r.halted {
        None => s.steps.len(),
        Some((at, why)) => {
            assert!(
                matches!(s.steps[*at], Step::Rebet),
                "the replay halts only at a re-bet with nothing to repeat: {why:?}"
            );
            *at
        }
    };
    let rounds = r
        .rounds
        .iter()
        .map(|round| {
            let mut lines: Vec<Line> = round
                .bets
                .iter()
                .filter(|b| b.staked != 0 || b.returned != 0)
                .map(|b| {
                    (
                        b.seat,
                        b.player
                            .as_ref()
                            .map(ToString::to_string)
                            .unwrap_or_default(),
                        b.kind.name().to_string(),
                        b.staked,
                        b.returned,
                    )
                })
                .collect();
            lines.sort();
            lines
        })
        .collect();
    let balances = r
        .final_balances
        .expect("a funds scenario")
        .into_iter()
        .map(|(a, b)| (player_of(&a), b))
        .collect();
    (rounds, balances, played)
}

/// Everyone the scenario names: the account (as the live table knows it) and its opening
/// balance (an account whose balance the scenario never states is given plenty: it is
/// unlimited in the replay).
fn players(s: &replay::Scenario) -> BTreeMap<String, i64> {
    let mut out = BTreeMap::new();
    let mut opening = BTreeMap::new();
    for step in &s.steps {
        match step {
            Step::Funds(accounts) => {
                for (a, b) in accounts {
                    opening.entry(player_of(a)).or_insert(*b);
                }
            }
            Step::Input(Input::Bets(bets)) => {
                for b in bets {
                    out.insert(player_of(&common_account(b)), 0);
                    for bb in &b.behind {
                        out.insert(bb.player.clone(), 0);
                    }
                }
            }
            Step::Input(Input::PlayerBets(bets)) => {
                for p in bets {
                    out.insert(p.player.clone(), 0);
                }
            }
            _ => {}
        }
    }
    for (p, b) in &mut out {
        *b = opening.get(p).copied().unwrap_or(1_000_000);
    }
    out
}

/// Side bets as the player API takes them (by name).
fn sides(side: &[(String, i64)]) -> BTreeMap<&str, i64> {
    side.iter().map(|(n, a)| (n.as_str(), *a)).collect()
}

fn common_account(b: &SeatBets) -> String {
    croupier::play::funds::seat_account(b)
}

/// The live table: the binary on the scenario's variant, no demo dealer, the test's PTY
/// shoe, the players signed up with their opening balances.
struct Live {
    dir: tempfile::TempDir,
    cfg: PathBuf,
    sim: croupier_drivers::sim::SimShoe,
    p: proc::Proc,
    staff: Vec<(String, String)>,
    tokens: BTreeMap<String, String>,
    /// A common draw's players bet and decide by box.
    common_draw: bool,
}

impl Live {
    async fn start(s: &replay::Scenario, players: &BTreeMap<String, i64>) -> Live {
        let dir = tempfile::tempdir().expect("tempdir");
        let sim =
            croupier_drivers::sim::SimShoe::start(croupier_drivers::sim::SimConfig::default())
                .expect("pty shoe");
        let cfg = common::config_file(dir.path(), &sim.path(), &s.variant);
        // The test closes every window itself and answers every decision: no timer may
        // run out on a loaded machine.
        let mut text = std::fs::read_to_string(&cfg)
            .expect("config")
            .replace("betting_seconds = 15", "betting_seconds = 600")
            .replace("decision_seconds = 20", "decision_seconds = 600");
        if !s.settings.is_empty() {
            // Another reading: the table runs a variant file with it, as a studio would.
            let file = dir.path().join("variant.toml");
            let variant = toml::to_string(&*variant_of(s)).expect("a variant as TOML");
            std::fs::write(&file, variant).expect("write the variant");
            let stem = format!("variant = {:?}", s.variant);
            assert!(text.contains(&stem), "{stem} in the config");
            text = text.replace(
                &stem,
                &format!("variant = {:?}", file.display().to_string()),
            );
        }
        std::fs::write(&cfg, text).expect("write config");
        let mut tokens = BTreeMap::new();
        for (player, balance) in players {
            let token =
                common::launch_token(&cfg, player, &format!("{:.2}", *balance as f64 / 100.0));
            tokens.insert(player.clone(), token);
        }
        let p = proc::spawn(&cfg, &dir.path().join("log")).await;
        let staff = p.headers.clone();
        Live {
            dir,
            cfg,
            sim,
            p,
            staff,
            tokens,
            common_draw: common::variant(&s.variant).deal.mode == DealMode::CommonDraw,
        }
    }

    fn db(&self) -> PathBuf {
        self.dir.path().join("croupier.db")
    }

    async fn as_player(
        &mut self,
        player: &str,
        method: &str,
        path: &str,
        body: &str,
    ) -> (u16, String) {
        let token = self.tokens.get(player).expect("a known player").clone();
        self.p.headers = vec![("Authorization".into(), format!("Bearer {token}"))];
        let out = if method == "GET" {
            self.p.send("GET", path, None).await
        } else {
            self.p.send(method, path, Some(body)).await
        };
        self.p.headers = self.staff.clone();
        out
    }

    async fn state(&mut self, player: &str) -> Value {
        let (status, body) = self.as_player(player, "GET", "/api/play/state", "").await;
        assert_eq!(status, 200, "{body}");
        serde_json::from_str(&body).expect("json")
    }

    async fn balance(&self, player: &str) -> i64 {
        let pool = croupier::auth::open_pool(&self.db()).await.expect("pool");
        let b: i64 = sqlx::query_scalar("SELECT balance FROM players WHERE id = ?")
            .bind(player)
            .fetch_one(&pool)
            .await
            .expect("the player's row");
        pool.close().await;
        b
    }

    /// `{"funds": …}`: the wallet set to the stated balance (`player credit`).
    async fn set_balance(&self, player: &str, target: i64) {
        let now = self.balance(player).await;
        if now == target {
            return;
        }
        let out = common::croupier(
            &[
                "player",
                "credit",
                "--config",
                &self.cfg.display().to_string(),
                player,
                &format!("{:.2}", (target - now) as f64 / 100.0),
            ],
            None,
        );
        assert!(
            out.status.success(),
            "player credit: {}",
            common::text(&out)
        );
        assert_eq!(self.balance(player).await, target, "{player} credited");
    }

    /// Seats every seated account at its seats, everyone else at the table without one.
    async fn seat_everyone(&mut self, s: &replay::Scenario, players: &BTreeMap<String, i64>) {
        let seated = seated(s);
        for (player, seat) in &seated {
            let body = json!({ "seat": seat }).to_string();
            let (status, answer) = self
                .as_player(player, "POST", "/api/play/join", &body)
                .await;
            assert_eq!(status, 200, "{player} joins {seat}: {answer}");
        }
        for player in players.keys() {
            if !seated.iter().any(|(p, _)| p == player) {
                let (status, answer) = self.as_player(player, "POST", "/api/play/join", "{}").await;
                assert_eq!(status, 200, "{player} joins: {answer}");
            }
        }
    }

    /// Opens the betting window (the dealer's button).
    async fn open_window(&mut self) {
        let (status, body) = self.p.post("/api/betting/open", "").await;
        assert!(status == 200 || status == 409, "betting opens: {body}");
    }

    /// Closes the window (the dealer's button): the round opens if a bet was placed.
    async fn close_window(&mut self) {
        let (status, body) = self.p.post("/api/betting/close", "").await;
        assert!(status == 200 || status == 409, "betting closes: {body}");
    }

    /// Posts a bet as `player`: the round it is in, if placed.
    async fn place(&mut self, player: &str, path: &str, body: Value) -> Option<u64> {
        let (status, answer) = self
            .as_player(player, "POST", path, &body.to_string())
            .await;
        assert!(
            matches!(status, 200 | 402 | 409 | 422),
            "{player} {path} {body}: {status} {answer}"
        );
        (status == 200)
            .then(|| serde_json::from_str::<Value>(&answer).expect("json")["round"].as_u64())
            .flatten()
    }

    /// A round's bets, placed as their players would: the dealer opens the window, each
    /// seat's player bets (a player on two seats the lower bet first, so the higher one's
    /// extra is what the second seat's rule divides, as the replay reads "placed 100 and
    /// 45"), then the bets behind; the dealer closes the window. The round, if one opened.
    async fn bets(&mut self, bets: &[SeatBets]) -> Option<u64> {
        self.open_window().await;
        let mut seats: Vec<&SeatBets> = bets.iter().collect();
        seats.sort_by_key(|b| (b.main, b.seat));
        let mut round = None;
        for b in seats {
            let player = player_of(&common_account(b));
            let body = json!({ "seat": b.seat, "main": b.main, "side": sides(&b.side) });
            round = self.place(&player, "/api/play/bet", body).await.or(round);
        }
        for b in bets {
            for bb in &b.behind {
                let body = json!({
                    "seat": b.seat, "main": bb.main, "side": sides(&bb.side),
                    "follow_double": bb.follow_double, "follow_split": bb.follow_split,
                });
                round = self
                    .place(&bb.player, "/api/play/behind", body)
                    .await
                    .or(round);
            }
        }
        self.close_window().await;
        round
    }

    /// A common draw's bets: each player's boxes in one request.
    async fn boxes(&mut self, bets: &[PlayerBets]) -> Option<u64> {
        self.open_window().await;
        let mut round = None;
        for p in bets {
            let boxes: Vec<Value> = p
                .boxes
                .iter()
                .map(|b| {
                    json!({
                        "box": b.seat, "main": b.main, "side": sides(&b.side),
                        "let_it_play": b.let_it_play,
                    })
                })
                .collect();
            let body = json!({ "boxes": boxes });
            round = self
                .place(&p.player, "/api/play/boxes", body)
                .await
                .or(round);
        }
        self.close_window().await;
        round
    }

    /// `{"bets": "rebet"}`: the dealer opens the window and the table's automatic re-bet
    /// places the previous bets (`funds.auto_rebet`); the window closes once every seated
    /// player's seat shows its re-bet, or after five seconds without one (a re-bet the
    /// rules do not place).
    async fn rebet(&mut self, seated: &[(String, SeatId)]) -> Option<u64> {
        self.open_window().await;
        let mut round = None;
        for (player, seat) in seated {
            for _ in 0..50 {
                let s = self.state(player).await;
                let placed = s["betting"]["my_seats"].as_array().and_then(|seats| {
                    seats
                        .iter()
                        .find(|m| m["seat"] == *seat && m["main"].as_i64() > Some(0))
                        .map(|_| s["betting"]["round"].as_u64())
                });
                if let Some(r) = placed {
                    round = r.or(round);
                    break;
                }
                sleep(Duration::from_millis(100)).await;
            }
        }
        self.close_window().await;
        round
    }

    /// `player` answers `action` on `seat` once the table asks it (or, if it never does
    /// within a few seconds — an answer the replay's rules refuse before the engine — at
    /// once, to be refused too).
    async fn decide(&mut self, player: &str, seat: SeatId, behind: bool, action: Action) {
        let key = if self.common_draw { "box" } else { "seat" };
        for _ in 0..50 {
            let s = self.state(player).await;
            let asked = s["turns"].as_array().is_some_and(|turns| {
                turns
                    .iter()
                    .any(|t| t["seat"] == seat && t["behind"] == behind)
            });
            if asked {
                break;
            }
            sleep(Duration::from_millis(100)).await;
        }
        let body = json!({ "action": action, key: seat }).to_string();
        let (status, answer) = self
            .as_player(player, "POST", "/api/play/decision", &body)
            .await;
        assert!(
            status == 200 || status == 402 || status == 409,
            "{player} {action:?} on {seat}: {status} {answer}"
        );
    }

    /// Deals `n` cards from the loaded shoe and waits until the table has logged them (a
    /// decision posted before the cards are in would be refused and the next card go to
    /// another hand; on a loaded machine the table takes a few seconds). A card the table
    /// refuses is never logged: after 30 s the test goes on and its comparison judges.
    async fn deal(&self, n: usize) {
        if n > 0 {
            let before = self.shoe_inputs().await;
            assert_eq!(
                self.sim.deal(n).await.expect("deal").len(),
                n,
                "the shoe holds them"
            );
            for _ in 0..300 {
                if self.shoe_inputs().await >= before + n {
                    return;
                }
                sleep(Duration::from_millis(100)).await;
            }
        }
    }

    /// The cards and cut cards the table's log holds.
    async fn shoe_inputs(&self) -> usize {
        common::log_of(&self.db(), "t1")
            .await
            .iter()
            .filter(|row| {
                matches!(
                    row.record,
                    croupier::store::Record::Input {
                        input: Input::Card(_) | Input::CutCard,
                        ..
                    }
                )
            })
            .count()
    }

    /// Waits until `round` is settled and every stake of it is settled in the wallet.
    async fn settled(&mut self, round: u64, anyone: &str) {
        for _ in 0..300 {
            let s = self.state(anyone).await;
            let open = open_stakes(&self.db()).await;
            if s["view"]["last_result"]["round"] == round && open == 0 {
                return;
            }
            sleep(Duration::from_millis(100)).await;
        }
        panic!("round {round} settles: {}", self.state(anyone).await);
    }

    /// Every settlement line in the log, round by round, and every player's balance.
    async fn outcome(&self) -> (Vec<Vec<Line>>, BTreeMap<String, i64>) {
        let pool = croupier::auth::open_pool(&self.db()).await.expect("pool");
        let rows: Vec<(i64, i64, String, String, i64, i64)> = sqlx::query_as(
            "SELECT round, seat, player, kind, staked, returned FROM settlements \
             ORDER BY round, seat, player, kind",
        )
        .fetch_all(&pool)
        .await
        .expect("settlements");
        let balances: Vec<(String, i64)> = sqlx::query_as("SELECT id, balance FROM players")
            .fetch_all(&pool)
            .await
            .expect("players");
        pool.close().await;
        let mut rounds: BTreeMap<i64, Vec<Line>> = BTreeMap::new();
        for (round, seat, player, kind, staked, returned) in rows {
            if staked == 0 && returned == 0 {
                continue;
            }
            let seat = SeatId::try_from(seat).expect("a seat");
            rounds
                .entry(round)
                .or_default()
                .push((seat, player, kind, staked, returned));
        }
        let rounds = rounds
            .into_values()
            .map(|mut l| {
                l.sort();
                l
            })
            .collect();
        (rounds, balances.into_iter().collect())
    }
}

async fn open_stakes(db: &Path) -> i64 {
    let pool = croupier::auth::open_pool(db).await.expect("pool");
    let n: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM wallet_journal WHERE state IN ('pending', 'committed')",
    )
    .fetch_one(&pool)
    .await
    .expect("journal");
    pool.close().await;
    n
}

/// Plays `stem` through the replay and the live table and compares them.
async fn live_and_replay_agree(stem: &str) {
    let s = scenario(stem);
    let (want_rounds, want_balances, played) = replayed(&s);
    let players = players(&s);
    let mut live = Live::start(&s, &players).await;
    live.seat_everyone(&s, &players).await;
    let cards: Vec<_> = s
        .inputs
        .iter()
        .filter(|i| matches!(i, Input::Card(_) | Input::CutCard))
        .cloned()
        .collect();
    live.sim
        .load(common::shoe_items(&cards))
        .await
        .expect("load the shoe");
    let anyone = players.keys().next().expect("a player").clone();
    let seated = seated(&s);
    let mut round = None;
    let mut pending = 0;
    for step in &s.steps[..played] {
        if !matches!(step, Step::Input(Input::Card(_) | Input::CutCard)) {
            live.deal(std::mem::take(&mut pending)).await;
        }
        // A new round's bets wait for the last round to be settled and credited.
        if let (Step::Rebet | Step::Input(Input::Bets(_) | Input::PlayerBets(_)), Some(r)) =
            (step, round)
        {
            live.settled(r, &anyone).await;
        }
        match step {
            Step::Input(Input::Card(_) | Input::CutCard) => pending += 1,
            Step::Funds(accounts) => {
                if round.is_none() {
                    continue; // the opening balances, given at sign-up
                }
                for (a, b) in accounts {
                    live.set_balance(&player_of(a), *b).await;
                }
            }
            Step::Input(Input::Bets(bets)) => round = live.bets(bets).await.or(round),
            Step::Input(Input::PlayerBets(bets)) => round = live.boxes(bets).await.or(round),
            Step::Rebet => round = live.rebet(&seated).await.or(round),
            Step::Input(Input::Decision { seat, action }) => {
                let player = seated_at(&s, *seat);
                live.decide(&player, *seat, false, *action).await;
            }
            Step::Input(Input::PlayerDecision {
                player,
                seat,
                action,
            }) => {
                let behind = !live.common_draw;
                live.decide(player, *seat, behind, *action).await;
            }
            other => panic!("{stem}: no live counterpart for {other:?} in this test"),
        }
    }
    live.deal(pending).await;
    live.settled(round.expect("a round"), &anyone).await;
    let (rounds, balances) = live.outcome().await;
    assert!(live.p.terminate(), "clean stop");
    assert_eq!(
        rounds, want_rounds,
        "{stem}: the settlements, live and replayed"
    );
    for (player, want) in &want_balances {
        assert_eq!(
            balances.get(player),
            Some(want),
            "{stem}: {player}'s balance, live and replayed"
        );
    }
}

/// Every (player, seat) the scenario's bets seat, in order of first appearance.
fn seated(s: &replay::Scenario) -> Vec<(String, SeatId)> {
    let mut out: Vec<(String, SeatId)> = Vec::new();
    for step in &s.steps {
        if let Step::Input(Input::Bets(bets)) = step {
            for b in bets {
                let at = (player_of(&common_account(b)), b.seat);
                if !out.contains(&at) {
                    out.push(at);
                }
            }
        }
    }
    out
}

/// The live player at `seat` (its account in the scenario's bets).
fn seated_at(s: &replay::Scenario, seat: SeatId) -> String {
    s.steps
        .iter()
        .rev()
        .find_map(|step| match step {
            Step::Input(Input::Bets(bets)) => bets.iter().find(|b| b.seat == seat),
            _ => None,
        })
        .map(|b| player_of(&common_account(b)))
        .expect("the seat has a bet")
}

macro_rules! parity {
    ($($name:ident => $stem:literal),* $(,)?) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            timeout(Duration::from_secs(180), live_and_replay_agree($stem))
                .await
                .expect("bounded");
        }
    )*};
}

parity! {
    deluxe_short_double_hit => "deluxe-funds-short-double-hit",
    deluxe_split_then_short_double => "deluxe-funds-split-then-short-double",
    deluxe_short_split => "deluxe-funds-short-split",
    deluxe_short_split_aces => "deluxe-funds-short-split-aces-eleven",
    deluxe_short_split_aces_one => "deluxe-funds-short-split-aces-one",
    deluxe_second_seat_split_balance => "deluxe-funds-second-seat-split-balance",
    ultimate_rebet_proportional => "ultimate-funds-rebet-proportional",
    ultimate_rebet_below_minimum_stops => "ultimate-funds-rebet-below-minimum-stops",
    deluxe_follow_double_short => "deluxe-funds-follow-double-short",
    deluxe_follow_double_short_at_the_double => "deluxe-funds-follow-double-short-at-the-double",
    deluxe_follow_split_short => "deluxe-funds-follow-split-short",
    deluxe_follow_split_short_at_the_split => "deluxe-funds-follow-split-short-at-the-split",
    deluxe_follow_split_short_then_double => "deluxe-funds-follow-split-short-then-double",
    deluxe_second_seat_mirrored => "deluxe-funds-second-seat-mirrored",
    deluxe_second_seat_split_evenly => "deluxe-funds-second-seat-split-evenly",
    deluxe_insurance_short => "deluxe-funds-insurance-short",
    multihand_specials_short => "multihand-funds-specials-short",
    multihand_double_insurance_short => "multihand-funds-double-insurance-short",
    ultimate_rebet_maximum_available => "ultimate-funds-rebet-maximum-available",
    ultimate_rebet_below_minimum => "ultimate-funds-rebet-below-minimum",
}
