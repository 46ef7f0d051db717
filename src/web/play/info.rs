//! What the player's page reads beside the live state: the player's own history at the
//! table (`GET /api/play/history`, with the session's time and net result for the reality
//! check) and the game's help (`GET /api/play/help`: the variant file's rules, each side
//! bet's pay table and its exact RTP from `math::paytable`).

use super::{bearer, player, Answer, PlayError};
use crate::web::AppState;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::Json;
use serde_json::json;

/// How many rounds the history lists.
const HISTORY_ROUNDS: u32 = 20;

fn unavailable(e: impl std::fmt::Display) -> PlayError {
    PlayError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "unavailable",
        e.to_string(),
    )
}

/// `GET /api/play/history`.
#[utoipa::path(get, path = "/api/play/history", tag = "players",
    responses(
        (status = 200, description = "`{\"rounds\": [{\"round\", \"cancelled\", \"settled\", \"net\", \"lines\": [{\"seat\", \"behind\", \"kind\", \"staked\", \"returned\", \"net\"}]}], \"session\": {\"started_ms\", \"now_ms\", \"net\"}}`: the player's last 20 rounds at the table, newest first, from the log's settlements; the session's net result from the wallet's ledger", body = Object),
        (status = 503, description = "The database did not answer (`unavailable`)", body = crate::web::api::ErrorBody)))]
pub async fn history(State(app): State<AppState>, headers: HeaderMap) -> Answer {
    let (play, me) = player(&app, &headers).await?;
    let rounds = crate::play::history::rounds(&play.pool, &play.table, &me, HISTORY_ROUNDS)
        .await
        .map_err(unavailable)?;
    let now = crate::wallet::now_ms();
    let started = crate::play::sessions::times(&play.pool, bearer(&headers))
        .await
        .map_or(now, |(created, _)| created);
    let net = crate::play::history::session_net(&play.pool, &me, started)
        .await
        .map_err(unavailable)?;
    Ok(Json(json!({
        "rounds": rounds,
        "session": {"started_ms": started, "now_ms": now, "net": net},
    }))
    .into_response())
}

/// `GET /api/play/help`.
#[utoipa::path(get, path = "/api/play/help", tag = "players",
    responses(
        (status = 200, description = "`{\"variant\": the variant file's settings, \"limits\", \"tables\": {\"bets\": [{\"bet\", \"lines\": [{\"combination\", \"pay\", \"probability\"}], \"rtp\", \"hit_frequency\"}]} | null}`: the game's rules and each side bet's (and insurance's) pay table with its exact return to player", body = Object)))]
pub async fn help(State(app): State<AppState>, headers: HeaderMap) -> Answer {
    let (play, _) = player(&app, &headers).await?;
    let variant = std::sync::Arc::clone(&app.variant);
    let limits = app.limits.clone();
    let body = play
        .help
        .get_or_init(|| async move {
            // Enumerating a shoe for every side bet takes a moment: off the runtime.
            let v = std::sync::Arc::clone(&variant);
            let tables = tokio::task::spawn_blocking(move || crate::math::paytable::variant_tables(&v))
                .await
                .map_err(|e| e.to_string())
                .and_then(|r| r.map_err(|e| e.to_string()));
            let (tables, why) = match tables {
                Ok(t) => (json!(t), serde_json::Value::Null),
                Err(e) => {
                    tracing::warn!(error = %e, "the side bets' pay tables could not be priced for the player's help");
                    (serde_json::Value::Null, json!(e))
                }
            };
            json!({"variant": &*variant, "limits": limits, "tables": tables, "tables_error": why})
        })
        .await;
    Ok(Json(body.clone()).into_response())
}
