//! The HTTP side (axum): the dealer panel and the remote players' page (static assets
//! from `dealer-ui/`, embedded), the JSON API, and the streams. Every route is declared
//! once in [`routes`] with who may call it (see `auth`): public, or a minimum role
//! (`dealer < supervisor < admin`).
//!
//! | route | access | what |
//! |---|---|---|
//! | `GET /`, `GET /public`, `GET /ui/{file}`, `GET /status` | public | the dealer panel (it shows its login screen until `/api/me` answers), the remote players' page, static files, the plain status page |
//! | `GET /ws/public[?after=ID]`, `GET /sse/public` | public | the public feed (see `feed`), resumable |
//! | `GET /api/openapi.json`, `GET /api/public`, `GET /api/results?last=N` | public | the API's contract, the public view, settled results |
//! | `GET /api/table-key` | public | the table's Ed25519 public key that signs its results (`table_key`) |
//! | `POST /api/login`, `POST /api/logout` | public | `{"badge", "secret"}` → the `croupier_session` cookie; logout ends it |
//! | `GET /api/me` | dealer | who the session belongs to |
//! | `GET /ws/dealer`, `GET /api/view` | dealer | the dealer view (WebSocket on every change; once) |
//! | `POST /api/betting/open`, `POST /api/betting/close`, `POST /api/bets` | dealer | the betting window (`/api/bets` answers a `dispute_token`) |
//! | `POST /api/decision`, `POST /api/shuffle`, `POST /api/sim/deal` | dealer | a decision; a new shoe; the simulated shoe deals |
//! | `GET /api/alarm`, `GET /api/rounds/{round}`, `GET /api/rounds?last=N` | dealer | alarm, recall |
//! | `GET /api/status[?after=SEQ&wait_ms=MS]`, `GET /api/stream` | dealer | the full snapshot (hole card included); with `after`, waits for a newer one; SSE `resync` + `delta`s |
//! | `POST /api/input` | supervisor | an engine input as JSON (an override: `{"bets": [...]}`, `"shuffle"`, `{"card": "TD"}`); 200 `{"seq": N}` once durable, 409 rejected, 423 locked, 503 out of service |
//! | `POST /api/alarm/clear` | supervisor | `{"reason": "..."}`: clears the alarm (audited with the caller); 409 when not locked |
//! | `GET /api/audit?since=SEQ` | admin | the audit log as JSON |
//! | `GET /healthz`, `GET /readyz`, `GET /metrics` | public | liveness, readiness, Prometheus metrics (see `ops`) |
//! | `GET /api/disputes`, `GET /api/disputes/current` | dealer | past disputes; the open one as the panel shows it |
//! | `POST /api/disputes` | dealer | `{"seat", "reason"}`: raise a dispute (halts the round) |
//! | `POST /api/disputes/player` | public | `{"round", "seat", "token", "reason"}`: a player raises one with their seat's token |
//! | `POST /api/disputes/{id}/propose`, `…/confirm`, `…/withdraw` | supervisor | a resolution previewed (answering its `proposal` hash), then applied or withdrawn — both name the hash (`{"proposal": "..."}`) and are audited |

pub mod api;
mod assets;
pub mod auth;
pub mod body;
/// The HTTP client the CLI and the tests use; it lives below the edge (`http_client`),
/// where the HTTP wallet can use it too.
pub use crate::http_client as client;
pub mod disputes;
pub mod edge;
pub mod fanout;
pub mod feed;
pub mod openapi;
pub mod ops;
mod pages;
pub mod play;
pub mod server;
pub mod staff;
pub mod streams;
pub mod table_key;
pub mod tcp;
pub mod tls;
pub mod view;
pub mod wsframe;

pub use assets::{asset, asset_owned, cached_asset};

use crate::auth::{Auth, Principal, Role};
use crate::engine::{Input, Variant};
use crate::metrics::Stream;
use crate::store::{Reader, Source};
use crate::table::{TableHandle, Update};
use crate::web::api::{Answer, ApiError};
use auth::Access;
use axum::extract::{Query, State};
use axum::handler::Handler;
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::IntoResponse;
use axum::routing::{get, post, MethodRouter};
use axum::{Json, Router};
use croupier_drivers::sim::SimShoe;
use serde::Deserialize;
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
    /// Accounts, sessions, the audit log (absent when the database could not be opened:
    /// then only the public routes and the local token work).
    pub auth: Option<Auth>,
    /// The game's rules.
    pub variant: Arc<Variant>,
    /// The limits the panel shows.
    pub limits: view::LimitsView,
    /// The simulated shoe, when there is one.
    pub sim: Option<SimulatedShoe>,
    /// The public feed.
    pub feed: feed::PublicFeed,
    /// The `/ws/public` fan-out over plain TCP (`None` under TLS: a task per viewer; see
    /// [`AppState::with_fanout`]).
    pub fanout: Option<fanout::Fanout>,
    /// The local token (see `auth::local_token`), if the service wrote one.
    pub local_token: Option<Arc<crate::auth::local_token::LocalToken>>,
    /// The broker publisher's status, when `[publish]` is configured.
    pub publish: Option<Arc<crate::broker::PublishStatus>>,
    /// Remote play (`[play]`; see `web::play`), when on.
    pub play: Option<Arc<crate::play::Play>>,
}

/// The simulated shoe and how its fresh shoes are made (`[shoe.sim]`): a shuffle from the
/// panel loads the same kind of shoe as the start-up and the demo.
#[derive(Clone)]
pub struct SimulatedShoe {
    /// The simulator behind the pseudo-terminal.
    pub driver: Arc<SimShoe>,
    /// Decks and penetration of each fresh shoe.
    pub making: crate::table::demo::ShoeMaking,
}

impl AppState {
    /// The table's clock now (`table::clock`), with remote play: what the panel's timers
    /// count from.
    pub fn clock_now(&self) -> Option<u64> {
        self.play.as_ref().map(|p| p.remote.clock().now_ms())
    }

    /// The state for `table` (starts the public feed's task: call inside a runtime).
    pub fn new(
        table: TableHandle,
        reader: Option<Reader>,
        auth: Option<Auth>,
        variant: Arc<Variant>,
        sim: Option<SimulatedShoe>,
    ) -> AppState {
        AppState {
            feed: feed::PublicFeed::start(&table),
            fanout: None,
            limits: view::LimitsView::of(&variant),
            table,
            reader,
            auth,
            variant,
            sim,
            local_token: None,
            publish: None,
            play: None,
        }
    }

    /// Serves remote players (`/play`, `/api/play/...`) from `play`.
    pub fn with_play(mut self, play: Arc<crate::play::Play>) -> AppState {
        self.play = Some(play);
        self
    }

    /// Reports `publisher` in `/readyz` and `/metrics`.
    pub fn with_publish(mut self, publisher: Arc<crate::broker::PublishStatus>) -> AppState {
        self.publish = Some(publisher);
        self
    }

    /// Serving plain TCP: starts the `/ws/public` fan-out (its shards write to raw TCP
    /// sockets; without it, under TLS, each viewer gets a task).
    pub fn with_fanout(mut self) -> AppState {
        self.fanout = Some(fanout::Fanout::start(
            &self.feed,
            self.table.metrics(),
            fanout::Fanout::shards_for_this_machine(),
        ));
        self
    }

    /// Accepts `token` as the local token.
    pub fn with_local_token(
        mut self,
        token: Option<crate::auth::local_token::LocalToken>,
    ) -> AppState {
        self.local_token = token.map(Arc::new);
        self
    }
}

/// One route: path, method, who may call it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteSpec {
    /// The path pattern as axum takes it (`/api/rounds/{round}`).
    pub path: &'static str,
    /// `GET` or `POST`.
    pub method: &'static str,
    /// Who may call it.
    pub access: Access,
}

const PUBLIC: Access = Access::Public;
const OPEN: Access = Access::Open;
const PLAYER: Access = Access::Player;
const PLATFORM: Access = Access::Platform;
const DEALER: Access = Access::Role(Role::Dealer);
const SUPERVISOR: Access = Access::Role(Role::Supervisor);
const ADMIN: Access = Access::Role(Role::Admin);

/// A route: its path, method and access, and its handler.
type Route = (RouteSpec, MethodRouter<AppState>);

/// A route for the callers with this access, as [`routes`] lists them:
/// `DEALER.post("/api/bets", api::place_bet)`.
impl Access {
    fn get<H: Handler<T, AppState>, T: 'static>(self, path: &'static str, handler: H) -> Route {
        self.route(path, "GET", get(handler))
    }

    fn post<H: Handler<T, AppState>, T: 'static>(self, path: &'static str, handler: H) -> Route {
        self.route(path, "POST", post(handler))
    }

    fn route(
        self,
        path: &'static str,
        method: &'static str,
        handler: MethodRouter<AppState>,
    ) -> Route {
        let spec = RouteSpec {
            path,
            method,
            access: self,
        };
        (spec, handler)
    }
}

/// Every route with its handler: the one list the router and the role matrix test use.
fn routes() -> Vec<Route> {
    use play::platform;
    vec![
        OPEN.get("/", pages::index),
        PUBLIC.get("/public", pages::public_page),
        OPEN.get("/ui/{file}", pages::ui_file),
        OPEN.get("/status", pages::page),
        PUBLIC.get("/ws/public", streams::public_ws),
        PUBLIC.get("/sse/public", streams::public_sse),
        OPEN.get("/api/openapi.json", openapi::serve),
        PUBLIC.get("/api/public", api::public),
        PUBLIC.get("/api/results", api::results),
        PUBLIC.get("/api/table-key", table_key::table_key),
        OPEN.post("/api/login", auth::login),
        OPEN.get("/healthz", ops::healthz),
        OPEN.get("/readyz", ops::readyz),
        OPEN.get("/metrics", ops::metrics),
        OPEN.post("/api/logout", auth::logout),
        OPEN.get("/api/{*rest}", api::no_route),
        OPEN.post("/api/{*rest}", api::no_route),
        PUBLIC.get("/play", play::page),
        PLAYER.get("/api/play/state", play::state),
        PLAYER.get("/api/play/history", play::info::history),
        PLAYER.get("/api/play/help", play::info::help),
        PLAYER.post("/api/play/join", play::join),
        PLAYER.post("/api/play/leave", play::leave),
        PLAYER.post("/api/play/bet", play::seat_bets::bet),
        PLAYER.post("/api/play/behind", play::behind::behind),
        PLAYER.post("/api/play/boxes", play::boxes::boxes),
        PLAYER.post("/api/play/decision", play::decide::decision),
        PLATFORM.post("/api/play/sessions", platform::open_session),
        PLATFORM.post("/api/play/sessions/revoke", platform::revoke_sessions),
        PLATFORM.post("/api/play/players/disable", platform::disable_player),
        DEALER.get("/api/me", auth::me),
        DEALER.get("/ws/dealer", streams::dealer),
        DEALER.get("/api/view", api::view),
        DEALER.post("/api/betting/open", api::open_betting),
        DEALER.post("/api/betting/close", api::close_betting),
        DEALER.post("/api/bets", api::place_bet),
        DEALER.post("/api/decision", api::decision),
        DEALER.post("/api/shuffle", api::shuffle),
        DEALER.post("/api/sim/deal", api::sim_deal),
        DEALER.get("/api/alarm", api::alarm),
        DEALER.get("/api/staff", staff::staff),
        DEALER.post("/api/call-supervisor", staff::call_supervisor),
        DEALER.get("/api/rounds/{round}", api::round),
        DEALER.get("/api/rounds", rounds),
        DEALER.get("/api/status", status),
        DEALER.get("/api/stream", stream),
        SUPERVISOR.post("/api/input", input),
        SUPERVISOR.post("/api/alarm/clear", clear),
        ADMIN.get("/api/audit", api::audit),
        DEALER.get("/api/disputes", disputes::history),
        DEALER.post("/api/disputes", disputes::raise_by_staff),
        PUBLIC.post("/api/disputes/player", disputes::raise_by_player),
        DEALER.get("/api/disputes/current", disputes::current),
        SUPERVISOR.post("/api/disputes/{id}/propose", disputes::propose),
        SUPERVISOR.post("/api/disputes/{id}/confirm", disputes::confirm),
        SUPERVISOR.post("/api/disputes/{id}/withdraw", disputes::withdraw),
    ]
}

/// Every route's path, method and access (the role × endpoint test compares its own table
/// against this, so a route added here without a line there fails it).
pub fn route_specs() -> Vec<RouteSpec> {
    routes().into_iter().map(|(spec, _)| spec).collect()
}

/// The router.
pub fn router(state: AppState) -> Router {
    let mut router = Router::new();
    for (spec, handler) in routes() {
        let access = spec.access;
        // The embedded files are text: gzip when the browser takes it (the predicate
        // leaves small bodies and event streams alone).
        let handler = if matches!(spec.path, "/" | "/public" | "/ui/{file}" | "/status") {
            handler.layer(tower_http::compression::CompressionLayer::new())
        } else {
            handler
        };
        let handler = match access {
            // Players' and the platform's routes authenticate their own bearer tokens,
            // never a staff cookie (see `web::play`).
            Access::Public | Access::Open | Access::Player | Access::Platform => handler,
            Access::Role(_) => handler.route_layer(axum::middleware::from_fn_with_state(
                state.clone(),
                move |s, req, next| auth::require(access, s, req, next),
            )),
        };
        router = router.route(spec.path, handler);
    }
    router
        .layer(axum::middleware::from_fn(api::json_errors))
        .with_state(state)
}

/// `?after=SEQ&wait_ms=MS`.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct StatusQuery {
    /// Wait for a snapshot newer than this sequence number.
    after: Option<u64>,
    /// How long to wait at most (default 10000, at most 30000).
    #[param(maximum = 30000)]
    wait_ms: Option<u64>,
}

/// The longest a long poll may wait (the table's config checks its timeouts against it).
pub use crate::table::config::MAX_WAIT_MS;

/// `GET /api/status`: the full snapshot (hole card included).
#[utoipa::path(get, path = "/api/status", tag = "dealer", params(StatusQuery),
    responses(
        (status = 200, description = "The full snapshot; with `after`, once a newer one exists or `wait_ms` passed", body = openapi::Snapshot),
        (status = 400, description = "A bad query, or wait_ms over 30000", body = api::ErrorBody)))]
async fn status(
    State(app): State<AppState>,
    who: Principal,
    Query(q): Query<StatusQuery>,
) -> Answer {
    let wait_ms = q.wait_ms.unwrap_or(10_000);
    let after = q.after.map(|a| api::int64("after", a)).transpose()?;
    if wait_ms > MAX_WAIT_MS {
        return Err(ApiError::Malformed(format!(
            "wait_ms is at most {MAX_WAIT_MS}, not {wait_ms}"
        )));
    }
    if let Some(after) = after {
        let mut watch = app.table.watch();
        let wait = Duration::from_millis(wait_ms);
        // The poll ends with its session: a full snapshot is never sent after logout.
        tokio::select! {
            _ = tokio::time::timeout(wait, watch.wait_for(|s| s.seq > after)) => {}
            () = streams::session_end(&app, &who) => {
                return Err(ApiError::Unauthenticated);
            }
        }
    }
    Ok(Json(app.table.snapshot()).into_response())
}

/// `GET /api/stream`: SSE `resync` + `delta`s, until the table stops or the session ends
/// (then a last `session_ended` event).
#[utoipa::path(get, path = "/api/stream", tag = "dealer",
    responses((status = 200, description = "Server-sent events: `resync` (a snapshot), `delta`s, at the end `session_ended` (`{\"message\"}`); every event's data is a JSON object", content_type = "text/event-stream", body = Object)))]
async fn stream(State(app): State<AppState>, who: Principal) -> impl IntoResponse {
    use futures::StreamExt;
    let sub = app.table.subscribe();
    let counted = app.table.metrics().subscriber(Stream::ApiStream);
    let ended = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let end = {
        let (app, ended) = (app.clone(), Arc::clone(&ended));
        async move {
            streams::session_end(&app, &who).await;
            ended.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    };
    let farewell = futures::stream::once(async move {
        ended.load(std::sync::atomic::Ordering::SeqCst).then(|| {
            Ok::<_, Infallible>(
                // JSON like every other event's data, so one schema describes the stream.
                SseEvent::default()
                    .event("session_ended")
                    .data(r#"{"message":"the session ended: log in again"}"#),
            )
        })
    })
    .filter_map(std::future::ready);
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
    Sse::new(events.take_until(Box::pin(end)).chain(farewell)).keep_alive(KeepAlive::default())
}

/// `POST /api/input`: an engine input (a supervisor's override).
#[utoipa::path(post, path = "/api/input", tag = "supervisor", request_body = openapi::InputDoc,
    responses(
        api::Applied,
        (status = 400, description = "Not an input", body = api::ErrorBody),
        (status = 409, description = "Refused by the round", body = api::ErrorBody),
        api::TableRefusals))]
async fn input(State(app): State<AppState>, headers: HeaderMap, body: String) -> Answer {
    // Its schema is the engine's (`openapi::InputDoc`): the engine's own parser decides.
    let input: Input = body::read_as(
        &headers,
        &body,
        "an input",
        &<openapi::InputDoc as utoipa::ToSchema>::name(),
    )?;
    let seq = app.table.submit(input, Source::Api).await?;
    Ok(Json(api::Seq { seq }).into_response())
}

/// Why the alarm is cleared.
#[derive(Deserialize, utoipa::ToSchema)]
struct ClearBody {
    /// The reason (on the record with who cleared it): not blank.
    #[schema(pattern = r"\S")]
    reason: String,
}

impl body::RequestBody for ClearBody {
    const EXAMPLE: &'static str = r#"{"reason": "..."}"#;
}

/// `POST /api/alarm/clear`.
#[utoipa::path(post, path = "/api/alarm/clear", tag = "supervisor", request_body = ClearBody,
    responses(
        (status = 200, description = "Cleared and durable", body = api::Seq),
        (status = 400, description = "No reason", body = api::ErrorBody),
        (status = 409, description = "Not locked, or the fault persists", body = api::ErrorBody),
        api::OutOfService))]
async fn clear(
    State(app): State<AppState>,
    who: Principal,
    body::JsonBody(body): body::JsonBody<ClearBody>,
) -> Answer {
    if body.reason.trim().is_empty() {
        return Err(ApiError::Malformed("a reason is required".into()));
    }
    let seq = app
        .table
        .clear_alarm(body.reason, who.actor.clone())
        .await?;
    Ok(Json(api::Seq { seq }).into_response())
}

/// `?last=N`.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct RoundsQuery {
    /// How many (default 10, at most 1000).
    #[param(maximum = 1000)]
    last: Option<u32>,
}

/// `GET /api/rounds?last=N`: the last rounds recalled from the store.
#[utoipa::path(get, path = "/api/rounds", tag = "dealer", params(RoundsQuery),
    responses(
        (status = 200, description = "The last N rounds", body = [openapi::RoundRecall]),
        (status = 400, description = "Not a count, or more than 1000", body = api::ErrorBody),
        api::StoreUnreadable))]
async fn rounds(State(app): State<AppState>, Query(q): Query<RoundsQuery>) -> Answer {
    let last = api::within_max_last(q.last.unwrap_or(10), "rounds")?;
    let rounds = api::recall(&app, last).await?;
    let out: Vec<serde_json::Value> = rounds.iter().map(|r| r.to_json()).collect();
    Ok(Json(out).into_response())
}
