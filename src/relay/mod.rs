//! `croupier relay`: a stateless edge node that serves remote players the public streams
//! the tables publish to NATS JetStream (`crate::publish`). Any number run side by side
//! behind a load balancer; each serves every publishing table with the same routes,
//! message format and resume-by-id as a table's own:
//!
//! | route | what |
//! |---|---|
//! | `GET /public?table=ID` | the remote players' page (`dealer-ui/public.html`) |
//! | `GET /ws/public?table=ID[&after=ID]` | the public feed over WebSocket (the table's fan-out code) |
//! | `GET /sse/public?table=ID[&after=ID]` | the same as server-sent events (`Last-Event-ID` too) |
//! | `GET /api/tables` | the lobby: every publishing table, its game, state and round |
//! | `GET /api/table-key?table=ID` | the table's pinned Ed25519 key, to check its signed results |
//! | `GET /ui/{file}` | the page's scripts and styles |
//! | `GET /healthz` | 200 while the process answers |
//! | `GET /readyz` | 200 once connected to the broker and watching the bucket; 503 with reasons; messages refused, unpinned tables, and tables whose stream could not be followed for `tables::STALLED` (`stalled`) |
//! | `GET /metrics` | Prometheus: broker connection, tables and stalled tables, per table messages, last `n`, viewers, refused |
//!
//! - `tables`: discovery (the key-value bucket) and one follower per table.

pub mod tables;

use crate::broker::BrokerOptions;
use crate::metrics::{Exposition, Stream, CONTENT_TYPE};
use crate::web::api::ApiError;
use crate::web::feed::parse_id;
use crate::web::streams::{self, ResumeQuery};
use axum::extract::{Query, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use tables::Tables;
use tracing::{info, warn};

/// `croupier relay`'s settings.
#[derive(Debug, Clone)]
pub struct RelayConfig {
    /// The broker: URLs, credential, TLS, inbox prefix (default
    /// `broker::connect::RELAY_INBOX`).
    pub broker: BrokerOptions,
    /// Listen address.
    pub bind: String,
    /// The tables' pinned public keys (`trust::pinned`): only these tables are served.
    pub table_keys: PathBuf,
    /// The public streams' prefix (`[publish] public_stream`).
    pub public_stream: String,
    /// The key-value bucket the tables put their views in.
    pub bucket: String,
    /// Messages kept per table for viewers that resume (older ids are read from the
    /// stream).
    pub ring: usize,
}

/// Why the relay could not run.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// Why.
        source: std::io::Error,
    },
    /// Serving HTTP failed.
    #[error("http: {0}")]
    Http(std::io::Error),
    /// The pinned keys cannot be read.
    #[error(transparent)]
    Keys(#[from] crate::trust::pinned::PinnedError),
    /// The broker options cannot be used.
    #[error(transparent)]
    Broker(#[from] crate::broker::ConnectError),
}

#[derive(Clone)]
struct Relay {
    tables: Tables,
    client: Arc<OnceLock<async_nats::Client>>,
    /// Live viewers (WebSocket and SSE, every table) past which a new one gets 503: the
    /// table's `max_public`, fitted under the open-file limit, so viewers can never take
    /// the descriptors `/healthz`, `/readyz` and `/metrics` need (issue #32 items 3, 11).
    max_viewers: usize,
}

impl Relay {
    /// Live viewers, every table and stream.
    fn viewers(&self) -> usize {
        self.tables
            .figures()
            .iter()
            .map(|f| {
                f.metrics.subscribers(Stream::PublicWs) + f.metrics.subscribers(Stream::PublicSse)
            })
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
            .sum()
    }

    /// The 503 for a viewer past [`Relay::max_viewers`], else `None`.
    fn full(&self) -> Option<Response> {
        (self.viewers() >= self.max_viewers).then(|| {
            let mut resp = ApiError::Unavailable(format!(
                "this relay serves {} viewers, its most; try again or another relay",
                self.max_viewers
            ))
            .into_response();
            resp.headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from_static("5"));
            resp
        })
    }
}

/// Runs the relay until `shutdown` completes; `started` gets the bound address. The
/// broker is connected in the background (and again whenever it is lost): until then
/// `/readyz` says `broker` and the public routes know no table.
pub async fn run(
    config: RelayConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
    started: impl FnOnce(SocketAddr),
) -> Result<(), RelayError> {
    let mut config = config;
    if config.broker.inbox_prefix.is_none() {
        config.broker.inbox_prefix = Some(crate::broker::connect::RELAY_INBOX.into());
    }
    // Unusable keys or credentials stop the relay before it listens.
    let tables = Tables::new(
        config.ring,
        &config.public_stream,
        &config.bucket,
        config.table_keys.clone(),
    )?;
    crate::broker::connect::client_options(&config.broker)?;
    let listener = tokio::net::TcpListener::bind(&config.bind)
        .await
        .map_err(|source| RelayError::Bind {
            addr: config.bind.clone(),
            source,
        })?;
    let addr = listener.local_addr().map_err(RelayError::Http)?;
    // The table's connection-level limits at their defaults: header-read and idle
    // timeout, a connection cap (viewers leave it once upgraded) and a viewer cap. The
    // open-file limit raised to its hard limit and the caps fitted to it, as the table's
    // (issue #32 item 3).
    let mut http = crate::table::config::HttpSection::default();
    let fds = crate::process::raise_fd_limit();
    match http.fit_to_fds(fds) {
        Some(lowered) => warn!("{lowered}: raise the hard limit (LimitNOFILE=) to serve more"),
        None => info!(fds, "open-file limit fits the connection limits"),
    }
    let relay = Relay {
        tables,
        client: Arc::new(OnceLock::new()),
        max_viewers: http.max_public,
    };
    let connecting = tokio::spawn(connect(config.clone(), relay.clone()));
    let app = Router::new()
        .route("/", get(|| crate::web::asset("lobby.html")))
        .route("/public", get(|| crate::web::asset("public.html")))
        .route(
            "/ui/{file}",
            get(|axum::extract::Path(f): axum::extract::Path<String>| crate::web::asset_owned(f)),
        )
        .route("/ws/public", get(ws))
        .route("/sse/public", get(sse))
        .route("/api/tables", get(lobby))
        .route("/api/table-key", get(table_key))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(relay.clone());
    // The table's CSP, frame and sniffing headers on the relay's pages too.
    let app = crate::web::edge::page_headers(app);
    info!(%addr, nats = %crate::broker::redact(&config.broker.url), "relay serving http://{addr}/");
    started(addr);
    let watchdog = crate::systemd::Watchdog::from_env().map(|w| {
        info!(
            every_ms = w.every.as_millis() as u64,
            "systemd watchdog: pinging while the relay's table registry answers"
        );
        tokio::spawn(keep_alive(w, relay.clone()))
    });
    let connections = Arc::new(tokio::sync::Semaphore::new(http.max_connections));
    // After a storm of viewers, the heap's freed pages go back to the system, as at the
    // table (`process::trim_after_storms`): 2,000 viewers left 10 MB behind before.
    let trim = crate::process::trim_after_storms({
        let (connections, max) = (Arc::clone(&connections), http.max_connections);
        move || max.saturating_sub(connections.available_permits()) + relay.viewers()
    });
    let limits = crate::web::server::ConnLimits {
        header_timeout: std::time::Duration::from_millis(http.header_timeout_ms),
        connections,
    };
    let served = crate::web::server::serve(
        crate::web::tcp::NoDelayListener(listener),
        app,
        limits,
        shutdown,
    )
    .await;
    connecting.abort();
    trim.abort();
    if let Some(w) = watchdog {
        w.abort();
    }
    served.map_err(RelayError::Http)
}

/// Pings systemd's watchdog while the relay works: each ping follows a read of the table
/// registry every viewer and the lobby go through (its lock taken, every table's
/// figures), on the same runtime that serves them. A deadlocked registry or a runtime
/// whose workers are all stuck stops the pings, and systemd restarts the relay.
///
/// Not a request to its own `/healthz`: that would wait behind the connection cap, so a
/// flood of slow clients — which the cap exists to absorb — would get the relay restarted
/// and every viewer dropped. Not the broker either: a relay without a broker is alive
/// (`/readyz` says so, `croupier_relay_broker_connected` too) and reconnects by itself.
async fn keep_alive(w: crate::systemd::Watchdog, relay: Relay) {
    let mut ticks = w.interval();
    loop {
        ticks.tick().await;
        let _ = relay.viewers();
        if let Err(e) = w.notifier.watchdog() {
            warn!(error = %e, "watchdog ping failed");
        }
    }
}

async fn connect(config: RelayConfig, relay: Relay) {
    let mut backoff = std::time::Duration::from_millis(250);
    let client = loop {
        match crate::broker::connect(&config.broker, "croupier relay").await {
            Ok(client) => break client,
            Err(e) => {
                warn!(error = %e, "relay: the broker is unreachable; trying again");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(std::time::Duration::from_secs(5));
            }
        }
    };
    info!(nats = %crate::broker::redact(&config.broker.url), "relay connected");
    let _ = relay.client.set(client.clone());
    let watch = crate::broker::liveness::watch(client.clone(), "relay");
    tables::discover(
        crate::broker::jetstream(client, config.broker.api_prefix()),
        config.bucket,
        relay.tables,
    )
    .await;
    watch.abort();
}

/// Every reason a message is refused, for `/metrics`.
const REFUSALS: [tables::Refusal; 4] = [
    tables::Refusal::Unsigned,
    tables::Refusal::Malformed,
    tables::Refusal::Stale,
    tables::Refusal::Gap,
];

/// `?table=ID[&after=ID]`.
#[derive(Deserialize)]
struct TableQuery {
    table: String,
    after: Option<String>,
}

fn unknown(table: &str) -> Response {
    ApiError::NotFound(format!("no table {table:?} is publishing")).into_response()
}

async fn ws(State(relay): State<Relay>, Query(q): Query<TableQuery>, request: Request) -> Response {
    if let Some(full) = relay.full() {
        return full;
    }
    let Some(source) = relay.tables.source(&q.table) else {
        return unknown(&q.table);
    };
    let after = q.after.as_deref().and_then(parse_id);
    let history = relay.tables.history(&q.table, after).await;
    streams::serve_ws(source, after, history, request).await
}

async fn sse(
    State(relay): State<Relay>,
    Query(q): Query<TableQuery>,
    headers: HeaderMap,
) -> Response {
    if let Some(full) = relay.full() {
        return full;
    }
    let Some(source) = relay.tables.source(&q.table) else {
        return unknown(&q.table);
    };
    let after = streams::sse_resume(&headers, ResumeQuery { after: q.after });
    let history = relay.tables.history(&q.table, after).await;
    streams::serve_sse(source, after, history)
}

async fn lobby(State(relay): State<Relay>) -> Response {
    Json(relay.tables.lobby()).into_response()
}

/// `?table=ID`.
#[derive(Deserialize)]
struct KeyQuery {
    table: String,
}

/// `GET /api/table-key?table=ID`: the key the operator pinned for the table, as the
/// table's own `/api/table-key` answers it (`{"table", "alg", "key"}`).
async fn table_key(State(relay): State<Relay>, Query(q): Query<KeyQuery>) -> Response {
    match relay.tables.pinned_key(&q.table) {
        Some(key) => Json(serde_json::json!({"table": q.table, "alg": "ed25519", "key": key}))
            .into_response(),
        None => {
            ApiError::NotFound(format!("no key is pinned for table {:?}", q.table)).into_response()
        }
    }
}

/// `/readyz`'s answer on a relay.
#[derive(Debug, Serialize)]
struct Readiness {
    ready: bool,
    /// `broker` (not connected), `bucket` (not watching the tables' bucket).
    reasons: Vec<&'static str>,
    tables: usize,
    /// Messages from the broker not served, per table and reason (`unsigned`,
    /// `malformed`, `stale`, `gap`): someone else wrote to a table's subject, or messages
    /// were lost. Reported, not a readiness reason: forged messages must not take the
    /// relays out of service.
    refused: std::collections::BTreeMap<String, std::collections::BTreeMap<&'static str, u64>>,
    /// Tables publishing with no pinned key: not served.
    unpinned: Vec<String>,
    /// Tables whose public stream this relay has not been able to follow for
    /// `tables::STALLED` or longer: their viewers get nothing new. Reported, not a
    /// readiness reason: every relay reads the same cluster, so a stall there would take
    /// all of them out of service at once, while each still serves the table's last view
    /// and ring; an operator alerts on `croupier_relay_tables_stalled`.
    stalled: Vec<String>,
}

fn connected(relay: &Relay) -> bool {
    relay
        .client
        .get()
        .is_some_and(|c| c.connection_state() == async_nats::connection::State::Connected)
}

async fn readyz(State(relay): State<Relay>) -> Response {
    let mut reasons = Vec::new();
    if !connected(&relay) {
        reasons.push("broker");
    }
    if !relay.tables.watching() {
        reasons.push("bucket");
    }
    let r = Readiness {
        ready: reasons.is_empty(),
        reasons,
        tables: relay.tables.lobby().len(),
        refused: relay.tables.refused(),
        unpinned: relay.tables.unpinned(),
        stalled: relay.tables.stalled(),
    };
    let status = if r.ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(r)).into_response()
}

async fn metrics(State(relay): State<Relay>) -> Response {
    let mut out = Exposition::default();
    out.gauge(
        "croupier_relay_broker_connected",
        "1 while the relay is connected to the broker.",
        u8::from(connected(&relay)),
    );
    let figures = relay.tables.figures();
    out.gauge(
        "croupier_relay_tables",
        "Tables this relay serves.",
        figures.len(),
    );
    out.gauge(
        "croupier_relay_tables_stalled",
        &format!(
            "Tables whose public stream this relay has not been able to follow for {} s or more (their viewers get nothing new; /readyz names them).",
            tables::STALLED.as_secs()
        ),
        relay.tables.stalled().len(),
    );
    out.family(
        "croupier_relay_messages_total",
        "counter",
        "Public messages received from the broker, per table.",
    );
    for f in &figures {
        out.sample(
            "croupier_relay_messages_total",
            &[("table", &f.table)],
            f.received,
        );
    }
    out.family(
        "croupier_relay_last_n",
        "gauge",
        "The last public message's number (n) received, per table.",
    );
    for f in &figures {
        out.sample("croupier_relay_last_n", &[("table", &f.table)], f.last_n);
    }
    out.family(
        "croupier_relay_consumer_restarts_total",
        "counter",
        "Times following a table's public stream failed and the relay made its consumer again (each holds that table's messages back a second or more on this relay), per table.",
    );
    for f in &figures {
        out.sample(
            "croupier_relay_consumer_restarts_total",
            &[("table", &f.table)],
            f.restarts,
        );
    }
    out.family(
        "croupier_relay_missed_heartbeats_kept_total",
        "counter",
        "Missed idle heartbeats on a table's pull after which the consumer was kept, per table and judgement: relay_late (messages had arrived or were on their way: the relay was not run in time, its machine starved), no_pull (the broker held no pull of the relay's, the next on its way), broker_late (the broker held the pull and was late to say it had nothing).",
    );
    for f in &figures {
        for why in tables::Kept::ALL {
            out.sample(
                "croupier_relay_missed_heartbeats_kept_total",
                &[("table", &f.table), ("judged", why.label())],
                f.heartbeats_kept[why.index()],
            );
        }
    }
    out.family(
        "croupier_relay_viewers",
        "gauge",
        "Live viewers, per table and stream.",
    );
    for f in &figures {
        for (stream, label) in [
            (Stream::PublicWs, "public_ws"),
            (Stream::PublicSse, "public_sse"),
        ] {
            out.sample(
                "croupier_relay_viewers",
                &[("table", &f.table), ("stream", label)],
                f.metrics.subscribers(stream),
            );
        }
    }
    out.family(
        "croupier_relay_lagged_total",
        "counter",
        "Times a viewer fell behind and caught up from the ring or was resynced, per table.",
    );
    for f in &figures {
        out.sample(
            "croupier_relay_lagged_total",
            &[("table", &f.table)],
            f.metrics.lagged_count(crate::metrics::Feed::Public),
        );
    }
    out.family(
        "croupier_relay_refused_total",
        "counter",
        "Messages from the broker not served, per table and reason (unsigned, malformed, stale, gap).",
    );
    // Every reason of every table from the start, at 0: an alert on the counter's
    // increase then sees the first refusal (a series born at 1 shows no increase).
    let refused = relay.tables.refused();
    let ids: std::collections::BTreeSet<&String> = figures
        .iter()
        .map(|f| &f.table)
        .chain(refused.keys())
        .collect();
    for table in ids {
        let of = refused.get(table);
        for reason in REFUSALS.map(tables::Refusal::label) {
            let count = of.and_then(|r| r.get(reason)).copied().unwrap_or(0);
            out.sample(
                "croupier_relay_refused_total",
                &[("table", table), ("reason", reason)],
                count,
            );
        }
    }
    out.gauge(
        "croupier_relay_unpinned_tables",
        "Tables publishing whose key is not pinned (not served).",
        relay.tables.unpinned().len(),
    );
    out.process(&crate::process::ProcessFigures::read());
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], out.finish()).into_response()
}
