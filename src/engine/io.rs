//! What goes into the engine and what comes out: inputs, events, rejections, results.

use crate::cards::Card;
use crate::money::Amount;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// A player's id, shared cheaply between the round's state, its events and its results.
pub type PlayerId = Arc<str>;

/// A seat number, from 1.
pub type SeatId = u8;

/// One seat's bets for a round.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SeatBets {
    /// The seat.
    pub seat: SeatId,
    /// The main bet.
    pub main: Amount,
    /// Side bets by the variant's name for them (`"21+3"`, `"pair"`, `"in_for_6"`).
    pub side: Vec<(String, Amount)>,
    /// The seated player, where known (one player may hold up to two seats, with the same
    /// main bet on both; a seated player cannot play behind their own seat).
    #[serde(default)]
    pub player: Option<String>,
    /// Bets placed behind this seat by players who are not seated at it.
    #[serde(default)]
    pub behind: Vec<BehindBet>,
    /// Common draw: "Let it play" — the main bet is everything this box returned on its main
    /// bet last round (it must have won); `main` is then ignored.
    #[serde(default)]
    pub let_it_play: bool,
    /// The seat is timed (a remote player holds it): each decision and insurance question
    /// of its hands waits this long, ms, on the tick clock, then the variant's `[timeouts]`
    /// rule plays it. 0 (the default): the seat waits for its decisions however long.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub timer_ms: u64,
}

fn is_zero(ms: &u64) -> bool {
    *ms == 0
}

/// A bet behind a seated player: it follows the seated hand's result.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BehindBet {
    /// The player betting behind.
    pub player: String,
    /// The main bet.
    pub main: Amount,
    /// Side bets on the seat's cards (e.g. Deluxe's pair).
    pub side: Vec<(String, Amount)>,
    /// When the seated player doubles, double too (default: the card counts as a hit).
    #[serde(default)]
    pub follow_double: bool,
    /// When the seated player splits, bet on the second hand too (default: follow only the
    /// first hand).
    #[serde(default)]
    pub follow_split: bool,
    /// The player behind is timed (a remote player): their insurance answer waits this
    /// long, ms, on the tick clock, like a timed seat's (`SeatBets::timer_ms`). 0: untimed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub timer_ms: u64,
}

/// Whether a bet behind with these instructions plays on the seated player's hand `hand`
/// (0 the first; after a split, the second hand only with `follow_split`) and, when
/// `double`, follows that hand's double (only with `follow_double` too). The one statement
/// of the follow rules: the engine's settlement and the live service's debits both ask it.
pub fn behind_follows(follow_double: bool, follow_split: bool, hand: u8, double: bool) -> bool {
    (hand == 0 || follow_split) && (!double || follow_double)
}

impl BehindBet {
    /// Whether this bet follows the seated hand `hand` (its double, when `double`):
    /// [`behind_follows`].
    pub fn follows(&self, hand: u8, double: bool) -> bool {
        behind_follows(self.follow_double, self.follow_split, hand, double)
    }
}

/// One player's bets in a common draw, box by box.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerBets {
    /// The player's id.
    pub player: String,
    /// Bets per box (`seat` is the box number).
    pub boxes: Vec<SeatBets>,
}

/// A player decision for the active hand (or an insurance answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Another card (a common draw's explicit request; at a seat a card is the hit).
    Hit,
    /// No more cards.
    Stand,
    /// Double the stake, take one card.
    Double,
    /// Split a pair into two hands.
    Split,
    /// Give up the hand for half the stake.
    Surrender,
    /// Buy insurance.
    Insurance,
    /// Decline insurance.
    NoInsurance,
    /// Take even money on a natural.
    EvenMoney,
    /// The player is gone: finish the seat's hands automatically (hit while the best total is
    /// 11 or less, then stand).
    AutoPlay,
}

impl Action {
    /// Every action, in a stable order.
    pub const ALL: [Action; 8] = [
        Action::AutoPlay,
        Action::Stand,
        Action::Double,
        Action::Split,
        Action::Surrender,
        Action::Insurance,
        Action::NoInsurance,
        Action::EvenMoney,
    ];

    /// The wire name (`hit`, `stand`, `double`, `split`, `surrender`, `insurance`,
    /// `no_insurance`, `even_money`).
    pub fn name(self) -> &'static str {
        match self {
            Action::Hit => "hit",
            Action::Stand => "stand",
            Action::Double => "double",
            Action::Split => "split",
            Action::Surrender => "surrender",
            Action::Insurance => "insurance",
            Action::NoInsurance => "no_insurance",
            Action::EvenMoney => "even_money",
            Action::AutoPlay => "auto_play",
        }
    }

    /// Parses a seat decision's wire name (a hit at a seat is a card, never a decision).
    pub fn from_name(name: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.name() == name)
    }

    /// Parses a common-draw player decision's wire name (`hit` included).
    pub fn from_player_name(name: &str) -> Option<Action> {
        if name == "hit" {
            Some(Action::Hit)
        } else {
            Action::from_name(name)
        }
    }

    /// Whether this is an answer to the insurance offer.
    pub fn is_insurance_answer(self) -> bool {
        matches!(
            self,
            Action::Insurance | Action::NoInsurance | Action::EvenMoney
        )
    }
}

/// One input to the engine, in the order the table receives them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Input {
    /// Opens a round with these bets and closes betting.
    Bets(Vec<SeatBets>),
    /// A card out of the shoe.
    Card(Card),
    /// The cut card out of the shoe.
    CutCard,
    /// A decision for a seat's active hand, or its insurance answer.
    Decision {
        /// The seat deciding.
        seat: SeatId,
        /// What it decided.
        action: Action,
    },
    /// The seat doubles its active hand, and these players behind it, who follow its
    /// doubles, cannot pay for this one: for them the double's card is a hit and their
    /// stake stays as it was (Deluxe: "with insufficient coin balance, the third card will
    /// be treated as a hit for the play behind player, and the original coin value remains
    /// unchanged"). The balance rules send it in place of a `double` decision when a
    /// follower is short at that moment, or their game session ended (no money moves for
    /// them by itself: `play::presence`); the engine has no balances.
    DoubleShort {
        /// The seat doubling.
        seat: SeatId,
        /// The followers who cannot pay (each behind `seat`, following doubles).
        short: Vec<String>,
    },
    /// The seat splits its active hand, and these players behind it, who follow its
    /// splits, cannot pay for this one: they play the first hand only (the sheet's own
    /// fallback for a follow-split "with insufficient coin balance", applied when the wallet
    /// is short at the split rather than at the bet — `play::funds::follows`). The balance
    /// rules send it in place of a `split` decision; the engine has no balances. A bet
    /// behind follows one split (a variant with play behind splits once: `split.max_hands`
    /// is 2, checked when it loads).
    SplitShort {
        /// The seat splitting.
        seat: SeatId,
        /// The followers who cannot pay (each behind `seat`, following splits).
        short: Vec<String>,
    },
    /// The multiplier a bonus game (IN FOR 6's hard six) drew for a seat.
    Bonus {
        /// The seat.
        seat: SeatId,
        /// The multiplier, stake included.
        multiplier: u32,
    },
    /// A new shoe begins; the burn procedure follows.
    Shuffle,
    /// Common draw: opens a round with every player's bets and closes betting.
    PlayerBets(Vec<PlayerBets>),
    /// Common draw: a player's decision for the current hand on a box.
    PlayerDecision {
        /// The player.
        player: String,
        /// The box.
        seat: SeatId,
        /// The decision (`hit` included).
        action: Action,
    },
    /// The time, in milliseconds on the table's clock. Decision timers run on it: a wait
    /// that opens (a timed decision, an insurance question, a common draw's step) ends at
    /// the last tick's time plus its timer, and a tick at or past that ends it.
    Tick {
        /// Milliseconds.
        now_ms: u64,
    },
    /// A card taken out of play (misread, exposed, dealt by mistake): it is out of the shoe
    /// and goes to the burn pile, to no hand. A supervisor's correction, never the shoe's.
    Void(Card),
    /// The round is cancelled: every bet comes back, stake for stake (doubles, splits,
    /// insurance and side bets included). Also accepted once on the last settled round
    /// before the next opens (a provisional result overturned); its result replaces the
    /// settlement.
    CancelRound,
}

/// Where a card went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Place {
    /// A player's hand: seat and hand index (0 unless split).
    Hand {
        /// The seat.
        seat: SeatId,
        /// The hand index within the seat.
        hand: u8,
    },
    /// The dealer's hand.
    Dealer,
    /// The burn pile.
    Burn,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Hand { seat, hand } => write!(f, "seat {seat}, hand {}", hand + 1),
            Place::Dealer => f.write_str("the dealer"),
            Place::Burn => f.write_str("the burn pile"),
        }
    }
}

/// Where the engine puts the events an input causes: a `Vec<Event>` for the table, which
/// logs and publishes them, or [`NoEvents`] for a caller that reads only the engine's state
/// (the simulator: building and dropping each event is a sixth of a round's work there).
pub trait EventSink {
    /// Appends one event.
    fn push(&mut self, event: Event);
    /// How many events it holds (a rejected input truncates back to this mark).
    fn len(&self) -> usize;
    /// Whether it holds none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Drops the events after the first `len`.
    fn truncate(&mut self, len: usize);
    /// Appends the event `make` builds, where building it costs more than the event (a
    /// sink that keeps nothing never calls it).
    #[inline]
    fn push_with(&mut self, make: impl FnOnce() -> Event) {
        self.push(make());
    }
}

impl EventSink for Vec<Event> {
    #[inline]
    fn push(&mut self, event: Event) {
        Vec::push(self, event);
    }
    #[inline]
    fn len(&self) -> usize {
        Vec::len(self)
    }
    #[inline]
    fn truncate(&mut self, len: usize) {
        Vec::truncate(self, len);
    }
}

/// An event sink that keeps nothing: the engine's state changes exactly as with a
/// `Vec<Event>`, and no event is built.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoEvents;

impl EventSink for NoEvents {
    #[inline]
    fn push(&mut self, _event: Event) {}
    #[inline]
    fn push_with(&mut self, _make: impl FnOnce() -> Event) {}
    #[inline]
    fn len(&self) -> usize {
        0
    }
    #[inline]
    fn truncate(&mut self, _len: usize) {}
}

/// What happened as a result of an accepted input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    /// A new shoe started.
    ShoeShuffled {
        /// Its number.
        shoe: u32,
    },
    /// A card went to the burn pile.
    Burned {
        /// The card.
        card: Card,
    },
    /// The burn procedure is complete; bets may open.
    ShoeReady,
    /// The cut card came out: this is the shoe's last round.
    CutCard,
    /// A round opened with its bets.
    RoundOpened {
        /// Its number.
        round: u64,
    },
    /// A card was dealt to a hand or the dealer.
    CardDealt {
        /// The card.
        card: Card,
        /// Where it went.
        to: Place,
    },
    /// A seat decided (insurance answers included).
    Decided {
        /// The seat.
        seat: SeatId,
        /// Its hand.
        hand: u8,
        /// The decision.
        action: Action,
    },
    /// Insurance closed (unanswered seats declined).
    InsuranceClosed,
    /// Common draw: a card went to every hand that asked for one.
    CardDrawn {
        /// The card.
        card: Card,
        /// How many hands took it.
        hands: usize,
    },
    /// Common draw: a player decided (or the timeout decided for them).
    PlayerDecided {
        /// The player.
        player: PlayerId,
        /// The box.
        seat: SeatId,
        /// The hand within the player's box.
        hand: u8,
        /// The decision.
        action: Action,
    },
    /// The decision timer ran out (a common draw's step, or a timed seat's decision or
    /// insurance question); the automatic decisions follow as `Decided` / `PlayerDecided`.
    DecisionTimeout,
    /// A timed seat's decision ran out and the variant has a resume window
    /// (`timeouts.resume_ms`): the hand waits for its player until `until_ms`, then
    /// `timeouts.after_resume` plays it.
    ResumeWindow {
        /// The seat.
        seat: SeatId,
        /// Its hand.
        hand: u8,
        /// When the window ends, on the tick clock.
        until_ms: u64,
    },
    /// The dealer looked at the face-down card.
    DealerPeeked {
        /// Whether it makes a natural.
        natural: bool,
    },
    /// A bonus game's multiplier was recorded.
    BonusDrawn {
        /// The seat.
        seat: SeatId,
        /// The multiplier.
        multiplier: u32,
    },
    /// The round is settled.
    RoundSettled(Box<RoundResult>),
    /// The shoe is finished (the cut card's round settled): shuffle next.
    ShoeFinished,
}

/// The stable machine-readable reason for a rejection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Code {
    /// A card arrived where no card is due.
    CardNotExpected,
    /// More copies of the card than the shoe holds.
    ImpossibleCard,
    /// The decision is not allowed for that hand now.
    ActionNotAllowed,
    /// Another seat is to act.
    NotYourTurn,
    /// Bets before the burn procedure is complete.
    BurnIncomplete,
    /// The shoe is finished; a shuffle must come first.
    ShoeFinished,
    /// A bet that the table does not take.
    InvalidBet,
}

impl Code {
    /// The wire code.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::CardNotExpected => "card_not_expected",
            Code::ImpossibleCard => "impossible_card",
            Code::ActionNotAllowed => "action_not_allowed",
            Code::NotYourTurn => "not_your_turn",
            Code::BurnIncomplete => "burn_incomplete",
            Code::ShoeFinished => "shoe_finished",
            Code::InvalidBet => "invalid_bet",
        }
    }
}

/// An input the rules do not allow. The engine's state is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("{}: {message}", code.as_str())]
pub struct Rejection {
    /// Why, as a stable code.
    pub code: Code,
    /// Why, for people.
    pub message: String,
}

impl Rejection {
    /// A rejection with this code and message.
    pub fn new(code: Code, message: impl Into<String>) -> Rejection {
        Rejection {
            code,
            message: message.into(),
        }
    }
}

/// How a hand ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// A blackjack paid at the natural's odds.
    Blackjack,
    /// Beat the dealer.
    Win,
    /// Won as a Charlie.
    Charlie,
    /// A Caribbean 21 paid at the natural's odds.
    Caribbean21,
    /// Stake returned.
    Push,
    /// Lost to the dealer.
    Lose,
    /// Went over 21.
    Bust,
    /// Surrendered.
    Surrender,
    /// Took even money.
    EvenMoney,
    /// The round was cancelled: the stake came back.
    Cancelled,
}

impl Outcome {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Blackjack => "blackjack",
            Outcome::Win => "win",
            Outcome::Charlie => "charlie",
            Outcome::Caribbean21 => "caribbean21",
            Outcome::Push => "push",
            Outcome::Lose => "lose",
            Outcome::Bust => "bust",
            Outcome::Surrender => "surrender",
            Outcome::EvenMoney => "even_money",
            Outcome::Cancelled => "cancelled",
        }
    }
}

/// A settled round.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RoundResult {
    /// The round's number.
    pub round: u64,
    /// The shoe it was dealt from.
    pub shoe: u32,
    /// The dealer's cards in dealing order.
    pub dealer_cards: Vec<Card>,
    /// The dealer's best total.
    pub dealer_total: u8,
    /// Whether the dealer had the variant's natural.
    pub dealer_natural: bool,
    /// Every hand, in dealing order.
    pub hands: Vec<HandResult>,
    /// Every bet placed, per seat and kind.
    pub bets: Vec<BetResult>,
    /// Cards burned during the round (a common draw's cards that no hand asked for, cards
    /// voided by a supervisor).
    pub burned: Vec<Card>,
    /// The round was cancelled: every bet's stake came back.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
}

/// One settled hand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandResult {
    /// The player, in a common draw.
    pub player: Option<PlayerId>,
    /// The seat (box).
    pub seat: SeatId,
    /// The hand index within the seat.
    pub hand: u8,
    /// Its cards in dealing order.
    pub cards: Vec<Card>,
    /// Its best total.
    pub total: u8,
    /// Whether it doubled.
    pub doubled: bool,
    /// How it ended.
    pub outcome: Outcome,
    /// Everything staked on it (initial, doubles).
    pub staked: Amount,
    /// Everything paid back on it.
    pub returned: Amount,
}

/// The kind of a bet.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BetKind {
    /// The main bet, with the stakes added by doubles and splits.
    Main,
    /// Insurance.
    Insurance,
    /// A side bet by its name.
    Side(String),
}

impl BetKind {
    /// The wire name (`main`, `insurance`, or the side bet's name).
    pub fn name(&self) -> &str {
        match self {
            BetKind::Main => "main",
            BetKind::Insurance => "insurance",
            BetKind::Side(name) => name,
        }
    }
}

/// One settled bet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BetResult {
    /// The player: in a common draw, or betting behind a seat.
    pub player: Option<PlayerId>,
    /// The seat (box).
    pub seat: SeatId,
    /// What kind of bet.
    pub kind: BetKind,
    /// Everything staked on it.
    pub staked: Amount,
    /// Everything paid back on it: stake plus winnings, 0 when lost.
    pub returned: Amount,
}
