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
//! | `GET /api/play/history` | the player's last rounds (each line's stake, return, net) and the session's time and net result |
//! | `GET /api/play/help` | the game's rules, each side bet's pay table and exact RTP |
//! | `POST /api/play/sessions` | the platform (`Authorization: Bearer` its credential): `{"player": ID, "name"}` → `{"token", "launch": "/play#t=TOKEN"}` |
//!
//! Every stake goes through the wallet before the table takes it, under a transaction id
//! of its own line (`wallet::Owner`): the seat's (`main`, `side-NAME`, `double`, ...),
//! a player's behind it (`behind-main@P`, `behind-double@P` when the seated player
//! doubles and P follows), a player's box in a common draw (`main@P`).
//!
//! Errors are `{"error": {"code", "message"}}`; `betting_closed` and `decision_closed`
//! carry `closed: {round, seq, at_ms, clock_ms}`, the log position and time of the close.

pub mod behind;
mod bets;
pub mod boxes;
pub mod decide;
pub mod info;
pub mod platform;
pub mod rebet;
pub mod seat_bets;
mod stakes;

use super::api::ApiError;
use super::body::{read_body, RequestBody};
use super::AppState;
use crate::engine::variant::DealMode;
use crate::engine::{Action, Expectation, SeatId};
use crate::play::Play;
use crate::table::remote::{Closed, Window};
use crate::table::{Snapshot, SubmitError};
use crate::wallet::WalletError;
use axum::extract::{FromRequest, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Instant;
use utoipa::ToSchema;

/// What a handler of the players' API answers: its response, or a [`PlayError`].
pub type Answer = Result<Response, PlayError>;

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

    /// A dependency (the database, the seats' store) did not answer.
    fn unavailable(message: impl Into<String>) -> PlayError {
        PlayError::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", message)
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

/// An [`ApiError`] (a body the contract refuses, axum's refusal of a request) as the
/// players' API answers it: the same status, code and message.
impl From<ApiError> for PlayError {
    fn from(e: ApiError) -> PlayError {
        PlayError::new(e.status(), e.code(), e.to_string())
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

/// The player behind the request's bearer token.
async fn player(app: &AppState, headers: &HeaderMap) -> Result<(Arc<Play>, String), PlayError> {
    let Some(play) = app.play.clone() else {
        return Err(no_remote_play());
    };
    let token = bearer(headers);
    match crate::play::sessions::player(&play.pool, token, &play.table).await {
        Some(p) => {
            // Every request is the player's page being there (`play::presence`).
            let key = crate::play::sessions::key(token);
            play.presence.heard(&p, &key, play.remote.windows_opened());
            Ok((play, p))
        }
        None => Err(PlayError::new(
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            "open the launch link again (no valid player session)",
        )),
    }
}

/// A player's POST, how the players' POST routes begin: the table's state, remote play,
/// the player behind the request's bearer token (as [`player`]), then their body (read as
/// `web::body` reads every body: 415 `json_required`, 400 `malformed`).
pub struct PlayerPost<T>(AppState, Arc<Play>, String, T);

impl<T: RequestBody> FromRequest<AppState> for PlayerPost<T> {
    type Rejection = PlayError;

    async fn from_request(req: Request, app: &AppState) -> Result<PlayerPost<T>, PlayError> {
        let (headers, text) = super::body::text(req, app).await?;
        let (play, me) = player(app, &headers).await?;
        let body = read_body(&headers, &text)?;
        Ok(PlayerPost(app.clone(), play, me, body))
    }
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
    match &snap.expectation {
        Expectation::PlayersInsurance { .. } | Expectation::PlayerDecisions { .. } => {
            // One timer for the whole step, run by the table (seat 0 in its window).
            let window = play.remote.decision_window(snap, 0);
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
        // Without auto-play among the choices the hand is being auto-played (the timeout's).
        Expectation::Decision {
            seat,
            hand,
            allowed,
        } if play.remote.seats_of(me).contains(seat) && allowed.contains(&Action::AutoPlay) => {
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
            let mine = play.remote.seats_of(me);
            if let Some(seat) = snap
                .insurance_seats
                .first()
                .filter(|s| mine.contains(s))
                .copied()
            {
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
            // Players behind seats answer on the round's insurance timer (the table's).
            let window = Some(play.remote.decision_window(snap, 0));
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

/// How the seat's bet in the window of `round` came from the automatic re-bet
/// (`funds.auto_rebet`): `{"clipped": BOOL}`, or null when the player placed it.
fn rebet_of(mark: Option<crate::play::SeatMark>, round: u64) -> Value {
    match mark {
        Some(m) if m.round == round => match m.rebet {
            Some(clipped) => json!({ "clipped": clipped }),
            None => Value::Null,
        },
        _ => Value::Null,
    }
}

/// `me`'s seat bet in the round just played (`{"main", "side"}`, for the page's manual
/// re-bet where the game has no automatic one), or null.
fn last_bet(snap: &Snapshot, seat: Option<SeatId>, me: &str) -> Value {
    let round = &snap.round;
    seat.filter(|_| round.settled)
        .and_then(|s| {
            round
                .bets
                .iter()
                .find(|b| b.seat == s && b.main > 0 && b.player.as_deref() == Some(me))
        })
        .map_or(Value::Null, |b| json!({"main": b.main, "side": b.side}))
}

/// `me`'s bets behind seats among `bets` (the window's or the round's), each as
/// `{"seat", "bet"}`.
fn behind_of(bets: &[crate::engine::SeatBets], me: &str) -> Vec<Value> {
    bets.iter()
        .flat_map(|b| {
            b.behind
                .iter()
                .filter(|bb| bb.player == me)
                .map(move |bb| json!({"seat": b.seat, "bet": bb}))
        })
        .collect()
}

/// `GET /api/play/state`.
#[utoipa::path(get, path = "/api/play/state", tag = "players",
    responses(
        (status = 200, description = "The player, balance, seat, the game, the betting window, the decisions asked of the player, the public view", body = Object),
        (status = 409, description = "The wallet does not know the player (`unknown_player`)", body = super::api::ErrorBody)))]
pub async fn state(State(app): State<AppState>, headers: HeaderMap) -> Answer {
    let (play, me) = player(&app, &headers).await?;
    // The seat's mark is read before the balance and the table's snapshot: a re-bet marks
    // the seat only after the wallet's debit and the table's taking the bet, so a mark
    // read first is seen with both. Read after them, a re-bet placed in between showed
    // over a window without its bet (a CI run: `my_rebet` set, `my_bet` null).
    let seat = play.remote.seat_of(&me);
    let mark = seat.and_then(|s| play.seat_mark(s));
    let who = play.ledger.player(&me).await?;
    let balance = play.wallet.balance(&me).await?;
    let snap = app.table.snapshot();
    let seats_held = play.remote.seats_of(&me);
    let seats = play.remote.seats();
    let common = common_draw(&app);
    // Every seat a remote player may take, free or not: the page lists them all, the
    // taken ones off, so a seat taken by someone else never moves the others under a
    // finger on its way down.
    let offered: Vec<SeatId> = if common {
        Vec::new()
    } else {
        (play.demo_seats + 1..=app.variant.deal.seats).collect()
    };
    let free: Vec<SeatId> = offered
        .iter()
        .copied()
        .filter(|s| !seats.contains_key(s))
        .collect();
    let window_bets = &snap.betting.bets;
    let behind_mine = behind_of(window_bets, &me);
    let behind_seats: Vec<Value> = window_bets
        .iter()
        .filter(|b| b.main > 0 && seats.get(&b.seat) != Some(&me))
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
            "my_seats": play.remote.seats_of(&me).iter().map(|s| json!({
                "seat": s,
                "main": window_bets.iter().find(|b| b.seat == *s).map(|b| b.main),
            })).collect::<Vec<_>>(),
            "my_rebet": rebet_of(mark, w.round),
            "last_bet": last_bet(&snap, seat, &me),
            "my_behind": behind_mine,
            "my_boxes": snap.betting.players.iter().find(|p| p.player == me).map(|p| p.boxes.clone()),
            "let_it_play": if common && app.variant.betting.let_it_play_max > 0 {
                boxes::let_it_play_wins(&snap, &me, w.round)
                    .iter()
                    .filter(|(_, amount)| *amount <= app.variant.betting.let_it_play_max)
                    .map(|(b, amount)| json!({"box": b, "main": amount}))
                    .collect::<Vec<_>>()
            } else {
                Vec::new()
            },
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
    let round_behind = behind_of(&snap.round.bets, &me);
    let hands: Vec<&crate::engine::PlayerHand> = snap
        .common
        .hands
        .iter()
        .filter(|h| h.player == me)
        .collect();
    let session = crate::play::sessions::times(&play.pool, bearer(&headers)).await;
    // What the wallet took for the round in play (a split, a double, insurance add to the
    // bets the round opened with); none between rounds.
    let staked = match i64::try_from(snap.round.number) {
        Ok(round) if round > 0 && !snap.round.settled && !snap.betting.open => {
            crate::play::history::round_staked(&play.pool, &play.table, &me, round)
                .await
                .map_err(|e| tracing::warn!(error = %e, "the round's stake could not be read"))
                .ok()
        }
        _ => None,
    };
    let timing = play.remote.timing();
    Ok(Json(json!({
        "player": me,
        // The page's clocks count from these (the server's time, `now_ms`, so a phone's
        // clock set wrong moves nothing).
        "session": session.map(|(started, expires)| json!({
            "started_ms": started,
            "expires_ms": expires,
            "now_ms": crate::wallet::now_ms(),
        })),
        "protections": play.protections,
        "timing": {
            "betting_ms": u64::try_from(timing.betting.as_millis()).unwrap_or(u64::MAX),
            "decision_ms": u64::try_from(timing.decision.as_millis()).unwrap_or(u64::MAX),
        },
        // How `view` (and every public page) names this player: never the platform's id.
        "public_name": snap.pseudonyms.name(&me),
        "name": who.map(|p| p.name).unwrap_or_default(),
        "balance": balance,
        "staked": staked,
        "seat": seat,
        "seats": &seats_held,
        "unseated": play.remote.is_unseated(&me),
        "free_seats": free,
        "offered_seats": offered,
        "game": {
            "common_draw": common,
            "play_behind": app.variant.betting.play_behind && !common,
            "boxes": if common { app.variant.deal.seats } else { 0 },
            "side_bets": side_bets,
            "auto_rebet": app.variant.funds.auto_rebet && !common,
            "seats_per_player": if common { 0 } else { app.variant.betting.seats_per_player },
        },
        "betting": betting,
        "turn": turns.first().map(Turn::to_json),
        "turns": turns.iter().map(Turn::to_json).collect::<Vec<_>>(),
        "behind": round_behind,
        "hands": hands,
        // A common draw's side bets this round, however the page came to it (a reload, a
        // window it never saw open): its total bet is these plus the hands' stakes.
        "specials": snap.common.specials.iter().filter(|(p, _, _)| *p == me).map(|(_, b, amount)| json!({"box": b, "amount": amount})).collect::<Vec<_>>(),
        "decision_closed": play.remote.decision_closed(),
        // What the table did when the player's timers ran out this round, from its log.
        "timeouts": play.remote.timed_out().iter()
            .filter(|t| t.player.as_ref().map_or(seats_held.contains(&t.seat), |p| *p == me))
            .map(|t| t.view(&snap.round, &snap.expectation)).collect::<Vec<_>>(),
        // Why the player's place was given up while they were gone, until they join again.
        "released": play.presence.released(&me),
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

impl RequestBody for JoinBody {
    const EXAMPLE: &'static str = r#"{"seat": N} or {}"#;
}

/// `POST /api/play/join`.
#[utoipa::path(post, path = "/api/play/join", tag = "players", request_body = JoinBody,
    responses(
        (status = 200, description = "`{\"ok\": true, \"seat\": N|null}`", body = Object),
        (status = 400, description = "Not a join request (`malformed`)", body = super::api::ErrorBody),
        (status = 409, description = "`seat_unavailable`, `seat_taken`, `already_seated` (the player holds `betting.seats_per_player` seats already), `no_seats` (a common draw)", body = super::api::ErrorBody)))]
pub async fn join(PlayerPost(app, play, me, b): PlayerPost<JoinBody>) -> Answer {
    let Some(seat) = b.seat else {
        play.presence.forget_release(&me);
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
    let held = play.remote.seats_of(&me);
    let most = usize::from(app.variant.betting.seats_per_player.max(1));
    if !held.contains(&seat) && held.len() >= most {
        let list: Vec<String> = held.iter().map(ToString::to_string).collect();
        return Err(PlayError::conflict(
            "already_seated",
            format!(
                "you hold seat(s) {} and this game lets a player hold {most}: leave first",
                list.join(", ")
            ),
        ));
    }
    play.presence.forget_release(&me);
    play.remote.join(seat, &me).await.map_err(|e| match e {
        crate::table::remote::SeatError::Store(m) => PlayError::unavailable(m),
        crate::table::remote::SeatError::Taken(_) => {
            PlayError::conflict("seat_taken", format!("seat {seat} is taken"))
        }
    })?;
    Ok(Json(json!({"ok": true, "seat": seat})).into_response())
}

/// `POST /api/play/leave`: frees every seat the player holds (refused while the player
/// has a stake in play).
#[utoipa::path(post, path = "/api/play/leave", tag = "players",
    responses(
        (status = 200, description = "`{\"ok\": true}`", body = Object),
        (status = 409, description = "`no_seat`, or a stake in play (`seat_in_play`)", body = super::api::ErrorBody)))]
pub async fn leave(State(app): State<AppState>, headers: HeaderMap) -> Answer {
    let (play, me) = player(&app, &headers).await?;
    let seats = play.remote.seats_of(&me);
    if seats.is_empty() && !play.remote.is_unseated(&me) {
        return Err(PlayError::conflict("no_seat", "you are not at the table"));
    }
    if crate::play::presence::has_stake(&app.table.snapshot(), &me, &seats) {
        return Err(PlayError::conflict(
            "seat_in_play",
            "you have a bet in play: leave after the round",
        ));
    }
    play.remote
        .leave(&me)
        .await
        .map_err(|e| PlayError::unavailable(e.to_string()))?;
    Ok(Json(json!({"ok": true})).into_response())
}
