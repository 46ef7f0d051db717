//! Operations endpoints, public (no authentication: probes and scrapers carry no
//! credentials, and nothing here is secret — no cards, no alarm details beyond the reason
//! the dealer sees):
//!
//! | route | what |
//! |---|---|
//! | `GET /healthz` | 200 `ok` while the process answers *and* the table loop beats (see below); 503 otherwise |
//! | `GET /readyz` | JSON [`Readiness`]: 200 when the table can deal (store ok, shoe connected, no alarm, and with `[publish]` no publishing lag), 503 with the reasons |
//! | `GET /metrics` | Prometheus text format 0.0.4 |
//!
//! `/healthz` is a liveness probe: an HTTP answer alone proves only that the runtime's
//! I/O threads run. The table task — the one that matters — stamps a heartbeat every
//! second between commands ([`crate::table::heartbeat`]); a beat older than
//! [`STALE_AFTER`](crate::table::heartbeat::STALE_AFTER) means it is stuck in one command
//! (or gone), and the probe says 503. Alarms, a missing shoe or a broken store do not make
//! the process unhealthy (restarting fixes none of them): they are `/readyz`'s business.

use super::AppState;
use crate::clock::{self, ClockStatus};
use crate::metrics::{Exposition, CONTENT_TYPE};
use crate::process::ProcessFigures;
use crate::table::{Snapshot, TableState};
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

use axum::Json;
use serde::Serialize;

/// `/readyz`'s answer.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Readiness {
    /// Whether the table can deal now.
    pub ready: bool,
    /// Why not (empty when ready): `store`, `shoe`, `alarm`, `dispute`, `table_loop`.
    #[schema(value_type = Vec<Reason>)]
    pub reasons: Vec<&'static str>,
    /// `ok`, or why the store is unusable.
    pub store: String,
    /// The shoe's link: `connected`, `disconnected: ...`, `waiting`.
    pub shoe: String,
    /// The alarm's reason, when the table is locked.
    pub alarm: Option<String>,
    /// `ok`, or `stalled` when the table loop has missed its heartbeats.
    #[schema(value_type = String, pattern = "^(ok|stalled)$")]
    pub table_loop: &'static str,
    /// The system clock (reported, never a reason: the table orders by sequence).
    pub clock: ClockStatus,
    /// The broker publisher, when `[publish]` is configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub publish: Option<PublishReport>,
}

/// Every reason [`readiness`] and [`with_publish`] give, for the document (a test keeps
/// the two in step).
#[derive(Debug, Clone, Copy, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The store is unusable.
    Store,
    /// The shoe is not connected.
    Shoe,
    /// An alarm locks the table.
    Alarm,
    /// A dispute halts the round.
    Dispute,
    /// The table loop missed its heartbeats.
    TableLoop,
    /// The broker publisher lags.
    PublishLag,
    /// The broker publisher stopped: the broker holds another history of this table (or
    /// the table has no key, or its log does not replay); `publish.stopped` says which.
    PublishStopped,
}

/// The broker publisher in `/readyz`.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct PublishReport {
    /// `connecting`, `publishing`, `disconnected` (the link to the broker is down),
    /// `retrying` (connected; the broker refused or failed a request) or `failed`.
    pub state: &'static str,
    /// The last log row the broker acknowledged.
    pub acked: u64,
    /// Messages on the table's streams it did not sign, passed over since start: noise
    /// someone wrote to its subjects, never a reason to stop.
    pub foreign: u64,
    /// Committed rows not yet acknowledged.
    pub lag: u64,
    /// Why publishing stopped (`failed`): the broker holds another history of this table,
    /// the table has no key, the log does not replay.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

/// Adds the publisher to `r`: a lag while the broker is not taking rows, or beyond
/// `[publish] max_lag`, is the reason `publish_lag`. It is only a reason, never a lock:
/// the table deals on and its log stays the truth; the publisher catches up.
pub fn with_publish(
    mut r: Readiness,
    status: &crate::broker::PublishStatus,
    committed: u64,
) -> Readiness {
    if status.lagging(committed) {
        r.reasons.push("publish_lag");
        r.ready = false;
    }
    let stopped = status.stopped();
    if stopped.is_some() {
        r.reasons.push("publish_stopped");
        r.ready = false;
    }
    r.publish = Some(PublishReport {
        state: status.state().label(),
        acked: status.acked(),
        foreign: status.foreign(),
        lag: status.lag(committed),
        stopped,
    });
    r
}

/// The table's readiness as `/readyz` and `/metrics` report it.
fn app_readiness(app: &AppState, snapshot: &Snapshot, clock: ClockStatus) -> Readiness {
    let r = readiness(snapshot, !app.table.heartbeat().stale(), clock);
    match &app.publish {
        Some(p) => with_publish(r, p, snapshot.seq),
        None => r,
    }
}

/// Whether the table described by `snapshot` can deal: a pure function of what the
/// table published, the loop's liveness and the clock.
pub fn readiness(snapshot: &Snapshot, loop_alive: bool, clock: ClockStatus) -> Readiness {
    let mut reasons = Vec::new();
    if snapshot.state == TableState::Broken || snapshot.broken.is_some() {
        reasons.push("store");
    }
    if !snapshot.shoe.connected() {
        reasons.push("shoe");
    }
    if snapshot.alarm.is_some() || snapshot.state == TableState::Locked {
        reasons.push("alarm");
    }
    if snapshot.state == TableState::Disputed {
        reasons.push("dispute");
    }
    if !loop_alive {
        reasons.push("table_loop");
    }
    Readiness {
        ready: reasons.is_empty(),
        reasons,
        store: match &snapshot.broken {
            Some(why) => why.clone(),
            None => "ok".into(),
        },
        shoe: snapshot.shoe.link.clone(),
        alarm: snapshot.alarm.as_ref().map(|a| a.reason.clone()),
        table_loop: if loop_alive { "ok" } else { "stalled" },
        clock,
        publish: None,
    }
}

/// `GET /healthz`.
#[utoipa::path(get, path = "/healthz", tag = "ops",
    responses(
        (status = 200, description = "`ok`: the process answers and the table loop beats", content_type = "text/plain", body = String),
        (status = 503, description = "The table loop is stalled", content_type = "text/plain", body = String)))]
pub async fn healthz(State(app): State<AppState>) -> Response {
    let heartbeat = app.table.heartbeat();
    if heartbeat.stale() {
        let ms = heartbeat.age().as_millis();
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("table loop stalled: no heartbeat for {ms} ms\n"),
        )
            .into_response();
    }
    (StatusCode::OK, "ok\n").into_response()
}

/// `GET /readyz`.
#[utoipa::path(get, path = "/readyz", tag = "ops",
    responses(
        (status = 200, description = "Ready to deal", body = Readiness),
        (status = 503, description = "Not ready: the reasons", body = Readiness)))]
pub async fn readyz(State(app): State<AppState>) -> Response {
    let r = app_readiness(&app, &app.table.snapshot(), clock::read());
    let status = if r.ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(r)).into_response()
}

/// `GET /metrics`.
#[utoipa::path(get, path = "/metrics", tag = "ops",
    responses((status = 200, description = "Prometheus text format 0.0.4", content_type = "text/plain", body = String)))]
pub async fn metrics(State(app): State<AppState>) -> Response {
    let mut out = Exposition::default();
    app.table.metrics().write_to(&mut out);
    let snapshot = app.table.snapshot();
    let heartbeat = app.table.heartbeat();
    let clock = clock::read();
    let r = app_readiness(&app, &snapshot, clock.clone());
    out.gauge(
        "croupier_ready",
        "1 when the table can deal (store ok, shoe connected, no alarm, loop alive).",
        u8::from(r.ready),
    );
    out.family(
        "croupier_table_state",
        "gauge",
        "The table's state (1 for the current one).",
    );
    for (name, state) in [
        ("open", TableState::Open),
        ("locked", TableState::Locked),
        ("disputed", TableState::Disputed),
        ("broken", TableState::Broken),
    ] {
        let on = u8::from(snapshot.state == state);
        out.sample("croupier_table_state", &[("state", name)], on);
    }
    out.gauge(
        "croupier_dispute_open",
        "1 while a dispute is open at the table (every alarm opens one).",
        u8::from(snapshot.dispute.is_some()),
    );
    out.gauge(
        "croupier_dispute_open_age_seconds",
        "How long the open dispute has been open, from its log row's time (0 without one).",
        dispute_age_seconds(&app, &snapshot).await,
    );
    out.gauge(
        "croupier_shoe_connected",
        "1 while the shoe's link is up.",
        u8::from(snapshot.shoe.connected()),
    );
    out.gauge(
        "croupier_table_loop_heartbeat_age_seconds",
        "Time since the table loop last beat (it beats every second).",
        heartbeat.age().as_secs_f64(),
    );
    out.gauge(
        "croupier_clock_synchronised",
        "1 when the kernel considers the system clock synchronised (adjtimex).",
        u8::from(clock.synchronised),
    );
    out.counter(
        "croupier_clock_steps_total",
        "Steps of the wall clock (over 1 s against the monotonic clock) seen since the start.",
        clock.steps,
    );
    if let Some(us) = clock.max_error_us {
        out.gauge(
            "croupier_clock_max_error_seconds",
            "The kernel's maximum clock error estimate.",
            us as f64 / 1e6,
        );
    }
    if let Some(publish) = &app.publish {
        write_publish(&mut out, publish, snapshot.seq);
    }
    let p = ProcessFigures::read();
    out.process(&p);
    out.gauge(
        "croupier_process_resident_memory_max_bytes",
        "Peak resident set size (VmHWM).",
        p.rss_peak_bytes,
    );
    out.gauge("croupier_process_threads", "Threads.", p.threads);
    out.gauge(
        "croupier_process_start_time_seconds",
        "When the process started, Unix seconds.",
        p.start_time_seconds,
    );
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], out.finish()).into_response()
}

/// The open dispute's age: now minus the commit time of the row that opened it (its id),
/// so a restart does not make an old dispute look new. 0 without an open dispute or a
/// readable store.
async fn dispute_age_seconds(app: &AppState, snapshot: &Snapshot) -> f64 {
    let (Some(dispute), Some(reader)) = (&snapshot.dispute, &app.reader) else {
        return 0.0;
    };
    let Ok(Some(at_ms)) = reader.row_time_ms(&snapshot.table, dispute.head.id).await else {
        return 0.0;
    };
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    (now_ms.saturating_sub(at_ms).max(0)) as f64 / 1000.0
}

/// The publisher's figures.
fn write_publish(out: &mut Exposition, p: &crate::broker::PublishStatus, committed: u64) {
    use crate::broker::PublishState;
    out.registry(p.registry());
    out.gauge(
        "croupier_publish_lag_rows",
        "Committed log rows the broker has not acknowledged yet.",
        p.lag(committed),
    );
    out.gauge(
        "croupier_publish_acked_seq",
        "The last log row the broker acknowledged.",
        p.acked(),
    );
    out.gauge(
        "croupier_publish_public_n",
        "The last public message (its n) the broker acknowledged.",
        p.public_n(),
    );
    out.counter(
        "croupier_publish_messages_total",
        "Messages the broker acknowledged since start (log and public).",
        p.published(),
    );
    out.counter(
        "croupier_publish_failures_total",
        "Failed connections, requests and publications since start.",
        p.failures(),
    );
    out.counter(
        "croupier_publish_foreign_messages_total",
        "Messages on the table's streams it did not sign, passed over since start.",
        p.foreign(),
    );
    out.family(
        "croupier_publish_state",
        "gauge",
        "The publisher's state (1 for the current one).",
    );
    for state in PublishState::ALL {
        let on = u8::from(p.state() == state);
        out.sample("croupier_publish_state", &[("state", state.label())], on);
    }
}
