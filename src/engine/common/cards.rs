//! The cards of a common draw: the initial deal to every box, each later card to every hand
//! that asked for it (burned when none did), the steps that open between cards, and the
//! dealer's draw. Apart from the decisions and the timer, which only say who takes the
//! next card.

use super::{current, wants_card};
use crate::cards::{Card, Rank};
use crate::engine::io::{Code, Event, EventSink, Place};
use crate::engine::rules::{
    after_card, after_initial_deal, dealer_rules_draw, hand_depends_on_dealer, initial_deal_target,
    side_bets_need_second_card,
};
use crate::engine::state::{reject, Engine, Handled, Insurance, Phase};

impl Engine {
    /// The place the common draw's initial deal `step` goes to (every box is dealt).
    pub(crate) fn common_deal_target(&self, step: u8) -> Option<Place> {
        let boxes = &self.common.boxes;
        initial_deal_target(boxes.len(), step, self.variant.deal.dealer_cards, |i| {
            boxes[i].0
        })
    }

    /// A card out of the shoe: to the initial deal's next place, to every hand that asked
    /// for one (burned when none did), or to the dealer.
    pub(crate) fn common_card(&mut self, card: Card, events: &mut impl EventSink) -> Handled {
        match self.phase {
            Phase::Dealing(step) => {
                let to = self.common_deal_target(step).unwrap_or(Place::Dealer);
                match to {
                    Place::Hand { seat, .. } => {
                        if let Some((_, cards)) = self.common.boxes.iter_mut().find(|(b, _)| *b == seat) {
                            cards.push(card);
                        }
                    }
                    _ => self.round.dealer.push(card),
                }
                self.shoe.take(card);
                events.push(Event::CardDealt { card, to });
                if self.common_deal_target(step + 1).is_some() {
                    self.phase = Phase::Dealing(step + 1);
                } else {
                    self.common_initial_deal_done(events);
                }
                Ok(())
            }
            Phase::Drawing => {
                self.shoe.take(card);
                let v = &*self.variant;
                let mut given = 0usize;
                for p in &mut self.common.players {
                    for sp in &mut p.boxes {
                        let Some(i) = current(sp) else { continue };
                        let h = &mut sp.hands[i];
                        if !wants_card(h) {
                            continue;
                        }
                        h.cards.push(card);
                        h.hit_requested = false;
                        h.state = after_card(v, h, h.state);
                        given += 1;
                    }
                }
                if given == 0 {
                    self.common.burned.push(card);
                    events.push(Event::Burned { card });
                } else {
                    events.push(Event::CardDrawn { card, hands: given });
                }
                self.open_step(events);
                Ok(())
            }
            Phase::Deciding => reject(
                Code::CardNotExpected,
                format!(
                    "{card}: {} hand(s) are still deciding; the card comes when all have decided or the timer runs out",
                    self.common_pending_decisions()
                ),
            ),
            Phase::Insurance => reject(
                Code::CardNotExpected,
                format!("{card}: insurance is open until every box has answered or the timer runs out"),
            ),
            Phase::Dealer => {
                self.round.dealer.push(card);
                self.shoe.take(card);
                events.push(Event::CardDealt { card, to: Place::Dealer });
                if !self.common_dealer_must_draw() {
                    self.settle_when_ready(events);
                }
                Ok(())
            }
            _ => reject(Code::CardNotExpected, format!("{card}: no card is due")),
        }
    }

    fn common_initial_deal_done(&mut self, events: &mut impl EventSink) {
        let v = &*self.variant;
        let up = self.round.dealer[0];
        let offer = v.insurance.offered && up.rank == Rank::Ace;
        let boxes = &self.common.boxes;
        for p in &mut self.common.players {
            for sp in &mut p.boxes {
                let Some((_, cards)) = boxes.iter().find(|(b, _)| *b == sp.seat) else {
                    continue;
                };
                sp.hands[0].cards.extend(cards.iter().copied());
                after_initial_deal(v, sp, offer);
            }
        }
        if offer && self.common_pending_insurance() > 0 {
            self.common.deadline = self.common.now + self.timer_ms();
            self.common.armed += 1;
            self.phase = Phase::Insurance;
        } else {
            self.common_begin_play(events);
        }
    }

    /// Play begins (the deal done, or insurance closed): the dealer's peek, then the first
    /// decision step.
    pub(super) fn common_begin_play(&mut self, events: &mut impl EventSink) {
        if !self.peek(events) {
            self.open_step(events);
        }
    }

    /// Opens the next decision step, or moves on to the card or the dealer.
    pub(super) fn open_step(&mut self, events: &mut impl EventSink) {
        self.common.undecided = self.mark_step();
        if self.common.undecided > 0 {
            self.common.deadline = self.common.now + self.timer_ms();
            self.common.armed += 1;
            self.phase = Phase::Deciding;
        } else if self.common_wanting_card() > 0 {
            self.phase = Phase::Drawing;
        } else if self.common_dealer_must_draw() {
            self.phase = Phase::Dealer;
        } else {
            self.settle_when_ready(events);
        }
    }

    // ----- the dealer -------------------------------------------------------------------

    pub(crate) fn common_dealer_must_draw(&self) -> bool {
        let v = &*self.variant;
        let d = &self.round.dealer;
        if !dealer_rules_draw(v, d) {
            return false;
        }
        if v.dealer.always_draws {
            return true;
        }
        let natural_open = !self.round.peeked_clear
            && d.len() < v.hand.natural.cards()
            && d.natural_still_possible();
        self.common
            .players
            .iter()
            .flat_map(|p| p.boxes.iter())
            .any(|sp| {
                (d.len() < 2 && side_bets_need_second_card(v, &sp.side))
                    || (matches!(sp.insurance, Insurance::Bought(_)) && natural_open)
                    || sp
                        .hands
                        .iter()
                        .any(|h| hand_depends_on_dealer(v, h, natural_open))
            })
    }
}
