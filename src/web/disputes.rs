//! The dispute API: raise a dispute (the dealer, or a player with their seat's token),
//! propose a resolution and see the corrected round, confirm or withdraw it, list past
//! disputes. The table task does the work (`table::dispute`); these handlers parse, check
//! and answer with stable codes. Who acts (`by`) comes from the session (see `web::mod`'s
//! router), never from the body.

use super::api::{Answer, ApiError, Applied, ErrorBody, OutOfService, Seq, StoreUnreadable};
use super::body::{read_body, JsonBody, RequestBody};
use super::AppState;
use crate::auth::{Principal, Role};
use crate::table::dispute::{Origin, Resolution};
use axum::extract::{FromRequest, FromRequestParts, Path, Request, State};
use axum::response::IntoResponse;
use axum::Json;
use serde::{Deserialize, Serialize};
use utoipa::{IntoResponses, ToSchema};

/// A reason is required on the record: at least this many characters after trimming.
const MIN_REASON: usize = 3;

fn reason(text: &str) -> Result<String, ApiError> {
    let t = text.trim();
    if t.chars().count() < MIN_REASON {
        return Err(no_reason());
    }
    Ok(t.to_string())
}

/// The refusal of a body without a usable reason, whether the schema's `pattern` or
/// [`reason`] caught it: one message, which the panel turns into its own words.
fn no_reason() -> ApiError {
    ApiError::Malformed(
        "a reason is required (at least 3 characters): it goes on the record".into(),
    )
}

/// [`RequestBody::refusal`] for a body with a `reason`: when the reason is what the
/// contract refused (missing, blank, too short), the refusal says so in [`no_reason`]'s
/// words.
fn reason_refused(e: ApiError) -> ApiError {
    match &e {
        ApiError::Malformed(m) if m.contains("body.reason") || m.contains("reason`") => no_reason(),
        _ => e,
    }
}

/// A dispute raised by staff.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RaiseBody {
    /// The seat it is about (none: the whole round).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 255)]
    seat: Option<u8>,
    /// Why (at least 3 characters: it goes on the record).
    #[schema(pattern = r"\S[\s\S]+\S")]
    reason: String,
}

impl RequestBody for RaiseBody {
    const EXAMPLE: &'static str = r#"{"seat": N, "reason": "..."}"#;

    fn refusal(e: ApiError) -> ApiError {
        reason_refused(e)
    }
}

/// A raised dispute.
#[derive(Debug, Serialize, ToSchema)]
pub struct Raised {
    /// Its id.
    pub dispute: u64,
}

/// A withdrawn proposal.
#[derive(Debug, Serialize, ToSchema)]
pub struct Withdrawn {
    /// Always true.
    pub withdrawn: bool,
}

/// What both ways of raising a dispute answer (the staff's and a player's).
#[derive(IntoResponses)]
pub enum RaiseAnswers {
    /// Raised: its id.
    #[response(status = 200, description = "Raised: the round halts")]
    Raised(Raised),
    /// The body is not a dispute, or its reason is missing, blank or too short.
    #[response(status = 400, description = "Not a dispute, or no reason")]
    NotADispute(ErrorBody),
}

/// Raises the dispute at the table and answers its id (`{"dispute": ID}`).
async fn raise(
    app: &AppState,
    origin: Origin,
    (seat, round): (Option<u8>, Option<u64>),
    reason: String,
    by: String,
) -> Answer {
    let id = app
        .table
        .raise_dispute(origin, seat, round, reason, by)
        .await?;
    Ok(Json(Raised { dispute: id }).into_response())
}

/// `POST /api/disputes`: `{"seat": 3, "reason": "..."}` — the dealer (or a supervisor)
/// raises a dispute on the round in play or the provisional one. 200 `{"dispute": ID}`. A
/// supervisor who raises one does so on their own account.
#[utoipa::path(post, path = "/api/disputes", tag = "dealer", request_body = RaiseBody,
    responses(
        RaiseAnswers,
        (status = 409, description = "Refused (`dispute_open`, `no_round`, `round_final`, ...)", body = ErrorBody),
        OutOfService))]
pub async fn raise_by_staff(
    State(app): State<AppState>,
    who: Principal,
    JsonBody(b): JsonBody<RaiseBody>,
) -> Answer {
    let origin = if who.has(Role::Supervisor) {
        Origin::Supervisor
    } else {
        Origin::Dealer
    };
    let reason = reason(&b.reason)?;
    raise(&app, origin, (b.seat, None), reason, who.actor).await
}

/// A dispute raised by a player with their seat's token.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PlayerBody {
    /// The round.
    round: u64,
    /// The seat.
    #[schema(minimum = 1, maximum = 255)]
    seat: u8,
    /// The `dispute_token` the seat's accepted bet answered.
    token: String,
    /// Why (at least 3 characters).
    #[schema(pattern = r"\S[\s\S]+\S")]
    reason: String,
}

impl RequestBody for PlayerBody {
    const EXAMPLE: &'static str = r#"{"round": N, "seat": N, "token": "...", "reason": "..."}"#;

    fn refusal(e: ApiError) -> ApiError {
        reason_refused(e)
    }
}

/// `POST /api/disputes/player`: `{"round": N, "seat": 3, "token": "...", "reason": "..."}`
/// — a player raises a dispute with the token their accepted bet answered
/// (`dispute_token`), no account needed. A token for another round, seat or table is
/// refused (403 `invalid_token`); a final round is `round_final`.
#[utoipa::path(post, path = "/api/disputes/player", tag = "public", request_body = PlayerBody,
    responses(
        RaiseAnswers,
        (status = 403, description = "The token does not match (`invalid_token`)", body = ErrorBody),
        (status = 409, description = "Refused (`dispute_open`, `round_final`, ...)", body = ErrorBody),
        (status = 503, description = "Out of service, or accounts unavailable", body = ErrorBody)))]
pub async fn raise_by_player(
    State(app): State<AppState>,
    JsonBody(b): JsonBody<PlayerBody>,
) -> Answer {
    let reason = reason(&b.reason)?;
    let auth = app
        .auth
        .as_ref()
        .ok_or_else(|| ApiError::Unavailable("accounts are not available".into()))?;
    let table = app.table.snapshot().table.clone();
    if !crate::auth::player_token::verify(auth.player_key(), &table, b.round, b.seat, &b.token) {
        return Err(ApiError::InvalidToken);
    }
    let by = format!("player:seat {}", b.seat);
    raise(
        &app,
        Origin::Player,
        (Some(b.seat), Some(b.round)),
        reason,
        by,
    )
    .await
}

/// A resolution proposed for a dispute.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProposeBody {
    /// What to do.
    resolution: Resolution,
    /// Why (at least 3 characters).
    #[schema(pattern = r"\S[\s\S]+\S")]
    reason: String,
}

impl RequestBody for ProposeBody {
    const EXAMPLE: &'static str = r#"{"resolution": {"op": "reject|void|correct|move|undo_decision|cancel", ...}, "reason": "..."}"#;

    fn refusal(e: ApiError) -> ApiError {
        reason_refused(e)
    }
}

/// What a confirmation or a withdrawal names: the proposal as shown.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NamedProposal {
    /// The `proposal` hash of the preview the supervisor was shown.
    proposal: String,
}

impl RequestBody for NamedProposal {
    const EXAMPLE: &'static str = r#"{"proposal": "<the hash of the preview shown>"}"#;
}

/// A supervisor's call on dispute `{id}` (`POST /api/disputes/{id}/...`): who calls (from
/// the session, never the body), the dispute's id (held to `int64`) and the call's body.
pub struct OnDispute<T> {
    app: AppState,
    by: String,
    id: u64,
    body: T,
}

impl<T: RequestBody> FromRequest<AppState> for OnDispute<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, app: &AppState) -> Result<OnDispute<T>, ApiError> {
        let (mut parts, body) = req.into_parts();
        let who = Principal::from_request_parts(&mut parts, app).await?;
        let Path(id) = Path::<u64>::from_request_parts(&mut parts, app)
            .await
            .map_err(|e| ApiError::Http {
                status: e.status(),
                message: e.body_text(),
            })?;
        let (headers, text) = super::body::text(Request::from_parts(parts, body), app).await?;
        let id = super::api::int64("id", id)?;
        Ok(OnDispute {
            app: app.clone(),
            by: who.actor,
            id,
            body: read_body(&headers, &text)?,
        })
    }
}

/// How the document names the refusal of a call on a dispute that is not open.
const NO_DISPUTE: &str = "No such dispute open (`no_dispute`)";

/// The answer of a call on a dispute that is not open (`no_dispute`).
#[derive(IntoResponses)]
#[response(status = 404, description = NO_DISPUTE)]
pub struct NoDispute(pub ErrorBody);

/// What a call that names a proposal (a confirmation, a withdrawal) may be refused with,
/// besides its own conflicts.
#[derive(IntoResponses)]
pub enum ProposalRefusals {
    /// The body names no proposal.
    #[response(status = 400, description = "Not a proposal's hash")]
    NotAHash(ErrorBody),
    /// No dispute with that id is open.
    #[response(status = 404, description = NO_DISPUTE)]
    NoDispute(ErrorBody),
    /// As [`OutOfService`].
    #[response(status = 503, description = super::api::OUT_OF_SERVICE)]
    OutOfService(ErrorBody),
}

/// The dispute's id in the path.
const ID: &str = "The dispute's id";

/// `POST /api/disputes/{id}/propose`: `{"resolution": {"op": "void", "index": 3, "card":
/// "2D"}, "reason": "..."}` — 200 with the preview of the corrected round.
#[utoipa::path(post, path = "/api/disputes/{id}/propose", tag = "supervisor", request_body = ProposeBody,
    params(("id" = u64, Path, description = ID)),
    responses(
        (status = 200, description = "The corrected round, previewed (its `proposal` hash names it)", body = super::openapi::ProposalPreview),
        (status = 400, description = "Not a proposal", body = ErrorBody),
        NoDispute,
        (status = 409, description = "Refused (`wrong_card`, `cannot_move`, `correction_does_not_replay`, ...)", body = ErrorBody),
        OutOfService))]
pub async fn propose(OnDispute { app, by, id, body }: OnDispute<ProposeBody>) -> Answer {
    let preview = app
        .table
        .propose(id, body.resolution, reason(&body.reason)?, by)
        .await?;
    // Redacted like the panel: a face-down card in the corrected round stays hidden.
    Ok(Json(super::view::panel_proposal(&preview)).into_response())
}

/// `POST /api/disputes/{id}/confirm`: `{"proposal": "<hash>"}` — records and applies the
/// proposal with that hash. 200 `{"seq": N}` once durable; 409 `proposal_changed` when
/// another proposal (or none) stands now, `two_person_rule` when the rule refuses the
/// caller.
#[utoipa::path(post, path = "/api/disputes/{id}/confirm", tag = "supervisor", request_body = NamedProposal,
    params(("id" = u64, Path, description = ID)),
    responses(
        Applied,
        (status = 409, description = "Refused (`proposal_changed`, `two_person_rule`, ...)", body = ErrorBody),
        ProposalRefusals))]
pub async fn confirm(OnDispute { app, by, id, body }: OnDispute<NamedProposal>) -> Answer {
    let seq = app.table.confirm(id, body.proposal, by).await?;
    Ok(Json(Seq { seq }).into_response())
}

/// `POST /api/disputes/{id}/withdraw`: `{"proposal": "<hash>"}` — drops the proposal
/// with that hash; the audit log records who withdrew whose proposal.
#[utoipa::path(post, path = "/api/disputes/{id}/withdraw", tag = "supervisor", request_body = NamedProposal,
    params(("id" = u64, Path, description = ID)),
    responses(
        (status = 200, description = "Withdrawn", body = Withdrawn),
        (status = 409, description = "Refused (`proposal_changed`, ...)", body = ErrorBody),
        ProposalRefusals))]
pub async fn withdraw(OnDispute { app, by, id, body }: OnDispute<NamedProposal>) -> Answer {
    app.table.withdraw(id, body.proposal, by).await?;
    Ok(Json(Withdrawn { withdrawn: true }).into_response())
}

/// `GET /api/disputes/current`: the open dispute as the panel shows it (404 when none).
#[utoipa::path(get, path = "/api/disputes/current", tag = "dealer",
    responses(
        (status = 200, description = "The open dispute as the panel shows it", body = super::openapi::PanelDispute),
        (status = 404, description = "No dispute is open", body = ErrorBody)))]
pub async fn current(State(app): State<AppState>) -> Answer {
    match super::view::panel_dispute(&app.table.snapshot()) {
        Some(d) => Ok(Json(d).into_response()),
        None => Err(ApiError::NotFound("no dispute is open".into())),
    }
}

/// `GET /api/disputes`: the last 100 disputes from the store, newest first.
#[utoipa::path(get, path = "/api/disputes", tag = "dealer",
    responses(
        (status = 200, description = "The last 100 disputes, newest first", body = [super::openapi::DisputeRow]),
        StoreUnreadable))]
pub async fn history(State(app): State<AppState>) -> Answer {
    let reader = app
        .reader
        .as_ref()
        .ok_or_else(|| ApiError::Unavailable("the store cannot be read".into()))?;
    let table = app.table.snapshot().table.clone();
    let rows = reader
        .disputes(&table, 100)
        .await
        .map_err(|e| ApiError::Unavailable(e.to_string()))?;
    Ok(Json(rows).into_response())
}
