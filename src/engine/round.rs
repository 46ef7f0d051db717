//! The round state machine: betting → initial deal → insurance / even money → peek → each
//! seat's hands in order → dealer → settlement.
//!
//! Every handler checks everything before it changes anything, so a rejected input leaves
//! the state exactly as it was. The one transition that cannot be checked up front —
//! closing insurance implicitly, which peeks and may end the round — runs on a copy that is
//! kept only if the whole input is accepted.

use super::io::{Action, Code, Event, EventSink, Place, PlayerId, Rejection, SeatId};
use super::rules::{
    after_card, after_initial_deal, dealer_rules_draw, double_hand, hand_depends_on_dealer,
    initial_deal_len, initial_deal_target, may_double, may_split, may_surrender, player_natural,
    side_bets_need_second_card, split_hand,
};
use super::shoe::ShoeStage;
use super::sidebets;
use super::state::{reject, Bonus, Engine, Hand, HandState, Handled, Insurance, Phase, SeatPlay};
use super::variant::{AutoPlayScope, DealMode};
use crate::cards::{Card, Rank};
use smallvec::SmallVec;

/// The decisions a hand in play may take, in the order `allowed` lists them.
const DECISIONS: [Action; 5] = [
    Action::Stand,
    Action::AutoPlay,
    Action::Double,
    Action::Split,
    Action::Surrender,
];

/// Whether the hand is live with two cards or more: a decision is due.
fn deciding(h: &Hand) -> bool {
    h.state == HandState::Live && h.cards.len() >= 2
}

impl Engine {
    /// A card out of the shoe. The three cases of nearly every card — the initial deal, a
    /// hand's card, the dealer's — are handled here; the rest (burns, the common draw,
    /// closing insurance, refusals) in `other_card`.
    #[inline(never)]
    pub(super) fn on_card(&mut self, card: Card, events: &mut impl EventSink) -> Handled {
        let seats = self.variant.deal.mode != DealMode::CommonDraw;
        match self.phase {
            // Only a seat-by-seat round plays hands in turn.
            Phase::Playing { seat, hand } => {
                self.check_in_shoe(card)?;
                self.take_card(seat, hand, card, events);
                Ok(())
            }
            Phase::Dealing(step) if seats => {
                self.check_in_shoe(card)?;
                self.deal_initial(step, card, events);
                Ok(())
            }
            Phase::Dealer if seats => {
                self.check_in_shoe(card)?;
                self.dealer_card(card, events);
                Ok(())
            }
            _ => self.other_card(card, events),
        }
    }

    /// A dealer's card in a seat-by-seat round. Always inlined, as `deal_initial` is: the
    /// simulator's deal loop (`source.rs`) takes one to several a round, and out of line it
    /// cost 21 instructions a round (callgrind, 2026-12-07).
    #[inline(always)]
    pub(super) fn dealer_card(&mut self, card: Card, events: &mut impl EventSink) {
        self.round.dealer.push(card);
        self.shoe.take(card);
        events.push(Event::CardDealt {
            card,
            to: Place::Dealer,
        });
        let draws = if self.round.dealer_plays_for_hands {
            dealer_rules_draw(&self.variant, &self.round.dealer)
        } else {
            self.dealer_must_draw()
        };
        debug_assert_eq!(draws, self.dealer_must_draw());
        if !draws {
            self.settle_when_ready(events);
        }
    }

    /// Every card `on_card` does not handle itself.
    #[inline(never)]
    fn other_card(&mut self, card: Card, events: &mut impl EventSink) -> Handled {
        if self.phase == Phase::Idle {
            match self.shoe.stage() {
                ShoeStage::Finished => {
                    return reject(
                        Code::ShoeFinished,
                        "the shoe is finished: shuffle a new shoe",
                    )
                }
                ShoeStage::Ready => {
                    return reject(
                        Code::CardNotExpected,
                        format!("{card}: no round is in progress (bets come first)"),
                    )
                }
                ShoeStage::AwaitingReveal | ShoeStage::Burning(_) => {
                    self.check_in_shoe(card)?;
                    self.shoe.burn(card, &self.variant.shoe);
                    events.push(Event::Burned { card });
                    if self.shoe.stage() == ShoeStage::Ready {
                        events.push(Event::ShoeReady);
                    }
                    return Ok(());
                }
            }
        }
        self.check_in_shoe(card)?;
        if self.variant.deal.mode == DealMode::CommonDraw {
            return self.common_card(card, events);
        }
        match self.phase {
            Phase::Insurance => {
                self.closing_insurance(Code::CardNotExpected, events, |next, events| {
                    next.on_card(card, events)
                })
            }
            // `on_card` deals these itself in a seat-by-seat round: never reached.
            Phase::Dealing(_) | Phase::Playing { .. } | Phase::Dealer => self.on_card(card, events),
            Phase::AwaitingBonus => reject(
                Code::CardNotExpected,
                format!("{card}: every card is out; the round waits for bonus-game outcomes"),
            ),
            Phase::Idle | Phase::Deciding | Phase::Drawing => {
                reject(Code::CardNotExpected, format!("{card}: no card is due"))
            }
        }
    }

    /// The place the initial deal's `step` goes to.
    pub(crate) fn deal_target_at(&self, step: u8) -> Option<Place> {
        let seats = &self.round.seats;
        initial_deal_target(seats.len(), step, self.variant.deal.dealer_cards, |i| {
            seats[i].seat
        })
    }

    /// Always inlined: the simulator's deal loop (`source.rs`) takes four of these a round,
    /// and left to itself the compiler's choice flips with unrelated code elsewhere in the
    /// crate (2026-12-07: out of line, 1,363 → 1,451 instructions a round by callgrind).
    #[inline(always)]
    pub(super) fn deal_initial(&mut self, step: u8, card: Card, events: &mut impl EventSink) {
        let n = self.round.seats.len();
        let s = usize::from(step);
        events.push_with(|| Event::CardDealt {
            card,
            to: self.deal_target_at(step).unwrap_or(Place::Dealer),
        });
        if s < n {
            self.round.seats[s].hands[0].cards.push(card);
        } else if s == n || s > 2 * n {
            self.round.dealer.push(card);
        } else {
            self.round.seats[s - n - 1].hands[0].cards.push(card);
        }
        self.shoe.take(card);
        let next = step + 1;
        if usize::from(next) < initial_deal_len(n, self.variant.deal.dealer_cards) {
            self.phase = Phase::Dealing(next);
        } else {
            self.initial_deal_done(events);
        }
    }

    #[inline(never)]
    pub(super) fn initial_deal_done(&mut self, events: &mut impl EventSink) {
        let v = &*self.variant;
        let up = self.round.dealer[0];
        let ace_up = up.rank == Rank::Ace;
        let offer = v.insurance.offered && ace_up;
        for seat in &mut self.round.seats {
            if !after_initial_deal(v, seat, offer) {
                continue;
            }
            if offer {
                for bb in &mut seat.behind {
                    bb.insurance = Insurance::Pending;
                }
            }
            let has_in_for_six = seat.side.iter().any(|(i, _)| {
                v.side_bets[usize::from(*i)].kind == super::variant::SideBetKind::InForSix
            });
            if has_in_for_six {
                if let Some(table) = seat.first_two().and_then(sidebets::hard_six_table) {
                    seat.bonus = Bonus::Pending(table);
                }
            }
        }
        if offer {
            self.phase = Phase::Insurance;
            self.arm_insurance();
        } else {
            self.begin_play(events);
        }
    }

    /// A card for the active hand: the second card after a split, the double's card, or a
    /// hit.
    pub(super) fn take_card(
        &mut self,
        seat: u8,
        hand: u8,
        card: Card,
        events: &mut impl EventSink,
    ) {
        let v = &*self.variant;
        let sp = &mut self.round.seats[usize::from(seat)];
        let seat_id = sp.seat;
        let h = &mut sp.hands[usize::from(hand)];
        h.cards.push(card);
        self.shoe.take(card);
        events.push(Event::CardDealt {
            card,
            to: Place::Hand {
                seat: seat_id,
                hand,
            },
        });
        h.state = after_card(v, h, h.state);
        if sp.auto_play && h.state == HandState::Live && h.cards.total(v.hand.ace).best > 11 {
            h.state = HandState::Stood;
        }
        // A card answers the player (a hit, a split hand's second card): the resume
        // window, if any, is over, and a decision still due gets a new timer.
        let live = h.state == HandState::Live;
        sp.resuming = false;
        if live {
            self.arm_decision(usize::from(seat), usize::from(hand));
        } else {
            self.advance(seat, hand, events);
        }
    }

    /// Runs `then` after closing insurance, on a copy kept only if both succeed and the
    /// round is still in play after the peek.
    pub(super) fn closing_insurance<E: EventSink>(
        &mut self,
        code_if_round_ends: Code,
        events: &mut E,
        then: impl FnOnce(&mut Engine, &mut E) -> Handled,
    ) -> Handled {
        let mut next = self.clone();
        next.close_insurance(events);
        if next.phase == Phase::Idle || next.phase == Phase::AwaitingBonus {
            return reject(
                code_if_round_ends,
                "insurance is still open and the dealer has yet to peek: every seat must answer first",
            );
        }
        then(&mut next, events)?;
        *self = next;
        Ok(())
    }

    /// Checks an insurance answer: the seat's index and its new insurance state.
    pub(crate) fn insurance_answer(
        &self,
        seat: SeatId,
        action: Action,
    ) -> Result<(usize, Insurance), Rejection> {
        let v = &self.variant;
        let Some(i) = self.round.seats.iter().position(|s| s.seat == seat) else {
            return reject(
                Code::NotYourTurn,
                format!("seat {seat} has no hand in this round"),
            );
        };
        let sp = &self.round.seats[i];
        if self.phase != Phase::Insurance || sp.insurance != Insurance::Pending {
            return reject(
                Code::ActionNotAllowed,
                format!("seat {seat} has no insurance question open"),
            );
        }
        let answer = match action {
            Action::Insurance => {
                let cost = v.insurance.cost.fraction_of(sp.main);
                if cost <= 0 {
                    return reject(
                        Code::ActionNotAllowed,
                        format!("seat {seat}: the bet is too small to insure"),
                    );
                }
                Insurance::Bought(cost)
            }
            Action::EvenMoney => {
                if !v.insurance.even_money || !self.is_player_natural(&sp.hands[0]) {
                    return reject(
                        Code::ActionNotAllowed,
                        format!("seat {seat}: even money is only for a natural, where the game offers it"),
                    );
                }
                Insurance::EvenMoney
            }
            Action::NoInsurance => Insurance::Declined,
            other => {
                return reject(
                    Code::ActionNotAllowed,
                    format!("seat {seat}: {} is not an insurance answer", other.name()),
                )
            }
        };
        Ok((i, answer))
    }

    pub(super) fn answer_insurance(
        &mut self,
        seat: SeatId,
        action: Action,
        events: &mut impl EventSink,
    ) -> Handled {
        let (i, answer) = self.insurance_answer(seat, action)?;
        let sp = &mut self.round.seats[i];
        sp.insurance = answer;
        if answer == Insurance::EvenMoney {
            sp.hands[0].state = HandState::EvenMoney;
        }
        self.insurance_answered(
            Event::Decided {
                seat,
                hand: 0,
                action,
            },
            events,
        )
    }

    /// An insurance answer is in (`answered`, the seated player's or a player behind's):
    /// once nobody has one left to give, insurance closes.
    fn insurance_answered(&mut self, answered: Event, events: &mut impl EventSink) -> Handled {
        events.push(answered);
        if !self.insurance_open() {
            self.close_insurance(events);
        }
        Ok(())
    }

    /// Whether a seat or a player behind one has yet to answer insurance.
    pub(super) fn insurance_open(&self) -> bool {
        self.round.seats.iter().any(|s| {
            s.insurance == Insurance::Pending
                || s.behind.iter().any(|b| b.insurance == Insurance::Pending)
        })
    }

    /// Where `player`'s bet behind `seat` stands in this round (seat index, bet index), or
    /// the refusal when there is none: a decision from a player at a seat-by-seat table
    /// can only be theirs behind a seat.
    pub(crate) fn behind_bet(&self, player: &str, seat: SeatId) -> Result<(usize, usize), Handled> {
        let found = self
            .round
            .seats
            .iter()
            .position(|s| s.seat == seat)
            .and_then(|si| {
                let bi = self.round.seats[si]
                    .behind
                    .iter()
                    .position(|b| &*b.player == player)?;
                Some((si, bi))
            });
        found.filter(|_| self.phase != Phase::Idle).ok_or_else(|| {
            reject(
                Code::NotYourTurn,
                format!("{player} has no bet behind seat {seat} in this round"),
            )
        })
    }

    /// A player behind a seat (the bet `behind_bet` found) answers insurance, independently
    /// of the seated player.
    #[inline(never)]
    pub(crate) fn on_behind_answer(
        &mut self,
        (si, bi): (usize, usize),
        action: Action,
        events: &mut impl EventSink,
    ) -> Handled {
        let seat = self.round.seats[si].seat;
        let bb = &self.round.seats[si].behind[bi];
        let player = &*bb.player;
        if !matches!(action, Action::Insurance | Action::NoInsurance) {
            return reject(
                Code::ActionNotAllowed,
                format!("{player} behind seat {seat}: a player behind answers insurance only; the seated player plays the hand"),
            );
        }
        if self.phase != Phase::Insurance || bb.insurance != Insurance::Pending {
            return reject(
                Code::ActionNotAllowed,
                format!("{player} behind seat {seat}: no insurance question is open"),
            );
        }
        let answer = if action == Action::Insurance {
            match self.variant.insurance.cost.fraction_of(bb.main) {
                cost if cost > 0 => Insurance::Bought(cost),
                _ => {
                    return reject(
                        Code::ActionNotAllowed,
                        format!("{player}: the bet is too small to insure"),
                    )
                }
            }
        } else {
            Insurance::Declined
        };
        let player = PlayerId::clone(&bb.player);
        self.round.seats[si].behind[bi].insurance = answer;
        self.insurance_answered(
            Event::PlayerDecided {
                player,
                seat,
                hand: 0,
                action,
            },
            events,
        )
    }

    pub(super) fn close_insurance(&mut self, events: &mut impl EventSink) {
        for s in &mut self.round.seats {
            if s.insurance == Insurance::Pending {
                s.insurance = Insurance::Declined;
            }
            for b in &mut s.behind {
                if b.insurance == Insurance::Pending {
                    b.insurance = Insurance::Declined;
                }
            }
        }
        events.push(Event::InsuranceClosed);
        self.begin_play(events);
    }

    /// After the initial deal and insurance: the peek, then the first hand to act.
    pub(super) fn begin_play(&mut self, events: &mut impl EventSink) {
        if !self.peek(events) {
            self.activate_from(0, 0, events);
        }
    }

    #[inline(never)]
    pub(super) fn on_decision(
        &mut self,
        seat: SeatId,
        action: Action,
        events: &mut impl EventSink,
    ) -> Handled {
        match self.phase {
            Phase::Insurance if action.is_insurance_answer() => {
                self.answer_insurance(seat, action, events)
            }
            Phase::Insurance => {
                self.closing_insurance(Code::ActionNotAllowed, events, |next, events| {
                    next.on_decision(seat, action, events)
                })
            }
            Phase::Playing { seat: si, hand: hi } => {
                let active = self.round.seats[usize::from(si)].seat;
                if active != seat {
                    return reject(
                        Code::NotYourTurn,
                        format!("seat {active}, hand {} is to act, not seat {seat}", hi + 1),
                    );
                }
                self.play_decision(si, hi, action, events)
            }
            Phase::Idle | Phase::Deciding | Phase::Drawing => {
                reject(Code::ActionNotAllowed, "no round is in progress")
            }
            Phase::Dealing(_) => reject(Code::ActionNotAllowed, "the initial deal is not complete"),
            Phase::Dealer => reject(Code::ActionNotAllowed, "the players' turns are over"),
            Phase::AwaitingBonus => reject(
                Code::ActionNotAllowed,
                "the round waits for bonus-game outcomes",
            ),
        }
    }

    pub(super) fn play_decision(
        &mut self,
        si: u8,
        hi: u8,
        action: Action,
        events: &mut impl EventSink,
    ) -> Handled {
        let seat = self.round.seats[usize::from(si)].seat;
        // Only the decision asked for is checked; the whole list is built for the message.
        if !self.may_take(si, hi, action) {
            let allowed = self.allowed(si, hi);
            let why = if action.is_insurance_answer() {
                "insurance is closed".to_string()
            } else if allowed.is_empty() {
                "the hand is waiting for a card".to_string()
            } else {
                let names: Vec<&str> = allowed.iter().map(|a| a.name()).collect();
                format!("allowed now: {}", names.join(", "))
            };
            return reject(
                Code::ActionNotAllowed,
                format!(
                    "seat {seat}, hand {}: cannot {} ({why})",
                    hi + 1,
                    action.name()
                ),
            );
        }
        let sp = &mut self.round.seats[usize::from(si)];
        // The player answered (within the resume window, too): they are back.
        sp.resuming = false;
        let main = sp.main;
        let h = &mut sp.hands[usize::from(hi)];
        events.push(Event::Decided {
            seat,
            hand: hi,
            action,
        });
        match action {
            Action::AutoPlay => {
                sp.auto_play = true;
                if h.cards.total(self.variant.hand.ace).best > 11 {
                    h.state = HandState::Stood;
                    self.advance(si, hi, events);
                }
            }
            Action::Stand => {
                h.state = HandState::Stood;
                self.advance(si, hi, events);
            }
            Action::Surrender => {
                h.state = HandState::Surrendered;
                self.advance(si, hi, events);
            }
            Action::Double => double_hand(h, main),
            Action::Split => split_hand(&mut sp.hands, usize::from(hi), main),
            // Never reach here: `allowed` excludes them (a seat's hit is a card).
            Action::Hit | Action::Insurance | Action::NoInsurance | Action::EvenMoney => {}
        }
        Ok(())
    }

    /// The decisions the active hand may take now (a card is always a hit while the hand is
    /// live and has two cards or more). Up to five: inline, never allocated.
    pub(crate) fn allowed(&self, si: u8, hi: u8) -> SmallVec<[Action; 8]> {
        let mut out = SmallVec::new();
        let sp = &self.round.seats[usize::from(si)];
        let h = &sp.hands[usize::from(hi)];
        if !deciding(h) {
            return out;
        }
        for action in DECISIONS {
            if self.permits(sp, h, action) {
                out.push(action);
            }
        }
        out
    }

    /// Whether the active hand may take `action` now: `allowed(si, hi).contains(&action)`
    /// without building the list (the simulator's hot path checks one decision at a time).
    pub(crate) fn may_take(&self, si: u8, hi: u8, action: Action) -> bool {
        let sp = &self.round.seats[usize::from(si)];
        let h = &sp.hands[usize::from(hi)];
        deciding(h) && self.permits(sp, h, action)
    }

    /// Whether a hand that owes a decision may take `action` (a hit is a card, never a
    /// decision; insurance answers belong to the insurance question).
    fn permits(&self, sp: &SeatPlay, h: &Hand, action: Action) -> bool {
        let v = &self.variant;
        match action {
            Action::Stand => true,
            Action::AutoPlay => !sp.auto_play,
            Action::Double => may_double(v, h),
            Action::Split => {
                let insured = matches!(sp.insurance, Insurance::Bought(_));
                may_split(v, h, sp.hands.len(), insured)
            }
            Action::Surrender => may_surrender(v, h, sp.hands.len(), self.round.dealer[0]),
            Action::Hit | Action::Insurance | Action::NoInsurance | Action::EvenMoney => false,
        }
    }

    /// Moves on from a hand that is done: the next hand of the seat, the next seat, or the
    /// dealer.
    pub(super) fn advance(&mut self, seat: u8, hand: u8, events: &mut impl EventSink) {
        // The hand is finished: an auto-play that covered only it ends with it.
        if self.variant.timeouts.auto_play_scope == AutoPlayScope::Hand {
            self.round.seats[usize::from(seat)].auto_play = false;
        }
        self.activate_from(usize::from(seat), usize::from(hand) + 1, events);
    }

    pub(super) fn activate_from(&mut self, seat: usize, hand: usize, events: &mut impl EventSink) {
        let mut from_hand = hand;
        for si in seat..self.round.seats.len() {
            let hands = &self.round.seats[si].hands;
            for (hi, h) in hands.iter().enumerate().skip(from_hand) {
                if h.state == HandState::Live {
                    // Indices fit: at most 16 seats and 4 hands (validated variant).
                    self.phase = Phase::Playing {
                        seat: si as u8,
                        hand: hi as u8,
                    };
                    self.arm_decision(si, hi);
                    return;
                }
            }
            from_hand = 0;
        }
        // The players' hands are final now: whether one of them waits for the dealer
        // whatever the dealer's cards is known once. If one does, the dealer draws as the
        // dealer's rules say (what `dealer_must_draw` would find, without its other checks).
        let v = &*self.variant;
        let plays_for_hands = v.dealer.always_draws
            || self
                .round
                .seats
                .iter()
                .any(|sp| sp.hands.iter().any(|h| hand_depends_on_dealer(v, h, false)));
        let draws = if plays_for_hands {
            dealer_rules_draw(v, &self.round.dealer)
        } else {
            self.dealer_must_draw()
        };
        debug_assert_eq!(draws, self.dealer_must_draw());
        if draws {
            self.phase = Phase::Dealer;
            self.round.dealer_plays_for_hands = plays_for_hands;
        } else {
            self.settle_when_ready(events);
        }
    }

    pub(crate) fn is_player_natural(&self, h: &Hand) -> bool {
        player_natural(&self.variant, h)
    }

    /// Whether further dealer cards could still make (or rule out) the dealer's natural.
    pub(super) fn dealer_natural_open(&self) -> bool {
        let d = &self.round.dealer;
        !self.round.peeked_clear
            && d.len() < self.variant.hand.natural.cards()
            && d.natural_still_possible()
    }

    /// Whether the dealer draws another card: the dealer's rules allow it and something
    /// still depends on it.
    pub(crate) fn dealer_must_draw(&self) -> bool {
        let v = &self.variant;
        let d = &self.round.dealer;
        if !dealer_rules_draw(v, d) {
            return false;
        }
        if v.dealer.always_draws {
            return true;
        }
        let natural_open = self.dealer_natural_open();
        let second_card_due = d.len() < 2;
        self.round.seats.iter().any(|sp| {
            (second_card_due && side_bets_need_second_card(v, &sp.side))
                || (natural_open
                    && sp
                        .behind
                        .iter()
                        .any(|b| matches!(b.insurance, Insurance::Bought(_))))
                || (matches!(sp.insurance, Insurance::Bought(_)) && natural_open)
                || sp
                    .hands
                    .iter()
                    .any(|h| hand_depends_on_dealer(v, h, natural_open))
        })
    }
}
