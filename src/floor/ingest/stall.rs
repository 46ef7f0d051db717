//! The stall watch beside each table's passes: how far the floor is behind the stream
//! (for `/metrics`), and a `stall` alarm when that has not moved for too long. Apart from
//! the passes, since it must see a pass that hangs, which the pass itself cannot.

use super::{Behind, IngestStats};
use crate::floor::chain::Alarm;
use crate::floor::db::FloorDb;
use async_nats::jetstream::{stream::Stream, Context};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tracing::warn;

/// A table's stall watch, beside its passes: when the stream holds messages after the
/// last one the floor took and that has not moved for the configured time — a consumer
/// that delivers nothing, a pass that keeps failing, a database that blocks the commit —
/// a `stall` alarm, once per episode (logged first: the database may be what stalls).
pub(super) async fn watch_stall(
    js: Context,
    db: FloorDb,
    stream_name: String,
    table: String,
    taken: Arc<AtomicU64>,
    stall: Duration,
    stats: Arc<IngestStats>,
) {
    let every = (stall / 4).clamp(Duration::from_millis(250), Duration::from_secs(5));
    let mut last_taken = taken.load(Ordering::Relaxed);
    let mut since = std::time::Instant::now();
    let mut raised = false;
    // When the floor last took a message (`since` also restarts when it is caught up).
    let mut moved = std::time::Instant::now();
    loop {
        tokio::time::sleep(every).await;
        let now_taken = taken.load(Ordering::Relaxed);
        if now_taken != last_taken {
            (last_taken, since, raised) = (now_taken, std::time::Instant::now(), false);
            moved = since;
        }
        // Read every time (not only once the floor stopped moving): how far behind it is
        // is reported on `/metrics` while it catches up too. An unreadable stream leaves
        // the last reading as it was, and starts the stall's clock again (a broker that
        // cannot answer is not the floor stalling).
        let Some((stream, mut on_broker)) = stream_last(&js, &stream_name).await else {
            (since, raised) = (std::time::Instant::now(), false);
            continue;
        };
        // The info says caught up, but it is the broker's bookkeeping (see `quiet`): a
        // floor that has not moved for half the stall time asks the stream itself for the
        // next message, so an info that lags cannot hide a stall.
        if on_broker <= now_taken
            && moved.elapsed() >= stall / 2
            && stream.get_raw_message(now_taken + 1).await.is_ok()
        {
            on_broker = now_taken + 1;
        }
        if on_broker <= now_taken {
            (since, raised) = (std::time::Instant::now(), false);
        }
        stats.set_behind(
            &table,
            Behind {
                messages: on_broker.saturating_sub(now_taken),
                // `since` restarts whenever the floor takes a row or catches up.
                stalled: if on_broker > now_taken {
                    since.elapsed()
                } else {
                    Duration::ZERO
                },
            },
        );
        if on_broker <= now_taken {
            continue;
        }
        if raised || since.elapsed() < stall {
            continue;
        }
        // Numbered by the stream position it stalled at (reading the table's head could
        // wait on the very lock that stalls the ingest).
        let alarm = Alarm {
            seq: now_taken,
            kind: "stall",
            detail: format!(
                "table {table}: the broker holds {} message(s) after the last one the floor took, which has not moved for {} s",
                on_broker - now_taken,
                since.elapsed().as_secs()
            ),
        };
        warn!(%table, seq = now_taken, kind = alarm.kind, detail = %alarm.detail, "FLOOR ALARM");
        match db.raise(&table, &alarm).await {
            Ok(()) => stats.alarmed(alarm.kind),
            Err(e) => warn!(%table, error = %e, "floor: the stall alarm cannot be written"),
        }
        raised = true;
    }
}

/// The stream and its last sequence, `None` when the broker cannot say. One request: the
/// lookup answers with the stream's info, read as it came.
async fn stream_last(js: &Context, stream_name: &str) -> Option<(Stream, u64)> {
    let s = js.get_stream(stream_name).await.ok()?;
    let last = s.cached_info().state.last_sequence;
    Some((s, last))
}
