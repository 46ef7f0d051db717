//! `/ws/dealer` (the dealer view on every change), `/ws/public` and `/sse/public` (the
//! public feed, resumable).

use super::api::ApiError;
use super::feed::{parse_id, Joined, Message as FeedMessage, PublicFeed};
use super::view::dealer_view;
use super::wsframe;
use super::AppState;
use crate::metrics::{Feed, Metrics, Stream};
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{FromRequestParts, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::SinkExt;
use serde::Deserialize;
use std::convert::Infallible;
use std::sync::Arc;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

/// `?after=ID`: resume after this message id.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ResumeQuery {
    /// The last id the client has.
    pub after: Option<String>,
}

/// `GET /ws/dealer`: the dealer view now, then after every change (latest wins). Needs a
/// dealer session; the socket closes (code 4401) when the session ends (logout, expiry,
/// idle timeout, account disabled), so the panel shows its login again.
#[utoipa::path(get, path = "/ws/dealer", tag = "dealer",
    responses(
        (status = 101, description = "WebSocket: the dealer view (JSON text) now and on every change"),
        (status = 400, description = "Not a valid WebSocket upgrade", body = super::api::ErrorBody),
        (status = 426, description = "Not a WebSocket upgrade", body = super::api::ErrorBody)))]
pub async fn dealer(
    State(app): State<AppState>,
    who: crate::auth::Principal,
    ws: WebSocketUpgrade,
) -> Response {
    ws.on_upgrade(move |socket| dealer_socket(app, who, socket))
}

/// Completes when `who`'s session ends (see `Auth::session_ended`): every long-lived
/// response of a session — `/ws/dealer`, `/api/stream`, the long poll of `/api/status` —
/// waits on it beside its work. Never for the local token (it lasts as long as the
/// service) or without accounts.
pub async fn session_end(app: &AppState, who: &crate::auth::Principal) {
    match (&app.auth, who.session) {
        (Some(auth), Some(hash)) => auth.session_ended(hash).await,
        _ => std::future::pending().await,
    }
}

async fn dealer_socket(app: AppState, who: crate::auth::Principal, mut socket: WebSocket) {
    let _counted = app.table.metrics().subscriber(Stream::DealerWs);
    let mut watch = app.table.watch();
    let simulated = app.sim.is_some();
    let ended = session_end(&app, &who);
    tokio::pin!(ended);
    loop {
        let snapshot = Arc::clone(&watch.borrow_and_update());
        let view = dealer_view(&snapshot, &app.limits, simulated, app.clock_now());
        let Ok(text) = serde_json::to_string(&view) else {
            return;
        };
        if socket.send(Message::Text(text.into())).await.is_err() {
            return;
        }
        // Wait for a change; meanwhile answer pings and re-check the session.
        loop {
            tokio::select! {
                changed = watch.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    break;
                }
                () = &mut ended => {
                    let _ = socket
                        .send(Message::Close(Some(axum::extract::ws::CloseFrame {
                            code: 4401,
                            reason: "session ended".into(),
                        })))
                        .await;
                    return;
                }
                incoming = socket.recv() => match incoming {
                    // The panel sends nothing but pings; a close or an error ends it.
                    Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return,
                    Some(Ok(_)) => {}
                },
            }
        }
    }
}

/// What the public routes serve: a feed, its `/ws/public` fan-out (plain TCP only) and
/// the metrics that count its subscribers. The table serves its own; the relay
/// (`crate::relay`) one per table it relays, with the same code.
#[derive(Clone)]
pub struct PublicSource {
    /// The feed.
    pub feed: PublicFeed,
    /// The fan-out (`None`: a task per viewer).
    pub fanout: Option<super::fanout::Fanout>,
    /// Where subscribers and lags are counted.
    pub metrics: Arc<Metrics>,
}

impl AppState {
    /// The table's own public feed.
    pub fn public_source(&self) -> PublicSource {
        PublicSource {
            feed: self.feed.clone(),
            fanout: self.fanout.clone(),
            metrics: Arc::clone(self.table.metrics()),
        }
    }
}

/// `GET /ws/public[?after=ID]`: the public feed. Over plain TCP the connection is handed
/// to the fan-out's shards (see `super::fanout`); under TLS it gets a task of its own.
#[utoipa::path(get, path = "/ws/public", tag = "public", params(ResumeQuery),
    responses(
        (status = 101, description = "WebSocket: the public feed (JSON text messages), resumed after `after`"),
        (status = 400, description = "Not a valid WebSocket upgrade (RFC 6455 handshake)", body = super::api::ErrorBody),
        (status = 426, description = "Not a WebSocket upgrade", body = super::api::ErrorBody)))]
pub async fn public_ws(
    State(app): State<AppState>,
    Query(q): Query<ResumeQuery>,
    request: Request,
) -> Response {
    let after = q.after.as_deref().and_then(parse_id);
    serve_ws(app.public_source(), after, Vec::new(), request).await
}

/// Serves one `/ws/public` viewer of `source`, resuming after `after`; `prelude` (what the
/// relay read from the stream for an id older than the ring) is sent first, and the feed
/// takes over after its last message.
pub async fn serve_ws(
    source: PublicSource,
    after: Option<(u64, u32)>,
    prelude: Vec<Arc<FeedMessage>>,
    request: Request,
) -> Response {
    let accept =
        match wsframe::accept_request(request.method(), request.version(), request.headers()) {
            Ok(accept) => accept,
            Err(e) => {
                return ApiError::Malformed(format!("a WebSocket upgrade request: {e}"))
                    .into_response()
            }
        };
    match source.fanout.clone() {
        Some(fanout) => to_fanout(fanout, accept, after, prelude, request),
        None => {
            let (mut parts, _) = request.into_parts();
            match WebSocketUpgrade::from_request_parts(&mut parts, &()).await {
                Ok(ws) => public_task(source, ws, after, prelude),
                Err(rejection) => rejection.into_response(),
            }
        }
    }
}

/// Answers the handshake and hands the raw TCP stream to the fan-out once upgraded.
fn to_fanout(
    fanout: super::fanout::Fanout,
    accept: String,
    after: Option<(u64, u32)>,
    prelude: Vec<Arc<FeedMessage>>,
    mut request: Request,
) -> Response {
    let upgrade = hyper::upgrade::on(&mut request);
    tokio::spawn(async move {
        let upgraded = match upgrade.await {
            Ok(upgraded) => upgraded,
            Err(e) => {
                tracing::debug!(error = %e, "/ws/public upgrade failed");
                return;
            }
        };
        match super::server::raw_tcp(upgraded) {
            Some((mut stream, read_buf)) => {
                for m in &prelude {
                    if let Err(e) = tokio::io::AsyncWriteExt::write_all(&mut stream, &m.frame).await
                    {
                        tracing::debug!(error = %e, "/ws/public viewer gone during its history");
                        return;
                    }
                }
                let after = prelude.last().map(|m| m.key()).or(after);
                fanout.add(stream, read_buf, after).await
            }
            // Only a server without TLS has a fan-out (`AppState::with_fanout`).
            None => tracing::error!("/ws/public: the upgraded connection is not plain TCP"),
        }
    });
    let mut response = Response::new(axum::body::Body::empty());
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = response.headers_mut();
    headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    match HeaderValue::from_str(&accept) {
        Ok(v) => {
            headers.insert(header::SEC_WEBSOCKET_ACCEPT, v);
        }
        // Base64 is always a valid header value.
        Err(_) => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
    response
}

/// A `/ws/public` viewer with a task of its own (under TLS).
fn public_task(
    app: PublicSource,
    ws: WebSocketUpgrade,
    after: Option<(u64, u32)>,
    prelude: Vec<Arc<FeedMessage>>,
) -> Response {
    // Viewers send nothing but pings and closes: a small read buffer keeps many of them
    // cheap (tungstenite zero-fills it on every poll of the socket, i.e. once per wake-up;
    // it grows for a larger frame). Writes are flushed explicitly after each batch (see
    // `public_socket`); the write buffer only bounds how much one batch holds before it
    // goes out anyway, and so what each connection keeps allocated.
    ws.read_buffer_size(1024)
        .write_buffer_size(BATCH_BYTES)
        .max_message_size(64 * 1024)
        .on_upgrade(move |socket| public_socket(app, socket, after, prelude))
}

/// Bytes of queued messages a `/ws/public` connection gathers before writing them out.
const BATCH_BYTES: usize = 16 * 1024;
/// Messages a `/ws/public` task takes from its receiver per wake-up, so one far-behind
/// viewer does not hold a worker for long.
const BATCH_MESSAGES: usize = 32;

async fn public_socket(
    app: PublicSource,
    mut socket: WebSocket,
    after: Option<(u64, u32)>,
    prelude: Vec<Arc<FeedMessage>>,
) {
    let _counted = app.metrics.subscriber(Stream::PublicWs);
    let mut last = after;
    if send_all(&mut socket, prelude, &mut last).await.is_err() {
        return;
    }
    let Joined { backlog, mut live } = app.feed.join(last);
    if send_all(&mut socket, backlog, &mut last).await.is_err() {
        return;
    }
    loop {
        tokio::select! {
            m = live.recv() => match m {
                Ok(m) => {
                    // Everything already queued for this viewer goes out in one write: with
                    // 10k viewers the fan-out is bound by the kernel's per-write cost on
                    // two cores, and a burst (a result and a view published together)
                    // reaches the last viewers while the next message is already queued.
                    let mut batch = vec![m];
                    let mut lagged = false;
                    while batch.len() < BATCH_MESSAGES {
                        match live.try_recv() {
                            Ok(m) => batch.push(m),
                            Err(TryRecvError::Lagged(_)) => {
                                lagged = true;
                                break;
                            }
                            // Empty, or closed: the next `recv` reports it.
                            Err(_) => break,
                        }
                    }
                    // Live messages the backlog already covered are skipped.
                    batch.retain(|m| last.is_none_or(|l| (m.seq, m.sub) > l));
                    if send_all(&mut socket, batch, &mut last).await.is_err() {
                        return;
                    }
                    if lagged && catch_up(&app, &mut socket, &mut live, &mut last).await.is_err() {
                        return;
                    }
                }
                Err(RecvError::Lagged(_)) => {
                    if catch_up(&app, &mut socket, &mut live, &mut last).await.is_err() {
                        return;
                    }
                }
                Err(RecvError::Closed) => return,
            },
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return,
                Some(Ok(_)) => {}
            },
        }
    }
}

/// Writes `messages` in one flush and moves `last` on. An error means the viewer is gone.
async fn send_all(
    socket: &mut WebSocket,
    messages: Vec<Arc<FeedMessage>>,
    last: &mut Option<(u64, u32)>,
) -> Result<(), axum::Error> {
    for m in messages {
        *last = Some((m.seq, m.sub));
        // `feed` writes once the buffer holds `BATCH_BYTES`; the rest goes at the flush.
        socket.feed(Message::Text(m.text.clone())).await?;
    }
    socket.flush().await
}

/// Fell behind: the missed messages from the ring, or a resync view; then live again
/// from a fresh receiver.
async fn catch_up(
    app: &PublicSource,
    socket: &mut WebSocket,
    live: &mut broadcast::Receiver<Arc<FeedMessage>>,
    last: &mut Option<(u64, u32)>,
) -> Result<(), axum::Error> {
    app.metrics.lagged(Feed::Public);
    let Joined {
        backlog,
        live: again,
    } = app.feed.catch_up(*last);
    *live = again;
    send_all(socket, backlog, last).await
}

fn sse_event(m: &FeedMessage) -> SseEvent {
    SseEvent::default()
        .event(m.kind)
        .id(m.id())
        .data(m.text.as_str())
}

/// `GET /sse/public`: the public feed as server-sent events; resumes from
/// `Last-Event-ID` (or `?after=ID`).
#[utoipa::path(get, path = "/sse/public", tag = "public", params(ResumeQuery),
    responses((status = 200, description = "Server-sent events: the public feed; each event's data is one feed message, a JSON object (`{\"type\", \"id\", \"seq\", \"sub\", \"n\", \"at_ms\", \"resync\", \"view\" | \"result\"}`: docs/src/api.md, Streams)", content_type = "text/event-stream", body = Object)))]
pub async fn public_sse(
    State(app): State<AppState>,
    Query(q): Query<ResumeQuery>,
    headers: HeaderMap,
) -> Response {
    serve_sse(app.public_source(), sse_resume(&headers, q), Vec::new())
}

/// Where an SSE client resumes: `Last-Event-ID`, else `?after=ID`.
pub fn sse_resume(headers: &HeaderMap, q: ResumeQuery) -> Option<(u64, u32)> {
    headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or(q.after)
        .as_deref()
        .and_then(parse_id)
}

/// Serves one `/sse/public` client of `source`, resuming after `after`; `prelude` as for
/// [`serve_ws`].
pub fn serve_sse(
    app: PublicSource,
    after: Option<(u64, u32)>,
    prelude: Vec<Arc<FeedMessage>>,
) -> Response {
    let after = prelude.last().map(|m| m.key()).or(after);
    let Joined { backlog, live } = app.feed.join(after);
    let backlog: Vec<_> = prelude.into_iter().chain(backlog).collect();
    let last = backlog.last().map(|m| (m.seq, m.sub)).or(after);
    // Counted while the stream lives (it is dropped when the client goes).
    let counted = app.metrics.subscriber(Stream::PublicSse);
    let state = (app, backlog.into_iter(), live, last, counted);
    let events = futures::stream::unfold(
        state,
        |(app, mut backlog, mut live, mut last, counted)| async move {
            if let Some(m) = backlog.next() {
                return Some((
                    Ok::<_, Infallible>(sse_event(&m)),
                    (app, backlog, live, last, counted),
                ));
            }
            loop {
                match live.recv().await {
                    Ok(m) => {
                        if last.is_some_and(|l| (m.seq, m.sub) <= l) {
                            continue;
                        }
                        last = Some((m.seq, m.sub));
                        return Some((Ok(sse_event(&m)), (app, backlog, live, last, counted)));
                    }
                    Err(RecvError::Lagged(_)) => {
                        app.metrics.lagged(Feed::Public);
                        let Joined {
                            backlog: missed,
                            live: again,
                        } = app.feed.catch_up(last);
                        live = again;
                        let mut missed = missed.into_iter();
                        if let Some(m) = missed.next() {
                            let rest: Vec<_> = missed.collect();
                            last = rest.last().map(|m| (m.seq, m.sub)).or(Some((m.seq, m.sub)));
                            return Some((
                                Ok(sse_event(&m)),
                                (app, rest.into_iter(), live, last, counted),
                            ));
                        }
                    }
                    Err(RecvError::Closed) => return None,
                }
            }
        },
    );
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}
