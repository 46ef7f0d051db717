//! What both kinds of round share around the play: shuffles, the cut card and burn cards
//! between rounds, opening a round, the dealer's peek, bonus-game outcomes, settling when
//! every outcome is known, and the two corrections (a voided card, a cancelled round).

use super::io::{Code, Event, EventSink, Outcome, Rejection, SeatId};
use super::settle::{settle, settle_into};
use super::shoe::ShoeStage;
use super::state::{reject, Bonus, Engine, Handled, Phase};
use super::variant::DealMode;
use crate::cards::Card;

impl Engine {
    #[inline(never)]
    pub(super) fn on_shuffle(&mut self, events: &mut impl EventSink) -> Handled {
        if self.phase != Phase::Idle {
            return reject(
                Code::ActionNotAllowed,
                "a round is in progress: shuffle after it settles",
            );
        }
        self.shoe.shuffle(&self.variant.shoe);
        events.push(Event::ShoeShuffled {
            shoe: self.shoe.number(),
        });
        if self.shoe.stage() == ShoeStage::Ready {
            events.push(Event::ShoeReady);
        }
        Ok(())
    }

    #[inline(never)]
    pub(super) fn on_cut_card(&mut self, events: &mut impl EventSink) -> Handled {
        if !self.variant.shoe.cut_card {
            return reject(Code::CardNotExpected, "this game's shoe has no cut card");
        }
        if self.phase == Phase::Idle && self.shoe.stage() == ShoeStage::Finished {
            return reject(
                Code::ShoeFinished,
                "the shoe is finished: shuffle a new shoe",
            );
        }
        if self.shoe.cut_seen() {
            return reject(
                Code::CardNotExpected,
                "the cut card has already come out of this shoe",
            );
        }
        self.shoe.see_cut();
        events.push(Event::CutCard);
        Ok(())
    }

    /// Refuses bets unless a round may open now.
    #[inline]
    pub(crate) fn check_bets_open(&self) -> Handled {
        if self.phase != Phase::Idle {
            return reject(Code::ActionNotAllowed, "a round is already in progress");
        }
        match self.shoe.stage() {
            ShoeStage::Finished => reject(
                Code::ShoeFinished,
                "the shoe is finished: shuffle a new shoe before betting",
            ),
            ShoeStage::AwaitingReveal | ShoeStage::Burning(_) => reject(
                Code::BurnIncomplete,
                "the burn procedure is not complete: burn cards are still due",
            ),
            ShoeStage::Ready => Ok(()),
        }
    }

    /// Opens a round whose bets are accepted: a fresh shoe where the game takes one, the
    /// next round number, an empty dealer hand, the initial deal.
    pub(crate) fn open_round(&mut self, events: &mut impl EventSink) {
        if self.variant.shoe.new_shoe_every_round {
            self.shoe.shuffle(&self.variant.shoe);
            events.push(Event::ShoeShuffled {
                shoe: self.shoe.number(),
            });
        }
        let round = &mut self.round;
        round.number += 1;
        round.dealer.clear();
        round.peeked_clear = false;
        round.cancelled = false;
        round.opened_ms = self.common.now;
        round.dealer_plays_for_hands = false;
        if self.variant.timeouts.round_max_ms > 0 {
            // The round's age is a timed wait: the table ticks just before the bets that
            // open it, so its age counts from now, not from an older tick.
            self.common.armed += 1;
        }
        self.common.burned.clear();
        self.phase = Phase::Dealing(0);
        events.push(Event::RoundOpened {
            round: round.number,
        });
    }

    #[inline(never)]
    pub(super) fn on_bonus(
        &mut self,
        seat: SeatId,
        multiplier: u32,
        events: &mut impl EventSink,
    ) -> Handled {
        let in_play = matches!(
            self.phase,
            Phase::Insurance | Phase::Playing { .. } | Phase::Dealer | Phase::AwaitingBonus
        );
        let idx = self.round.seats.iter().position(|s| s.seat == seat);
        let pending = match (in_play, idx) {
            (true, Some(i)) => match self.round.seats[i].bonus {
                Bonus::Pending(table) => Some((i, table)),
                _ => None,
            },
            _ => None,
        };
        let Some((i, table)) = pending else {
            return reject(
                Code::ActionNotAllowed,
                format!("seat {seat} has no bonus game waiting for its outcome"),
            );
        };
        let allowed = self.bonus_multipliers(seat).unwrap_or(&[]);
        if !allowed.contains(&multiplier) {
            return reject(
                Code::ActionNotAllowed,
                format!(
                    "seat {seat}: {multiplier} is not a {} bonus multiplier ({allowed:?})",
                    table.table()
                ),
            );
        }
        self.round.seats[i].bonus = Bonus::Drawn(multiplier);
        events.push(Event::BonusDrawn { seat, multiplier });
        if self.phase == Phase::AwaitingBonus {
            self.settle_when_ready(events);
        }
        Ok(())
    }

    /// A card taken out of play: out of the shoe, onto the burn pile, into no hand. Inside a
    /// round it is listed with the round's burned cards.
    #[inline(never)]
    pub(super) fn on_void(&mut self, card: Card, events: &mut impl EventSink) -> Handled {
        self.check_in_shoe(card)?;
        self.shoe.discard(card);
        if self.phase != Phase::Idle {
            self.common.burned.push(card);
        }
        events.push(Event::Burned { card });
        Ok(())
    }

    /// Cancels the round in play, or the last settled one (once, before the next opens):
    /// every stake comes back.
    #[inline(never)]
    pub(super) fn on_cancel(&mut self, events: &mut impl EventSink) -> Handled {
        if self.round.number == 0 {
            return reject(Code::ActionNotAllowed, "there is no round to cancel");
        }
        if self.round.cancelled {
            return reject(
                Code::ActionNotAllowed,
                format!("round {} is already cancelled", self.round.number),
            );
        }
        let in_play = self.phase != Phase::Idle;
        let mut result = settle(self);
        for h in &mut result.hands {
            h.outcome = Outcome::Cancelled;
            h.returned = h.staked;
        }
        for b in &mut result.bets {
            b.returned = b.staked;
        }
        result.cancelled = true;
        self.round.cancelled = true;
        // A cancelled round won nothing for "Let it play" to ride on.
        self.common.last_wins.clear();
        events.push(Event::RoundSettled(Box::new(result)));
        if in_play {
            self.phase = Phase::Idle;
            self.shoe.round_settled();
            if self.shoe.stage() == ShoeStage::Finished {
                events.push(Event::ShoeFinished);
            }
        }
        Ok(())
    }

    #[inline]
    pub(super) fn check_in_shoe(&self, card: Card) -> Handled {
        match self.shoe.check(card) {
            Ok(()) => Ok(()),
            Err(e) => Err(self.impossible_card(card, e.out)),
        }
    }

    /// The rejection of a card the shoe can no longer hold (`out` copies already out).
    #[cold]
    fn impossible_card(&self, card: Card, out: u8) -> Box<Rejection> {
        Box::new(Rejection::new(
            Code::ImpossibleCard,
            format!(
                "{card}: {out} already out of a {}-deck shoe",
                self.variant.shoe.decks
            ),
        ))
    }

    /// The dealer's peek where the variant peeks on this up card. Returns true when the
    /// dealer has a natural and the round has settled (or waits for its bonus games).
    #[inline]
    pub(crate) fn peek(&mut self, events: &mut impl EventSink) -> bool {
        let v = &self.variant;
        let up = self.round.dealer[0];
        // `v.deal.dealer_cards == 2 && v.deal.peek_on.iter().any(|u| u.matches(up))`, read
        // once when the engine was made.
        let peeks = self.peek_ranks & 1 << up.rank.number() != 0;
        // Whether the dealer peeks is as random as the up card: the common case (no
        // natural) selects rather than branches on it. `&` evaluates both sides; the
        // natural is read from counts, harmless where the dealer does not peek.
        let natural = peeks & self.round.dealer.is_natural(v.hand.natural);
        if peeks {
            events.push(Event::DealerPeeked { natural });
        }
        if natural {
            self.settle_when_ready(events);
            return true;
        }
        self.round.peeked_clear |= peeks;
        false
    }

    #[inline(never)]
    pub(crate) fn settle_when_ready(&mut self, events: &mut impl EventSink) {
        if self
            .round
            .seats
            .iter()
            .any(|s| matches!(s.bonus, Bonus::Pending(_)))
        {
            self.phase = Phase::AwaitingBonus;
            return;
        }
        let common = self.variant.deal.mode == DealMode::CommonDraw;
        if self.settlement_records || common {
            let mut result = self.spare_result.0.take().unwrap_or_default();
            let mut extra = std::mem::take(&mut self.spare_result.1);
            settle_into(self, &mut result, &mut extra);
            self.spare_result.1 = extra;
            if common {
                self.remember_wins(&result);
            }
            events.push(Event::RoundSettled(result));
        }
        self.phase = Phase::Idle;
        self.shoe.round_settled();
        if self.shoe.stage() == ShoeStage::Finished {
            events.push(Event::ShoeFinished);
        }
    }
}
