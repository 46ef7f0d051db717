//! Recovery and the state change after a durable row: `Table::recover` folds the stored log
//! through `engine.apply` + [`Table::absorb`], the same code live play runs after each
//! commit, so there is no second "restore" path.

use super::command::Command;
use super::handle::TableHandle;
use super::table::{DisputeSettings, OpenDispute, RoundBase, Table, Tally, DELTA_BUFFER};
use crate::engine::{Engine, Event, Expectation, Input, Variant};
use crate::metrics::Metrics;
use crate::store::{LogRow, Record, Store};
use crate::table::dispute::{self, Origin};
use crate::table::heartbeat::Heartbeat;
use crate::table::state::{
    Alarm, BettingView, Delta, DisputeHead, RoundView, ShoeView, Snapshot, TableState,
};
use croupier_drivers::event::ShoeStatus;
use std::collections::BTreeMap;
use std::sync::Arc;
use tokio::sync::{broadcast, mpsc, watch};

/// What recovery found, for the start-up log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// Log rows replayed.
    pub rows: u64,
    /// The state after them.
    pub state: TableState,
}

impl Table {
    /// Builds the table from the store's verified log (`Ok`) or the reason the store is
    /// unusable (`Err`), replaying every row through the engine. Nothing is published
    /// before this returns; the returned handle's first snapshot is the recovered state.
    pub fn recover(
        id: &str,
        name: &str,
        variant_name: &str,
        variant: Arc<Variant>,
        opened: Result<(Store, Vec<LogRow>), String>,
    ) -> (Table, TableHandle, mpsc::Receiver<Command>, Recovered) {
        let engine = Engine::new(variant);
        let placeholder = Arc::new(Snapshot {
            table: id.to_string(),
            name: name.to_string(),
            variant: variant_name.to_string(),
            seq: 0,
            inputs: 0,
            state: TableState::Broken,
            alarm: None,
            broken: Some("starting".into()),
            expecting: String::new(),
            expectation: Expectation::Bets,
            bonus_options: BTreeMap::new(),
            insurance_seats: Vec::new(),
            insurance_answers: BTreeMap::new(),
            common: Default::default(),
            currency: crate::currency::Currency::default(),
            shoe: ShoeView {
                number: 0,
                dealt: 0,
                burned: 0,
                remaining: 0,
                cut_seen: false,
                link: "waiting".into(),
            },
            betting: BettingView::default(),
            round: RoundView::default(),
            rounds_settled: 0,
            last_result: None,
            unrecorded: Vec::new(),
            dispute: None,
            provisional: None,
            shoe_integrity: None,
            table_key: None,
            timeline: None,
            remote: None,
            offer: Default::default(),
            pseudonyms: Default::default(),
        });
        let (snapshot_tx, snapshot_rx) = watch::channel(placeholder);
        let (deltas, _) = broadcast::channel(DELTA_BUFFER);
        let (commands, rx) = mpsc::channel(256);
        let metrics = Arc::new(Metrics::default());
        let heartbeat = Arc::new(Heartbeat::default());
        heartbeat.beat();
        let mut table = Table::blank(
            id,
            name,
            variant_name,
            engine,
            snapshot_tx,
            deltas.clone(),
            Arc::clone(&metrics),
            Arc::clone(&heartbeat),
        );
        let mut rows = 0;
        match opened {
            Err(reason) => table.broken = Some(reason),
            Ok((store, log)) => {
                for row in log {
                    if let Err(why) = table.replay(&row) {
                        table.broken = Some(format!(
                            "the event log does not replay at seq {}: {why}",
                            row.seq
                        ));
                        break;
                    }
                    rows += 1;
                }
                if table.broken.is_none() {
                    table.store = Some(store);
                }
            }
        }
        // The table's clock goes on from the latest time the log holds (`timers.rs`).
        table.clock.resume_at(table.clock_seen);
        let snapshot = table.build_snapshot();
        let state = snapshot.state;
        table.snapshot_tx.send_replace(snapshot);
        let handle = TableHandle {
            commands,
            snapshot: snapshot_rx,
            deltas,
            metrics,
            heartbeat,
        };
        (table, handle, rx, Recovered { rows, state })
    }

    /// Sets the table's currency (before `run`): amounts in what is published are written
    /// in it for people.
    pub fn set_currency(&mut self, currency: crate::currency::Currency) {
        self.currency = currency;
        self.publish_state();
    }

    /// Sets the betting unit (before `run`): live bets not a whole multiple of it are
    /// refused (`invalid_bet`); the log's bets replay whatever it is.
    pub fn set_bet_unit(&mut self, unit: crate::money::Amount) {
        self.bet_unit = unit.max(1);
    }

    /// A table with nothing replayed yet, publishing through `snapshot_tx` and `deltas`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn blank(
        id: &str,
        name: &str,
        variant_name: &str,
        engine: Engine,
        snapshot_tx: watch::Sender<Arc<Snapshot>>,
        deltas: broadcast::Sender<Arc<Delta>>,
        metrics: Arc<Metrics>,
        heartbeat: Arc<Heartbeat>,
    ) -> Table {
        let base = RoundBase {
            engine: engine.clone(),
            view: RoundView::default(),
            rounds_settled: 0,
            last_result: None,
        };
        Table {
            id: id.to_string(),
            name: name.to_string(),
            variant_name: variant_name.to_string(),
            engine,
            base,
            next_base: None,
            round_inputs: Vec::new(),
            dispute: None,
            proposal: None,
            unfinal: None,
            final_at: None,
            disputes: DisputeSettings::default(),
            currency: crate::currency::Currency::default(),
            bet_unit: 1,
            checking: false,
            store: None,
            view: RoundView::default(),
            betting: BettingView::default(),
            alarm: None,
            broken: None,
            seq: 0,
            inputs: 0,
            rounds_settled: 0,
            last_result: None,
            link: "waiting".into(),
            shoe_status: ShoeStatus::default(),
            stuck: std::collections::BTreeSet::new(),
            spill: None,
            shoes: Default::default(),
            trust: None,
            sealed_holes: Default::default(),
            interrupted: None,
            timeline: None,
            clock: Arc::new(crate::table::clock::TableClock::new()),
            clock_seen: 0,
            countdown_len: None,
            countdown: None,
            remote: None,
            remote_play: false,
            countdown_closed: None,
            wait_count: 0,
            wait_seq: 0,
            spilled_through: 0,
            unspilled: Vec::new(),
            failed: None,
            refold: false,
            retry_at: None,
            events: Vec::new(),
            tally: Tally::default(),
            snapshot_tx,
            deltas,
            metrics,
            heartbeat,
        }
    }

    /// Sets the table's keys (before `run`): the face-down card is sealed and every
    /// settled round's result signed with them (`crate::trust`).
    pub fn set_trust(&mut self, keys: Arc<crate::trust::TableKeys>) {
        self.trust = Some(keys);
        self.publish_state();
    }

    /// Sets how disputes are handled (before `run`). A round recovered as provisional gets
    /// a whole window from now.
    pub fn set_disputes(&mut self, settings: DisputeSettings) {
        self.disputes = settings;
        self.final_at = None;
        self.publish_state();
    }

    /// Re-applies one stored row (recovery).
    pub(super) fn replay(&mut self, row: &LogRow) -> Result<(), String> {
        self.events.clear();
        if let Record::Input { input, .. } = &row.record {
            self.apply_input(input)
                .map_err(|r| format!("the engine refuses {input:?}: {r}"))?;
        }
        let events = std::mem::take(&mut self.events);
        self.absorb(row.seq, &row.record, &events);
        self.salt_hole(&row.hash);
        self.events = events;
        if let Some(why) = &self.broken {
            return Err(why.clone());
        }
        Ok(())
    }

    /// Applies an input to the engine (events into `self.events`), first keeping the table
    /// as it was if the input opens a round.
    pub(super) fn apply_input(&mut self, input: &Input) -> Result<(), crate::engine::Rejection> {
        let opening = matches!(input, Input::Bets(_) | Input::PlayerBets(_));
        let before = opening.then(|| RoundBase {
            engine: self.engine.clone(),
            view: self.view.clone(),
            rounds_settled: self.rounds_settled,
            last_result: self.last_result.clone(),
        });
        let mut events = std::mem::take(&mut self.events);
        events.clear();
        let result = self.engine.apply(input, &mut events);
        self.events = events;
        if result.is_ok() {
            self.next_base = before;
        }
        result
    }

    /// Keeps the face-down card of the round in play and the chain hash of the row that
    /// recorded it (`hash`, the row just absorbed): the salt of its seal
    /// (`trust::seal::nonce`). The row's hash covers its record — the card — and every
    /// row before it, so no two histories (a restore, a cut log, a new database beside
    /// the key) record their hole card with the same salt unless it is the same card
    /// after the same history. Read from the table after the row, whatever its kind, so
    /// live play, recovery and every follower (the broker's fold) agree. The first of a
    /// round stays: a resolution replays the round — perhaps with another card in that
    /// place, a correction — and the seal published while the card lay face down is the
    /// one it reveals.
    pub(super) fn salt_hole(&mut self, hash: &str) {
        let Some(&card) = self.view.dealer.get(1) else {
            return;
        };
        if self.view.number == 0 {
            return;
        }
        self.sealed_holes
            .entry(self.view.number)
            .or_insert_with(|| super::table::SealedHole {
                salt: hash.to_string(),
                card,
            });
        // A resolution re-settles a recent round; older seals are never needed.
        while self.sealed_holes.len() > 64 {
            self.sealed_holes.pop_first();
        }
    }

    /// Updates everything but the engine after a durable record: the same for live play
    /// and recovery.
    pub(super) fn absorb(&mut self, seq: u64, record: &Record, events: &[Event]) {
        self.seq = seq;
        self.absorb_time(seq, record);
        self.watch_shoes(events, matches!(record, Record::Resolve(_)));
        if let Record::Resolve(r) = record {
            self.absorb_resolution(&r.inputs);
            return;
        }
        for event in events {
            if let Event::RoundSettled(result) = event {
                self.unfinal = Some(result.round);
            }
            self.view.on_event(event);
            if let Event::RoundSettled(result) = event {
                self.rounds_settled += 1;
                self.last_result = Some((**result).clone());
            }
        }
        match record {
            Record::Input { input, .. } => {
                self.inputs += 1;
                self.interrupted = None;
                if let Some(base) = self.next_base.take() {
                    self.base = base;
                    self.round_inputs.clear();
                    // The next round opening ends the last one's window, whatever it was.
                    self.unfinal = None;
                }
                self.round_inputs.push(input.clone());
                if let Input::Bets(bets) = input {
                    self.view.bets = bets.clone();
                    // However the round opened (window, demo, terminal), betting is over.
                    self.betting = BettingView::default();
                } else if let Input::PlayerBets(_) = input {
                    self.betting = BettingView::default();
                } else if let Input::SplitShort { seat, short } = input {
                    self.view.on_split_short(*seat, short);
                }
            }
            Record::Alarm {
                reason,
                expected,
                item,
            } => self.lock(seq, reason, expected, item.iter().cloned()),
            Record::Recovered { spill_through, .. } => {
                self.spilled_through = self.spilled_through.max(*spill_through);
                self.unspilled.clear();
                if let Some((reason, expected)) = record.recovered_alarm() {
                    let items = match record {
                        Record::Recovered { items, .. } => items.clone(),
                        _ => Vec::new(),
                    };
                    self.lock(seq, &reason, &expected, items);
                }
            }
            Record::Held { item } => {
                // A proposal previewed without this card is out of date.
                self.proposal = None;
                if let Some(alarm) = &mut self.alarm {
                    alarm.held.push(item.clone());
                } else if let Some(dispute) = &mut self.dispute {
                    dispute.held.push(item.clone());
                }
            }
            Record::Clear { .. } => {
                self.alarm = None;
                if self
                    .dispute
                    .as_ref()
                    .is_some_and(|d| d.head.origin == Origin::Alarm)
                {
                    self.dispute = None;
                    self.proposal = None;
                }
            }
            Record::Dispute(d) => {
                self.dispute = Some(OpenDispute {
                    head: DisputeHead {
                        id: seq,
                        origin: d.origin,
                        seat: d.seat,
                        round: d.round,
                        reason: d.reason.clone(),
                        by: d.by.clone(),
                    },
                    frozen: self.decorate(self.view.clone(), &self.engine),
                    held: Vec::new(),
                });
            }
            Record::Resolve { .. } => {}
            Record::Countdown { .. } => {}
            // A new identity for the history, nothing for the round.
            Record::Timeline { id, cause, .. } => {
                if matches!(cause, crate::store::TimelineCause::Restored { .. })
                    && self.engine.round_in_progress()
                {
                    self.interrupted = Some(self.view.number);
                }
                let epoch = self.timeline.as_ref().map_or(0, |t| t.epoch) + 1;
                self.timeline = Some(crate::store::Timeline {
                    id: id.clone(),
                    epoch,
                    from_seq: seq,
                });
            }
            Record::Final { round } => {
                if self.unfinal == Some(*round) {
                    self.unfinal = None;
                    self.final_at = None;
                }
            }
        }
    }

    /// Locks the table (an alarm row, or a `recovered` row with items), `items` held.
    fn lock(
        &mut self,
        seq: u64,
        reason: &str,
        expected: &str,
        items: impl IntoIterator<Item = String>,
    ) {
        match &mut self.alarm {
            Some(alarm) => {
                alarm.also.push(reason.to_string());
                alarm.held.extend(items);
            }
            None => {
                self.alarm = Some(Alarm {
                    seq,
                    reason: reason.to_string(),
                    expected: expected.to_string(),
                    held: items.into_iter().collect(),
                    also: Vec::new(),
                });
                // Every alarm opens a dispute: a supervisor may resolve it with a
                // correction (a misread card corrected, say) instead of clearing it.
                if self.dispute.is_none() {
                    self.dispute = Some(OpenDispute {
                        head: DisputeHead {
                            id: seq,
                            origin: Origin::Alarm,
                            seat: None,
                            round: self.view.number,
                            reason: reason.to_string(),
                            by: "alarm".into(),
                        },
                        frozen: self.decorate(self.view.clone(), &self.engine),
                        held: Vec::new(),
                    });
                }
            }
        }
    }

    /// A resolution: the engine and the round become the fold of the corrected inputs
    /// from `base`; the dispute and any alarm are over.
    pub(super) fn absorb_resolution(&mut self, inputs: &[Input]) {
        let mut engine = self.base.engine.clone();
        let mut events = Vec::new();
        for (i, input) in inputs.iter().enumerate() {
            if let Err(r) = engine.apply(input, &mut events) {
                self.broken = Some(format!(
                    "a recorded resolution does not replay: its input {i} ({}) is refused: {r}",
                    dispute::describe(input)
                ));
                return;
            }
        }
        let (view, settled, last) = self.corrected_view(inputs, &events);
        self.engine = engine;
        self.view = view;
        self.rounds_settled = settled;
        self.last_result = last;
        self.round_inputs = inputs.to_vec();
        self.unfinal = events.iter().rev().find_map(|e| match e {
            Event::RoundSettled(r) => Some(r.round),
            _ => None,
        });
        // A re-settled round gets a whole new window.
        self.final_at = None;
        self.alarm = None;
        self.dispute = None;
        self.proposal = None;
    }
}
