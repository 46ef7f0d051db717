//! The operator's platform's routes (`POST /api/play/sessions`, `/sessions/revoke`,
//! `/players/disable`): authenticated by the platform's own credential (`croupier player
//! platform-key`), never a player's launch token nor a staff cookie.

use super::{no_remote_play, Answer, PlayError};
use crate::play::Play;
use crate::web::body::{read_body, RequestBody};
use crate::web::AppState;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::Json;
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;
use utoipa::ToSchema;

/// The documented 503 of the routes that write the sessions.
const NO_DATABASE: &str = "The database did not answer";

/// A POST of the operator's platform: its credential checked (as [`platform`]), then its
/// body (read as `web::body` reads every body).
pub struct PlatformPost<T> {
    play: Arc<Play>,
    body: T,
}

impl<T: RequestBody> FromRequest<AppState> for PlatformPost<T> {
    type Rejection = PlayError;

    async fn from_request(req: Request, app: &AppState) -> Result<PlatformPost<T>, PlayError> {
        let (headers, text) = crate::web::body::text(req, app).await?;
        let play = platform(app, &headers).await?;
        Ok(PlatformPost {
            play,
            body: read_body(&headers, &text)?,
        })
    }
}

/// The platform's credential, or 401.
async fn platform(app: &AppState, headers: &HeaderMap) -> Result<Arc<Play>, PlayError> {
    let Some(play) = app.play.clone() else {
        return Err(no_remote_play());
    };
    if !crate::play::sessions::is_platform(&play.pool, super::bearer(headers)).await {
        return Err(PlayError::new(
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            "the platform's credential is needed",
        ));
    }
    Ok(play)
}

/// A session to open (`POST /api/play/sessions`).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionBody {
    /// The platform's id of the player: 1-64 letters, digits, `-` or `_`.
    #[schema(pattern = "^[A-Za-z0-9_-]{1,64}$")]
    player: String,
    /// The name shown (default: the id); used when the player is new.
    #[serde(default)]
    name: Option<String>,
}

impl RequestBody for SessionBody {
    const EXAMPLE: &'static str = r#"{"player": ID, "name": "..."}"#;
}

/// What to revoke (`POST /api/play/sessions/revoke`): exactly one of the two.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RevokeBody {
    /// Every live session of this player.
    #[serde(default)]
    player: Option<String>,
    /// One launch token (or its launch link).
    #[serde(default)]
    token: Option<String>,
}

impl RequestBody for RevokeBody {
    const EXAMPLE: &'static str = r#"{"player": ID} or {"token": TOKEN}"#;
}

/// A player disabled or enabled (`POST /api/play/players/disable`).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DisableBody {
    /// The player.
    player: String,
    /// `true` disables (every session revoked, none opened), `false` enables again.
    disabled: bool,
}

impl RequestBody for DisableBody {
    const EXAMPLE: &'static str = r#"{"player": ID, "disabled": true}"#;
}

/// `POST /api/play/sessions` (the platform's credential, `croupier player platform-key`):
/// `{"player": ID, "name": "..."}` opens a session for the platform's player (added on
/// first sight, balance 0 in the embedded wallet) and answers the launch token and path.
#[utoipa::path(post, path = "/api/play/sessions", tag = "players", request_body = SessionBody,
    responses(
        (status = 200, description = "`{\"player\", \"token\", \"launch\": \"/play#t=TOKEN\"}`", body = Object),
        (status = 403, description = "The player is disabled (`player_disabled`)", body = crate::web::api::ErrorBody),
        (status = 422, description = "Not a valid player id (`invalid_player`)", body = crate::web::api::ErrorBody),
        (status = 503, description = NO_DATABASE, body = crate::web::api::ErrorBody)))]
pub async fn open_session(PlatformPost { play, body: b }: PlatformPost<SessionBody>) -> Answer {
    if play.ledger.player(&b.player).await?.is_none() {
        let name = b.name.clone().unwrap_or_else(|| b.player.clone());
        play.ledger
            .add_player(&b.player, &name, 0)
            .await
            .map_err(|e| PlayError::unprocessable("invalid_player", e))?;
    }
    let token = crate::play::sessions::open(&play.pool, &b.player, &play.table, play.launch_hours)
        .await
        .map_err(|e| match e {
            crate::play::sessions::OpenError::Disabled(_) => {
                PlayError::new(StatusCode::FORBIDDEN, "player_disabled", e.to_string())
            }
            crate::play::sessions::OpenError::Failed(e) => PlayError::unavailable(e),
        })?;
    Ok(Json(json!({
        "player": b.player,
        "token": token,
        "launch": crate::play::sessions::link("", &token),
    }))
    .into_response())
}

/// `POST /api/play/sessions/revoke` (the platform's credential): ends one launch link
/// (`{"token": T}`) or every session of a player (`{"player": ID}`) at once: the next
/// request with a revoked token, on any player route, is 401. Bets already on the table
/// stay and are settled; the seat's timers play its hands. Nothing more is staked for the
/// player by itself (a re-bet, a follow) and their seats are freed at the next betting
/// window (`play::presence`).
#[utoipa::path(post, path = "/api/play/sessions/revoke", tag = "players", request_body = RevokeBody,
    responses(
        (status = 200, description = "`{\"revoked\": N}`: the live sessions ended", body = Object),
        (status = 400, description = "Not one of `player`, `token` (`malformed`)", body = crate::web::api::ErrorBody),
        (status = 503, description = NO_DATABASE, body = crate::web::api::ErrorBody)))]
pub async fn revoke_sessions(PlatformPost { play, body: b }: PlatformPost<RevokeBody>) -> Answer {
    let revoked = match (&b.player, &b.token) {
        (Some(p), None) => crate::play::sessions::revoke_player(&play.pool, p)
            .await
            .map_err(PlayError::unavailable)?,
        (None, Some(t)) => u64::from(
            crate::play::sessions::revoke_token(&play.pool, t)
                .await
                .map_err(PlayError::unavailable)?,
        ),
        _ => {
            return Err(PlayError::new(
                StatusCode::BAD_REQUEST,
                "malformed",
                "name exactly one of \"player\" and \"token\"",
            ))
        }
    };
    tracing::warn!(player = ?b.player, by_token = b.token.is_some(), revoked, "players' sessions revoked by the platform");
    Ok(Json(json!({ "revoked": revoked })).into_response())
}

/// `POST /api/play/players/disable` (the platform's credential): a disabled player's
/// sessions end at once and no new one opens (`player_disabled`) until enabled again.
#[utoipa::path(post, path = "/api/play/players/disable", tag = "players", request_body = DisableBody,
    responses(
        (status = 200, description = "`{\"player\", \"disabled\", \"revoked\": N}`", body = Object),
        (status = 404, description = "No such player (`unknown_player`)", body = crate::web::api::ErrorBody)))]
pub async fn disable_player(PlatformPost { play, body: b }: PlatformPost<DisableBody>) -> Answer {
    let revoked = crate::play::sessions::set_disabled(&play.pool, &b.player, b.disabled)
        .await
        .map_err(|e| PlayError::new(StatusCode::NOT_FOUND, "unknown_player", e))?;
    tracing::warn!(player = %b.player, disabled = b.disabled, revoked, "player disabled/enabled by the platform");
    Ok(
        Json(json!({ "player": b.player, "disabled": b.disabled, "revoked": revoked }))
            .into_response(),
    )
}
