//! `/play` and the players' API (issue #15). Separate from the staff routes on purpose:
//! a player authenticates with the launch token of their session (`Authorization: Bearer
//! TOKEN`, see `play::sessions`), never a staff cookie, and reaches only these routes.
//!
//! | route | what |
//! |---|---|
//! | `GET /play` | the player's page (phone upright first) |
//! | `GET /api/play/state` | the player, balance, seat, free seats, the betting countdown, the decision asked of them and its timer, the public view |
//! | `POST /api/play/join` | `{"seat": N}`: take a free seat |
//! | `POST /api/play/leave` | give the seat up |
//! | `POST /api/play/bet` | `{"main": AMOUNT}` in the betting window: debited first, then placed (0 withdraws: rolled back) |
//! | `POST /api/play/sessions` | the platform (`Authorization: Bearer` its credential): `{"player": ID, "name"}` → `{"token", "launch": "/play#t=TOKEN"}` |
//! | `POST /api/play/decision` | `{"action": "hit|stand|double|split|surrender|insurance|no_insurance|even_money"}` while the table waits on the player's hand |
//!
//! Errors are `{"error": {"code", "message"}}`; `betting_closed` and `decision_closed`
//! carry `closed: {round, seq, at_ms, clock_ms}`, the log position and time of the close.

use super::AppState;
use crate::engine::{Action, Expectation, Input, SeatBets, SeatId};
use crate::play::Play;
use crate::store::Source;
use crate::table::remote::Closed;
use crate::table::{BetError, SubmitError};
use crate::wallet::journal::Entry;
use crate::wallet::WalletError;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Instant;

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

    fn closed(code: &'static str, message: &str, closed: Option<Closed>) -> PlayError {
        PlayError {
            closed,
            ..PlayError::new(StatusCode::CONFLICT, code, message)
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
        PlayError::new(StatusCode::CONFLICT, e.code(), e.to_string())
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

/// Adds the players' routes to `router`.
pub fn routes(router: Router<AppState>) -> Router<AppState> {
    router
        .route("/play", get(|| super::asset("play.html")))
        .route("/api/play/state", get(state))
        .route("/api/play/join", post(join))
        .route("/api/play/leave", post(leave))
        .route("/api/play/bet", post(bet))
        .route("/api/play/decision", post(decision))
        .route("/api/play/sessions", post(open_session))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionBody {
    player: String,
    #[serde(default)]
    name: Option<String>,
}

/// `POST /api/play/sessions` (the platform's credential, `croupier player platform-key`):
/// `{"player": ID, "name": "..."}` opens a session for the platform's player (added on
/// first sight, balance 0 in the embedded wallet) and answers the launch token and path.
async fn open_session(
    State(app): State<AppState>,
    headers: HeaderMap,
    body: String,
) -> Result<Response, PlayError> {
    let Some(play) = app.play.clone() else {
        return Err(PlayError::new(
            StatusCode::NOT_FOUND,
            "no_remote_play",
            "remote play is off at this table",
        ));
    };
    let key = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    if !crate::play::sessions::is_platform(&play.pool, key).await {
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
            .map_err(|e| PlayError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_player", e))?;
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
        return Err(PlayError::new(
            StatusCode::NOT_FOUND,
            "no_remote_play",
            "remote play is off at this table ([play] enabled = false)",
        ));
    };
    let token = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    match crate::play::sessions::player(&play.pool, token, &play.table).await {
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

fn seat_of(play: &Play, player: &str) -> Result<SeatId, PlayError> {
    play.remote
        .seat_of(player)
        .ok_or_else(|| PlayError::new(StatusCode::CONFLICT, "no_seat", "join a seat first"))
}

/// What the table asks of `seat` now: (kind, hand, allowed).
fn turn(app: &AppState, seat: SeatId) -> Option<(&'static str, u8, Vec<Action>)> {
    let snap = app.table.snapshot();
    match &snap.expectation {
        Expectation::Decision {
            seat: s,
            hand,
            allowed,
        } if *s == seat && allowed.contains(&Action::AutoPlay) => {
            // (Without auto-play among them the hand is being auto-played: the timeout's.)
            let mut allowed = allowed.clone();
            allowed.retain(|a| *a != Action::AutoPlay);
            allowed.insert(0, Action::Hit);
            Some(("decision", *hand, allowed))
        }
        Expectation::InsuranceAnswers { .. } if snap.insurance_seats.first() == Some(&seat) => {
            let allowed = snap
                .insurance_answers
                .get(&seat)
                .cloned()
                .unwrap_or_default();
            Some(("insurance", 0, allowed))
        }
        _ => None,
    }
}

/// `GET /api/play/state`.
async fn state(State(app): State<AppState>, headers: HeaderMap) -> Result<Response, PlayError> {
    let (play, me) = player(&app, &headers).await?;
    let who = play.ledger.player(&me).await?;
    let balance = play.wallet.balance(&me).await?;
    let snap = app.table.snapshot();
    let seat = play.remote.seat_of(&me);
    let seats = play.remote.seats();
    let free: Vec<SeatId> = (play.demo_seats + 1..=app.variant.deal.seats)
        .filter(|s| !seats.contains_key(s))
        .collect();
    let betting = match play.remote.betting().filter(|_| snap.betting.open) {
        Some(w) => json!({
            "open": true,
            "round": w.round,
            "deadline_ms": w.deadline_ms,
            "remaining_ms": remaining_ms(w.deadline),
            "my_bet": seat.and_then(|s| snap.betting.bets.iter().find(|b| b.seat == s)).map(|b| b.main),
        }),
        None => json!({"open": false, "closed": play.remote.betting_closed()}),
    };
    let turn = match seat.and_then(|s| turn(&app, s).map(|t| (s, t))) {
        Some((s, (kind, hand, allowed))) => {
            let w = play.remote.decision_window(&snap, s);
            json!({
                "kind": kind,
                "hand": hand,
                "allowed": allowed,
                "deadline_ms": w.deadline_ms,
                "remaining_ms": remaining_ms(w.deadline),
            })
        }
        None => Value::Null,
    };
    Ok(Json(json!({
        "player": me,
        "name": who.map(|p| p.name).unwrap_or_default(),
        "balance": balance,
        "seat": seat,
        "free_seats": free,
        "betting": betting,
        "turn": turn,
        "decision_closed": play.remote.decision_closed(),
        "limits": app.limits,
        "view": super::view::public_view(&snap),
    }))
    .into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JoinBody {
    seat: SeatId,
}

/// `POST /api/play/join`.
async fn join(
    State(app): State<AppState>,
    headers: HeaderMap,
    body: String,
) -> Result<Response, PlayError> {
    let (play, me) = player(&app, &headers).await?;
    let b: JoinBody = parse(&body, r#"{"seat": N}"#)?;
    if b.seat <= play.demo_seats || b.seat > app.variant.deal.seats {
        return Err(PlayError::new(
            StatusCode::CONFLICT,
            "seat_unavailable",
            format!(
                "seat {} is not free for remote players (seats {} to {})",
                b.seat,
                play.demo_seats + 1,
                app.variant.deal.seats
            ),
        ));
    }
    if let Some(old) = play.remote.seat_of(&me) {
        if old != b.seat {
            return Err(PlayError::new(
                StatusCode::CONFLICT,
                "already_seated",
                format!("you hold seat {old}: leave it first"),
            ));
        }
    }
    play.remote.join(b.seat, &me).await.map_err(|e| match e {
        crate::table::remote::SeatError::Store(m) => {
            PlayError::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", m)
        }
        crate::table::remote::SeatError::Taken(_) => PlayError::new(
            StatusCode::CONFLICT,
            "seat_taken",
            format!("seat {} is taken", b.seat),
        ),
    })?;
    Ok(Json(json!({"ok": true, "seat": b.seat})).into_response())
}

/// `POST /api/play/leave` (refused while the player has a stake in play).
async fn leave(State(app): State<AppState>, headers: HeaderMap) -> Result<Response, PlayError> {
    let (play, me) = player(&app, &headers).await?;
    let seat = seat_of(&play, &me)?;
    let snap = app.table.snapshot();
    let in_play = !snap.round.settled && snap.round.hands.iter().any(|h| h.seat == seat);
    let bet_open = snap.betting.bets.iter().any(|b| b.seat == seat);
    if in_play || bet_open {
        return Err(PlayError::new(
            StatusCode::CONFLICT,
            "seat_in_play",
            "your seat has a bet in play: leave after the round",
        ));
    }
    play.remote.leave(&me).await.map_err(|e| {
        PlayError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            e.to_string(),
        )
    })?;
    Ok(Json(json!({"ok": true})).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BetBody {
    main: i64,
}

fn betting_closed(play: &Play) -> PlayError {
    PlayError::closed(
        "betting_closed",
        "the betting window is closed",
        play.remote.betting_closed(),
    )
}

/// `POST /api/play/bet`: the stake is debited, then placed; if the table refuses it, it is
/// rolled back. A new amount replaces the last (whose debit is rolled back); 0 withdraws.
async fn bet(
    State(app): State<AppState>,
    headers: HeaderMap,
    body: String,
) -> Result<Response, PlayError> {
    let (play, me) = player(&app, &headers).await?;
    let b: BetBody = parse(&body, r#"{"main": AMOUNT}"#)?;
    let seat = seat_of(&play, &me)?;
    if b.main < 0 {
        return Err(PlayError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_bet",
            "amounts cannot be negative",
        ));
    }
    let _money = play.money.lock().await;
    let window = match play.remote.betting() {
        Some(w) if app.table.snapshot().betting.open && Instant::now() < w.deadline => w,
        _ => return Err(betting_closed(&play)),
    };
    // The stake this one replaces goes back first.
    let before = play.journal.open_stakes(window.round, seat, "main").await?;
    let placed = |main| {
        let bet = SeatBets {
            seat,
            main,
            side: Vec::new(),
            player: Some(me.clone()),
            ..SeatBets::default()
        };
        app.table.place_bet(bet)
    };
    let refusal = |e: BetError| match e {
        BetError::BettingClosed | BetError::NotTakingBets(_) => betting_closed(&play),
        BetError::InvalidBet(m) => PlayError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_bet",
            app.table.snapshot().currency.write_amounts(&m),
        ),
        other => PlayError::new(StatusCode::CONFLICT, other.code(), other.to_string()),
    };
    // The bet leaves the table before its stake goes back: were the window to close in
    // between, the round would hold a stake the wallet no longer has.
    if b.main == 0 || !before.is_empty() {
        play.remote.set_bet(seat, false);
        placed(0).await.map_err(refusal)?;
        for e in &before {
            play.journal.roll_back(play.wallet.as_ref(), e).await?;
        }
    }
    if b.main == 0 {
        let balance = play.wallet.balance(&me).await?;
        return Ok(Json(json!({"ok": true, "round": null, "balance": balance})).into_response());
    }
    let entry = Entry {
        tx: play.journal.next_debit(window.round, seat, "main").await?,
        player: me.clone(),
        amount: b.main,
    };
    if let Err(e) = play.journal.debit(play.wallet.as_ref(), &entry).await {
        // Nothing of this player's is on the table any more.
        let _ = placed(0).await;
        play.remote.set_bet(seat, false);
        return Err(e.into());
    }
    match placed(b.main).await {
        Ok(Some(round)) if round == window.round => {}
        other => {
            play.journal.roll_back(play.wallet.as_ref(), &entry).await?;
            let _ = placed(0).await;
            play.remote.set_bet(seat, false);
            return Err(match other {
                Err(e) => refusal(e),
                _ => betting_closed(&play),
            });
        }
    }
    play.remote.set_bet(seat, true);
    let balance = play.wallet.balance(&me).await?;
    Ok(Json(json!({
        "ok": true,
        "round": window.round,
        "tx": entry.tx.to_string(),
        "balance": balance,
    }))
    .into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DecisionBody {
    action: Action,
}

/// `POST /api/play/decision`.
async fn decision(
    State(app): State<AppState>,
    headers: HeaderMap,
    body: String,
) -> Result<Response, PlayError> {
    let (play, me) = player(&app, &headers).await?;
    let d: DecisionBody = parse(&body, r#"{"action": "hit|stand|double|..."}"#)?;
    let seat = seat_of(&play, &me)?;
    let _money = play.money.lock().await;
    let snap = app.table.snapshot();
    let Some((kind, hand, allowed)) = turn(&app, seat) else {
        return Err(match play.remote.decision_closed() {
            Some(c) if c.round == snap.round.number => {
                PlayError::closed("decision_closed", "the decision timer ran out", Some(c))
            }
            _ => PlayError::new(
                StatusCode::CONFLICT,
                "not_your_turn",
                "the table is not waiting on your hand",
            ),
        });
    };
    let w = play.remote.decision_window(&snap, seat);
    if Instant::now() >= w.deadline {
        let closed = Closed {
            round: w.round,
            seq: w.at_seq,
            at_ms: w.deadline_ms,
            clock_ms: w.clock_ms,
        };
        return Err(PlayError::closed(
            "decision_closed",
            "the decision timer ran out",
            Some(closed),
        ));
    }
    if !allowed.contains(&d.action) {
        return Err(PlayError::new(
            StatusCode::CONFLICT,
            "action_not_allowed",
            format!("{:?} is not allowed now ({kind})", d.action),
        ));
    }
    let round = snap.round.number;
    let main: i64 = play
        .journal
        .open_stakes(round, seat, "main")
        .await?
        .iter()
        .map(|e| e.amount)
        .sum();
    let cost = crate::play::rules::decision_cost(&app.variant, d.action, main);
    let mut action = d.action;
    let mut entry = None;
    if cost > 0 {
        let line = match action {
            Action::Double => "double",
            Action::Split => "split",
            _ => "insurance",
        };
        let e = Entry {
            tx: play.journal.next_debit(round, seat, line).await?,
            player: me.clone(),
            amount: cost,
        };
        match play.journal.debit(play.wallet.as_ref(), &e).await {
            Ok(_) => entry = Some(e),
            // The sheet's balance rule (`[funds]`; Deluxe: a double the balance cannot
            // cover is a hit, a split a hit on 11 or less, else a stand).
            Err(e @ WalletError::InsufficientFunds { balance, .. }) => {
                let total = snap
                    .round
                    .hands
                    .iter()
                    .find(|h| h.seat == seat && h.hand == hand)
                    .map_or(0, |h| h.total);
                let funds = &app.variant.funds;
                match crate::play::rules::funded_decision(funds, action, cost, balance, total) {
                    Ok(instead) if instead != action => action = instead,
                    _ => return Err(e.into()),
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    if action == Action::Hit {
        play.remote.request_hit(seat, snap.seq);
        return Ok(Json(json!({"ok": true, "action": "hit", "asked": d.action})).into_response());
    }
    let input = Input::Decision { seat, action };
    match app.table.submit(input, Source::Api).await {
        Ok(seq) => {
            let balance = play.wallet.balance(&me).await?;
            Ok(
                Json(json!({"ok": true, "seq": seq, "action": action, "balance": balance}))
                    .into_response(),
            )
        }
        Err(e) => {
            if let Some(e) = &entry {
                play.journal.roll_back(play.wallet.as_ref(), e).await?;
            }
            Err(e.into())
        }
    }
}
