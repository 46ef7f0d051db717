//! A store that fails a write (a full disk, another process's lock, an I/O error): what the
//! table does until the store works again, and how it comes back without a restart.
//!
//! - The row whose write failed is not published (nothing is told before it is durable);
//!   the shoe items in it — and every item and alarm after it — go to the spill file
//!   (`store::spill`), listed as `unrecorded` on the panel and by `recall`.
//! - The table is out of service (`broken`), but keeps its writer and retries every
//!   [`RETRY`], each attempt waiting at most [`PROBE_BUSY`] for a lock, so the loop keeps
//!   beating. A retry re-reads the log (the truth), rebuilds the table from it if the failed
//!   row was an input the engine had applied, and writes a `recovered` row taking the
//!   spilled entries into the log: with items, it locks the table and holds them for a
//!   supervisor (clear: void; resolve the alarm's dispute: reject plays them in order).
//! - At start-up, spilled entries no `recovered` row accounts for (the service stopped
//!   before the store came back) are taken in the same way, once the store is open.

use super::table::Table;
use crate::engine::{Engine, Input};
use crate::metrics::{AlarmKind, CardOutcome};
use crate::store::spill::{Spill, Spilled};
use crate::store::{LogRow, Record, Source, WRITE_BUSY};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tracing::{error, info, warn};

/// How often a failed store is tried again.
pub const RETRY: Duration = Duration::from_secs(1);

/// How long a retry waits for another process's lock before giving up until the next one.
const PROBE_BUSY: Duration = Duration::from_millis(250);

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl Table {
    /// Gives the table its spill file (before `run`). Entries the log does not account for
    /// yet are listed as unrecorded and, with a working store, taken into the log at once.
    pub fn set_spill(&mut self, spill: Spill) {
        self.spill = Some(spill);
        if !self.pending().is_empty() {
            warn!(table = %self.id, entries = self.pending().len(),
                  "the spill file holds items and alarms the log does not account for");
            if self.store.is_some() && self.broken.is_none() {
                self.retry_at = Some(tokio::time::Instant::now());
            }
        }
        self.publish_state();
    }

    /// What was read or raised while the store failed and is in no log row yet, in order.
    fn pending(&self) -> Vec<Spilled> {
        let spilled = self.spill.iter().flat_map(|s| s.entries());
        spilled
            .filter(|e| e.n > self.spilled_through && e.table == self.id)
            .map(|e| e.what.clone())
            .chain(self.unspilled.iter().cloned())
            .collect()
    }

    /// The shoe items in [`Table::pending`]: the snapshot's `unrecorded`.
    pub(super) fn unrecorded(&self) -> Vec<String> {
        self.pending()
            .into_iter()
            .filter_map(|s| match s {
                Spilled::Item(item) => Some(item),
                Spilled::Alarm(_) => None,
            })
            .collect()
    }

    /// Keeps `what` in the spill file (in memory only if that fails too).
    pub(super) fn spill_now(&mut self, what: Spilled) {
        let why = self
            .failed
            .clone()
            .or_else(|| self.broken.clone())
            .unwrap_or_default();
        let kept = match &mut self.spill {
            Some(spill) => match spill.append(&self.id, what.clone(), &why, now_ms()) {
                Ok(entry) => {
                    warn!(table = %self.id, n = entry.n, file = %spill.path().display(), ?what, "spilled");
                    true
                }
                Err(e) => {
                    error!(table = %self.id, error = %e, ?what, "NOT KEPT ANYWHERE BUT MEMORY: the spill file failed too");
                    false
                }
            },
            None => false,
        };
        if !kept {
            self.unspilled.push(what);
        }
    }

    /// A write failed: the table goes out of service, what came off the shoe in `record`
    /// is spilled, and the store is retried.
    pub(super) fn write_failed(&mut self, error: String, record: &Record) {
        self.metrics.store_failure();
        error!(table = %self.id, %error, "cannot record; the table is out of service until the store works again");
        self.failed = Some(error.clone());
        self.broken = Some(format!(
            "a write to the store failed: {error}. Retrying every second: free disk space, or end \
             the process holding the database; what comes off the shoe meanwhile is kept in the \
             spill file"
        ));
        let mut items = Vec::new();
        match record {
            Record::Input {
                source: Source::Shoe,
                input,
            } => {
                // The engine applied it; the retry rebuilds the table from the log.
                self.refold = true;
                items.push(match input {
                    Input::Card(card) => card.to_string(),
                    _ => "CUT".to_string(),
                });
            }
            Record::Input { .. } => self.refold = true,
            Record::Held { item } => items.push(item.clone()),
            Record::Alarm { item, .. } => items.extend(item.iter().cloned()),
            _ => {}
        }
        for item in items {
            if item != "CUT" {
                self.metrics.card(CardOutcome::Unrecorded);
            }
            self.spill_now(Spilled::Item(item));
        }
        if let Record::Alarm { reason, .. } = record {
            self.spill_now(Spilled::Alarm(reason.clone()));
        }
        self.retry_at = Some(tokio::time::Instant::now() + RETRY);
        self.publish_state();
    }

    /// The retry timer fired.
    pub(super) async fn retry_store(&mut self) {
        self.retry_at = None;
        let Some(store) = self.store.as_mut() else {
            return;
        };
        // A lock held by another process: give up quickly and try again next time, rather
        // than stall the loop (and its heartbeat) for the whole busy timeout.
        let _ = store.set_busy_timeout(PROBE_BUSY).await;
        let outcome = self.reconcile().await;
        if let Some(store) = self.store.as_mut() {
            let _ = store.set_busy_timeout(WRITE_BUSY).await;
        }
        if let Err(e) = outcome {
            if self.store.is_some() {
                info!(table = %self.id, error = %e, "the store still fails; retrying");
                if self.failed.is_none() {
                    // Spilled entries from an earlier run could not be taken in.
                    self.failed = Some(e);
                }
                self.retry_at = Some(tokio::time::Instant::now() + RETRY);
            }
            self.publish_state();
        }
    }

    /// Re-reads the log, rebuilds the table from it if needed, and writes the `recovered`
    /// row for the pending entries.
    async fn reconcile(&mut self) -> Result<(), String> {
        let store = self.store.as_mut().ok_or("no store")?;
        let log = store.reload().await.map_err(|e| e.to_string())?;
        let last = log.last().map_or(0, |r| r.seq);
        if self.refold || last != self.seq {
            self.refold_from(&log)?;
            self.refold = false;
        }
        let pending = self.pending();
        if self.failed.is_none() && pending.is_empty() {
            return Ok(());
        }
        let through = self
            .spill
            .as_ref()
            .and_then(|s| s.entries().last())
            .map_or(self.spilled_through, |e| e.n.max(self.spilled_through));
        let error = self.failed.clone().unwrap_or_else(|| {
            let first = self.spill.iter().flat_map(|s| s.entries());
            first
                .filter(|e| e.n > self.spilled_through)
                .map(|e| e.why.clone())
                .next()
                .unwrap_or_else(|| "an earlier run".into())
        });
        let mut items = Vec::new();
        let mut alarms = Vec::new();
        for p in pending {
            match p {
                Spilled::Item(item) => items.push(item),
                Spilled::Alarm(reason) => alarms.push(reason),
            }
        }
        let record = Record::Recovered {
            error,
            spill_through: through,
            items,
            alarms,
        };
        let shoe = self.engine.shoe().number();
        let started = std::time::Instant::now();
        let store = self.store.as_mut().ok_or("no store")?;
        let seq = store
            .append(&record, &[], shoe)
            .await
            .map_err(|e| e.to_string())?;
        self.metrics.committed(started.elapsed());
        if record.recovered_alarm().is_some() {
            self.metrics.alarm(AlarmKind::StoreFailed);
        }
        self.failed = None;
        self.broken = None;
        self.events.clear();
        self.absorb(seq, &record, &[]);
        self.publish(seq, record, &[]);
        Ok(())
    }

    /// Rebuilds everything but the channels, the store, the spill and the settings from
    /// `log`, as recovery at start-up does. A log that does not replay leaves the table
    /// broken for good (a restart on a repaired database).
    fn refold_from(&mut self, log: &[LogRow]) -> Result<(), String> {
        let variant = Arc::new(self.engine.variant().clone());
        let (placeholder, _) = watch::channel(Arc::clone(&self.snapshot_tx.borrow()));
        let snapshot_tx = std::mem::replace(&mut self.snapshot_tx, placeholder);
        let mut fresh = Table::blank(
            &self.id,
            &self.name,
            &self.variant_name,
            Engine::new(variant),
            snapshot_tx,
            self.deltas.clone(),
            Arc::clone(&self.metrics),
            Arc::clone(&self.heartbeat),
        );
        fresh.disputes = self.disputes;
        fresh.link = std::mem::take(&mut self.link);
        fresh.shoe_status = self.shoe_status;
        fresh.stuck = std::mem::take(&mut self.stuck);
        fresh.spill = self.spill.take();
        fresh.unspilled = std::mem::take(&mut self.unspilled);
        fresh.store = self.store.take();
        let failed = self.failed.take();
        let broken = self.broken.take();
        for row in log {
            if let Err(why) = fresh.replay(row) {
                let why = format!("the event log does not replay at seq {}: {why}", row.seq);
                fresh.broken = Some(why.clone());
                fresh.store = None;
                *self = fresh;
                return Err(why);
            }
        }
        fresh.failed = failed;
        fresh.broken = broken;
        *self = fresh;
        Ok(())
    }
}
