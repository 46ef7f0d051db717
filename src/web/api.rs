//! The JSON API for the panel, seat terminals and remote platforms. Every error is
//! `{"error": {"code": "...", "message": "..."}}` with a stable code; a malformed request
//! gets a 400 and changes nothing — including the answers axum gives before a handler
//! runs (a rejected path, query or body, 405, 413), which [`json_errors`] puts in the same
//! shape. The contract is generated from these handlers (see `super::openapi`, served at
//! `/api/openapi.json`).

use super::body::{JsonBody, RequestBody};
use super::view::{dealer_view, public_view};
use super::AppState;
use crate::engine::{Action, Input, SeatBets};
use crate::store::Source;
use crate::table::{BetError, SubmitError};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::BTreeMap;
use utoipa::{IntoParams, IntoResponses, ToSchema};

/// The body of a POST that carries nothing: `{}` (any JSON object; nothing is read). Its
/// `Content-Type: application/json` is what counts — a cross-site form cannot send it —
/// so the contract documents the body rather than answering a bodyless POST 415 unannounced.
#[derive(Deserialize, ToSchema)]
#[schema(as = Empty)]
pub struct EmptyBody {}

impl RequestBody for EmptyBody {
    // Nothing is read: a 400 has nothing to show.
    const EXAMPLE: &'static str = "";
}

/// How the document describes an [`EmptyBody`] request, one text for every such POST.
pub(super) const EMPTY_BODY: &str = "`{}` (any JSON object: nothing is read), or no body at all; either way as `Content-Type: application/json` (415 otherwise: a cross-site form cannot send it)";

/// Every error's body: `{"error": {"code": "...", "message": "..."}}`.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[schema(as = Error)]
pub struct ErrorBody {
    /// What went wrong.
    pub error: ErrorDetail,
}

/// The error inside [`ErrorBody`].
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ErrorDetail {
    /// The stable machine-readable code (`malformed`, `unauthenticated`, `not_found`, ...).
    pub code: String,
    /// What to tell a person.
    pub message: String,
}

/// How the document names a refusal for being out of service.
pub(super) const OUT_OF_SERVICE: &str = "Out of service";

/// The refusals of any request that moves the table, whatever it asks.
#[derive(IntoResponses)]
pub enum TableRefusals {
    /// An alarm locks the table (`locked`).
    #[response(status = 423, description = "The table is locked by an alarm")]
    Locked(ErrorBody),
    /// The table is stopped or its store failed (`out_of_service`, `stopped`,
    /// `store_failed`, ...).
    #[response(status = 503, description = OUT_OF_SERVICE)]
    OutOfService(ErrorBody),
}

/// The refusal of a request the table cannot serve now, as [`TableRefusals`] says it, for
/// a request an alarm's lock does not stop.
#[derive(IntoResponses)]
#[response(status = 503, description = OUT_OF_SERVICE)]
pub struct OutOfService(pub ErrorBody);

/// The refusal of a request that needs the betting window open when none is.
#[derive(IntoResponses)]
#[response(
    status = 409,
    description = "No window is open (`betting_closed`, ...)"
)]
pub struct NoWindow(pub ErrorBody);

/// The answer of a request the table applied: the row it was recorded as, once durable.
#[derive(IntoResponses)]
#[response(status = 200, description = "Applied and durable")]
pub struct Applied(pub Seq);

/// The refusal of a request that reads the store when the store cannot be read (not
/// opened, or the read failed).
#[derive(IntoResponses)]
#[response(status = 503, description = "The store cannot be read")]
pub struct StoreUnreadable(pub ErrorBody);

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
    /// A decision sent through the dealer's API for a seat a remote player holds (409):
    /// that seat's choices are its player's, made on their own screen (or by the table's
    /// timer when they run out of time).
    #[error("seat {0} is a remote player's: they decide on their own screen, not the panel")]
    RemoteSeat(crate::engine::SeatId),
    /// A player's dispute token that does not match the table, round and seat.
    #[error("the dispute token does not match this table, round and seat")]
    InvalidToken,
    /// A dispute refusal.
    #[error(transparent)]
    Dispute(#[from] crate::table::DisputeError),
    /// An alarm clearing refusal.
    #[error(transparent)]
    Clear(#[from] crate::table::ClearError),
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
    /// Too many logins at once (429): try again.
    #[error("too many logins at once: try again in a second")]
    TooManyLogins,
    /// Too many failed logins from this address (429).
    #[error("too many failed logins from this address: try again in {0} s")]
    TooManyAttempts(u64),
    /// An answer given before any handler ran (axum's rejection of a path, query or body,
    /// 405, 413), put in the one error shape by [`json_errors`].
    #[error("{message}")]
    Http {
        /// Its status.
        status: StatusCode,
        /// Its text.
        message: String,
    },
}

impl ApiError {
    /// The stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::Malformed(_) => "malformed",
            ApiError::Bet(e) => e.code(),
            ApiError::Submit(e) => e.code(),
            ApiError::Dispute(e) => e.code(),
            ApiError::Clear(e) => e.code(),
            ApiError::NotFound(_) => "not_found",
            ApiError::Unavailable(_) => "unavailable",
            ApiError::Unauthenticated => "unauthenticated",
            ApiError::Forbidden(_) => "forbidden",
            ApiError::JsonRequired => "json_required",
            ApiError::InvalidCredentials => "invalid_credentials",
            ApiError::AccountLocked(_) => "account_locked",
            ApiError::TooManyLogins => "too_many_logins",
            ApiError::TooManyAttempts(_) => "too_many_attempts",
            ApiError::InvalidToken => "invalid_token",
            ApiError::RemoteSeat(_) => "seat_is_remote",
            ApiError::Http { status, .. } => match status.as_u16() {
                400 | 422 => "malformed",
                404 => "not_found",
                405 => "method_not_allowed",
                413 => "too_large",
                415 => "unsupported_media_type",
                426 => "upgrade_required",
                s if s >= 500 => "unavailable",
                _ => "rejected",
            },
        }
    }

    /// Its HTTP status.
    pub(super) fn status(&self) -> StatusCode {
        if let ApiError::Http { status, .. } = self {
            // A rejection's 422 (JSON that does not fit) is a malformed request here.
            return match status.as_u16() {
                422 => StatusCode::BAD_REQUEST,
                _ => *status,
            };
        }
        match self.code() {
            "malformed" => StatusCode::BAD_REQUEST,
            "invalid_bet" => StatusCode::UNPROCESSABLE_ENTITY,
            "not_found" | "no_dispute" => StatusCode::NOT_FOUND,
            "locked" | "account_locked" => StatusCode::LOCKED,
            "unauthenticated" | "invalid_credentials" => StatusCode::UNAUTHORIZED,
            "forbidden" | "invalid_token" => StatusCode::FORBIDDEN,
            "json_required" => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "too_many_logins" | "too_many_attempts" => StatusCode::TOO_MANY_REQUESTS,
            "out_of_service" | "stopped" | "unavailable" | "store_failed" | "not_recorded" => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            _ => StatusCode::CONFLICT,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code().into(),
                message: self.to_string(),
            },
        };
        let mut resp = (self.status(), Json(body)).into_response();
        if self.status() == StatusCode::TOO_MANY_REQUESTS {
            let after = match &self {
                ApiError::TooManyAttempts(seconds) => *seconds,
                _ => 1,
            };
            resp.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(after),
            );
        }
        resp
    }
}

/// What a handler of the API answers: its response, or an [`ApiError`] in the one error
/// shape.
pub type Answer = Result<Response, ApiError>;

/// The longest error text [`json_errors`] reads from a response it reshapes (axum's
/// rejections are one line).
const MAX_REJECTION_TEXT: usize = 4096;

/// Middleware: any error answer (4xx, 5xx) that is not JSON — axum's rejections of a path,
/// query or body, its 405 and 413, an unknown asset — becomes the one error shape, with
/// the same status. `/healthz` keeps its text (probes read the status; people the text).
pub async fn json_errors(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let plain_ok = req.uri().path() == "/healthz";
    let resp = next.run(req).await;
    let status = resp.status();
    let is_json = resp
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if status.as_u16() < 400 || is_json || plain_ok {
        return resp;
    }
    let (parts, body) = resp.into_parts();
    let text = axum::body::to_bytes(body, MAX_REJECTION_TEXT)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .unwrap_or_default();
    let message = if text.is_empty() {
        status
            .canonical_reason()
            .unwrap_or("request refused")
            .to_lowercase()
    } else {
        text
    };
    let mut out = ApiError::Http { status, message }.into_response();
    // Keep what the refusal said beside its body (`Allow` on a 405, say).
    for (name, value) in parts.headers.iter() {
        if name != axum::http::header::CONTENT_TYPE && name != axum::http::header::CONTENT_LENGTH {
            out.headers_mut().insert(name.clone(), value.clone());
        }
    }
    out
}

/// A `u64` parameter held to the `int64` its schema says (utoipa writes `u64` so): past
/// 2^63 - 1 is a 400, as the document promises.
pub(super) fn int64(name: &str, value: u64) -> Result<u64, ApiError> {
    if i64::try_from(value).is_err() {
        return Err(ApiError::Malformed(format!(
            "{name}={value}: past the largest int64"
        )));
    }
    Ok(value)
}

/// The most a `?last=N` list serves (`/api/results`, `/api/rounds`).
const MAX_LAST: u16 = 1000;

/// Refuses a `?last=N` past [`MAX_LAST`] (`what`: what the list holds): said, not quietly
/// cut to it.
pub(super) fn within_max_last<N>(last: N, what: &str) -> Result<N, ApiError>
where
    N: PartialOrd + From<u16> + std::fmt::Display,
{
    if last > N::from(MAX_LAST) {
        return Err(ApiError::Malformed(format!(
            "last={last}: at most {MAX_LAST} {what} are served"
        )));
    }
    Ok(last)
}

/// The store's reader (503 when it could not be opened) and the table it reads for.
fn store(app: &AppState) -> Result<(&crate::store::Reader, String), ApiError> {
    let reader = app
        .reader
        .as_ref()
        .ok_or_else(|| ApiError::Unavailable("the store could not be opened".into()))?;
    Ok((reader, app.table.snapshot().table.clone()))
}

/// The last `last` rounds recalled from the store (503 when it cannot be read).
pub(super) async fn recall(
    app: &AppState,
    last: u32,
) -> Result<Vec<crate::store::RecalledRound>, ApiError> {
    let (reader, table) = store(app)?;
    reader
        .recall(&table, last)
        .await
        .map_err(|e| ApiError::Unavailable(e.to_string()))
}

/// `{"seq": N}`: the log row an accepted request was recorded as, once durable.
#[derive(Debug, Serialize, ToSchema)]
pub struct Seq {
    /// The row's sequence number.
    pub seq: u64,
}

/// `GET /api/view`: the dealer panel's view.
#[utoipa::path(get, path = "/api/view", tag = "dealer",
    responses((status = 200, description = "The dealer panel's view", body = super::openapi::DealerView)))]
pub async fn view(State(app): State<AppState>) -> Response {
    Json(dealer_view(
        &app.table.snapshot(),
        &app.limits,
        app.sim.is_some(),
        app.clock_now(),
    ))
    .into_response()
}

/// `GET /api/public`: the public view.
#[utoipa::path(get, path = "/api/public", tag = "public",
    responses((status = 200, description = "The public view (no hidden card)", body = super::openapi::PublicView)))]
pub async fn public(State(app): State<AppState>) -> Response {
    Json(public_view(&app.table.snapshot())).into_response()
}

/// The betting window's state after `POST /api/betting/open` or `/close`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Betting {
    /// Whether the window is open now.
    pub open: bool,
    /// The round's opening row (on closing; absent when no round opened).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
}

/// `POST /api/betting/open`.
#[utoipa::path(post, path = "/api/betting/open", tag = "dealer", request_body(content = EmptyBody, content_type = "application/json", description = EMPTY_BODY),
    responses(
        (status = 200, description = "The window is open", body = Betting),
        (status = 409, description = "Not between rounds (`not_taking_bets`, ...)", body = ErrorBody),
        TableRefusals))]
pub async fn open_betting(State(app): State<AppState>, _: JsonBody<EmptyBody>) -> Answer {
    app.table.open_betting().await?;
    Ok(Json(Betting {
        open: true,
        seq: None,
    })
    .into_response())
}

/// `POST /api/betting/close`: opens the round with the collected bets.
#[utoipa::path(post, path = "/api/betting/close", tag = "dealer", request_body(content = EmptyBody, content_type = "application/json", description = EMPTY_BODY),
    responses(
        (status = 200, description = "The round opened with the bets collected", body = Betting),
        NoWindow,
        TableRefusals))]
pub async fn close_betting(State(app): State<AppState>, _: JsonBody<EmptyBody>) -> Answer {
    let seq = app.table.close_betting(Source::Api).await?;
    Ok(Json(Betting { open: false, seq }).into_response())
}

/// A bet: the seat, the main bet and side bets in minor units.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
// Its own name: the players' `BetBody` (`play::seat_bets`) would otherwise replace it in the
// document, seat optional and all.
#[schema(as = StaffBet)]
pub struct BetBody {
    /// The seat (1-based).
    #[schema(minimum = 1, maximum = 255)]
    seat: u8,
    /// The main bet, in minor units (0 withdraws the seat's bet).
    #[schema(minimum = 0)]
    main: i64,
    /// Side bets by name, in minor units (none negative).
    #[serde(default)]
    side: SideBets,
    /// Who plays the seat (a label for the record).
    #[serde(default)]
    player: Option<String>,
}

impl RequestBody for BetBody {
    const EXAMPLE: &'static str = r#"{"seat": N, "main": AMOUNT, "side": {"NAME": AMOUNT}}"#;
}

/// An accepted bet.
#[derive(Debug, Serialize, ToSchema)]
pub struct BetAccepted {
    /// Always true.
    pub ok: bool,
    /// The round the bet is for (`null` for a withdrawal).
    pub round: Option<u64>,
    /// Lets the seat's player dispute that round without an account (`null` for a
    /// withdrawal, or without accounts).
    pub dispute_token: Option<String>,
}

/// `POST /api/bets`: `{"seat": 3, "main": 100, "side": {"pair": 5}}` into the open window.
/// Answers `{"ok": true, "round": N, "dispute_token": "..."}`: the token lets the seat's
/// player dispute round N without an account (`auth::player_token`); both are `null` for a
/// withdrawal.
#[utoipa::path(post, path = "/api/bets", tag = "dealer", request_body = BetBody,
    responses(
        (status = 200, description = "Accepted into the window", body = BetAccepted),
        (status = 400, description = "Not a bet", body = ErrorBody),
        NoWindow,
        (status = 422, description = "Refused by the limits (`invalid_bet`)", body = ErrorBody),
        TableRefusals))]
pub async fn place_bet(State(app): State<AppState>, JsonBody(b): JsonBody<BetBody>) -> Answer {
    if b.main < 0 || b.side.values().any(|a| *a < 0) {
        return Err(BetError::InvalidBet("amounts cannot be negative".into()).into());
    }
    let bet = SeatBets {
        seat: b.seat,
        main: b.main,
        side: b.side.0.into_iter().collect(),
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
    Ok(Json(BetAccepted {
        ok: true,
        round,
        dispute_token: token,
    })
    .into_response())
}

/// A player's decision at a seat.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = StaffDecision)]
pub struct DecisionBody {
    /// The seat (1-based).
    #[schema(minimum = 1, maximum = 255)]
    seat: u8,
    /// What the player does.
    #[schema(schema_with = super::openapi::action_schema)]
    action: Action,
}

impl RequestBody for DecisionBody {
    const EXAMPLE: &'static str = r#"{"seat": N, "action": "hit|stand|double|..."}"#;
}

/// `POST /api/decision`: `{"seat": 3, "action": "stand"}` (insurance answers included).
#[utoipa::path(post, path = "/api/decision", tag = "dealer", request_body = DecisionBody,
    responses(
        Applied,
        (status = 400, description = "Not a decision", body = ErrorBody),
        (status = 409, description = "Refused by the round (`not_your_turn`, `action_not_allowed`, ...), or the seat is a remote player's (`seat_is_remote`)", body = ErrorBody),
        TableRefusals))]
pub async fn decision(State(app): State<AppState>, JsonBody(d): JsonBody<DecisionBody>) -> Answer {
    if app
        .play
        .as_ref()
        .is_some_and(|p| p.remote.is_remote(d.seat))
    {
        return Err(ApiError::RemoteSeat(d.seat));
    }
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
    Ok(Json(Seq { seq }).into_response())
}

/// `POST /api/shuffle`: a new shoe (and, with the simulator, a freshly shuffled one in it).
#[utoipa::path(post, path = "/api/shuffle", tag = "dealer", request_body(content = EmptyBody, content_type = "application/json", description = EMPTY_BODY),
    responses(
        (status = 200, description = "Recorded and durable", body = Seq),
        (status = 409, description = "Not between rounds", body = ErrorBody),
        (status = 423, description = "The table is locked by an alarm", body = ErrorBody),
        (status = 503, description = "Out of service, or the simulated shoe failed", body = ErrorBody)))]
pub async fn shuffle(State(app): State<AppState>, _: JsonBody<EmptyBody>) -> Answer {
    let seq = app.table.submit(Input::Shuffle, Source::Api).await?;
    if let Some(sim) = &app.sim {
        let items = crate::table::demo::Demo::fresh_shoe(
            &app.variant,
            sim.making,
            &mut fastrand::Rng::new(),
        );
        sim.driver
            .load(items)
            .await
            .map_err(|e| ApiError::Unavailable(format!("simulated shoe: {e}")))?;
    }
    Ok(Json(Seq { seq }).into_response())
}

/// How many cards the simulated shoe deals (the body may be empty: one).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DealBody {
    /// 1 to 20 (default 1).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 20)]
    n: Option<usize>,
}

impl RequestBody for DealBody {
    const EXAMPLE: &'static str = r#"{"n": N}"#;
}

/// What the simulated shoe dealt.
#[derive(Debug, Serialize, ToSchema)]
pub struct Dealt {
    /// How many cards.
    pub dealt: usize,
}

/// `POST /api/sim/deal`: the simulated shoe deals `n` (default 1, max 20) cards.
#[utoipa::path(post, path = "/api/sim/deal", tag = "dealer", request_body(content = DealBody, description = "`{\"n\": N}`; an empty body deals one"),
    responses(
        (status = 200, description = "Dealt", body = Dealt),
        (status = 400, description = "n is not 1 to 20", body = ErrorBody),
        (status = 404, description = "No simulated shoe on this table", body = ErrorBody),
        (status = 503, description = "The simulated shoe failed", body = ErrorBody)))]
pub async fn sim_deal(State(app): State<AppState>, JsonBody(d): JsonBody<DealBody>) -> Answer {
    // An empty body reads as `{}`: one card.
    let n = d.n.unwrap_or(1);
    if !(1..=20).contains(&n) {
        return Err(ApiError::Malformed("n must be 1 to 20".into()));
    }
    let Some(sim) = &app.sim else {
        return Err(ApiError::NotFound("no simulated shoe on this table".into()));
    };
    let dealt = sim
        .driver
        .deal(n)
        .await
        .map_err(|e| ApiError::Unavailable(format!("simulated shoe: {e}")))?;
    Ok(Json(Dealt { dealt: dealt.len() }).into_response())
}

/// `GET /api/alarm`: the alarm, or `null`.
#[utoipa::path(get, path = "/api/alarm", tag = "dealer",
    responses((status = 200, description = "The table's state, its alarm (or null) and why the store is broken (or null)", body = super::openapi::AlarmStatus)))]
pub async fn alarm(State(app): State<AppState>) -> Response {
    let s = app.table.snapshot();
    Json(json!({"state": s.state, "alarm": s.alarm, "broken": s.broken})).into_response()
}

/// `?last=N`.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ResultsQuery {
    /// How many (default 10, at most 1000).
    #[param(maximum = 1000)]
    last: Option<usize>,
}

/// `GET /api/results?last=N`: the last N settlements (public: results only).
#[utoipa::path(get, path = "/api/results", tag = "public", params(ResultsQuery),
    responses(
        (status = 200, description = "The last N settlements, oldest first", body = [super::openapi::SettledResult]),
        (status = 400, description = "Not a count, or more than 1000", body = ErrorBody),
        StoreUnreadable))]
pub async fn results(State(app): State<AppState>, Query(q): Query<ResultsQuery>) -> Answer {
    // Refused before the store is read: a bad request costs no read of every result.
    let n = within_max_last(q.last.unwrap_or(10), "results")?;
    let (reader, table) = store(&app)?;
    let all = reader
        .results(&table)
        .await
        .map_err(|e| ApiError::Unavailable(e.to_string()))?;
    let from = all.len().saturating_sub(n);
    Ok(Json(&all[from..]).into_response())
}

/// `GET /api/rounds/{round}`: one round recalled from the store (log rows and result).
#[utoipa::path(get, path = "/api/rounds/{round}", tag = "dealer",
    params(("round" = u64, Path, description = "The round's number")),
    responses(
        (status = 200, description = "The round", body = super::openapi::RoundRecall),
        (status = 400, description = "Not a round number", body = ErrorBody),
        (status = 404, description = "Not among the last 1000 rounds", body = ErrorBody),
        StoreUnreadable))]
pub async fn round(State(app): State<AppState>, Path(number): Path<String>) -> Answer {
    let number: u64 = number
        .parse()
        .map_err(|_| ApiError::Malformed(format!("not a round number: {number}")))?;
    let number = int64("round", number)?;
    let rounds = recall(&app, 1000).await?;
    let found = rounds
        .iter()
        .find(|r| r.round == number)
        .ok_or_else(|| ApiError::NotFound(format!("round {number} is not among the last 1000")))?;
    Ok(Json(found.to_json()).into_response())
}

/// `?since=SEQ`.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Rows after this sequence number (default 0).
    since: Option<u64>,
}

/// `GET /api/audit?since=SEQ`: audit rows after `since` (default 0), at most 1,000, oldest
/// first, as `croupier audit export` writes them.
#[utoipa::path(get, path = "/api/audit", tag = "admin", params(AuditQuery),
    responses(
        (status = 200, description = "Audit rows, oldest first", body = [super::openapi::AuditRow]),
        (status = 400, description = "Not a sequence number", body = ErrorBody),
        (status = 503, description = "Accounts are unavailable", body = ErrorBody)))]
pub async fn audit(State(app): State<AppState>, Query(q): Query<AuditQuery>) -> Answer {
    let auth = app
        .auth
        .as_ref()
        .ok_or_else(|| ApiError::Unavailable("accounts are unavailable".into()))?;
    let mut conn = auth
        .pool()
        .acquire()
        .await
        .map_err(|e| ApiError::Unavailable(e.to_string()))?;
    let since = int64("since", q.since.unwrap_or(0))?;
    let mut rows = crate::store::audit::rows_since(&mut conn, since)
        .await
        .map_err(|e| ApiError::Unavailable(e.to_string()))?;
    rows.truncate(1000);
    Ok(Json(rows).into_response())
}

/// Any other `/api/...` path.
pub async fn no_route() -> ApiError {
    ApiError::NotFound("no such endpoint".into())
}

/// An amount in minor units, as bodies carry it (`i64`, never negative): the schema of
/// side bets' values (`{"NAME": AMOUNT}`).
pub struct Amount;

impl utoipa::PartialSchema for Amount {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
            .minimum(Some(0))
            .description(Some("An amount in minor units (never negative)."))
            .into()
    }
}

impl ToSchema for Amount {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("Amount")
    }
}

/// Side bets by name, each an amount in minor units (`{"NAME": AMOUNT}`, none negative):
/// what a bet's `side` holds.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(transparent)]
#[schema(value_type = BTreeMap<String, Amount>)]
pub struct SideBets(pub BTreeMap<String, i64>);

impl std::ops::Deref for SideBets {
    type Target = BTreeMap<String, i64>;

    fn deref(&self) -> &BTreeMap<String, i64> {
        &self.0
    }
}
