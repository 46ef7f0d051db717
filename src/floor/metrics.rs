//! The floor's `/metrics` (served beside the pit page, `--bind`): whether it reaches its
//! broker and its database, how far each table's ingest is behind its stream, the rows
//! taken and the alarms raised by kind — what the studio's alert rules
//! (`config/monitoring/croupier-alerts.yml`) and dashboard read. Open, as the table's and
//! the relay's are: figures only, no table's content.

use super::db::FloorDb;
use super::ingest::{Behind, IngestStats};
use crate::metrics::{Exposition, CONTENT_TYPE};
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use std::sync::Arc;
use std::time::Duration;

/// A per-table gauge: its name, its help and its value from a table's reading.
type PerTable = (&'static str, &'static str, fn(&Behind) -> f64);

/// How long a scrape waits for the database's answer before reporting it down.
const DB_PROBE: Duration = Duration::from_secs(2);

/// What a scrape reads.
#[derive(Clone)]
pub struct Scraped {
    /// The ingest's counters and lag.
    pub stats: Arc<IngestStats>,
    /// The broker connection.
    pub client: async_nats::Client,
    /// The floor's database.
    pub db: FloorDb,
}

/// `GET /metrics`.
pub fn router(scraped: Scraped) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .with_state(scraped)
}

async fn metrics(State(s): State<Scraped>) -> Response {
    let mut out = Exposition::default();
    let connected = s.client.connection_state() == async_nats::connection::State::Connected;
    out.gauge(
        "croupier_floor_broker_connected",
        "1 while the floor is connected to the broker.",
        u8::from(connected),
    );
    // A pool that cannot hand out a connection, or a server that does not answer, reads
    // as down: the ingest commits nothing meanwhile.
    let db_up = matches!(
        tokio::time::timeout(DB_PROBE, sqlx::query("SELECT 1").execute(s.db.pool())).await,
        Ok(Ok(_))
    );
    out.gauge(
        "croupier_floor_database_up",
        "1 when the floor's database answered this scrape (within 2 s).",
        u8::from(db_up),
    );
    out.counter(
        "croupier_floor_rows_total",
        "Log rows committed to the floor's database since the start.",
        s.stats.rows.load(std::sync::atomic::Ordering::Relaxed),
    );
    out.family(
        "croupier_floor_alarms_total",
        "counter",
        "Floor alarms raised since the start, by kind (chain_break, gap, conflict, unreadable, misfiled, timeline, fork, stall).",
    );
    for (kind, n) in s.stats.alarms_by_kind() {
        out.sample("croupier_floor_alarms_total", &[("kind", kind)], n);
    }
    let behind = s.stats.behind();
    out.gauge(
        "croupier_floor_tables",
        "Tables whose log stream the floor follows.",
        behind.len(),
    );
    // One gauge per table for each reading of how far behind it is.
    let per_table: [PerTable; 2] = [
        (
            "croupier_floor_lag_messages",
            "Messages a table's stream holds after the last one the floor took, per table.",
            |b| b.messages as f64,
        ),
        (
            "croupier_floor_stalled_seconds",
            "How long the floor has taken nothing from a table's stream while it held more, per table (0 when caught up or moving).",
            |b| b.stalled.as_secs_f64(),
        ),
    ];
    for (name, help, value) in per_table {
        out.family(name, "gauge", help);
        for (table, b) in &behind {
            out.sample(name, &[("table", table)], value(b));
        }
    }
    out.process(&crate::process::ProcessFigures::read());
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], out.finish()).into_response()
}
