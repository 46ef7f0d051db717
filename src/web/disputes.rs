//! The dispute API: raise a dispute (the dealer, or a player with their seat's token),
//! propose a resolution and see the corrected round, confirm or withdraw it, list past
//! disputes. The table task does the work (`table::dispute`); these handlers parse, check
//! and answer with stable codes. Who acts (`by`) comes from the session (see `web::mod`'s
//! router), never from the body.

use super::api::{parse, ApiError};
use super::AppState;
use crate::table::dispute::{Origin, Resolution};
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::json;

/// A reason is required on the record: at least this many characters after trimming.
const MIN_REASON: usize = 3;

fn reason(text: &str) -> Result<String, ApiError> {
    let t = text.trim();
    if t.chars().count() < MIN_REASON {
        return Err(ApiError::Malformed(
            "a reason is required (at least 3 characters): it goes on the record".into(),
        ));
    }
    Ok(t.to_string())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RaiseBody {
    #[serde(default)]
    seat: Option<u8>,
    reason: String,
}

/// `POST /api/disputes`: `{"seat": 3, "reason": "..."}` — the dealer (or a supervisor)
/// raises a dispute on the round in play or the provisional one. 200 `{"dispute": ID}`.
pub async fn raise(
    app: AppState,
    by: String,
    origin: Origin,
    body: String,
) -> Result<Response, ApiError> {
    let b: RaiseBody = parse(&body, r#"{"seat": N, "reason": "..."}"#)?;
    let id = app
        .table
        .raise_dispute(origin, b.seat, None, reason(&b.reason)?, by)
        .await?;
    Ok(Json(json!({"dispute": id})).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlayerBody {
    round: u64,
    seat: u8,
    token: String,
    reason: String,
}

/// `POST /api/disputes/player`: `{"round": N, "seat": 3, "token": "...", "reason": "..."}`
/// — a player raises a dispute with the token their accepted bet answered
/// (`dispute_token`), no account needed. A token for another round, seat or table is
/// refused (403 `invalid_token`); a final round is `round_final`.
pub async fn raise_by_player(
    State(app): State<AppState>,
    body: String,
) -> Result<Response, ApiError> {
    let b: PlayerBody = parse(
        &body,
        r#"{"round": N, "seat": N, "token": "...", "reason": "..."}"#,
    )?;
    let reason = reason(&b.reason)?;
    let auth = app
        .auth
        .as_ref()
        .ok_or_else(|| ApiError::Unavailable("accounts are not available".into()))?;
    let table = app.table.snapshot().table.clone();
    if !crate::auth::player_token::verify(auth.player_key(), &table, b.round, b.seat, &b.token) {
        return Err(ApiError::InvalidToken);
    }
    let id = app
        .table
        .raise_dispute(
            Origin::Player,
            Some(b.seat),
            Some(b.round),
            reason,
            format!("player:seat {}", b.seat),
        )
        .await?;
    Ok(Json(json!({"dispute": id})).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProposeBody {
    resolution: Resolution,
    reason: String,
}

/// `POST /api/disputes/{id}/propose`: `{"resolution": {"op": "void", "index": 3, "card":
/// "2D"}, "reason": "..."}` — 200 with the preview of the corrected round.
pub async fn propose(
    app: AppState,
    by: String,
    id: u64,
    body: String,
) -> Result<Response, ApiError> {
    let b: ProposeBody = parse(
        &body,
        r#"{"resolution": {"op": "reject|void|correct|move|undo_decision|cancel", ...}, "reason": "..."}"#,
    )?;
    let preview = app
        .table
        .propose(id, b.resolution, reason(&b.reason)?, by)
        .await?;
    // Redacted like the panel: a face-down card in the corrected round stays hidden.
    Ok(Json(super::view::panel_proposal(&preview)).into_response())
}

/// What a confirmation or a withdrawal names: the proposal as shown.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NamedProposal {
    /// The `proposal` hash of the preview the supervisor was shown.
    proposal: String,
}

const NAMED: &str = r#"{"proposal": "<the hash of the preview shown>"}"#;

/// `POST /api/disputes/{id}/confirm`: `{"proposal": "<hash>"}` — records and applies the
/// proposal with that hash. 200 `{"seq": N}` once durable; 409 `proposal_changed` when
/// another proposal (or none) stands now, `two_person_rule` when the rule refuses `by`.
pub async fn confirm(
    app: AppState,
    by: String,
    id: u64,
    body: String,
) -> Result<Response, ApiError> {
    let b: NamedProposal = parse(&body, NAMED)?;
    let seq = app.table.confirm(id, b.proposal, by).await?;
    Ok(Json(json!({"seq": seq})).into_response())
}

/// `POST /api/disputes/{id}/withdraw`: `{"proposal": "<hash>"}` — drops the proposal
/// with that hash; the audit log records who withdrew whose proposal.
pub async fn withdraw(
    app: AppState,
    by: String,
    id: u64,
    body: String,
) -> Result<Response, ApiError> {
    let b: NamedProposal = parse(&body, NAMED)?;
    app.table.withdraw(id, b.proposal, by).await?;
    Ok(Json(json!({"withdrawn": true})).into_response())
}

/// `GET /api/disputes/current`: the open dispute as the panel shows it (404 when none).
pub async fn current(State(app): State<AppState>) -> Result<Response, ApiError> {
    match super::view::panel_dispute(&app.table.snapshot()) {
        Some(d) => Ok(Json(d).into_response()),
        None => Err(ApiError::NotFound("no dispute is open".into())),
    }
}

/// `GET /api/disputes`: the last 100 disputes from the store, newest first.
pub async fn history(State(app): State<AppState>) -> Result<Response, ApiError> {
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
