//! What the table publishes: the snapshot built from its state, the round view decorated
//! for the panel, and the delta sent after each committed row.

use super::table::Table;
use crate::engine::{Action, Engine, Event, Expectation, Input, RoundResult, SeatId};
use crate::store::Record;
use crate::table::dispute;
use crate::table::state::{
    CommonView, Delta, DisputeView, RoundView, ShoeView, SideLimits, Snapshot, TableOffer,
    TableState,
};
use std::collections::BTreeMap;
use std::sync::Arc;
use tracing::{info, warn};

impl Table {
    /// The round rebuilt from `base` by a correction's events.
    pub(super) fn corrected_view(
        &self,
        inputs: &[Input],
        events: &[Event],
    ) -> (RoundView, u64, Option<RoundResult>) {
        let mut view = self.base.view.clone();
        let mut settled = self.base.rounds_settled;
        let mut last = self.base.last_result.clone();
        let mut counted = None;
        for event in events {
            view.on_event(event);
            match event {
                Event::RoundOpened { .. } => {
                    if let Some(Input::Bets(bets)) = inputs.first() {
                        view.bets = bets.clone();
                    }
                }
                Event::RoundSettled(result) => {
                    // A cancellation after settlement replaces the result: counted once.
                    if counted != Some(result.round) {
                        settled += 1;
                        counted = Some(result.round);
                    }
                    last = Some((**result).clone());
                }
                _ => {}
            }
        }
        for input in inputs {
            if let Input::SplitShort { seat, short } = input {
                view.on_split_short(*seat, short);
            }
        }
        (view, settled, last)
    }

    /// The open dispute's held items (the alarm's included), in arrival order.
    pub(super) fn held(&self) -> Vec<String> {
        let mut held = self
            .alarm
            .as_ref()
            .map(|a| a.held.clone())
            .unwrap_or_default();
        if let Some(d) = &self.dispute {
            held.extend(d.held.iter().cloned());
        }
        held
    }

    /// The settled round still open to disputes.
    pub(super) fn provisional(&self) -> Option<u64> {
        if self.disputes.window.is_zero() {
            None
        } else {
            self.unfinal
        }
    }

    pub(super) fn state(&self) -> TableState {
        if self.broken.is_some() {
            TableState::Broken
        } else if self.alarm.is_some() {
            TableState::Locked
        } else if self.dispute.is_some() {
            TableState::Disputed
        } else {
            TableState::Open
        }
    }

    /// Seats that may still answer the insurance offer, in seat order.
    pub(super) fn insurance_seats(&self) -> Vec<SeatId> {
        (1..=self.engine.variant().deal.seats)
            .filter(|&seat| {
                self.engine
                    .allows_insurance_answer(seat, Action::NoInsurance)
            })
            .collect()
    }

    /// The insurance answers the engine would accept from each seat still to answer.
    fn insurance_answers(&self, seats: &[SeatId]) -> BTreeMap<SeatId, Vec<Action>> {
        seats
            .iter()
            .map(|&seat| {
                let legal = [Action::Insurance, Action::NoInsurance, Action::EvenMoney]
                    .into_iter()
                    .filter(|&a| self.engine.allows_insurance_answer(seat, a))
                    .collect();
                (seat, legal)
            })
            .collect()
    }

    /// A common draw's open step and hands (empty in a seat-by-seat game).
    fn common_view(&self) -> CommonView {
        if self.engine.variant().deal.mode != crate::engine::variant::DealMode::CommonDraw {
            return CommonView::default();
        }
        CommonView {
            decisions: self.engine.open_decisions(),
            insurance: self.engine.open_insurance(),
            hands: self.engine.player_hands(),
            specials: self.engine.player_specials(),
        }
    }

    /// The table's limits and its free seats ([`TableOffer`]): a function of the log (the
    /// round's bets) and the configuration, as everything published is — which seats
    /// remote players hold is not in the log, so a seat is taken when someone played it in
    /// the round as last opened (the demo's players, a remote player, a player at the
    /// table).
    fn offer(&self) -> TableOffer {
        let v = self.engine.variant();
        let common = v.deal.mode == crate::engine::variant::DealMode::CommonDraw;
        let seats_free = if common {
            None
        } else if !self.remote_play {
            // Without remote play no seat is a remote player's to take.
            Some(0)
        } else {
            let played: std::collections::BTreeSet<SeatId> =
                self.view.bets.iter().map(|b| b.seat).collect();
            let free = (1..=v.deal.seats).filter(|s| !played.contains(s)).count();
            Some(u8::try_from(free).unwrap_or(u8::MAX))
        };
        TableOffer {
            min: v.limits.min,
            max: v.limits.max,
            side_bets: v
                .side_bets
                .iter()
                .map(|b| SideLimits {
                    name: b.name.clone(),
                    min: b.limits.min,
                    max: b.limits.max,
                })
                .collect(),
            seats: v.deal.seats,
            seats_free,
        }
    }

    pub(super) fn build_snapshot(&self) -> Arc<Snapshot> {
        let expectation = self.engine.expectation();
        let mut bonus_options = BTreeMap::new();
        if let Expectation::Bonus(seats) = &expectation {
            for seat in seats {
                if let Some(options) = self.engine.bonus_multipliers(*seat) {
                    bonus_options.insert(*seat, options.to_vec());
                }
            }
        }
        let insurance_seats = if matches!(expectation, Expectation::InsuranceAnswers { .. }) {
            self.insurance_seats()
        } else {
            Vec::new()
        };
        let round = self.decorate(self.view.clone(), &self.engine);
        let shoe = self.engine.shoe();
        Arc::new(Snapshot {
            table: self.id.clone(),
            name: self.name.clone(),
            variant: self.variant_name.clone(),
            seq: self.seq,
            inputs: self.inputs,
            state: self.state(),
            alarm: self.alarm.clone(),
            broken: self.broken.clone(),
            expecting: expectation.to_string(),
            expectation,
            bonus_options,
            insurance_answers: self.insurance_answers(&insurance_seats),
            common: self.common_view(),
            insurance_seats,
            currency: self.currency.clone(),
            betting: self.betting.clone(),
            shoe: ShoeView {
                number: shoe.number(),
                dealt: shoe.dealt(),
                burned: shoe.burned(),
                remaining: shoe.remaining(),
                cut_seen: shoe.cut_seen(),
                link: self.link.clone(),
            },
            round,
            rounds_settled: self.rounds_settled,
            last_result: self.last_result.clone(),
            unrecorded: self.unrecorded(),
            dispute: self.dispute_view(),
            provisional: self.provisional(),
            shoe_integrity: self.shoes.last.clone(),
            table_key: self.trust.as_ref().map(|k| k.public_hex()),
            timeline: self.timeline.clone(),
            remote: self.remote.as_ref().map(|r| r.view()),
            offer: self.offer(),
            pseudonyms: self.pseudonyms(),
        })
    }

    /// A round view with what people read off it: totals, soft flags, the up card's total
    /// and whether the hole card lies face down (from `engine`'s expectation).
    pub(super) fn decorate(&self, view: RoundView, engine: &Engine) -> RoundView {
        let expectation = engine.expectation();
        let mut round = view;
        let ace = engine.variant().hand.ace;
        for h in &mut round.hands {
            let t = crate::engine::total(&h.cards, ace);
            h.total = engine.hand_total(h.seat, h.hand).unwrap_or(t.best);
            h.soft = t.soft && h.total == t.best;
        }
        let dealer = crate::engine::total(&round.dealer, ace);
        round.dealer_total = dealer.best;
        round.dealer_soft = dealer.soft;
        let up = crate::engine::total(&round.dealer[..round.dealer.len().min(1)], ace);
        round.up_total = up.best;
        round.up_soft = up.soft;
        // The second dealer card lies face down from the deal until the dealer's turn
        // (or the end of the round, e.g. when every hand busted).
        round.hole_hidden = engine.variant().deal.dealer_cards == 2
            && !round.settled
            && round.dealer.len() == 2
            && expectation != Expectation::DealerCard;
        round.seal = self.seal(&round, engine);
        round
    }

    /// How players are named in public: by the table key's pseudonyms.
    pub(super) fn pseudonyms(&self) -> crate::trust::Pseudonyms {
        self.trust
            .as_deref()
            .map(|k| k.pseudonyms().clone())
            .unwrap_or_default()
    }

    /// The seal of `round`'s face-down card: in a game with a hole card, the dealer's
    /// second card, from the moment it is recorded (opened once it is turned over).
    fn seal(&self, round: &RoundView, engine: &Engine) -> Option<crate::trust::Seal> {
        let keys = self.trust.as_ref()?;
        if engine.variant().deal.dealer_cards != 2 {
            return None;
        }
        let card = *round.dealer.get(1)?;
        Some(self.hole_seal(keys, round.number, card, !round.hole_hidden))
    }

    /// The seal of `round`'s face-down place, where the round now has `played`: over the
    /// card first recorded there (a correction since is said, not re-committed).
    fn hole_seal(
        &self,
        keys: &crate::trust::TableKeys,
        round: u64,
        played: crate::cards::Card,
        revealed: bool,
    ) -> crate::trust::Seal {
        let sealed = self.sealed_holes.get(&round);
        crate::trust::seal::seal_hole(
            keys,
            &self.id,
            round,
            sealed.map(|s| s.salt.as_str()),
            sealed.map_or(played, |s| s.card),
            played,
            revealed,
        )
    }

    /// The signed statements of the rounds `events` settled, the log's head being row
    /// `seq` with chain hash `hash` (`crate::trust::attest`).
    pub(super) fn attest(
        &self,
        events: &[Event],
        seq: u64,
        hash: &str,
    ) -> Vec<crate::trust::Signed> {
        let Some(keys) = self.trust.as_ref() else {
            return Vec::new();
        };
        let hole = self.engine.variant().deal.dealer_cards == 2;
        let names = keys.pseudonyms();
        events
            .iter()
            .filter_map(|e| match e {
                Event::RoundSettled(result) => Some(result),
                _ => None,
            })
            .map(|result| {
                let seal = result
                    .dealer_cards
                    .get(1)
                    .filter(|_| hole)
                    .map(|&card| self.hole_seal(keys, result.round, card, true));
                // The statement is public: players by their public names.
                let mut public = (**result).clone();
                names.result(&mut public);
                let statement = crate::trust::Statement {
                    v: 1,
                    table: self.id.clone(),
                    round: result.round,
                    result: public,
                    seal,
                    head: crate::trust::attest::Head {
                        seq,
                        hash: hash.to_string(),
                    },
                    timeline: self.timeline.clone(),
                };
                crate::trust::attest::sign(keys, &statement)
            })
            .collect()
    }

    pub(super) fn dispute_view(&self) -> Option<DisputeView> {
        let d = self.dispute.as_ref()?;
        let held = self.held();
        let places = dispute::card_places(&self.base.engine, &self.round_inputs, &held);
        // The same check a proposal's preview makes, so nothing is offered that it refuses.
        let offers = dispute::offers(&places, &|r| {
            self.correction(r).map(|_| ()).map_err(|e| e.code())
        });
        Some(DisputeView {
            head: d.head.clone(),
            frozen: d.frozen.clone(),
            cards: places,
            offers,
            held,
            proposal: self.proposal.as_ref().map(|p| p.view.clone()),
        })
    }

    pub(super) fn publish(&mut self, seq: u64, record: Record, events: &[Event]) {
        let snapshot = self.build_snapshot();
        let round = snapshot.round.number;
        let shoe = snapshot.shoe.number;
        match &record {
            Record::Input { .. } => {
                info!(table = %self.id, shoe, round, seq, expecting = %snapshot.expecting, "{record}")
            }
            // A round's dispute window closing is the normal end of every round, and a
            // betting countdown its normal start where remote players bet.
            Record::Final { .. } | Record::Countdown { .. } => {
                info!(table = %self.id, shoe, round, seq, "{record}")
            }
            _ => warn!(table = %self.id, shoe, round, seq, "{record}"),
        }
        // The head is the row just committed (publish follows its append).
        let signed = match self.store.as_ref().filter(|s| s.last_seq() == seq) {
            Some(store) => self.attest(events, seq, &store.head_hash()),
            None => Vec::new(),
        };
        let delta = Arc::new(Delta {
            signed,
            seq,
            record,
            events: events.to_vec(),
            state: snapshot.state,
            expecting: snapshot.expecting.clone(),
            provisional: snapshot.provisional,
        });
        self.snapshot_tx.send_replace(snapshot);
        // No subscriber is not an error.
        let _ = self.deltas.send(delta);
    }

    /// Publishes a snapshot for a change that is not a log row (link state, broken, what
    /// the players' API changed in `RemoteSeats`).
    pub(super) fn publish_state(&mut self) {
        self.snapshot_tx.send_replace(self.build_snapshot());
    }
}
