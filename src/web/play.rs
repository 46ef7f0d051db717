//! `/play` and the players' API (issue #15). Separate from the staff routes on purpose:
//! a player authenticates with the launch token of their session (`Authorization: Bearer
//! TOKEN`, see `play::sessions`), never a staff cookie, and reaches only these routes;
//! the operator's platform opens sessions with its own credential. The routes are in the
//! router's one list (`super::routes`, access `Player` / `Platform`) and in the OpenAPI
//! document.
//!
//! | route | what |
//! |---|---|
//! | `GET /play` | the player's page (phone upright first) |
//! | `GET /api/play/state` | the player, balance, seat, the game (side bets, play behind, boxes), the betting countdown, the decisions asked of them and their timers, the public view |
//! | `POST /api/play/join` | `{"seat": N}`: take a free seat; `{}`: be at the table without one (bets behind seats; a common draw's boxes) |
//! | `POST /api/play/leave` | give the seat (or place) up |
//! | `POST /api/play/bet` | `{"main": AMOUNT, "side": {"NAME": AMOUNT}}` on the player's seat in the betting window: debited first, then placed (0 withdraws: rolled back) |
//! | `POST /api/play/behind` | `{"seat": N, "main", "side", "follow_double", "follow_split"}`: a bet behind a seated player (games with play behind) |
//! | `POST /api/play/boxes` | `{"boxes": [{"box": N, "main", "side"}]}`: a common draw's boxes (`[]` withdraws) |
//! | `POST /api/play/decision` | `{"action": "hit|stand|double|split|surrender|insurance|no_insurance|even_money", "seat": N, "box": N}` while the table waits on the player's hand (`seat`: the seat played behind, for its insurance; `box`: a common draw's box) |
//! | `POST /api/play/sessions` | the platform (`Authorization: Bearer` its credential): `{"player": ID, "name"}` → `{"token", "launch": "/play#t=TOKEN"}` |
//!
//! Every stake goes through the wallet before the table takes it, under a transaction id
//! of its own line (`wallet::Owner`): the seat's (`main`, `side-NAME`, `double`, ...),
//! a player's behind it (`behind-main@P`, `behind-double@P` when the seated player
//! doubles and P follows), a player's box in a common draw (`main@P`).
//!
//! Errors are `{"error": {"code", "message"}}`; `betting_closed` and `decision_closed`
//! carry `closed: {round, seq, at_ms}`, the log position and table time of the close.

use super::AppState;
use crate::engine::variant::DealMode;
use crate::engine::{Action, BehindBet, Expectation, Input, PlayerBets, SeatBets, SeatId};
use crate::play::Play;
use crate::store::Source;
use crate::table::remote::{Closed, Window};
use crate::table::{BetError, Snapshot, SubmitError};
use crate::wallet::journal::Entry;
use crate::wallet::{side_line, Owner, WalletError};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;
use utoipa::ToSchema;

/// A refusal of the players' API.
#[derive(Debug)]
pub struct PlayError {
    status: StatusCode,
    code: &'static str,
    message: String,
    closed: Option<Closed>,
}

impl PlayError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> PlayError {
        PlayError {
            status,
            code,
            message: message.into(),
            closed: None,
        }
    }

    fn conflict(code: &'static str, message: impl Into<String>) -> PlayError {
        PlayError::new(StatusCode::CONFLICT, code, message)
    }

    fn unprocessable(code: &'static str, message: impl Into<String>) -> PlayError {
        PlayError::new(StatusCode::UNPROCESSABLE_ENTITY, code, message)
    }

    fn closed(code: &'static str, message: &str, closed: Option<Closed>) -> PlayError {
        PlayError {
            closed,
            ..PlayError::conflict(code, message)
        }
    }
}

impl From<WalletError> for PlayError {
    fn from(e: WalletError) -> PlayError {
        let status = match e {
            WalletError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::CONFLICT,
        };
        PlayError::new(status, e.code(), e.to_string())
    }
}

impl From<SubmitError> for PlayError {
    fn from(e: SubmitError) -> PlayError {
        PlayError::conflict(e.code(), e.to_string())
    }
}

impl IntoResponse for PlayError {
    fn into_response(self) -> Response {
        let mut error = json!({"code": self.code, "message": self.message});
        if let Some(c) = self.closed {
            error["closed"] = json!(c);
        }
        (self.status, Json(json!({ "error": error }))).into_response()
    }
}

/// `GET /play`: the player's page.
#[utoipa::path(get, path = "/play", tag = "players",
    responses((status = 200, description = "The player's page (the launch link's fragment carries the token)", content_type = "text/html", body = String)))]
pub async fn page() -> Response {
    super::asset("play.html").await
}

/// The bearer token of a request (empty without one).
fn bearer(headers: &HeaderMap) -> &str {
    headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("")
}

fn no_remote_play() -> PlayError {
    PlayError::new(
        StatusCode::NOT_FOUND,
        "no_remote_play",
        "remote play is off at this table ([play] enabled = false)",
    )
}

/// A session to open (`POST /api/play/sessions`).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionBody {
    /// The platform's id of the player: 1-64 letters, digits, `-` or `_`.
    player: String,
    /// The name shown (default: the id); used when the player is new.
    #[serde(default)]
    name: Option<String>,
}

/// `POST /api/play/sessions` (the platform's credential, `croupier player platform-key`):
/// `{"player": ID, "name": "..."}` opens a session for the platform's player (added on
/// first sight, balance 0 in the embedded wallet) and answers the launch token and path.
#[utoipa::path(post, path = "/api/play/sessions", tag = "players", request_body = SessionBody,
    responses(
        (status = 200, description = "`{\"player\", \"token\", \"launch\": \"/play#t=TOKEN\"}`", body = Object),
        (status = 400, description = "Not a session request (`malformed`)", body = super::api::ErrorBody),
        (status = 422, description = "Not a valid player id (`invalid_player`)", body = super::api::ErrorBody),
        (status = 503, description = "The database did not answer", body = super::api::ErrorBody)))]
pub async fn open_session(
    State(app): State<AppState>,
    headers: HeaderMap,
    body: String,
) -> Result<Response, PlayError> {
    let Some(play) = app.play.clone() else {
        return Err(no_remote_play());
    };
    if !crate::play::sessions::is_platform(&play.pool, bearer(&headers)).await {
        return Err(PlayError::new(
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            "the platform's credential is needed",
        ));
    }
    let b: SessionBody = parse(&body, r#"{"player": ID, "name": "..."}"#)?;
    if play.ledger.player(&b.player).await?.is_none() {
        let name = b.name.clone().unwrap_or_else(|| b.player.clone());
        play.ledger
            .add_player(&b.player, &name, 0)
            .await
            .map_err(|e| PlayError::unprocessable("invalid_player", e))?;
    }
    let token = crate::play::sessions::open(&play.pool, &b.player, &play.table, play.launch_hours)
        .await
        .map_err(|e| PlayError::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", e))?;
    Ok(Json(json!({
        "player": b.player,
        "token": token,
        "launch": crate::play::sessions::link("", &token),
    }))
    .into_response())
}

/// The player behind the request's bearer token.
async fn player(app: &AppState, headers: &HeaderMap) -> Result<(Arc<Play>, String), PlayError> {
    let Some(play) = app.play.clone() else {
        return Err(no_remote_play());
    };
    match crate::play::sessions::player(&play.pool, bearer(headers), &play.table).await {
        Some(p) => Ok((play, p)),
        None => Err(PlayError::new(
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            "open the launch link again (no valid player session)",
        )),
    }
}

fn parse<T: serde::de::DeserializeOwned>(body: &str, what: &str) -> Result<T, PlayError> {
    serde_json::from_str(body).map_err(|e| {
        PlayError::new(
            StatusCode::BAD_REQUEST,
            "malformed",
            format!("expected {what}: {e}"),
        )
    })
}

fn remaining_ms(deadline: Instant) -> u64 {
    u64::try_from(
        deadline
            .saturating_duration_since(Instant::now())
            .as_millis(),
    )
    .unwrap_or(u64::MAX)
}

fn common_draw(app: &AppState) -> bool {
    app.variant.deal.mode == DealMode::CommonDraw
}

fn seat_of(play: &Play, player: &str) -> Result<SeatId, PlayError> {
    play.remote
        .seat_of(player)
        .ok_or_else(|| PlayError::conflict("no_seat", "join a seat first"))
}

/// Something the table asks of the player now.
struct Turn {
    /// `decision` or `insurance`.
    kind: &'static str,
    /// The seat (box) it is on.
    seat: SeatId,
    /// The hand.
    hand: u8,
    /// Whether the player answers as a player behind the seat.
    behind: bool,
    /// What may be answered.
    allowed: Vec<Action>,
    /// Its timer (`None`: not running yet — players behind a seat answer insurance on
    /// one timer once every seat has).
    window: Option<Window>,
}

impl Turn {
    fn to_json(&self) -> Value {
        json!({
            "kind": self.kind,
            "seat": self.seat,
            "hand": self.hand,
            "behind": self.behind,
            "allowed": self.allowed,
            "deadline_ms": self.window.map(|w| w.deadline_ms),
            "remaining_ms": self.window.map(|w| remaining_ms(w.deadline)),
        })
    }
}

/// Everything the table asks of `me` now, opening the timers it runs on.
fn turns(app: &AppState, play: &Play, me: &str, snap: &Snapshot) -> Vec<Turn> {
    let mut out = Vec::new();
    let round = snap.round.number;
    match &snap.expectation {
        Expectation::PlayersInsurance { deadline_ms, .. }
        | Expectation::PlayerDecisions { deadline_ms, .. } => {
            let window = play.remote.step_window(round, *deadline_ms);
            for d in snap.common.decisions.iter().filter(|d| d.player == me) {
                out.push(Turn {
                    kind: "decision",
                    seat: d.seat,
                    hand: d.hand,
                    behind: false,
                    allowed: d.allowed.clone(),
                    window: Some(window),
                });
            }
            for (_, b) in snap.common.insurance.iter().filter(|(p, _)| p == me) {
                let mut allowed = vec![Action::Insurance, Action::NoInsurance];
                if app.variant.insurance.even_money {
                    allowed.push(Action::EvenMoney);
                }
                out.push(Turn {
                    kind: "insurance",
                    seat: *b,
                    hand: 0,
                    behind: false,
                    allowed,
                    window: Some(window),
                });
            }
        }
        Expectation::Decision {
            seat,
            hand,
            allowed,
        } if play.remote.seat_of(me) == Some(*seat) => {
            let mut allowed = allowed.clone();
            allowed.retain(|a| *a != Action::AutoPlay);
            allowed.insert(0, Action::Hit);
            out.push(Turn {
                kind: "decision",
                seat: *seat,
                hand: *hand,
                behind: false,
                allowed,
                window: Some(play.remote.decision_window(snap, *seat)),
            });
        }
        Expectation::InsuranceAnswers { behind, .. } => {
            let mine = play.remote.seat_of(me);
            if let Some(seat) = mine.filter(|s| snap.insurance_seats.first() == Some(s)) {
                out.push(Turn {
                    kind: "insurance",
                    seat,
                    hand: 0,
                    behind: false,
                    allowed: snap
                        .insurance_answers
                        .get(&seat)
                        .cloned()
                        .unwrap_or_default(),
                    window: Some(play.remote.decision_window(snap, seat)),
                });
            }
            // The demo dealer times players behind seats once every seat has answered.
            let window = snap
                .insurance_seats
                .is_empty()
                .then(|| play.remote.step_window(round, 0));
            for (_, seat) in behind.iter().filter(|(p, _)| p == me) {
                out.push(Turn {
                    kind: "insurance",
                    seat: *seat,
                    hand: 0,
                    behind: true,
                    allowed: vec![Action::Insurance, Action::NoInsurance],
                    window,
                });
            }
        }
        _ => {}
    }
    out
}

/// `GET /api/play/state`.
#[utoipa::path(get, path = "/api/play/state", tag = "players",
    responses(
        (status = 200, description = "The player, balance, seat, the game, the betting window, the decisions asked of the player, the public view", body = Object),
        (status = 409, description = "The wallet does not know the player (`unknown_player`)", body = super::api::ErrorBody)))]
pub async fn state(State(app): State<AppState>, headers: HeaderMap) -> Result<Response, PlayError> {
    let (play, me) = player(&app, &headers).await?;
    let who = play.ledger.player(&me).await?;
    let balance = play.wallet.balance(&me).await?;
    let snap = app.table.snapshot();
    let seat = play.remote.seat_of(&me);
    let seats = play.remote.seats();
    let common = common_draw(&app);
    let free: Vec<SeatId> = if common {
        Vec::new()
    } else {
        (play.demo_seats + 1..=app.variant.deal.seats)
            .filter(|s| !seats.contains_key(s))
            .collect()
    };
    let window_bets = &snap.betting.bets;
    let behind_mine: Vec<Value> = window_bets
        .iter()
        .flat_map(|b| {
            b.behind
                .iter()
                .filter(|bb| bb.player == me)
                .map(move |bb| json!({"seat": b.seat, "bet": bb}))
        })
        .collect();
    let behind_seats: Vec<Value> = window_bets
        .iter()
        .filter(|b| b.main > 0 && Some(b.seat) != seat)
        .map(|b| json!({"seat": b.seat, "main": b.main, "remote": seats.contains_key(&b.seat)}))
        .collect();
    let betting = match play.remote.betting().filter(|_| snap.betting.open) {
        Some(w) => json!({
            "open": true,
            "round": w.round,
            "deadline_ms": w.deadline_ms,
            "remaining_ms": remaining_ms(w.deadline),
            "my_bet": seat.and_then(|s| window_bets.iter().find(|b| b.seat == s)).map(|b| b.main),
            "my_side": seat.and_then(|s| window_bets.iter().find(|b| b.seat == s)).map(|b| b.side.clone()),
            "my_behind": behind_mine,
            "my_boxes": snap.betting.players.iter().find(|p| p.player == me).map(|p| p.boxes.clone()),
            "behind_seats": behind_seats,
        }),
        None => json!({"open": false, "closed": play.remote.betting_closed()}),
    };
    let turns = turns(&app, &play, &me, &snap);
    let side_bets: Vec<Value> = app
        .variant
        .side_bets
        .iter()
        .map(|s| json!({"name": s.name, "min": s.limits.min, "max": s.limits.max}))
        .collect();
    let round_behind: Vec<Value> = snap
        .round
        .bets
        .iter()
        .flat_map(|b| {
            b.behind
                .iter()
                .filter(|bb| bb.player == me)
                .map(move |bb| json!({"seat": b.seat, "bet": bb}))
        })
        .collect();
    let hands: Vec<&crate::engine::PlayerHand> = snap
        .common
        .hands
        .iter()
        .filter(|h| h.player == me)
        .collect();
    Ok(Json(json!({
        "player": me,
        "name": who.map(|p| p.name).unwrap_or_default(),
        "balance": balance,
        "seat": seat,
        "unseated": play.remote.is_unseated(&me),
        "free_seats": free,
        "game": {
            "common_draw": common,
            "play_behind": app.variant.betting.play_behind && !common,
            "boxes": if common { app.variant.deal.seats } else { 0 },
            "side_bets": side_bets,
        },
        "betting": betting,
        "turn": turns.first().map(Turn::to_json),
        "turns": turns.iter().map(Turn::to_json).collect::<Vec<_>>(),
        "behind": round_behind,
        "hands": hands,
        "decision_closed": play.remote.decision_closed(),
        "limits": app.limits,
        "view": super::view::public_view(&snap),
    }))
    .into_response())
}

/// Where to sit (`POST /api/play/join`).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct JoinBody {
    /// A free seat; absent: at the table without a seat (bets behind seats, a common
    /// draw's boxes).
    #[serde(default)]
    seat: Option<SeatId>,
}

/// `POST /api/play/join`.
#[utoipa::path(post, path = "/api/play/join", tag = "players", request_body = JoinBody,
    responses(
        (status = 200, description = "`{\"ok\": true, \"seat\": N|null}`", body = Object),
        (status = 400, description = "Not a join request (`malformed`)", body = super::api::ErrorBody),
        (status = 409, description = "`seat_unavailable`, `seat_taken`, `already_seated`, `no_seats` (a common draw)", body = super::api::ErrorBody)))]
pub async fn join(
    State(app): State<AppState>,
    headers: HeaderMap,
    body: String,
) -> Result<Response, PlayError> {
    let (play, me) = player(&app, &headers).await?;
    let b: JoinBody = parse(&body, r#"{"seat": N} or {}"#)?;
    let Some(seat) = b.seat else {
        play.remote.join_unseated(&me);
        return Ok(Json(json!({"ok": true, "seat": play.remote.seat_of(&me)})).into_response());
    };
    if common_draw(&app) {
        return Err(PlayError::conflict(
            "no_seats",
            "a common draw has no seats: join with {} and bet on boxes",
        ));
    }
    if seat <= play.demo_seats || seat > app.variant.deal.seats {
        return Err(PlayError::conflict(
            "seat_unavailable",
            format!(
                "seat {} is not free for remote players (seats {} to {})",
                seat,
                play.demo_seats + 1,
                app.variant.deal.seats
            ),
        ));
    }
    if let Some(old) = play.remote.seat_of(&me) {
        if old != seat {
            return Err(PlayError::conflict(
                "already_seated",
                format!("you hold seat {old}: leave it first"),
            ));
        }
    }
    play.remote
        .join(seat, &me)
        .map_err(|_| PlayError::conflict("seat_taken", format!("seat {seat} is taken")))?;
    Ok(Json(json!({"ok": true, "seat": seat})).into_response())
}

/// Whether `me` has a stake in the open window or the round in play.
fn has_stake(snap: &Snapshot, me: &str, seat: Option<SeatId>) -> bool {
    let in_play = !snap.round.settled && snap.round.number > 0;
    let at_seat = |s: SeatId| {
        snap.betting.bets.iter().any(|b| b.seat == s)
            || (in_play && snap.round.hands.iter().any(|h| h.seat == s))
    };
    let behind = |bets: &[SeatBets]| {
        bets.iter()
            .any(|b| b.behind.iter().any(|bb| bb.player == me))
    };
    seat.is_some_and(at_seat)
        || behind(&snap.betting.bets)
        || (in_play && behind(&snap.round.bets))
        || snap.betting.players.iter().any(|p| p.player == me)
        || (in_play && snap.common.hands.iter().any(|h| h.player == me))
}

/// `POST /api/play/leave` (refused while the player has a stake in play).
#[utoipa::path(post, path = "/api/play/leave", tag = "players",
    responses(
        (status = 200, description = "`{\"ok\": true}`", body = Object),
        (status = 409, description = "`no_seat`, or a stake in play (`seat_in_play`)", body = super::api::ErrorBody)))]
pub async fn leave(State(app): State<AppState>, headers: HeaderMap) -> Result<Response, PlayError> {
    let (play, me) = player(&app, &headers).await?;
    let seat = play.remote.seat_of(&me);
    if seat.is_none() && !play.remote.is_unseated(&me) {
        return Err(PlayError::conflict("no_seat", "you are not at the table"));
    }
    if has_stake(&app.table.snapshot(), &me, seat) {
        return Err(PlayError::conflict(
            "seat_in_play",
            "you have a bet in play: leave after the round",
        ));
    }
    play.remote.leave(&me);
    Ok(Json(json!({"ok": true})).into_response())
}

/// Side bets by the variant's names (or aliases), checked: canonical names, amounts > 0.
fn side_bets(
    app: &AppState,
    side: &BTreeMap<String, i64>,
) -> Result<Vec<(String, i64)>, PlayError> {
    let mut out: Vec<(String, i64)> = Vec::new();
    for (name, amount) in side {
        let Some(i) = app.variant.side_bet_index(name) else {
            let names: Vec<&str> = app
                .variant
                .side_bets
                .iter()
                .map(|s| s.name.as_str())
                .collect();
            return Err(PlayError::unprocessable(
                "unknown_side_bet",
                format!(
                    "this game has no side bet {name:?} (it has: {})",
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                ),
            ));
        };
        if *amount < 0 {
            return Err(PlayError::unprocessable(
                "invalid_bet",
                "amounts cannot be negative",
            ));
        }
        let canonical = &app.variant.side_bets[i].name;
        if out.iter().any(|(n, _)| n == canonical) {
            return Err(PlayError::unprocessable(
                "invalid_bet",
                format!("side bet {canonical:?} is named twice"),
            ));
        }
        if *amount > 0 {
            out.push((canonical.clone(), *amount));
        }
    }
    Ok(out)
}

/// The lines (seat, base line, amount) a bet of `owner` at `seat` debits.
fn lines_of(
    seat: SeatId,
    owner: &Owner,
    main: i64,
    side: &[(String, i64)],
) -> Vec<(SeatId, String, i64)> {
    let mut out = Vec::new();
    if main > 0 {
        out.push((seat, owner.line("main"), main));
    }
    for (name, amount) in side {
        out.push((seat, owner.line(&side_line(name)), *amount));
    }
    out
}

/// What a bet puts on the table.
enum Target {
    Seat(SeatBets),
    Behind(SeatId, BehindBet),
    Boxes(PlayerBets),
}

impl Target {
    /// Places it (`on`) or takes it off.
    async fn put(&self, app: &AppState, on: bool) -> Result<Option<u64>, BetError> {
        match self {
            Target::Seat(b) if on => app.table.place_bet(b.clone()).await,
            Target::Seat(b) => {
                let off = SeatBets {
                    seat: b.seat,
                    player: b.player.clone(),
                    ..SeatBets::default()
                };
                app.table.place_bet(off).await
            }
            Target::Behind(seat, b) if on => app.table.place_behind(*seat, b.clone()).await,
            Target::Behind(seat, b) => {
                let off = BehindBet {
                    player: b.player.clone(),
                    ..BehindBet::default()
                };
                app.table.place_behind(*seat, off).await
            }
            Target::Boxes(p) if on => app.table.place_player_bets(p.clone()).await,
            Target::Boxes(p) => {
                let off = PlayerBets {
                    player: p.player.clone(),
                    boxes: Vec::new(),
                };
                app.table.place_player_bets(off).await
            }
        }
    }
}

fn betting_closed(play: &Play) -> PlayError {
    PlayError::closed(
        "betting_closed",
        "the betting window is closed",
        play.remote.betting_closed(),
    )
}

fn refusal(app: &AppState, play: &Play, e: BetError) -> PlayError {
    match e {
        BetError::BettingClosed | BetError::NotTakingBets(_) => betting_closed(play),
        BetError::InvalidBet(m) => PlayError::unprocessable(
            "invalid_bet",
            app.table.snapshot().currency.write_amounts(&m),
        ),
        other => PlayError::conflict(other.code(), other.to_string()),
    }
}

/// The open betting window (refused as `betting_closed` otherwise).
fn open_window(app: &AppState, play: &Play) -> Result<Window, PlayError> {
    match play.remote.betting() {
        Some(w) if app.table.snapshot().betting.open && Instant::now() < w.deadline => Ok(w),
        _ => Err(betting_closed(play)),
    }
}

/// Replaces `before` (the stakes of the bet being replaced) by `lines`: the old bet
/// leaves the table before its stakes go back (were the window to close in between, the
/// round would hold a stake the wallet no longer has); each new line is debited, then
/// the bet placed; a refusal anywhere rolls back what was debited and leaves nothing of
/// the bet on the table. No lines: a withdrawal.
async fn replace_stakes(
    app: &AppState,
    play: &Play,
    me: &str,
    round: u64,
    before: Vec<Entry>,
    lines: Vec<(SeatId, String, i64)>,
    target: &Target,
) -> Result<Vec<Entry>, PlayError> {
    if lines.is_empty() || !before.is_empty() {
        target
            .put(app, false)
            .await
            .map_err(|e| refusal(app, play, e))?;
        for e in &before {
            play.journal.roll_back(play.wallet.as_ref(), e).await?;
        }
    }
    if lines.is_empty() {
        return Ok(Vec::new());
    }
    let mut debited: Vec<Entry> = Vec::new();
    for (seat, line, amount) in lines {
        let entry = Entry {
            tx: play.journal.next_debit(round, seat, &line).await?,
            player: me.to_string(),
            amount,
        };
        if let Err(e) = play.journal.debit(play.wallet.as_ref(), &entry).await {
            // Nothing of this bet is on the table any more.
            let _ = target.put(app, false).await;
            for d in &debited {
                play.journal.roll_back(play.wallet.as_ref(), d).await?;
            }
            return Err(e.into());
        }
        debited.push(entry);
    }
    match target.put(app, true).await {
        Ok(Some(r)) if r == round => Ok(debited),
        other => {
            for d in &debited {
                play.journal.roll_back(play.wallet.as_ref(), d).await?;
            }
            let _ = target.put(app, false).await;
            Err(match other {
                Err(e) => refusal(app, play, e),
                _ => betting_closed(play),
            })
        }
    }
}

/// The answer to a bet: the round, the debits' ids, the balance.
async fn placed(
    play: &Play,
    me: &str,
    round: Option<u64>,
    debited: &[Entry],
) -> Result<Response, PlayError> {
    let balance = play.wallet.balance(me).await?;
    let txs: Vec<String> = debited.iter().map(|e| e.tx.to_string()).collect();
    Ok(Json(json!({
        "ok": true,
        "round": round.filter(|_| !debited.is_empty()),
        "tx": txs.first(),
        "txs": txs,
        "balance": balance,
    }))
    .into_response())
}

/// A bet on the player's seat (`POST /api/play/bet`).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BetBody {
    /// The main bet, minor units (0 withdraws the seat's bets).
    main: i64,
    /// Side bets by the game's names (`GET /api/play/state` `game.side_bets`), minor units.
    #[serde(default)]
    side: BTreeMap<String, i64>,
}

/// `POST /api/play/bet`: the stakes are debited, then placed; if the table refuses them,
/// they are rolled back. A new bet replaces the last (whose debits are rolled back); 0
/// withdraws. Bets behind the seat stay on it.
#[utoipa::path(post, path = "/api/play/bet", tag = "players", request_body = BetBody,
    responses(
        (status = 200, description = "`{\"ok\", \"round\", \"tx\", \"txs\", \"balance\"}`", body = Object),
        (status = 400, description = "Not a bet (`malformed`)", body = super::api::ErrorBody),
        (status = 409, description = "`betting_closed` (with `closed`), `no_seat`, `insufficient_funds`, `common_draw`", body = super::api::ErrorBody),
        (status = 422, description = "`invalid_bet`, `unknown_side_bet`", body = super::api::ErrorBody)))]
pub async fn bet(
    State(app): State<AppState>,
    headers: HeaderMap,
    body: String,
) -> Result<Response, PlayError> {
    let (play, me) = player(&app, &headers).await?;
    let b: BetBody = parse(&body, r#"{"main": AMOUNT, "side": {"NAME": AMOUNT}}"#)?;
    if common_draw(&app) {
        return Err(PlayError::conflict(
            "common_draw",
            "this game is a common draw: bet on boxes (POST /api/play/boxes)",
        ));
    }
    let seat = seat_of(&play, &me)?;
    if b.main < 0 {
        return Err(PlayError::unprocessable(
            "invalid_bet",
            "amounts cannot be negative",
        ));
    }
    let side = side_bets(&app, &b.side)?;
    let _money = play.money.lock().await;
    let window = open_window(&app, &play)?;
    let before = play
        .journal
        .open_stakes_of(window.round, seat, &Owner::Seat)
        .await?;
    // Players behind the seat: taken off with the seated bet, put back after it.
    let behind: Vec<BehindBet> = app
        .table
        .snapshot()
        .betting
        .bets
        .iter()
        .find(|x| x.seat == seat)
        .map(|x| x.behind.clone())
        .unwrap_or_default();
    let target = Target::Seat(SeatBets {
        seat,
        main: b.main,
        side: side.clone(),
        player: Some(me.clone()),
        ..SeatBets::default()
    });
    let lines = if b.main == 0 && side.is_empty() {
        Vec::new()
    } else {
        lines_of(seat, &Owner::Seat, b.main, &side)
    };
    play.remote.set_bet(seat, false);
    let debited = replace_stakes(&app, &play, &me, window.round, before, lines, &target).await?;
    if !debited.is_empty() {
        play.remote.set_bet(seat, true);
        for bb in behind {
            // A bet behind that no longer fits stays off; its stake comes back when the
            // round opens without it (`play::run_reconciler`).
            let _ = app.table.place_behind(seat, bb).await;
        }
    }
    placed(&play, &me, Some(window.round), &debited).await
}

/// A bet behind a seated player (`POST /api/play/behind`).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BehindBody {
    /// The seat played behind (it must have a bet in the window, and not be the player's).
    seat: SeatId,
    /// The main bet, minor units (0 withdraws the bet behind).
    main: i64,
    /// Side bets on the seat's cards by the game's names (Deluxe: `pair`), minor units.
    #[serde(default)]
    side: BTreeMap<String, i64>,
    /// When the seated player doubles, double too (its stake is debited then).
    #[serde(default)]
    follow_double: bool,
    /// When the seated player splits, bet on the second hand too (debited then).
    #[serde(default)]
    follow_split: bool,
}

/// `POST /api/play/behind`: as `bet`, behind a seated player.
#[utoipa::path(post, path = "/api/play/behind", tag = "players", request_body = BehindBody,
    responses(
        (status = 200, description = "`{\"ok\", \"round\", \"tx\", \"txs\", \"balance\"}`", body = Object),
        (status = 400, description = "Not a bet (`malformed`)", body = super::api::ErrorBody),
        (status = 409, description = "`betting_closed` (with `closed`), `seat_empty` (no bet to play behind), `own_seat`, `no_play_behind`, `follow_unavailable`, `insufficient_funds`", body = super::api::ErrorBody),
        (status = 422, description = "`invalid_bet`, `unknown_side_bet`", body = super::api::ErrorBody)))]
pub async fn behind(
    State(app): State<AppState>,
    headers: HeaderMap,
    body: String,
) -> Result<Response, PlayError> {
    let (play, me) = player(&app, &headers).await?;
    let b: BehindBody = parse(
        &body,
        r#"{"seat": N, "main": AMOUNT, "side": {"NAME": AMOUNT}, "follow_double": BOOL, "follow_split": BOOL}"#,
    )?;
    if common_draw(&app) || !app.variant.betting.play_behind {
        return Err(PlayError::conflict(
            "no_play_behind",
            "this game has no bets behind seats",
        ));
    }
    if b.main < 0 {
        return Err(PlayError::unprocessable(
            "invalid_bet",
            "amounts cannot be negative",
        ));
    }
    let side = side_bets(&app, &b.side)?;
    if play.remote.seat_of(&me) == Some(b.seat) {
        return Err(PlayError::conflict(
            "own_seat",
            "a seated player cannot play behind their own seat",
        ));
    }
    let _money = play.money.lock().await;
    let window = open_window(&app, &play)?;
    let withdraw = b.main == 0 && side.is_empty();
    let seated = app
        .table
        .snapshot()
        .betting
        .bets
        .iter()
        .any(|x| x.seat == b.seat && x.main > 0);
    if !seated && !withdraw {
        return Err(PlayError::conflict(
            "seat_empty",
            format!("seat {} has no bet in this window to play behind", b.seat),
        ));
    }
    // A follow is debited when the seated player doubles or splits, which the service
    // sees only for remote players' seats.
    if (b.follow_double || b.follow_split) && !play.remote.is_remote(b.seat) {
        return Err(PlayError::conflict(
            "follow_unavailable",
            format!(
                "seat {} is not a remote player's: a bet behind it cannot follow doubles or splits",
                b.seat
            ),
        ));
    }
    if play.remote.seat_of(&me).is_none() {
        play.remote.join_unseated(&me);
    }
    let owner = Owner::Behind(me.clone());
    let before = play
        .journal
        .open_stakes_of(window.round, b.seat, &owner)
        .await?;
    let target = Target::Behind(
        b.seat,
        BehindBet {
            player: me.clone(),
            main: b.main,
            side: side.clone(),
            follow_double: b.follow_double,
            follow_split: b.follow_split,
        },
    );
    let lines = if withdraw {
        Vec::new()
    } else {
        lines_of(b.seat, &owner, b.main, &side)
    };
    let debited = replace_stakes(&app, &play, &me, window.round, before, lines, &target).await?;
    if play.remote.seat_of(&me).is_none() {
        play.remote.set_player_bet(&me, !debited.is_empty());
    }
    placed(&play, &me, Some(window.round), &debited).await
}

/// One box of a common draw (`POST /api/play/boxes`).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BoxBet {
    /// The box, from 1 (`GET /api/play/state` `game.boxes`).
    #[serde(rename = "box")]
    number: SeatId,
    /// The main bet, minor units.
    main: i64,
    /// The game's special bets by name, minor units.
    #[serde(default)]
    side: BTreeMap<String, i64>,
}

/// A common draw's bets (`POST /api/play/boxes`).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BoxesBody {
    /// The boxes bet on (each at most once); `[]` withdraws them all.
    boxes: Vec<BoxBet>,
}

/// `POST /api/play/boxes`: a common draw's bets on one or more boxes, as `bet`: every
/// box's stakes are debited, then the whole set placed; it replaces the last.
#[utoipa::path(post, path = "/api/play/boxes", tag = "players", request_body = BoxesBody,
    responses(
        (status = 200, description = "`{\"ok\", \"round\", \"tx\", \"txs\", \"balance\"}`", body = Object),
        (status = 400, description = "Not a bet (`malformed`)", body = super::api::ErrorBody),
        (status = 409, description = "`betting_closed` (with `closed`), `not_common_draw`, `insufficient_funds`", body = super::api::ErrorBody),
        (status = 422, description = "`box_out_of_range`, `invalid_bet`, `unknown_side_bet`", body = super::api::ErrorBody)))]
pub async fn boxes(
    State(app): State<AppState>,
    headers: HeaderMap,
    body: String,
) -> Result<Response, PlayError> {
    let (play, me) = player(&app, &headers).await?;
    let b: BoxesBody = parse(
        &body,
        r#"{"boxes": [{"box": N, "main": AMOUNT, "side": {"NAME": AMOUNT}}]}"#,
    )?;
    if !common_draw(&app) {
        return Err(PlayError::conflict(
            "not_common_draw",
            "this game is played seat by seat: join a seat and bet on it",
        ));
    }
    let count = app.variant.deal.seats;
    let owner = Owner::Box(me.clone());
    let mut bets: Vec<SeatBets> = Vec::new();
    let mut lines = Vec::new();
    for x in &b.boxes {
        if x.number == 0 || x.number > count {
            return Err(PlayError::unprocessable(
                "box_out_of_range",
                format!("box {}: this game has boxes 1 to {count}", x.number),
            ));
        }
        if bets.iter().any(|y| y.seat == x.number) {
            return Err(PlayError::unprocessable(
                "invalid_bet",
                format!("box {} is named twice", x.number),
            ));
        }
        if x.main < 0 {
            return Err(PlayError::unprocessable(
                "invalid_bet",
                "amounts cannot be negative",
            ));
        }
        let side = side_bets(&app, &x.side)?;
        lines.extend(lines_of(x.number, &owner, x.main, &side));
        bets.push(SeatBets {
            seat: x.number,
            main: x.main,
            side,
            ..SeatBets::default()
        });
    }
    bets.sort_by_key(|x| x.seat);
    let _money = play.money.lock().await;
    let window = open_window(&app, &play)?;
    play.remote.join_unseated(&me);
    let mut before = Vec::new();
    for n in 1..=count {
        before.extend(play.journal.open_stakes_of(window.round, n, &owner).await?);
    }
    let target = Target::Boxes(PlayerBets {
        player: me.clone(),
        boxes: bets,
    });
    let debited = replace_stakes(&app, &play, &me, window.round, before, lines, &target).await?;
    play.remote.set_player_bet(&me, !debited.is_empty());
    placed(&play, &me, Some(window.round), &debited).await
}

/// A decision (`POST /api/play/decision`).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DecisionBody {
    /// `hit`, `stand`, `double`, `split`, `surrender`, `insurance`, `no_insurance`, `even_money`.
    #[schema(schema_with = super::openapi::action_schema)]
    action: Action,
    /// The seat played behind (its insurance question); absent: the player's own seat.
    #[serde(default)]
    seat: Option<SeatId>,
    /// A common draw's box (absent: the first the table asks about).
    #[serde(default, rename = "box")]
    number: Option<SeatId>,
}

/// Debits `entry`; answers whether the wallet was short.
async fn take(play: &Play, entry: &Entry) -> Result<bool, PlayError> {
    match play.journal.debit(play.wallet.as_ref(), entry).await {
        Ok(_) => Ok(false),
        Err(WalletError::InsufficientFunds { .. }) => Ok(true),
        Err(e) => Err(e.into()),
    }
}

async fn roll_back_all(play: &Play, entries: &[Entry]) -> Result<(), PlayError> {
    for e in entries {
        play.journal.roll_back(play.wallet.as_ref(), e).await?;
    }
    Ok(())
}

/// `POST /api/play/decision`.
#[utoipa::path(post, path = "/api/play/decision", tag = "players", request_body = DecisionBody,
    responses(
        (status = 200, description = "`{\"ok\", \"seq\", \"action\", \"balance\"}` (a hit at a seat: `{\"ok\", \"action\": \"hit\"}`, the card follows)", body = Object),
        (status = 400, description = "Not a decision (`malformed`)", body = super::api::ErrorBody),
        (status = 409, description = "`not_your_turn`, `decision_closed` (with `closed`), `action_not_allowed`, `insufficient_funds`, `follower_short_funds`, `no_seat`", body = super::api::ErrorBody)))]
pub async fn decision(
    State(app): State<AppState>,
    headers: HeaderMap,
    body: String,
) -> Result<Response, PlayError> {
    let (play, me) = player(&app, &headers).await?;
    let d: DecisionBody = parse(
        &body,
        r#"{"action": "hit|stand|double|...", "seat": N, "box": N}"#,
    )?;
    let _money = play.money.lock().await;
    let snap = app.table.snapshot();
    let round = snap.round.number;
    let all = turns(&app, &play, &me, &snap);
    let common = common_draw(&app);
    let pick = all.iter().find(|t| {
        if common {
            d.number.map_or(true, |n| n == t.seat)
        } else if let Some(s) = d.seat {
            t.behind && t.seat == s
        } else {
            !t.behind
        }
    });
    let Some(turn) = pick else {
        if !common && d.seat.is_none() && play.remote.seat_of(&me).is_none() {
            return Err(PlayError::conflict("no_seat", "join a seat first"));
        }
        return Err(match play.remote.decision_closed() {
            Some(c) if c.round == round => {
                PlayError::closed("decision_closed", "the decision timer ran out", Some(c))
            }
            _ => PlayError::conflict("not_your_turn", "the table is not waiting on your hand"),
        });
    };
    if let Some(w) = turn.window {
        if Instant::now() >= w.deadline {
            let closed = Closed {
                round: w.round,
                seq: w.at_seq,
                at_ms: w.deadline_ms,
            };
            return Err(PlayError::closed(
                "decision_closed",
                "the decision timer ran out",
                Some(closed),
            ));
        }
    }
    if !turn.allowed.contains(&d.action) {
        return Err(PlayError::conflict(
            "action_not_allowed",
            format!("{:?} is not allowed now ({})", d.action, turn.kind),
        ));
    }
    let seat = turn.seat;
    let owner = if common {
        Owner::Box(me.clone())
    } else if turn.behind {
        Owner::Behind(me.clone())
    } else {
        Owner::Seat
    };
    let main: i64 = if turn.behind {
        snap.round
            .bets
            .iter()
            .find(|b| b.seat == seat)
            .and_then(|b| b.behind.iter().find(|bb| bb.player == me))
            .map_or(0, |bb| bb.main)
    } else {
        play.journal
            .open_stakes(round, seat, &owner.line("main"))
            .await?
            .iter()
            .map(|e| e.amount)
            .sum()
    };
    let cost = match d.action {
        Action::Double | Action::Split => main,
        Action::Insurance => app.variant.insurance.cost.fraction_of(main),
        _ => 0,
    };
    let mut action = d.action;
    let mut taken: Vec<Entry> = Vec::new();
    if cost > 0 {
        let line = match action {
            Action::Double => "double",
            Action::Split => "split",
            _ => "insurance",
        };
        let e = Entry {
            tx: play
                .journal
                .next_debit(round, seat, &owner.line(line))
                .await?,
            player: me.clone(),
            amount: cost,
        };
        if take(&play, &e).await? {
            // The sheet's balance rule (`[funds]`; Deluxe: a double the balance cannot
            // cover is a hit, a split a hit on 11 or less, else a stand). FUNDS (branch
            // `funds`): a common draw's specials "only with enough credits" belong here.
            let total = snap
                .round
                .hands
                .iter()
                .find(|h| h.seat == seat && h.hand == turn.hand)
                .map_or(0, |h| h.total);
            let instead = if common || turn.behind {
                None
            } else {
                crate::play::rules::short_funds(&app.variant.funds, action, total)
            };
            match instead {
                Some(a) => action = a,
                None => {
                    let balance = play.wallet.balance(&me).await?;
                    return Err(WalletError::InsufficientFunds {
                        balance,
                        amount: cost,
                    }
                    .into());
                }
            }
        } else {
            taken.push(e);
        }
    }
    // Players behind a seat who follow its double or split stake again when it does.
    if !common && !turn.behind && matches!(action, Action::Double | Action::Split) {
        let followers: Vec<BehindBet> = snap
            .round
            .bets
            .iter()
            .find(|b| b.seat == seat)
            .map(|b| b.behind.clone())
            .unwrap_or_default();
        for bb in followers {
            let follows = match action {
                Action::Double => bb.follow_double && (turn.hand == 0 || bb.follow_split),
                _ => bb.follow_split,
            };
            if !follows || bb.main == 0 {
                continue;
            }
            let line = if action == Action::Double {
                "double"
            } else {
                "split"
            };
            let e = Entry {
                tx: play
                    .journal
                    .next_debit(round, seat, &Owner::Behind(bb.player.clone()).line(line))
                    .await?,
                player: bb.player.clone(),
                amount: bb.main,
            };
            match take(&play, &e).await {
                Ok(false) => taken.push(e),
                Ok(true) => {
                    // FUNDS (branch `funds`): the sheet's fallback for a follower who
                    // cannot cover the follow ("treated as a hit" / "follows the first
                    // hand only") goes here. Until it exists the decision is refused
                    // whole: no stake is played that its owner's wallet did not give.
                    roll_back_all(&play, &taken).await?;
                    return Err(PlayError::conflict(
                        "follower_short_funds",
                        format!(
                            "{} behind your seat cannot cover the follow: {:?} is refused for now",
                            bb.player, action
                        ),
                    ));
                }
                Err(err) => {
                    roll_back_all(&play, &taken).await?;
                    return Err(err);
                }
            }
        }
    }
    if action == Action::Hit && !common {
        play.remote.request_hit(seat, snap.seq);
        return Ok(Json(json!({"ok": true, "action": "hit", "asked": d.action})).into_response());
    }
    let input = if common || turn.behind {
        Input::PlayerDecision {
            player: me.clone(),
            seat,
            action,
        }
    } else {
        Input::Decision { seat, action }
    };
    match app.table.submit(input, Source::Api).await {
        Ok(seq) => {
            let balance = play.wallet.balance(&me).await?;
            Ok(Json(json!({
                "ok": true,
                "seq": seq,
                "action": action,
                "seat": seat,
                "balance": balance,
            }))
            .into_response())
        }
        Err(e) => {
            roll_back_all(&play, &taken).await?;
            Err(e.into())
        }
    }
}
