//! [`Follower`]: the table folded row by row from its stored log, without a store or a
//! loop — the broker publisher's replica (`crate::publish::fold`). A child of `task` so it
//! reuses the table's own `replay`, `absorb` and `build_snapshot`, not a copy of them.

use super::{DisputeSettings, Table};
use crate::engine::{Event, Variant};
use crate::store::{LogRow, Record};
use crate::table::Snapshot;
use std::sync::Arc;

/// A table without a store or a loop that follows stored rows one by one through the same
/// `replay` + `absorb` as recovery: the broker publisher's replica (`crate::publish`),
/// which needs the table as it stood after each committed row, not the latest snapshot.
pub struct Follower(Table);

impl Follower {
    /// An empty table (before row 1) with the service's dispute settings, which decide
    /// whether a settled round is shown provisional.
    pub fn new(
        id: &str,
        name: &str,
        variant_name: &str,
        variant: Arc<Variant>,
        disputes: DisputeSettings,
    ) -> Follower {
        let (mut table, _, _, _) =
            Table::recover(id, name, variant_name, variant, Err(String::new()));
        table.broken = None;
        table.disputes = disputes;
        Follower(table)
    }

    /// Writes amounts in `currency`, as the live table does (`[table] currency`).
    pub fn set_currency(&mut self, currency: crate::currency::Currency) {
        self.0.set_currency(currency);
    }

    /// Whether remote players may join, as at the live table: the offer counts free seats
    /// only then.
    pub fn set_remote_play(&mut self, on: bool) {
        self.0.remote_play = on;
    }

    /// Seals and signs with the table's keys, as the live table does.
    pub fn set_trust(&mut self, keys: Arc<crate::trust::TableKeys>) {
        self.0.trust = Some(keys);
    }

    /// The signed statements of the rounds `events` (of `row`) settled, as the live table
    /// signs them.
    pub fn attest(&self, row: &LogRow, events: &[Event]) -> Vec<crate::trust::Signed> {
        self.0.attest(events, row.seq, &row.hash)
    }

    /// Folds `row` (the next one); returns the table after it and the engine's events for
    /// it (an accepted input's; a resolution's corrected round, replayed from before it
    /// opened — as the live table publishes them).
    pub fn follow(&mut self, row: &LogRow) -> Result<(Arc<Snapshot>, Vec<Event>), String> {
        let corrected = match &row.record {
            Record::Resolve(r) => {
                let mut engine = self.0.base.engine.clone();
                let mut events = Vec::new();
                for input in &r.inputs {
                    // A refused input makes `replay` fail below, with the reason.
                    if engine.apply(input, &mut events).is_err() {
                        break;
                    }
                }
                Some(events)
            }
            _ => None,
        };
        self.0.replay(row)?;
        let events = corrected.unwrap_or_else(|| self.0.events.clone());
        Ok((self.0.build_snapshot(), events))
    }

    /// Every stake of the round in play so far (bets, doubles, splits, insurance, side
    /// bets, by line, seat and player), as a cancellation would return them — the engine
    /// copied and the round cancelled on the copy; `None` between rounds.
    pub fn stakes_in_play(&self) -> Option<crate::engine::RoundResult> {
        if !self.0.engine.round_in_progress() {
            return None;
        }
        let mut engine = self.0.engine.clone();
        let mut events = Vec::new();
        engine
            .apply(&crate::engine::Input::CancelRound, &mut events)
            .ok()?;
        events.into_iter().find_map(|e| match e {
            Event::RoundSettled(r) => Some(*r),
            _ => None,
        })
    }

    /// The last row folded (0 before the first).
    pub fn seq(&self) -> u64 {
        self.0.seq
    }

    /// Whether `resolution` replays on the round as the rows folded so far left it — the
    /// check the table makes before it previews a proposal (`Table::correction`), so the
    /// pit page offers only resolutions the table will accept.
    pub fn replays(&self, resolution: &crate::table::dispute::Resolution) -> Result<(), String> {
        self.0
            .correction(resolution)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}
