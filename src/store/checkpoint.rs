//! The WAL checkpointer: a task of its own that copies the WAL back into the database, so
//! no commit of the writer pays for a checkpoint.

use super::options;
use sqlx::ConnectOptions;
use std::path::PathBuf;
use std::time::Duration;

/// The checkpointer's handle. Dropped (a writer that went without closing), it aborts the
/// task; [`Checkpointer::close`] stops it and waits until its connection is closed. That
/// wait matters: SQLite closes a connection on sqlx's worker thread, and the last
/// connection to a WAL database checkpoints as it closes — one still closing after the
/// store said it was closed would write the old WAL into a database restored over it
/// (seen under load: "database disk image is malformed" after a restore).
#[derive(Debug)]
pub(super) struct Checkpointer {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts checkpointing the database at `path`.
    pub(super) fn spawn(path: PathBuf) -> Checkpointer {
        let (stop, stopped) = tokio::sync::oneshot::channel();
        Checkpointer {
            stop: Some(stop),
            task: Some(tokio::spawn(checkpointer(path, stopped))),
        }
    }

    /// Stops the checkpointer; returns once its connection is closed.
    pub(super) async fn close(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

/// The WAL file beside the database at `path`.
fn wal_path(path: &std::path::Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push("-wal");
    PathBuf::from(name)
}

/// How often the WAL is copied back into the database file. Every ten seconds, not every
/// second: each checkpoint costs two `fdatasync`s (the WAL, then the database file) and a
/// round trip to SQLite's thread, and a page written by many rows (the log's last leaf,
/// its indexes) is copied once per checkpoint, not once per second — a tenth of the writes
/// to a Pi's SD card. The WAL holds ten seconds of rows in between (under a megabyte at a
/// demo's pace), which SQLite reads through its index and replays after a crash.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(10);

/// Copies the WAL into the database every [`CHECKPOINT_EVERY`] on a connection of its own,
/// so the writer's commits never pay for a checkpoint (with SQLite's automatic checkpoint,
/// one commit in a few hundred did, which was most of the p99 card latency). PASSIVE: it
/// never blocks the writer; a crash in the middle is recovered by SQLite at the next open.
async fn checkpointer(path: PathBuf, mut stop: tokio::sync::oneshot::Receiver<()>) {
    let Ok(mut conn) = options(&path).connect().await else {
        tracing::warn!(db = %path.display(), "no checkpointer: the WAL grows until shutdown");
        return;
    };
    let mut tick = crate::clock::every(CHECKPOINT_EVERY);
    let wal = wal_path(&path);
    let mut copied = None;
    loop {
        tokio::select! {
            _ = &mut stop => break,
            _ = tick.tick() => {}
        }
        // Nothing written to the WAL since the last checkpoint (a checkpoint reads it and
        // writes the database file, never the WAL): an idle table's second costs a `stat`,
        // not a query on the connection's thread.
        let written = std::fs::metadata(&wal).and_then(|m| m.modified()).ok();
        if written.is_some() && written == copied {
            continue;
        }
        copied = written;
        if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
            .execute(&mut conn)
            .await
        {
            tracing::debug!(error = %e, "checkpoint");
        }
    }
    if let Err(e) = sqlx::Connection::close(conn).await {
        tracing::warn!(error = %e, "the checkpointer's connection did not close cleanly");
    }
}
