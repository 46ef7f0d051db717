//! The JSON API for the panel, seat terminals and remote platforms. Every error is
//! `{"error": {"code": "...", "message": "..."}}` with a stable code; a malformed request
//! gets a 400 and changes nothing. The contract is `openapi.json` (served at
//! `/api/openapi.json`).

use super::view::{dealer_view, public_view};
use super::AppState;
use crate::engine::{Action, Input, SeatBets};
use crate::store::Source;
use crate::table::{BetError, SubmitError};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::json;
use std::collections::BTreeMap;

/// An API error: an HTTP status and a stable code.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The body or query is not what the endpoint takes (nothing changed).
    #[error("{0}")]
    Malformed(String),
    /// A betting-window refusal.
    #[error(transparent)]
    Bet(#[from] BetError),
    /// An input refusal.
    #[error(transparent)]
    Submit(#[from] SubmitError),
    /// A player's dispute token that does not match the table, round and seat.
    #[error("the dispute token does not match this table, round and seat")]
    InvalidToken,
    /// A dispute refusal.
    #[error(transparent)]
    Dispute(#[from] crate::table::DisputeError),
    /// Not found.
    #[error("{0}")]
    NotFound(String),
    /// A dependency (store, simulator) failed or is absent.
    #[error("{0}")]
    Unavailable(String),
    /// No valid session or token (401).
    #[error("log in first (no valid session)")]
    Unauthenticated,
    /// The caller's role is too low (403).
    #[error("{0}")]
    Forbidden(String),
    /// A state-changing request authenticated by cookie without `Content-Type:
    /// application/json` (the CSRF rule, see `web::auth`) (415).
    #[error("send Content-Type: application/json")]
    JsonRequired,
    /// Unknown badge, wrong secret or disabled account (401).
    #[error("badge or secret not accepted")]
    InvalidCredentials,
    /// Too many failed logins (423): locked until then (RFC 3339).
    #[error("too many failed attempts: the account is locked until {0}")]
    AccountLocked(String),
}

impl ApiError {
    /// The stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::Malformed(_) => "malformed",
            ApiError::Bet(e) => e.code(),
            ApiError::Submit(e) => e.code(),
            ApiError::Dispute(e) => e.code(),
            ApiError::NotFound(_) => "not_found",
            ApiError::Unavailable(_) => "unavailable",
            ApiError::Unauthenticated => "unauthenticated",
            ApiError::Forbidden(_) => "forbidden",
            ApiError::JsonRequired => "json_required",
            ApiError::InvalidCredentials => "invalid_credentials",
            ApiError::AccountLocked(_) => "account_locked",
            ApiError::InvalidToken => "invalid_token",
        }
    }

    fn status(&self) -> StatusCode {
        match self.code() {
            "malformed" => StatusCode::BAD_REQUEST,
            "invalid_bet" => StatusCode::UNPROCESSABLE_ENTITY,
            "not_found" | "no_dispute" => StatusCode::NOT_FOUND,
            "locked" | "account_locked" => StatusCode::LOCKED,
            "unauthenticated" | "invalid_credentials" => StatusCode::UNAUTHORIZED,
            "forbidden" | "invalid_token" => StatusCode::FORBIDDEN,
            "json_required" => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "out_of_service" | "stopped" | "unavailable" | "not_recorded" => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            _ => StatusCode::CONFLICT,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": {"code": self.code(), "message": self.to_string()}});
        (self.status(), Json(body)).into_response()
    }
}

/// Parses a JSON body, or a 400 `malformed` naming what was expected.
pub(super) fn parse<T: serde::de::DeserializeOwned>(body: &str, what: &str) -> Result<T, ApiError> {
    serde_json::from_str(body).map_err(|e| ApiError::Malformed(format!("expected {what}: {e}")))
}

/// `GET /api/view`: the dealer panel's view.
pub async fn view(State(app): State<AppState>) -> Response {
    Json(dealer_view(
        &app.table.snapshot(),
        &app.limits,
        app.sim.is_some(),
    ))
    .into_response()
}

/// `GET /api/public`: the public view.
pub async fn public(State(app): State<AppState>) -> Response {
    Json(public_view(&app.table.snapshot())).into_response()
}

/// `POST /api/betting/open`.
pub async fn open_betting(State(app): State<AppState>) -> Result<Response, ApiError> {
    app.table.open_betting().await?;
    Ok(Json(json!({"open": true})).into_response())
}

/// `POST /api/betting/close`: opens the round with the collected bets.
pub async fn close_betting(State(app): State<AppState>) -> Result<Response, ApiError> {
    let seq = app.table.close_betting(Source::Api).await?;
    Ok(Json(json!({"open": false, "seq": seq})).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BetBody {
    seat: u8,
    main: i64,
    #[serde(default)]
    side: BTreeMap<String, i64>,
    #[serde(default)]
    player: Option<String>,
}

/// `POST /api/bets`: `{"seat": 3, "main": 100, "side": {"pair": 5}}` into the open window.
/// Answers `{"ok": true, "round": N, "dispute_token": "..."}`: the token lets the seat's
/// player dispute round N without an account (`auth::player_token`); both are `null` for a
/// withdrawal.
pub async fn place_bet(State(app): State<AppState>, body: String) -> Result<Response, ApiError> {
    let b: BetBody = parse(
        &body,
        r#"{"seat": N, "main": AMOUNT, "side": {"NAME": AMOUNT}}"#,
    )?;
    if b.main < 0 || b.side.values().any(|a| *a < 0) {
        return Err(BetError::InvalidBet("amounts cannot be negative".into()).into());
    }
    let bet = SeatBets {
        seat: b.seat,
        main: b.main,
        side: b.side.into_iter().collect(),
        player: b.player,
        ..SeatBets::default()
    };
    let seat = bet.seat;
    let round = app.table.place_bet(bet).await.map_err(|e| match e {
        // The API's fields stay integers; its message for people speaks money.
        BetError::InvalidBet(m) => {
            BetError::InvalidBet(app.table.snapshot().currency.write_amounts(&m))
        }
        other => other,
    })?;
    let token = match (round, &app.auth) {
        (Some(round), Some(auth)) => Some(crate::auth::player_token::issue(
            auth.player_key(),
            &app.table.snapshot().table,
            round,
            seat,
        )),
        _ => None,
    };
    Ok(Json(json!({"ok": true, "round": round, "dispute_token": token})).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DecisionBody {
    seat: u8,
    action: Action,
}

/// `POST /api/decision`: `{"seat": 3, "action": "stand"}` (insurance answers included).
pub async fn decision(State(app): State<AppState>, body: String) -> Result<Response, ApiError> {
    let d: DecisionBody = parse(&body, r#"{"seat": N, "action": "hit|stand|double|..."}"#)?;
    let seq = app
        .table
        .submit(
            Input::Decision {
                seat: d.seat,
                action: d.action,
            },
            Source::Api,
        )
        .await?;
    Ok(Json(json!({"seq": seq})).into_response())
}

/// `POST /api/shuffle`: a new shoe (and, with the simulator, a freshly shuffled one in it).
pub async fn shuffle(State(app): State<AppState>) -> Result<Response, ApiError> {
    let seq = app.table.submit(Input::Shuffle, Source::Api).await?;
    if let Some(sim) = &app.sim {
        let items = crate::table::demo::Demo::fresh_shoe(
            &app.variant,
            app.variant.shoe.decks,
            0.75,
            &mut fastrand::Rng::new(),
        );
        sim.load(items)
            .await
            .map_err(|e| ApiError::Unavailable(format!("simulated shoe: {e}")))?;
    }
    Ok(Json(json!({"seq": seq})).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DealBody {
    #[serde(default)]
    n: Option<usize>,
}

/// `POST /api/sim/deal`: the simulated shoe deals `n` (default 1, max 20) cards.
pub async fn sim_deal(State(app): State<AppState>, body: String) -> Result<Response, ApiError> {
    let d: DealBody = if body.trim().is_empty() {
        DealBody { n: None }
    } else {
        parse(&body, r#"{"n": N}"#)?
    };
    let n = d.n.unwrap_or(1);
    if !(1..=20).contains(&n) {
        return Err(ApiError::Malformed("n must be 1 to 20".into()));
    }
    let Some(sim) = &app.sim else {
        return Err(ApiError::NotFound("no simulated shoe on this table".into()));
    };
    let dealt = sim
        .deal(n)
        .await
        .map_err(|e| ApiError::Unavailable(format!("simulated shoe: {e}")))?;
    Ok(Json(json!({"dealt": dealt.len()})).into_response())
}

/// `GET /api/alarm`: the alarm, or `null`.
pub async fn alarm(State(app): State<AppState>) -> Response {
    let s = app.table.snapshot();
    Json(json!({"state": s.state, "alarm": s.alarm, "broken": s.broken})).into_response()
}

/// `?last=N`.
#[derive(Deserialize)]
pub struct ResultsQuery {
    last: Option<usize>,
}

/// `GET /api/results?last=N`: the last N settlements (public: results only).
pub async fn results(
    State(app): State<AppState>,
    Query(q): Query<ResultsQuery>,
) -> Result<Response, ApiError> {
    let reader = app
        .reader
        .as_ref()
        .ok_or_else(|| ApiError::Unavailable("the store could not be opened".into()))?;
    let table = app.table.snapshot().table.clone();
    let all = reader
        .results(&table)
        .await
        .map_err(|e| ApiError::Unavailable(e.to_string()))?;
    let n = q.last.unwrap_or(10).min(1000);
    let from = all.len().saturating_sub(n);
    Ok(Json(&all[from..]).into_response())
}

/// `GET /api/rounds/{round}`: one round recalled from the store (log rows and result).
pub async fn round(
    State(app): State<AppState>,
    Path(number): Path<String>,
) -> Result<Response, ApiError> {
    let number: u64 = number
        .parse()
        .map_err(|_| ApiError::Malformed(format!("not a round number: {number}")))?;
    let reader = app
        .reader
        .as_ref()
        .ok_or_else(|| ApiError::Unavailable("the store could not be opened".into()))?;
    let table = app.table.snapshot().table.clone();
    let rounds = reader
        .recall(&table, 1000)
        .await
        .map_err(|e| ApiError::Unavailable(e.to_string()))?;
    let found = rounds
        .iter()
        .find(|r| r.round == number)
        .ok_or_else(|| ApiError::NotFound(format!("round {number} is not among the last 1000")))?;
    Ok(Json(found.to_json()).into_response())
}

/// `?since=SEQ`.
#[derive(Deserialize)]
pub struct AuditQuery {
    since: Option<u64>,
}

/// `GET /api/audit?since=SEQ`: audit rows after `since` (default 0), at most 1,000, oldest
/// first, as `croupier audit export` writes them.
pub async fn audit(
    State(app): State<AppState>,
    Query(q): Query<AuditQuery>,
) -> Result<Response, ApiError> {
    let auth = app
        .auth
        .as_ref()
        .ok_or_else(|| ApiError::Unavailable("accounts are unavailable".into()))?;
    let mut conn = auth
        .pool()
        .acquire()
        .await
        .map_err(|e| ApiError::Unavailable(e.to_string()))?;
    let mut rows = crate::store::audit::rows_since(&mut conn, q.since.unwrap_or(0))
        .await
        .map_err(|e| ApiError::Unavailable(e.to_string()))?;
    rows.truncate(1000);
    Ok(Json(rows).into_response())
}

/// Any other `/api/...` path.
pub async fn no_route() -> ApiError {
    ApiError::NotFound("no such endpoint".into())
}
