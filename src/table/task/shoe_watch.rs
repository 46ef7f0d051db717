//! The shoe watch: the order each shoe's cards came out in, folded from the engine's
//! events, and the verdicts of the pure `integrity::shoe::judge` waiting to be written.
//! Kept by the table (`table.rs`); `integrity.rs` feeds it and writes its verdicts.

use crate::cards::Card;
use crate::engine::Event;
use crate::integrity::shoe::{judge, Thresholds, Verdict};
use std::collections::VecDeque;

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
    pub(super) current: Option<(u32, Vec<Card>)>,
    /// Where the current round began in `current` (a resolution replays the round).
    pub(super) round_start: usize,
    /// Finished shoes, oldest first (at most `MAX_HISTORY + 1`).
    pub(super) finished: VecDeque<(u32, Vec<Card>)>,
    /// The last judged shoe's verdict.
    pub(super) last: Option<Verdict>,
    /// Verdicts still to be written beside the log.
    pub(super) pending: Vec<Verdict>,
}

impl ShoeWatch {
    /// Folds one event. `judging` is false during recovery: the shoes are judged once the
    /// settings are known (`Table::set_integrity`).
    pub(super) fn on_event(&mut self, event: &Event, decks: u32, judging: bool) {
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
    pub(super) fn finish(&mut self, decks: u32, judging: bool) {
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
    pub(super) fn judge_last(&mut self, decks: u32) {
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
