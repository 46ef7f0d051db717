//! The round a restore interrupted. A backup taken while a round was in play ends inside
//! it: the lost history played that round on — more cards, decisions, doubles, its
//! settlement and payment, its face-down card revealed — and none of that is in the
//! restored log. Played on again, the round would deal other cards to the same bets
//! (its hole card possibly one the lost history's viewers saw revealed) and pay a second,
//! different settlement. So a restored timeline voids it first, as the sheets void a
//! round a malfunction interrupts ("Malfunction voids all pays and plays"; Deluxe: "the
//! round will be cancelled, and all plays will be returned"): one `CancelRound` input
//! from the table itself (`Source::Restore`), every stake the restored log holds
//! returned. What the lost history did with the round after the backup —
//! the stakes it took and what it paid — is listed by `croupier timeline lost`.

use super::table::Table;
use crate::engine::Input;
use crate::store::{Record, Source};
use tracing::warn;

impl Table {
    /// Voids the round a restore interrupted (`Table::interrupted`), at the start of
    /// `run`, before anything else is taken. Idempotent across crashes: the void is an
    /// input row, and a log whose last input came after the restore has nothing to void.
    /// A round held by an open dispute or alarm is left to the supervisor, who sees it
    /// frozen (a resolution may cancel it).
    pub(super) async fn void_interrupted(&mut self) {
        let Some(round) = self.interrupted else {
            return;
        };
        if self.broken.is_some() || self.store.is_none() || !self.engine.round_in_progress() {
            return;
        }
        if self.dispute.is_some() || self.alarm.is_some() {
            warn!(table = %self.id, round, "a restore interrupted this round, which a dispute or an alarm holds: a supervisor decides it (resolving with a cancellation voids it)");
            return;
        }
        if let Err(refused) = self.apply_input(&Input::CancelRound) {
            warn!(table = %self.id, round, %refused, "the round a restore interrupted cannot be voided");
            return;
        }
        let record = Record::Input {
            source: Source::Restore,
            input: Input::CancelRound,
        };
        if let Some(seq) = self.record(record).await {
            warn!(table = %self.id, round, seq, "a restore interrupted this round: voided, every stake in the restored log returned (`croupier timeline lost` lists what the lost history did with it)");
        }
    }
}
