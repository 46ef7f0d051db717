//! `Engine::deal_from` and `hit_from`: the engine takes its cards from a shoe it is
//! handed, for as long as it waits for cards (or the one card of a hit). At the table every
//! card arrives on its own from the reader and goes through `apply`; the simulator, which
//! deals millions of cards a second, hands the engine its simulated shoe instead. A run of
//! cards (the initial deal, a split hand's second card, the dealer's draw) is then one
//! loop, inlined into the caller, that reads the phase once a card and goes straight to
//! the card's handler: the simulator's rounds took some 9 % less time than with a `step()`,
//! a dispatch and a call a card (docs/src/benchmarks.md, "Simulator against freebj").

use super::expect::Step;
use super::io::{EventSink, Input, Rejection};
use super::state::{Engine, Phase};
use super::variant::DealMode;
use crate::cards::Card;

/// What comes out of a shoe handed to [`Engine::deal_from`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dealt {
    /// A card.
    Card(Card),
    /// The cut card.
    CutCard,
}

impl Dealt {
    /// The input this is at the table.
    pub fn input(self) -> Input {
        match self {
            Dealt::Card(card) => Input::Card(card),
            Dealt::CutCard => Input::CutCard,
        }
    }
}

/// A shoe the engine deals from itself ([`Engine::deal_from`]).
pub trait CardSource {
    /// The next card or the cut card, or `None` once the shoe is empty.
    fn next_dealt(&mut self) -> Option<Dealt>;
}

/// What [`Engine::deal_from`] stopped at: the input the engine refused, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct DealRefused {
    /// The card or cut card refused.
    pub input: Input,
    /// The rejection, as `apply` would have returned it.
    pub rejection: Rejection,
}

impl Engine {
    /// Deals out of `source` for as long as the engine waits for a card (`step()` is
    /// [`Step::Card`]) and returns what it waits for then: [`Step::Card`] only when the
    /// source ran out first. Each card is applied exactly as `apply` applies `Input::Card`
    /// and the cut card as `Input::CutCard`; the first refusal stops the deal with that input
    /// (whose own changes and events are undone, as `apply` undoes them; the cards dealt
    /// before it stay dealt).
    #[inline]
    pub fn deal_from(
        &mut self,
        source: &mut impl CardSource,
        events: &mut impl EventSink,
    ) -> Result<Step, Box<DealRefused>> {
        // The variant is the engine's for life.
        let seats = self.variant.deal.mode != DealMode::CommonDraw;
        loop {
            // The three cases of nearly every card go straight to the handler `on_card`
            // would pick, the phase read once a card; the rest through `step` and
            // `on_card` themselves. Each handler checks the card before it changes
            // anything, so a refused card leaves nothing to undo.
            match self.phase {
                // The initial deal card after card, its next step read where it is set.
                Phase::Dealing(mut step) if seats => loop {
                    match source.next_dealt() {
                        Some(Dealt::Card(card)) => {
                            self.check_in_shoe(card)
                                .map_err(|r| refused(Dealt::Card(card), *r))?;
                            self.deal_initial(step, card, events);
                        }
                        other => {
                            if let Some(step) = self.deal_other(other, events)? {
                                return Ok(step);
                            }
                        }
                    }
                    match self.phase {
                        Phase::Dealing(next) => step = next,
                        _ => break,
                    }
                },
                Phase::Dealer if seats => match source.next_dealt() {
                    Some(Dealt::Card(card)) => {
                        self.check_in_shoe(card)
                            .map_err(|r| refused(Dealt::Card(card), *r))?;
                        self.dealer_card(card, events);
                    }
                    other => {
                        if let Some(step) = self.deal_other(other, events)? {
                            return Ok(step);
                        }
                    }
                },
                // A hand that owes a decision is `step()`'s `Decision`, read here.
                Phase::Playing { seat, hand } if seats => {
                    if !self.hand_waits_for_card(seat, hand) {
                        return Ok(Step::Decision);
                    }
                    match source.next_dealt() {
                        Some(Dealt::Card(card)) => {
                            self.check_in_shoe(card)
                                .map_err(|r| refused(Dealt::Card(card), *r))?;
                            self.take_card(seat, hand, card, events);
                        }
                        other => {
                            if let Some(step) = self.deal_other(other, events)? {
                                return Ok(step);
                            }
                        }
                    }
                }
                _ => match self.step() {
                    Step::Card => {
                        let dealt = source.next_dealt();
                        if let Some(step) = self.deal_other(dealt, events)? {
                            return Ok(step);
                        }
                    }
                    step => return Ok(step),
                },
            }
        }
    }

    /// The hand in play hits: the next card out of `source` goes to it, as `apply` would
    /// give it (in any other phase too the card is `apply`'s; the cut card is the cut card,
    /// and the hand has not hit then). `Ok(false)` when the source is empty. What is due
    /// next, `deal_from` deals.
    #[inline]
    pub fn hit_from(
        &mut self,
        source: &mut impl CardSource,
        events: &mut impl EventSink,
    ) -> Result<bool, Box<DealRefused>> {
        let seats = self.variant.deal.mode != DealMode::CommonDraw;
        let dealt = source.next_dealt();
        match (self.phase, dealt) {
            (Phase::Playing { seat, hand }, Some(Dealt::Card(card))) if seats => {
                self.check_in_shoe(card)
                    .map_err(|r| refused(Dealt::Card(card), *r))?;
                self.take_card(seat, hand, card, events);
                Ok(true)
            }
            _ => Ok(self.deal_other(dealt, events)?.is_none()),
        }
    }

    /// What `deal_from` does not deal itself: the cut card, a card through `on_card`.
    /// `Some(Step::Card)` when the source is empty: the deal stops there.
    #[inline(never)]
    fn deal_other(
        &mut self,
        dealt: Option<Dealt>,
        events: &mut impl EventSink,
    ) -> Result<Option<Step>, Box<DealRefused>> {
        let Some(dealt) = dealt else {
            return Ok(Some(Step::Card));
        };
        let mark = events.len();
        let result = match dealt {
            Dealt::Card(card) => self.on_card(card, events),
            Dealt::CutCard => self.on_cut_card(events),
        };
        match result {
            Ok(()) => Ok(None),
            Err(rejection) => {
                events.truncate(mark);
                Err(refused(dealt, *rejection))
            }
        }
    }
}

/// The refusal `deal_from` returns, boxed (built only when something is refused).
#[cold]
#[inline(never)]
fn refused(dealt: Dealt, rejection: Rejection) -> Box<DealRefused> {
    Box::new(DealRefused {
        input: dealt.input(),
        rejection,
    })
}
