//! The HTTP side (axum): a status page and a small JSON API over the table handle. The
//! real dealer panel, authentication and the public stream come with their issues.
//!
//! | route | what |
//! |---|---|
//! | `GET /` | status page (polls `/api/status`) |
//! | `GET /api/status[?after=SEQ&wait_ms=MS]` | the snapshot; with `after`, waits (up to `wait_ms`, max 30 s) for a newer one |
//! | `GET /api/stream` | server-sent events: `resync` (a snapshot) then `delta`s; `resync` again after a lag |
//! | `POST /api/input` | an engine input as JSON (`{"bets": [...]}`, `{"decision": {...}}`, `"shuffle"`, `{"card": "TD"}`); 200 `{"seq": N}` once durable, 409 rejected, 423 locked, 503 out of service |
//! | `POST /api/alarm/clear` | `{"reason": "..."}`: clears the alarm; 409 when not locked |
//! | `GET /api/rounds?last=N` | the last N rounds from the store, with every log row and the settlement |

pub mod client;

use crate::engine::Input;
use crate::store::{Reader, Source};
use crate::table::{ClearError, SubmitError, TableHandle, Update};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;
use std::convert::Infallible;
use std::time::Duration;

/// What every handler gets.
#[derive(Clone)]
pub struct AppState {
    /// The table.
    pub table: TableHandle,
    /// Read access to the store (absent when it could not be opened).
    pub reader: Option<Reader>,
}

/// The router.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/api/status", get(status))
        .route("/api/stream", get(stream))
        .route("/api/input", post(input))
        .route("/api/alarm/clear", post(clear))
        .route("/api/rounds", get(rounds))
        .with_state(state)
}

async fn page() -> Html<&'static str> {
    Html(include_str!("status.html"))
}

#[derive(Deserialize)]
struct StatusQuery {
    after: Option<u64>,
    wait_ms: Option<u64>,
}

async fn status(State(app): State<AppState>, Query(q): Query<StatusQuery>) -> Response {
    if let Some(after) = q.after {
        let mut watch = app.table.watch();
        let wait = Duration::from_millis(q.wait_ms.unwrap_or(10_000).min(30_000));
        let _ = tokio::time::timeout(wait, watch.wait_for(|s| s.seq > after)).await;
    }
    Json(app.table.snapshot()).into_response()
}

async fn stream(State(app): State<AppState>) -> impl IntoResponse {
    let sub = app.table.subscribe();
    let events = futures::stream::unfold(sub, |mut sub| async move {
        let update = sub.next().await?;
        let event = match update {
            Update::Resync(s) => SseEvent::default()
                .event("resync")
                .json_data(&*s)
                .unwrap_or_default(),
            Update::Delta(d) => SseEvent::default()
                .event("delta")
                .id(d.seq.to_string())
                .json_data(&*d)
                .unwrap_or_default(),
        };
        Some((Ok::<_, Infallible>(event), sub))
    });
    Sse::new(events).keep_alive(KeepAlive::default())
}

fn error(status: StatusCode, body: serde_json::Value) -> Response {
    (status, Json(body)).into_response()
}

async fn input(State(app): State<AppState>, body: String) -> Response {
    let input: Input = match serde_json::from_str(&body) {
        Ok(i) => i,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                json!({"error": format!("not an input: {e}")}),
            )
        }
    };
    match app.table.submit(input, Source::Api).await {
        Ok(seq) => Json(json!({ "seq": seq })).into_response(),
        Err(SubmitError::Rejected(r)) => error(
            StatusCode::CONFLICT,
            json!({"error": r.to_string(), "code": r.code, "message": r.message}),
        ),
        Err(e @ SubmitError::Locked(_)) => {
            error(StatusCode::LOCKED, json!({"error": e.to_string()}))
        }
        Err(e) => error(
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"error": e.to_string()}),
        ),
    }
}

#[derive(Deserialize)]
struct ClearBody {
    reason: String,
}

async fn clear(State(app): State<AppState>, body: String) -> Response {
    let body: ClearBody = match serde_json::from_str(&body) {
        Ok(b) => b,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                json!({"error": format!("expected {{\"reason\": \"...\"}}: {e}")}),
            )
        }
    };
    if body.reason.trim().is_empty() {
        return error(
            StatusCode::BAD_REQUEST,
            json!({"error": "a reason is required"}),
        );
    }
    match app.table.clear_alarm(body.reason).await {
        Ok(seq) => Json(json!({ "seq": seq })).into_response(),
        Err(e @ ClearError::NotLocked) => {
            error(StatusCode::CONFLICT, json!({"error": e.to_string()}))
        }
        Err(e) => error(
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"error": e.to_string()}),
        ),
    }
}

#[derive(Deserialize)]
struct RoundsQuery {
    last: Option<u32>,
}

async fn rounds(State(app): State<AppState>, Query(q): Query<RoundsQuery>) -> Response {
    let Some(reader) = &app.reader else {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"error": "the store could not be opened"}),
        );
    };
    let table = app.table.snapshot().table.clone();
    match reader.recall(&table, q.last.unwrap_or(10).min(1000)).await {
        Ok(rounds) => {
            let out: Vec<serde_json::Value> = rounds.iter().map(|r| r.to_json()).collect();
            Json(out).into_response()
        }
        Err(e) => error(
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"error": e.to_string()}),
        ),
    }
}
