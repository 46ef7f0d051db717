//! The WAL checkpointer: a task of its own that copies the WAL back into the database, so
//! no commit of the writer pays for a checkpoint.

use super::options;
use sqlx::ConnectOptions;
use std::path::PathBuf;
use std::time::Duration;

/// Aborts the checkpointer when the writer goes.
#[derive(Debug)]
pub(super) struct AbortOnDrop(pub(super) tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// How often the WAL is copied back into the database file.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(1);

/// Copies the WAL into the database every second on a connection of its own, so the
/// writer's commits never pay for a checkpoint (with SQLite's automatic checkpoint, one
/// commit in a few hundred did, which was most of the p99 card latency). PASSIVE: it
/// never blocks the writer; a crash in the middle is recovered by SQLite at the next open.
pub(super) async fn checkpointer(path: PathBuf) {
    let Ok(mut conn) = options(&path).connect().await else {
        tracing::warn!(db = %path.display(), "no checkpointer: the WAL grows until shutdown");
        return;
    };
    let mut tick = tokio::time::interval(CHECKPOINT_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
            .execute(&mut conn)
            .await
        {
            tracing::debug!(error = %e, "checkpoint");
        }
    }
}
