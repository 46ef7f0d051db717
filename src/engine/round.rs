//! The round state machine: betting → initial deal → insurance / even money → peek → each
//! seat's hands in order → dealer → settlement.
//!
//! Every handler checks everything before it changes anything, so a rejected input leaves
//! the state exactly as it was. The one transition that cannot be checked up front —
//! closing insurance implicitly, which peeks and may end the round — runs on a copy that is
//! kept only if the whole input is accepted.

use super::hand::{is_natural_cards, natural_still_possible, total, Total};
use super::io::{Action, Code, Event, Input, Place, PlayerId, Rejection, SeatBets, SeatId};
use super::shoe::{Shoe, ShoeStage};
use super::sidebets::{self, HardSix};
use super::variant::{
    DealMode, DoubleOn, SideWithoutMain, Soft17, SplitPairs, SurrenderWhen, Variant,
};
use crate::cards::{Card, Rank};
use crate::money::Amount;
use smallvec::SmallVec;
use std::sync::Arc;

/// Where the round is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// No round in progress; the shoe's stage says what comes next.
    Idle,
    /// The initial deal, at this step of the deal plan.
    Dealing(u8),
    /// Waiting for insurance / even-money answers.
    Insurance,
    /// A seat's hand is active: indices into `Round::seats` and the seat's hands.
    Playing { seat: u8, hand: u8 },
    /// The dealer completes the hand.
    Dealer,
    /// Every card is out; bonus-game outcomes are still due.
    AwaitingBonus,
    /// Common draw: players are deciding for the next card.
    Deciding,
    /// Common draw: the step is closed; the next card goes to every hand that asked.
    Drawing,
}

/// A hand's play state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HandState {
    /// Still playing (or waiting for its second card after a split).
    Live,
    /// Doubled; its one card is due.
    AwaitingDoubleCard,
    /// Done, standing on its total.
    Stood,
    /// Over 21.
    Bust,
    /// Surrendered.
    Surrendered,
    /// Took even money.
    EvenMoney,
    /// No main bet on it (side bets only): dealt, never played.
    NoBet,
}

/// One player hand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hand {
    pub cards: SmallVec<[Card; 6]>,
    /// Everything staked on this hand: its initial stake plus doubles.
    pub stake: Amount,
    pub doubles: u8,
    pub from_split: bool,
    pub split_aces: bool,
    pub state: HandState,
    /// Common draw: the hand asked for the next card in this step.
    pub hit_requested: bool,
    /// Common draw: decision timers in a row this hand let run out (the two-strike rule).
    pub strikes: u8,
    /// Common draw: the hand owed a decision when the open step began.
    pub in_step: bool,
}

/// A seat's insurance situation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Insurance {
    /// Not offered this round.
    NotOffered,
    /// Offered, no answer yet.
    Pending,
    /// Declined (or unanswered when it closed).
    Declined,
    /// Bought for this stake.
    Bought(Amount),
    /// Took even money.
    EvenMoney,
}

/// A seat's bonus game (IN FOR 6 hard six).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bonus {
    None,
    Pending(HardSix),
    Drawn(u32),
}

/// One seat's part of the round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SeatPlay {
    pub seat: SeatId,
    /// The main bet: each hand's initial stake.
    pub main: Amount,
    /// Side bets: (index into the variant's side bets, stake).
    pub side: SmallVec<[(u8, Amount); 2]>,
    pub hands: SmallVec<[Hand; 2]>,
    pub insurance: Insurance,
    pub bonus: Bonus,
    /// The seated player, where known.
    pub player: Option<String>,
    /// Players betting behind this seat.
    pub behind: Vec<BehindPlay>,
    /// The player is gone: the engine finishes the seat's hands (hit to above 11, stand).
    pub auto_play: bool,
}

/// A bet behind a seated player.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BehindPlay {
    pub player: PlayerId,
    pub main: Amount,
    pub side: SmallVec<[(u8, Amount); 2]>,
    pub follow_double: bool,
    pub follow_split: bool,
    pub insurance: Insurance,
}

impl SeatPlay {
    /// The seat's first two cards, fixed once the initial deal is done.
    pub fn first_two(&self) -> Option<[Card; 2]> {
        let first = self.hands.first()?;
        let a = *first.cards.first()?;
        // After a split the original second card leads the next hand.
        let b = if first.from_split {
            *self.hands.get(1)?.cards.first()?
        } else {
            *first.cards.get(1)?
        };
        Some([a, b])
    }
}

/// The round in progress (or the last one, until the next opens).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Round {
    pub number: u64,
    pub seats: Vec<SeatPlay>,
    pub dealer: SmallVec<[Card; 8]>,
    /// The dealer peeked and has no natural.
    pub peeked_clear: bool,
    /// The round was cancelled (it cannot be cancelled twice).
    pub cancelled: bool,
}

/// The rules engine for one table: pure, deterministic, no I/O, no clock.
#[derive(Debug, Clone)]
pub struct Engine {
    pub(crate) variant: Arc<Variant>,
    pub(crate) shoe: Shoe,
    pub(crate) round: Round,
    pub(crate) phase: Phase,
    /// The common draw's players (empty in a seat-by-seat game).
    pub(crate) common: super::common::CommonRound,
    /// A reusable buffer for the next round's seats (not part of the state).
    spare_seats: Vec<SeatPlay>,
}

impl PartialEq for Engine {
    /// Same rules and same state (the variant compared by value).
    fn eq(&self, other: &Engine) -> bool {
        self.shoe == other.shoe
            && self.round == other.round
            && self.phase == other.phase
            && self.common == other.common
            && (Arc::ptr_eq(&self.variant, &other.variant) || self.variant == other.variant)
    }
}

fn reject<T>(code: Code, message: impl Into<String>) -> Result<T, Rejection> {
    Err(Rejection::new(code, message))
}

impl Engine {
    /// An engine for `variant`, starting on a freshly shuffled, already burned shoe.
    pub fn new(variant: Arc<Variant>) -> Engine {
        Engine {
            shoe: Shoe::ready(&variant.shoe),
            variant,
            round: Round::default(),
            phase: Phase::Idle,
            common: Default::default(),
            spare_seats: Vec::new(),
        }
    }

    /// The rules this engine plays.
    pub fn variant(&self) -> &Variant {
        &self.variant
    }

    /// The shoe's state.
    pub fn shoe(&self) -> &Shoe {
        &self.shoe
    }

    /// Applies one input. On success the events it caused are appended to `events`; on
    /// rejection nothing changes (and nothing is appended).
    pub fn apply(&mut self, input: &Input, events: &mut Vec<Event>) -> Result<(), Rejection> {
        let mark = events.len();
        let common = self.variant.deal.mode == DealMode::CommonDraw;
        let result = match (input, common) {
            (Input::Bets(bets), false) => self.on_bets(bets, events),
            (Input::Decision { seat, action }, false) => self.on_decision(*seat, *action, events),
            (Input::PlayerBets(bets), true) => self.on_player_bets(bets, events),
            (
                Input::PlayerDecision {
                    player,
                    seat,
                    action,
                },
                true,
            ) => self.on_player_decision(player, *seat, *action, events),
            (Input::Bets(_) | Input::Decision { .. }, true) => reject(
                Code::ActionNotAllowed,
                "this game is a common draw: bets and decisions come from players",
            ),
            (
                Input::PlayerDecision {
                    player,
                    seat,
                    action,
                },
                false,
            ) => self.on_behind_decision(player, *seat, *action, events),
            (Input::PlayerBets(_), false) => reject(
                Code::ActionNotAllowed,
                "this game is played seat by seat: bets come from seats",
            ),
            (Input::Card(card), _) => self.on_card(*card, events),
            (Input::CutCard, _) => self.on_cut_card(events),
            (Input::Bonus { seat, multiplier }, _) => self.on_bonus(*seat, *multiplier, events),
            (Input::Shuffle, _) => self.on_shuffle(events),
            (Input::Tick { now_ms }, _) => {
                self.on_tick(*now_ms, events);
                Ok(())
            }
            (Input::Void(card), _) => self.on_void(*card, events),
            (Input::CancelRound, _) => self.on_cancel(events),
        };
        if result.is_err() {
            events.truncate(mark);
        }
        result
    }

    // ----- between rounds -------------------------------------------------------------

    fn on_shuffle(&mut self, events: &mut Vec<Event>) -> Result<(), Rejection> {
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

    fn on_cut_card(&mut self, events: &mut Vec<Event>) -> Result<(), Rejection> {
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
    pub(crate) fn check_bets_open(&self) -> Result<(), Rejection> {
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
    pub(crate) fn open_round(&mut self, events: &mut Vec<Event>) {
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
        self.common.burned.clear();
        self.phase = Phase::Dealing(0);
        events.push(Event::RoundOpened {
            round: round.number,
        });
    }

    fn on_bets(&mut self, bets: &[SeatBets], events: &mut Vec<Event>) -> Result<(), Rejection> {
        self.check_bets_open()?;
        let mut seats = std::mem::take(&mut self.spare_seats);
        if let Err(r) = self.validate_bets(bets, &mut seats) {
            self.spare_seats = seats;
            return Err(r);
        }
        // The last round's seats become the next spare buffer: no allocation per round.
        self.spare_seats = std::mem::replace(&mut self.round.seats, seats);
        self.open_round(events);
        Ok(())
    }

    /// Checks the bets and fills `seats` (cleared first) with the round's seats.
    pub(crate) fn validate_bets(
        &self,
        bets: &[SeatBets],
        seats: &mut Vec<SeatPlay>,
    ) -> Result<(), Rejection> {
        let v = &self.variant;
        if bets.is_empty() {
            return reject(Code::InvalidBet, "no bets: a round needs at least one seat");
        }
        seats.clear();
        for b in bets {
            if b.seat == 0 || b.seat > v.deal.seats {
                return reject(
                    Code::InvalidBet,
                    format!(
                        "seat {} does not exist: seats are 1 to {}",
                        b.seat, v.deal.seats
                    ),
                );
            }
            if seats.iter().any(|s| s.seat == b.seat) {
                return reject(Code::InvalidBet, format!("seat {} bet twice", b.seat));
            }
            let limits = v.limits;
            let side_only = b.main == 0
                && !b.side.is_empty()
                && v.betting.side_bets_without_main == SideWithoutMain::Allowed;
            if b.let_it_play && v.deal.mode != DealMode::CommonDraw {
                return reject(
                    Code::InvalidBet,
                    format!("seat {}: Let it play belongs to a common draw", b.seat),
                );
            }
            // A Let-it-play bet is capped by its own limit (checked by the common draw).
            if !side_only && !b.let_it_play && (b.main < limits.min || b.main > limits.max) {
                return reject(
                    Code::InvalidBet,
                    format!(
                        "seat {}: main bet {} is outside the limits {} to {}",
                        b.seat, b.main, limits.min, limits.max
                    ),
                );
            }
            let side = self.validate_side_bets(&|| format!("seat {}", b.seat), b.main, &b.side)?;
            if !b.behind.is_empty() && (!v.betting.play_behind || side_only) {
                return reject(
                    Code::InvalidBet,
                    format!("seat {}: no bets behind here (the game has no play-behind, or the seat has no main bet)", b.seat),
                );
            }
            let mut behind = Vec::with_capacity(b.behind.len());
            for bb in &b.behind {
                let who = format!("{} behind seat {}", bb.player, b.seat);
                if bb.player.is_empty() {
                    return reject(
                        Code::InvalidBet,
                        format!("seat {}: a player behind needs an id", b.seat),
                    );
                }
                if b.player.as_deref() == Some(bb.player.as_str()) {
                    return reject(
                        Code::InvalidBet,
                        format!("{who}: a seated player cannot play behind their own seat"),
                    );
                }
                if behind.iter().any(|p: &BehindPlay| *p.player == *bb.player) {
                    return reject(Code::InvalidBet, format!("{who}: bet twice"));
                }
                if bb.main < limits.min || bb.main > limits.max {
                    return reject(
                        Code::InvalidBet,
                        format!(
                            "{who}: main bet {} is outside the limits {} to {}",
                            bb.main, limits.min, limits.max
                        ),
                    );
                }
                behind.push(BehindPlay {
                    player: PlayerId::from(bb.player.as_str()),
                    main: bb.main,
                    side: self.validate_side_bets(&|| who.clone(), bb.main, &bb.side)?,
                    follow_double: bb.follow_double,
                    follow_split: bb.follow_split,
                    insurance: Insurance::NotOffered,
                });
            }
            if let Some(player) = &b.player {
                let mut same = bets
                    .iter()
                    .filter(|o| o.player.as_deref() == Some(player.as_str()));
                let held = same.clone().count();
                if held > 2 {
                    return reject(
                        Code::InvalidBet,
                        format!("player {player} holds {held} seats: at most two"),
                    );
                }
                if same.any(|o| o.main != b.main) {
                    return reject(
                        Code::InvalidBet,
                        format!("player {player}: both seats must carry the same main bet"),
                    );
                }
            }
            let mut hands = SmallVec::new();
            hands.push(Hand {
                cards: SmallVec::new(),
                stake: b.main,
                doubles: 0,
                from_split: false,
                split_aces: false,
                hit_requested: false,
                strikes: 0,
                in_step: false,
                state: if side_only {
                    HandState::NoBet
                } else {
                    HandState::Live
                },
            });
            seats.push(SeatPlay {
                seat: b.seat,
                main: b.main,
                side,
                hands,
                insurance: Insurance::NotOffered,
                bonus: Bonus::None,
                player: b.player.clone(),
                behind,
                auto_play: false,
            });
        }
        seats.sort_by_key(|s| s.seat);
        if v.deal.seat_order == super::variant::SeatOrder::Descending {
            seats.reverse();
        }
        Ok(())
    }

    /// Checks one bettor's side bets against the variant: known, within limits, placed with
    /// what they require.
    fn validate_side_bets(
        &self,
        who: &dyn Fn() -> String,
        main: Amount,
        bets: &[(String, Amount)],
    ) -> Result<SmallVec<[(u8, Amount); 2]>, Rejection> {
        let v = &self.variant;
        let mut side: SmallVec<[(u8, Amount); 2]> = SmallVec::new();
        for (name, amount) in bets {
            let Some(index) = v.side_bet_index(name) else {
                let offered: Vec<&str> = v.side_bets.iter().map(|s| s.name.as_str()).collect();
                return reject(
                    Code::InvalidBet,
                    format!(
                        "{}: this game has no {name:?} bet (side bets: {offered:?})",
                        who()
                    ),
                );
            };
            let limits = v.side_bets[index].limits;
            if v.betting.side_bets_without_main == SideWithoutMain::UpToMain && *amount > main {
                return reject(
                    Code::InvalidBet,
                    format!("{}: {name} bet {amount} is over the main bet {main}", who()),
                );
            }
            if *amount < limits.min || *amount > limits.max {
                return reject(
                    Code::InvalidBet,
                    format!(
                        "{}: {name} bet {amount} is outside the limits {} to {}",
                        who(),
                        limits.min,
                        limits.max
                    ),
                );
            }
            // At most 16 side bets fit a u8 index many times over; the variant file is
            // validated, so this cannot truncate.
            let index = u8::try_from(index).unwrap_or(u8::MAX);
            if side.iter().any(|(i, _)| *i == index) {
                return reject(Code::InvalidBet, format!("{}: {name} bet twice", who()));
            }
            side.push((index, *amount));
        }
        for &(index, _) in &side {
            let rules = &v.side_bets[usize::from(index)];
            if let Some(required) = &rules.requires_bet {
                let placed = side
                    .iter()
                    .any(|(j, _)| v.side_bets[usize::from(*j)].name == *required);
                if !placed {
                    return reject(
                        Code::InvalidBet,
                        format!("{}: a {} bet needs a {required} bet too", who(), rules.name),
                    );
                }
            }
        }
        Ok(side)
    }

    fn on_bonus(
        &mut self,
        seat: SeatId,
        multiplier: u32,
        events: &mut Vec<Event>,
    ) -> Result<(), Rejection> {
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

    // ----- corrections -----------------------------------------------------------------

    /// A card taken out of play: out of the shoe, onto the burn pile, into no hand. Inside a
    /// round it is listed with the round's burned cards.
    fn on_void(&mut self, card: Card, events: &mut Vec<Event>) -> Result<(), Rejection> {
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
    fn on_cancel(&mut self, events: &mut Vec<Event>) -> Result<(), Rejection> {
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
        let mut result = super::settle::settle(self);
        for h in &mut result.hands {
            h.outcome = super::io::Outcome::Cancelled;
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

    // ----- cards -----------------------------------------------------------------------

    fn on_card(&mut self, card: Card, events: &mut Vec<Event>) -> Result<(), Rejection> {
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
            Phase::Dealing(step) => {
                self.deal_initial(step, card, events);
                Ok(())
            }
            Phase::Insurance => {
                self.closing_insurance(Code::CardNotExpected, events, |next, events| {
                    next.on_card(card, events)
                })
            }
            Phase::Playing { seat, hand } => {
                self.take_card(seat, hand, card, events);
                Ok(())
            }
            Phase::Dealer => {
                self.round.dealer.push(card);
                self.shoe.take(card);
                events.push(Event::CardDealt {
                    card,
                    to: Place::Dealer,
                });
                if !self.dealer_must_draw() {
                    self.settle_when_ready(events);
                }
                Ok(())
            }
            Phase::AwaitingBonus => reject(
                Code::CardNotExpected,
                format!("{card}: every card is out; the round waits for bonus-game outcomes"),
            ),
            Phase::Idle | Phase::Deciding | Phase::Drawing => {
                reject(Code::CardNotExpected, format!("{card}: no card is due"))
            }
        }
    }

    fn check_in_shoe(&self, card: Card) -> Result<(), Rejection> {
        self.shoe.check(card).map_err(|e| {
            Rejection::new(
                Code::ImpossibleCard,
                format!(
                    "{card}: {} already out of a {}-deck shoe",
                    e.out, self.variant.shoe.decks
                ),
            )
        })
    }

    /// The place the initial deal's `step` goes to.
    pub(crate) fn deal_target_at(&self, step: u8) -> Option<Place> {
        let seats = &self.round.seats;
        initial_deal_target(seats.len(), step, self.variant.deal.dealer_cards, |i| {
            seats[i].seat
        })
    }

    fn deal_initial(&mut self, step: u8, card: Card, events: &mut Vec<Event>) {
        let n = self.round.seats.len();
        let s = usize::from(step);
        let to = self.deal_target_at(step).unwrap_or(Place::Dealer);
        if s < n {
            self.round.seats[s].hands[0].cards.push(card);
        } else if s == n || s > 2 * n {
            self.round.dealer.push(card);
        } else {
            self.round.seats[s - n - 1].hands[0].cards.push(card);
        }
        self.shoe.take(card);
        events.push(Event::CardDealt { card, to });
        let next = step + 1;
        if self.deal_target_at(next).is_some() {
            self.phase = Phase::Dealing(next);
        } else {
            self.initial_deal_done(events);
        }
    }

    fn initial_deal_done(&mut self, events: &mut Vec<Event>) {
        let v = &*self.variant;
        let up = self.round.dealer[0];
        let ace_up = up.rank == Rank::Ace;
        let offer = v.insurance.offered && ace_up;
        for seat in &mut self.round.seats {
            let hand = &mut seat.hands[0];
            if hand.state == HandState::NoBet {
                continue;
            }
            if total(&hand.cards, v.hand.ace).best == 21 {
                hand.state = HandState::Stood;
            }
            if offer {
                seat.insurance = Insurance::Pending;
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
        } else {
            self.begin_play(events);
        }
    }

    /// A card for the active hand: the second card after a split, the double's card, or a
    /// hit.
    fn take_card(&mut self, seat: u8, hand: u8, card: Card, events: &mut Vec<Event>) {
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
        if sp.auto_play && h.state == HandState::Live && total(&h.cards, v.hand.ace).best > 11 {
            h.state = HandState::Stood;
        }
        if h.state != HandState::Live {
            self.advance(seat, hand, events);
        }
    }

    // ----- insurance and the peek ------------------------------------------------------

    /// Runs `then` after closing insurance, on a copy kept only if both succeed and the
    /// round is still in play after the peek.
    fn closing_insurance(
        &mut self,
        code_if_round_ends: Code,
        events: &mut Vec<Event>,
        then: impl FnOnce(&mut Engine, &mut Vec<Event>) -> Result<(), Rejection>,
    ) -> Result<(), Rejection> {
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

    fn answer_insurance(
        &mut self,
        seat: SeatId,
        action: Action,
        events: &mut Vec<Event>,
    ) -> Result<(), Rejection> {
        let (i, answer) = self.insurance_answer(seat, action)?;
        let sp = &mut self.round.seats[i];
        sp.insurance = answer;
        if answer == Insurance::EvenMoney {
            sp.hands[0].state = HandState::EvenMoney;
        }
        events.push(Event::Decided {
            seat,
            hand: 0,
            action,
        });
        if !self.insurance_open() {
            self.close_insurance(events);
        }
        Ok(())
    }

    /// Whether a seat or a player behind one has yet to answer insurance.
    fn insurance_open(&self) -> bool {
        self.round.seats.iter().any(|s| {
            s.insurance == Insurance::Pending
                || s.behind.iter().any(|b| b.insurance == Insurance::Pending)
        })
    }

    /// A player behind a seat answers insurance, independently of the seated player.
    pub(crate) fn on_behind_decision(
        &mut self,
        player: &str,
        seat: SeatId,
        action: Action,
        events: &mut Vec<Event>,
    ) -> Result<(), Rejection> {
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
        let Some((si, bi)) = found.filter(|_| self.phase != Phase::Idle) else {
            return reject(
                Code::NotYourTurn,
                format!("{player} has no bet behind seat {seat} in this round"),
            );
        };
        let bb = &self.round.seats[si].behind[bi];
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
        self.round.seats[si].behind[bi].insurance = answer;
        events.push(Event::PlayerDecided {
            player: PlayerId::clone(&self.round.seats[si].behind[bi].player),
            seat,
            hand: 0,
            action,
        });
        if !self.insurance_open() {
            self.close_insurance(events);
        }
        Ok(())
    }

    fn close_insurance(&mut self, events: &mut Vec<Event>) {
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
    fn begin_play(&mut self, events: &mut Vec<Event>) {
        if !self.peek(events) {
            self.activate_from(0, 0, events);
        }
    }

    /// The dealer's peek where the variant peeks on this up card. Returns true when the
    /// dealer has a natural and the round has settled (or waits for its bonus games).
    pub(crate) fn peek(&mut self, events: &mut Vec<Event>) -> bool {
        let v = &self.variant;
        let up = self.round.dealer[0];
        if v.deal.dealer_cards == 2 && v.deal.peek_on.iter().any(|u| u.matches(up)) {
            let natural = is_natural_cards(&self.round.dealer, v.hand.natural);
            events.push(Event::DealerPeeked { natural });
            if natural {
                self.settle_when_ready(events);
                return true;
            }
            self.round.peeked_clear = true;
        }
        false
    }

    // ----- decisions -------------------------------------------------------------------

    fn on_decision(
        &mut self,
        seat: SeatId,
        action: Action,
        events: &mut Vec<Event>,
    ) -> Result<(), Rejection> {
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

    fn play_decision(
        &mut self,
        si: u8,
        hi: u8,
        action: Action,
        events: &mut Vec<Event>,
    ) -> Result<(), Rejection> {
        let allowed = self.allowed(si, hi);
        let seat = self.round.seats[usize::from(si)].seat;
        if !allowed.contains(&action) {
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
                if total(&h.cards, self.variant.hand.ace).best > 11 {
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
    /// live and has two cards or more).
    pub(crate) fn allowed(&self, si: u8, hi: u8) -> SmallVec<[Action; 4]> {
        let v = &self.variant;
        let sp = &self.round.seats[usize::from(si)];
        let h = &sp.hands[usize::from(hi)];
        let mut out = SmallVec::new();
        if h.state != HandState::Live || h.cards.len() < 2 {
            return out;
        }
        out.push(Action::Stand);
        if !sp.auto_play {
            out.push(Action::AutoPlay);
        }
        if may_double(v, h) {
            out.push(Action::Double);
        }
        let insured = matches!(sp.insurance, Insurance::Bought(_));
        if may_split(v, h, sp.hands.len(), insured) {
            out.push(Action::Split);
        }
        if may_surrender(v, h, sp.hands.len(), self.round.dealer[0]) {
            out.push(Action::Surrender);
        }
        out
    }

    /// Moves on from a hand that is done: the next hand of the seat, the next seat, or the
    /// dealer.
    fn advance(&mut self, seat: u8, hand: u8, events: &mut Vec<Event>) {
        self.activate_from(usize::from(seat), usize::from(hand) + 1, events);
    }

    fn activate_from(&mut self, seat: usize, hand: usize, events: &mut Vec<Event>) {
        let mut from_hand = hand;
        for (si, sp) in self.round.seats.iter().enumerate().skip(seat) {
            for (hi, h) in sp.hands.iter().enumerate().skip(from_hand) {
                if h.state == HandState::Live {
                    // Indices fit: at most 16 seats and 4 hands (validated variant).
                    self.phase = Phase::Playing {
                        seat: si as u8,
                        hand: hi as u8,
                    };
                    return;
                }
            }
            from_hand = 0;
        }
        if self.dealer_must_draw() {
            self.phase = Phase::Dealer;
        } else {
            self.settle_when_ready(events);
        }
    }

    // ----- the dealer ------------------------------------------------------------------

    pub(crate) fn is_player_natural(&self, h: &Hand) -> bool {
        player_natural(&self.variant, h)
    }

    /// Whether further dealer cards could still make (or rule out) the dealer's natural.
    fn dealer_natural_open(&self) -> bool {
        let d = &self.round.dealer;
        !self.round.peeked_clear
            && d.len() < self.variant.hand.natural.cards()
            && natural_still_possible(d)
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

    // ----- settlement ------------------------------------------------------------------

    pub(crate) fn settle_when_ready(&mut self, events: &mut Vec<Event>) {
        if self
            .round
            .seats
            .iter()
            .any(|s| matches!(s.bonus, Bonus::Pending(_)))
        {
            self.phase = Phase::AwaitingBonus;
            return;
        }
        let result = super::settle::settle(self);
        if self.variant.deal.mode == DealMode::CommonDraw {
            self.remember_wins(&result);
        }
        events.push(Event::RoundSettled(Box::new(result)));
        self.phase = Phase::Idle;
        self.shoe.round_settled();
        if self.shoe.stage() == ShoeStage::Finished {
            events.push(Event::ShoeFinished);
        }
    }
}

// ----- rules shared by the seat-by-seat round and the common draw ------------------------

/// Doubles a hand: another initial stake, and its one card is due.
pub(crate) fn double_hand(h: &mut Hand, main: Amount) {
    h.stake += main;
    h.doubles += 1;
    h.state = HandState::AwaitingDoubleCard;
}

/// Splits `hands[hi]` (two cards): the second card leads a new hand right after it, staked
/// like the original; both wait for their second card (split aces take only that one).
pub(crate) fn split_hand(hands: &mut SmallVec<[Hand; 2]>, hi: usize, main: Amount) {
    let h = &mut hands[hi];
    let aces = h.cards[0].rank == Rank::Ace && h.cards[1].rank == Rank::Ace;
    let second = h.cards.pop().unwrap_or(h.cards[0]);
    h.from_split = true;
    h.split_aces = aces;
    let mut cards = SmallVec::new();
    cards.push(second);
    let new = Hand {
        cards,
        stake: main,
        doubles: 0,
        from_split: true,
        split_aces: aces,
        state: HandState::Live,
        hit_requested: false,
        strikes: 0,
        in_step: false,
    };
    hands.insert(hi + 1, new);
}

/// Where the initial deal's `step` goes, with `n` seats (or boxes) in dealing order: each
/// seat, the dealer's up card, each seat again, then the dealer's face-down card if the
/// variant deals `dealer_cards = 2`.
pub(crate) fn initial_deal_target(
    n: usize,
    step: u8,
    dealer_cards: u8,
    seat_at: impl Fn(usize) -> SeatId,
) -> Option<Place> {
    let step = usize::from(step);
    let hand = |i: usize| Place::Hand {
        seat: seat_at(i),
        hand: 0,
    };
    if step < n {
        Some(hand(step))
    } else if step == n {
        Some(Place::Dealer)
    } else if step <= 2 * n {
        Some(hand(step - n - 1))
    } else if step == 2 * n + 1 && dealer_cards == 2 {
        Some(Place::Dealer)
    } else {
        None
    }
}

/// A player natural: the variant's natural, not after a split or a double.
pub(crate) fn player_natural(v: &Variant, h: &Hand) -> bool {
    !h.from_split && h.doubles == 0 && is_natural_cards(&h.cards, v.hand.natural)
}

/// A Charlie: the variant's Charlie count of cards, not over 21.
pub(crate) fn charlie(v: &Variant, h: &Hand) -> bool {
    let c = usize::from(v.hand.charlie);
    c != 0 && h.cards.len() >= c && !total(&h.cards, v.hand.ace).is_bust()
}

/// Whether the hand's result still depends on cards the dealer has yet to draw.
pub(crate) fn hand_depends_on_dealer(v: &Variant, h: &Hand, natural_open: bool) -> bool {
    match h.state {
        HandState::Bust | HandState::Surrendered | HandState::EvenMoney | HandState::NoBet => false,
        _ if player_natural(v, h) => natural_open,
        _ if charlie(v, h) => !v.hand.charlie_beats_dealer_natural && natural_open,
        _ => true,
    }
}

/// Whether a side bet among `side` looks at the dealer's second card.
pub(crate) fn side_bets_need_second_card(v: &Variant, side: &[(u8, Amount)]) -> bool {
    side.iter()
        .any(|(i, _)| v.side_bets[usize::from(*i)].kind.needs_dealer_second_card())
}

/// Whether the dealer's rules let the dealer draw to these cards.
pub(crate) fn dealer_rules_draw(v: &Variant, dealer: &[Card]) -> bool {
    if v.dealer.max_cards != 0 && dealer.len() >= usize::from(v.dealer.max_cards) {
        return false;
    }
    let t: Total = total(dealer, v.hand.ace);
    t.best < 17 || (t.best == 17 && t.soft && v.dealer.soft_17 == Soft17::Hit)
}

/// Whether the hand may double now.
pub(crate) fn may_double(v: &Variant, h: &Hand) -> bool {
    let t = total(&h.cards, v.hand.ace);
    let two = h.cards.len() == 2;
    let shape = match v.double.on {
        _ if h.from_split && v.double.after_split_any_total => two,
        DoubleOn::Never => false,
        DoubleOn::AnyTwo => two,
        DoubleOn::NineToEleven => two && (9..=11).contains(&t.best),
        DoubleOn::TenOrEleven => two && (10..=11).contains(&t.best),
        DoubleOn::AnyCards => true,
    };
    let count_ok = v.double.max_per_hand == 0 || h.doubles < v.double.max_per_hand;
    shape && count_ok && (!h.from_split || v.double.after_split) && !h.split_aces
}

/// Whether the hand may split, its seat (or box) holding `hands` hands.
pub(crate) fn may_split(v: &Variant, h: &Hand, hands: usize, insured: bool) -> bool {
    if h.cards.len() != 2 {
        return false;
    }
    let (a, b) = (h.cards[0], h.cards[1]);
    let pair = match v.split.pairs {
        SplitPairs::SameValue => a.rank.points() == b.rank.points(),
        SplitPairs::SameRank => a.rank == b.rank,
        SplitPairs::AnyTwo => true,
    };
    pair && hands < usize::from(v.split.max_hands) && !(insured && v.split.not_after_insurance)
}

/// Whether the hand may surrender against `up`, its seat (or box) holding `hands` hands.
pub(crate) fn may_surrender(v: &Variant, h: &Hand, hands: usize, up: Card) -> bool {
    let when = match v.surrender.when {
        SurrenderWhen::Never => false,
        SurrenderWhen::FirstTwoCards => h.cards.len() == 2 && hands == 1 && h.doubles == 0,
        SurrenderWhen::AnyTime => true,
    };
    when && !v.surrender.not_against.iter().any(|u| u.matches(up))
}

/// The state a hand is in after taking a card (`was` is its state before).
pub(crate) fn after_card(v: &Variant, h: &Hand, was: HandState) -> HandState {
    let t = total(&h.cards, v.hand.ace);
    let n = h.cards.len();
    if t.is_bust() {
        HandState::Bust
    } else if t.best == 21
        || (v.hand.charlie != 0 && n >= usize::from(v.hand.charlie))
        || (v.hand.max_cards != 0 && n >= usize::from(v.hand.max_cards))
        || (h.split_aces && n >= 2)
        || (was == HandState::AwaitingDoubleCard && v.double.stand_after_card)
    {
        HandState::Stood
    } else {
        HandState::Live
    }
}
