//! The engine's state: the `Engine` itself and the round it holds — seats, hands,
//! insurance, bonus games, bets behind, and the common draw's players. Both kinds of round
//! (`round.rs` seat by seat, `common.rs` the common draw), the hand rules (`rules.rs`) and
//! settlement (`settle.rs`) stand on these types; this module imports none of them.

use super::hand::Cards;
use super::io::{Code, PlayerId, Rejection, SeatId};
use super::shoe::Shoe;
use super::sidebets::HardSix;
use super::variant::Variant;
use crate::cards::Card;
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
    pub cards: Cards,
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

/// A seat's hands: at most four (a validated variant's `split.max_hands`), held inline
/// so that reaching the hand in play is an index, not a check of where the hands live.
pub(crate) type Hands = arrayvec::ArrayVec<Hand, 4>;

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
    /// At most four (`split.max_hands`, validated), held inline.
    pub hands: Hands,
    pub insurance: Insurance,
    pub bonus: Bonus,
    /// The seated player, where known.
    pub player: Option<String>,
    /// Players betting behind this seat.
    pub behind: Vec<BehindPlay>,
    /// The player is gone: the engine finishes the seat's hands (hit to above 11, stand).
    pub auto_play: bool,
    /// Each decision's timer, ms (0: untimed; see `SeatBets::timer_ms`).
    pub timer_ms: u64,
    /// The decision ran out and the seat is in its resume window (`timeouts.resume_ms`).
    pub resuming: bool,
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
    /// Insurance timer, ms (0: untimed; see `BehindBet::timer_ms`).
    pub timer_ms: u64,
    /// The seated hands whose double this player could not pay (`Input::DoubleShort`):
    /// for them the double's card was a hit at the original stake.
    pub unfollowed: SmallVec<[u8; 2]>,
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
    pub dealer: Cards,
    /// The dealer peeked and has no natural.
    pub peeked_clear: bool,
    /// The round was cancelled (it cannot be cancelled twice).
    pub cancelled: bool,
    /// The table's time as it opened (`timeouts.round_max_ms` counts from here).
    pub opened_ms: u64,
    /// Set as the dealer's turn begins: some hand's result depends on the dealer's total
    /// whatever the dealer draws, so the dealer draws as long as the dealer's rules allow
    /// (the check after each dealer card then reads only the dealer's cards).
    pub dealer_plays_for_hands: bool,
}

/// The rules engine for one table: pure, deterministic, no I/O, no clock.
#[derive(Debug, Clone)]
pub struct Engine {
    pub(crate) variant: Arc<Variant>,
    pub(crate) shoe: Shoe,
    pub(crate) round: Round,
    pub(crate) phase: Phase,
    /// The common draw's players (empty in a seat-by-seat game).
    pub(crate) common: CommonRound,
    /// A reusable buffer for the next round's seats (not part of the state).
    pub(crate) spare_seats: Vec<SeatPlay>,
    /// A settled round's record handed back by `recycle`, refilled by the next settlement
    /// (not part of the state).
    pub(crate) spare_result: SpareResult,
    /// The bets that opened the current (or last) round, while its seats were built from
    /// them (not part of the state).
    pub(crate) last_bets: LastBets,
    /// The up cards the dealer peeks on, by rank number (bit `n` for rank `n`): the
    /// variant's `deal.peek_on` read once (not part of the state).
    pub(crate) peek_ranks: u16,
    /// Whether a settlement produces its `RoundSettled` record (a setting of the caller,
    /// not part of the state; see `set_settlement_records`).
    pub(crate) settlement_records: bool,
}

/// The bets the round's seats were validated and built from: the same bets again (the
/// simulator's every round) reopen those seats in place instead of validating and building
/// them anew, and `Engine::repeat_bets_to` repeats them. Not part of the state (equality
/// ignores it), but a clone keeps it: the copy an implicit close of insurance works on
/// replaces the engine, and repeating the bets after that round must still find them.
#[derive(Debug, Default, Clone)]
pub(crate) struct LastBets(pub Vec<super::io::SeatBets>);

/// A record to settle the next round into. A clone starts without one: it is a buffer,
/// not state.
#[derive(Debug, Default)]
pub(crate) struct SpareResult(
    pub Option<Box<super::io::RoundResult>>,
    /// Hand records a shorter round left over, for a longer one.
    pub Vec<super::io::HandResult>,
);

impl Clone for SpareResult {
    fn clone(&self) -> SpareResult {
        SpareResult::default()
    }
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

/// One player's part of a common-draw round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlayerPlay {
    pub id: PlayerId,
    /// The player's boxes, in box order; each is a seat's worth of bets and hands.
    pub boxes: SmallVec<[SeatPlay; 1]>,
}

/// The common draw's round state (empty in a seat-by-seat game).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct CommonRound {
    /// Players by id (sorted, for lookup).
    pub players: Vec<PlayerPlay>,
    /// Boxes dealt this round, in order, and their two initial cards.
    pub boxes: SmallVec<[(SeatId, SmallVec<[Card; 2]>); 3]>,
    /// Cards no hand asked for.
    pub burned: Vec<Card>,
    /// The insurance question has run out once and been asked again
    /// (`timers.insurance_timeout = "two_strike"`).
    pub insurance_struck: bool,
    /// The table's time as of the last tick (both kinds of round keep their clock here).
    pub now: u64,
    /// When the open wait times out: a common draw's step or insurance, a timed seat's
    /// decision, insurance question or resume window.
    pub deadline: u64,
    /// How many timed waits have opened (a step, insurance, a timed seat's decision or
    /// resume window): the table ticks just before an input that opens one.
    pub armed: u64,
    /// Hands still owing a decision in the open step (kept so that a decision costs O(log n)
    /// with thousands of players, not a scan).
    pub undecided: usize,
    /// What each player box that won last round returned on its main bet (for Let it play).
    pub last_wins: std::collections::BTreeMap<(PlayerId, SeatId), Amount>,
}

/// A rejection with this code and message (as a `Rejection`, or boxed for a `Handled`).
pub(crate) fn reject<T, E: From<Rejection>>(
    code: Code,
    message: impl Into<String>,
) -> Result<T, E> {
    Err(Rejection::new(code, message).into())
}

/// What an input's handler returns: the rejection boxed, so that the accepted case — every
/// input but a mistake — passes back one register, not the rejection's 32 bytes (the
/// simulator applies millions of inputs a second).
pub(crate) type Handled = Result<(), Box<Rejection>>;

impl Engine {
    /// An engine for `variant`, starting on a freshly shuffled, already burned shoe.
    pub fn new(variant: Arc<Variant>) -> Engine {
        let peek_ranks = crate::cards::Rank::ALL
            .iter()
            .filter(|r| {
                let up = Card::new(**r, crate::cards::Suit::Spades);
                variant.deal.dealer_cards == 2 && variant.deal.peek_on.iter().any(|u| u.matches(up))
            })
            .fold(0u16, |bits, r| bits | 1 << r.number());
        Engine {
            peek_ranks,
            shoe: Shoe::ready(&variant.shoe),
            variant,
            round: Round::default(),
            phase: Phase::Idle,
            common: Default::default(),
            spare_seats: Vec::new(),
            spare_result: SpareResult::default(),
            last_bets: LastBets::default(),
            settlement_records: true,
        }
    }

    /// Whether a seat-by-seat round's settlement produces its `RoundSettled` record (on
    /// by default). With it off the round settles exactly as before — same state, same
    /// other events — and the caller reads the settlement with `settle_with` once the round
    /// is over: the simulator, which needs each bet's return, not a record per round.
    /// A common draw always records (its "Let it play" reads the record).
    pub fn set_settlement_records(&mut self, on: bool) {
        self.settlement_records = on;
    }

    /// Settles the last round (the one in play, if any: its outcomes so far) into `sink`,
    /// in the order of its `RoundSettled` record, by the code that writes the record.
    pub fn settle_with(&self, sink: &mut impl super::settle::SettlementSink) {
        super::settle::settle_with(self, sink);
    }

    /// Whether a round is in progress (bets accepted, not yet settled).
    pub fn round_in_progress(&self) -> bool {
        self.phase != Phase::Idle
    }

    /// Hands back a settled round's record (from `Event::RoundSettled`) for the next
    /// settlement to fill: a caller that plays many rounds (the simulator) then settles
    /// them without allocating.
    pub fn recycle(&mut self, result: Box<super::io::RoundResult>) {
        self.spare_result.0 = Some(result);
    }

    /// The rules this engine plays.
    pub fn variant(&self) -> &Variant {
        &self.variant
    }

    /// The shoe's state.
    pub fn shoe(&self) -> &Shoe {
        &self.shoe
    }
}
