//! Shoe integrity at the table: the order each shoe's cards came out in (folded from the
//! engine's events by `absorb`, live and in recovery alike), judged against the last
//! shoes by the pure `integrity::shoe::judge` when the shoe ends. A suspicious shoe is a
//! supervisor alert, not a lock: its verdict is written beside the log (with an audit
//! row), shown on the panel until the next shoe is judged, and marked in `recall`.

use super::shoe_watch::IntegritySettings;
use super::table::Table;
use crate::engine::Event;
use tracing::{error, warn};

impl Table {
    /// Folds a durable row's events into the shoe watch (from `absorb`).
    pub(super) fn watch_shoes(&mut self, events: &[Event], resolution: bool) {
        let decks = self.engine.variant().shoe.decks;
        let judging = self.store.is_some();
        if resolution {
            // The corrected round replaces the recorded one's cards.
            if let Some((_, cards)) = &mut self.shoes.current {
                cards.truncate(self.shoes.round_start);
            }
        }
        for event in events {
            self.shoes.on_event(event, u32::from(decks), judging);
        }
    }

    /// Sets the integrity checks (before `run`) and judges the last shoe recovered, so a
    /// verdict a crash kept from being written is written now (once).
    pub fn set_integrity(&mut self, settings: IntegritySettings) {
        self.shoes.settings = settings;
        let decks = u32::from(self.engine.variant().shoe.decks);
        self.shoes.judge_last(decks);
        self.publish_state();
    }

    /// Writes the verdicts not yet beside the log; a suspicious one is logged for the
    /// supervisor. A failed write is logged and retried after the next row.
    pub(super) async fn write_verdicts(&mut self) {
        let Some(store) = self.store.as_mut() else {
            return;
        };
        while let Some(verdict) = self.shoes.pending.first() {
            match store.record_shoe_verdict(verdict).await {
                Ok(new) => {
                    if new && verdict.suspicious() {
                        warn!(table = %self.id, shoe = verdict.shoe, reasons = ?verdict.reasons, "shoe integrity: suspicious shoe");
                    }
                    self.shoes.pending.remove(0);
                }
                Err(e) => {
                    error!(table = %self.id, shoe = verdict.shoe, error = %e, "cannot record the shoe's integrity verdict");
                    return;
                }
            }
        }
    }
}
