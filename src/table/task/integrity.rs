//! Shoe integrity at the table: the order each shoe's cards came out in (folded from the
//! engine's events by `absorb`, live and in recovery alike), judged against the last
//! shoes by the pure `integrity::shoe::judge` when the shoe ends. A suspicious shoe is a
//! supervisor alert, not a lock: its verdict is written beside the log (with an audit
//! row), shown on the panel until the next shoe is judged, and marked in `recall`.

use super::table::Table;
use crate::cards::Card;
use crate::engine::Event;
use crate::integrity::shoe::{judge, Thresholds, Verdict};
use std::collections::VecDeque;
use tracing::{error, warn};

/// `[integrity]` as the table task uses it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IntegritySettings {
    /// How many earlier shoes each new one is compared with.
    pub history: usize,
    /// The statistics' thresholds.
    pub thresholds: Thresholds,
}

impl Default for IntegritySettings {
    fn default() -> IntegritySettings {
        IntegritySettings {
            history: 5,
            thresholds: Thresholds::default(),
        }
    }
}

/// The most shoes kept for comparison (the setting's upper bound).
pub const MAX_HISTORY: usize = 32;

/// What the table keeps about shoes: the current one's order and the last finished ones.
#[derive(Debug, Clone, Default)]
pub(crate) struct ShoeWatch {
    pub(super) settings: IntegritySettings,
    /// The current shoe's number and its cards so far (burns included).
    current: Option<(u32, Vec<Card>)>,
    /// Where the current round began in `current` (a resolution replays the round).
    round_start: usize,
    /// Finished shoes, oldest first (at most `MAX_HISTORY + 1`).
    finished: VecDeque<(u32, Vec<Card>)>,
    /// The last judged shoe's verdict.
    pub(super) last: Option<Verdict>,
    /// Verdicts still to be written beside the log.
    pending: Vec<Verdict>,
}

impl ShoeWatch {
    /// Folds one event. `judging` is false during recovery: the shoes are judged once the
    /// settings are known (`Table::set_integrity`).
    fn on_event(&mut self, event: &Event, decks: u32, judging: bool) {
        match event {
            Event::ShoeShuffled { shoe }
                if self.current.as_ref().map(|(n, _)| *n) != Some(*shoe) =>
            {
                self.finish(decks, judging);
                self.current = Some((*shoe, Vec::new()));
                self.round_start = 0;
            }
            Event::RoundOpened { .. } => {
                self.round_start = self.current.as_ref().map_or(0, |(_, c)| c.len());
            }
            Event::Burned { card }
            | Event::CardDealt { card, .. }
            | Event::CardDrawn { card, .. } => {
                if let Some((_, cards)) = &mut self.current {
                    cards.push(*card);
                }
            }
            Event::ShoeFinished => self.finish(decks, judging),
            _ => {}
        }
    }

    /// Ends the current shoe (once): keeps its order and, live, judges it.
    fn finish(&mut self, decks: u32, judging: bool) {
        let Some((number, cards)) = self.current.take() else {
            return;
        };
        if cards.is_empty() || self.finished.back().is_some_and(|(n, _)| *n == number) {
            return;
        }
        self.finished.push_back((number, cards));
        while self.finished.len() > MAX_HISTORY + 1 {
            self.finished.pop_front();
        }
        if judging {
            self.judge_last(decks);
        }
    }

    /// Judges the last finished shoe against the ones before it.
    fn judge_last(&mut self, decks: u32) {
        let Some(((number, cards), earlier)) = self.finished.make_contiguous().split_last() else {
            return;
        };
        let from = earlier.len().saturating_sub(self.settings.history);
        let verdict = judge(
            *number,
            cards,
            decks,
            &earlier[from..],
            &self.settings.thresholds,
        );
        self.last = Some(verdict.clone());
        self.pending.push(verdict);
    }
}

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
