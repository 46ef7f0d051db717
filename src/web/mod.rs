//! The HTTP side (axum): the dealer panel and the remote players' page (static assets
//! from `dealer-ui/`, embedded), the JSON API, and the streams. Authentication comes with
//! its issue: keep `http.bind` on 127.0.0.1 until then.
//!
//! | route | what |
//! |---|---|
//! | `GET /` | the dealer panel (`dealer-ui/index.html`, over `/ws/dealer`) |
//! | `GET /public` | the remote players' page (over `/ws/public`) |
//! | `GET /status` | the plain status page (polls `/api/status`) |
//! | `GET /ws/dealer` | WebSocket: the dealer view now and after every change |
//! | `GET /ws/public[?after=ID]`, `GET /sse/public` | the public feed (see `feed`), resumable |
//! | `GET /api/openapi.json` | the API's OpenAPI document |
//! | `GET /api/view`, `GET /api/public` | the dealer view, the public view |
//! | `POST /api/betting/open`, `POST /api/betting/close`, `POST /api/bets` | the betting window |
//! | `POST /api/decision` | `{"seat": 3, "action": "stand"}` |
//! | `POST /api/shuffle`, `POST /api/sim/deal` | a new shoe; the simulated shoe deals |
//! | `GET /api/alarm`, `GET /api/results?last=N`, `GET /api/rounds/{round}` | alarm, settlements, recall |
//! | `GET /api/status[?after=SEQ&wait_ms=MS]` | the snapshot; with `after`, waits (up to `wait_ms`, max 30 s) for a newer one |
//! | `GET /api/stream` | server-sent events: `resync` (a snapshot) then `delta`s; `resync` again after a lag |
//! | `POST /api/input` | an engine input as JSON (`{"bets": [...]}`, `{"decision": {...}}`, `"shuffle"`, `{"card": "TD"}`); 200 `{"seq": N}` once durable, 409 rejected, 423 locked, 503 out of service |
//! | `POST /api/alarm/clear` | `{"reason": "..."}`: clears the alarm; 409 when not locked |
//! | `GET /api/rounds?last=N` | the last N rounds from the store, with every log row and the settlement |
//! | `GET /healthz`, `GET /readyz`, `GET /metrics` | liveness, readiness, Prometheus metrics (see `ops`; public) |

pub mod api;
pub mod client;
pub mod feed;
pub mod ops;
pub mod streams;
pub mod view;

use crate::engine::{Input, Variant};
use crate::metrics::Stream;
use crate::store::{Reader, Source};
use crate::table::{ClearError, SubmitError, TableHandle, Update};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use croupier_drivers::sim::SimShoe;
use serde::Deserialize;
use serde_json::json;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

/// What every handler gets.
#[derive(Clone)]
pub struct AppState {
    /// The table.
    pub table: TableHandle,
    /// Read access to the store (absent when it could not be opened).
    pub reader: Option<Reader>,
    /// The game's rules.
    pub variant: Arc<Variant>,
    /// The limits the panel shows.
    pub limits: view::LimitsView,
    /// The simulated shoe, when there is one.
    pub sim: Option<Arc<SimShoe>>,
    /// The public feed.
    pub feed: feed::PublicFeed,
}

impl AppState {
    /// The state for `table` (starts the public feed's task: call inside a runtime).
    pub fn new(
        table: TableHandle,
        reader: Option<Reader>,
        variant: Arc<Variant>,
        sim: Option<Arc<SimShoe>>,
    ) -> AppState {
        AppState {
            feed: feed::PublicFeed::start(&table),
            limits: view::LimitsView::of(&variant),
            table,
            reader,
            variant,
            sim,
        }
    }
}

/// The router.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/", get(|| asset("index.html")))
        .route("/public", get(|| asset("public.html")))
        .route(
            "/ui/{file}",
            get(|axum::extract::Path(f): axum::extract::Path<String>| asset_owned(f)),
        )
        .route("/status", get(page))
        .route("/ws/dealer", get(streams::dealer))
        .route("/ws/public", get(streams::public_ws))
        .route("/sse/public", get(streams::public_sse))
        .route("/api/openapi.json", get(openapi))
        .route("/api/view", get(api::view))
        .route("/api/public", get(api::public))
        .route("/api/betting/open", post(api::open_betting))
        .route("/api/betting/close", post(api::close_betting))
        .route("/api/bets", post(api::place_bet))
        .route("/api/decision", post(api::decision))
        .route("/api/shuffle", post(api::shuffle))
        .route("/api/sim/deal", post(api::sim_deal))
        .route("/api/alarm", get(api::alarm))
        .route("/api/results", get(api::results))
        .route("/api/rounds/{round}", get(api::round))
        .route("/api/{*rest}", get(api::no_route).post(api::no_route))
        .route("/api/status", get(status))
        .route("/api/stream", get(stream))
        .route("/api/input", post(input))
        .route("/api/alarm/clear", post(clear))
        .route("/api/rounds", get(rounds))
        .merge(ops::routes())
        .with_state(state)
}

async fn page() -> Html<&'static str> {
    Html(include_str!("status.html"))
}

/// The panel's static files, built into the binary.
const ASSETS: &[(&str, &str, &str)] = &[
    (
        "index.html",
        "text/html; charset=utf-8",
        include_str!("../../dealer-ui/index.html"),
    ),
    (
        "public.html",
        "text/html; charset=utf-8",
        include_str!("../../dealer-ui/public.html"),
    ),
    (
        "panel.js",
        "text/javascript; charset=utf-8",
        include_str!("../../dealer-ui/panel.js"),
    ),
    (
        "public.js",
        "text/javascript; charset=utf-8",
        include_str!("../../dealer-ui/public.js"),
    ),
    (
        "table.js",
        "text/javascript; charset=utf-8",
        include_str!("../../dealer-ui/table.js"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("../../dealer-ui/style.css"),
    ),
];

async fn asset(name: &str) -> Response {
    match ASSETS.iter().find(|(n, _, _)| *n == name) {
        Some((_, mime, body)) => (
            [
                (axum::http::header::CONTENT_TYPE, *mime),
                (axum::http::header::CACHE_CONTROL, "no-cache"),
            ],
            *body,
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

async fn asset_owned(name: String) -> Response {
    asset(&name).await
}

async fn openapi() -> Response {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        include_str!("openapi.json"),
    )
        .into_response()
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
    let counted = app.table.metrics().subscriber(Stream::ApiStream);
    let events = futures::stream::unfold((sub, counted), |(mut sub, counted)| async move {
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
        Some((Ok::<_, Infallible>(event), (sub, counted)))
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
