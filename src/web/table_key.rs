//! `GET /api/table-key` (public): the table's Ed25519 public key, the one its signed
//! results verify with (`crate::trust`). The same key is in every public view
//! (`table_key`), so a viewer who saved a stream has it too; this route lets anyone pin it
//! once, out of band, and compare.

use super::api::{Answer, ApiError, ErrorBody};
use super::AppState;
use axum::extract::State;
use axum::response::IntoResponse;
use axum::Json;
use serde::Serialize;

/// The table's signing key.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct TableKey {
    /// The table's id.
    pub table: String,
    /// Always `ed25519`.
    pub alg: &'static str,
    /// The public key, hex.
    pub key: String,
}

/// `GET /api/table-key`: `{"table", "alg": "ed25519", "key"}`; 503 `unavailable` when the
/// table has no key (its key file could not be read or written).
#[utoipa::path(get, path = "/api/table-key", tag = "public",
    responses(
        (status = 200, description = "The table's Ed25519 public key", body = TableKey),
        (status = 503, description = "The table has no signing key (`unavailable`)", body = ErrorBody)))]
pub async fn table_key(State(app): State<AppState>) -> Answer {
    let snapshot = app.table.snapshot();
    let key = snapshot
        .table_key
        .clone()
        .ok_or_else(|| ApiError::Unavailable("this table has no signing key".into()))?;
    Ok(Json(TableKey {
        table: snapshot.table.clone(),
        alg: "ed25519",
        key,
    })
    .into_response())
}
