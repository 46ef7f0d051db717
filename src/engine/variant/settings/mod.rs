//! The settings themselves: one struct per section of a variant file, one field per rule,
//! each field's doc comment naming the rule it is.

use crate::cards::Card;
use crate::money::{Amount, Pay};
use serde::{Deserialize, Serialize};

/// One game's complete rule set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    /// Human-readable name of the game.
    pub name: String,
    /// Shoe composition and lifecycle.
    pub shoe: ShoeRules,
    /// Seats and the order of the initial deal.
    pub deal: DealRules,
    /// How the dealer completes the hand.
    pub dealer: DealerRules,
    /// Card values, naturals, Charlie and hand limits.
    pub hand: HandRules,
    /// Doubling down.
    pub double: DoubleRules,
    /// Splitting.
    pub split: SplitRules,
    /// Surrender.
    pub surrender: SurrenderRules,
    /// Insurance and even money.
    pub insurance: InsuranceRules,
    /// Comparing hands and paying.
    pub settlement: SettlementRules,
    /// Main bet limits.
    pub limits: Limits,
    /// The side bets this game offers, by the name players bet them under.
    #[serde(default)]
    pub side_bets: Vec<SideBetRules>,
    /// The decision timer (required with `deal.mode = "common_draw"`).
    #[serde(default)]
    pub timers: Option<TimerRules>,
    /// What a timed seat's decision timer does when it runs out (seat-by-seat games; a
    /// seat is timed when its bets carry `timer_ms`, i.e. a remote player holds it).
    #[serde(default)]
    pub timeouts: TimeoutRules,
    /// Bet rules beyond limits.
    #[serde(default)]
    pub betting: BettingRules,
    /// What a remote player's short balance does to a decision (applied by the service in
    /// front of the engine; the engine never sees balances).
    #[serde(default)]
    pub funds: FundsRules,
}

/// `[funds]`: what a remote player's short balance does to a bet or a decision. The
/// service in front of the engine applies these (`play::rules`, `play::funds`); the engine
/// never sees a balance. Every default refuses what the balance cannot cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FundsRules {
    /// A double: refused (`"refuse"`, the default) or played as a hit (`"hit"`, Deluxe:
    /// "if the balance is not enough, a double becomes a hit").
    pub short_double: ShortDouble,
    /// A split: refused, or a hit on 11 or less and else a stand (`"hit_if_11_or_less"`).
    pub short_split: ShortSplit,
    /// How an ace counts in the score a short split is judged by (`short_split`):
    /// `"eleven"` (the default: unless that busts, as Deluxe's note on finishing a hand
    /// says, "Aces will count as 11 unless it would result in the hand going bust" — a
    /// short A-A is 12 and stands) or `"one"` (A-A is 2 and is hit).
    pub short_split_ace: ShortSplitAce,
    /// A bet behind whose follow-double / follow-split the balance cannot cover: refused
    /// whole, or the follows fall back (`"fall_back"`, Deluxe: the double's card is a hit
    /// for the bet behind, the split is followed on its first hand only).
    pub short_follow: ShortFollow,
    /// A player holding two seats whose seat plays differ: placed as they are (the engine
    /// wants them equal), or mirrored to the other seat when the balance allows and else
    /// split evenly between the seats (`"mirror_or_split"`, Deluxe).
    pub second_seat: SecondSeat,
    /// What "evenly split" shares when the balance cannot mirror a second seat's extra
    /// plays: `"extra"` (the default: each seat carries the common play plus half the
    /// extra) or `"balance"` (each seat carries half the balance, up to the higher play).
    /// Never below the lower play placed; an odd unit stays in the balance either way, as
    /// "each seat must have the same coin value placed".
    pub second_seat_split: SecondSeatSplit,
    /// Ultimate: "your bet from the previous round within the same game session is
    /// automatically rebet on return to the betting stage". When on, each betting window
    /// the service places a seated remote player's previous seat bet (main and side bets)
    /// again for them, unless they bet first; they may change or withdraw it in the window.
    pub auto_rebet: bool,
    /// The automatic re-bet of the previous round's bets (`{"bets": "rebet"}`) that the
    /// balance cannot cover: refused, or clipped to the maximum available
    /// (`"maximum_available"`, Ultimate).
    pub short_rebet: ShortRebet,
    /// How a short re-bet's maximum available divides between its lines: `"main_first"`
    /// (the default: the main bet takes what it can, the specials what is left) or
    /// `"proportional"` (every line, main and specials, scaled down by the same factor).
    pub rebet_split: RebetSplit,
    /// A re-bet whose main bet would fall below the table minimum is not placed; then:
    /// `"retry"` (the default: the seat sits the round out and the next betting window
    /// tries the same re-bet again) or `"stop"` (the automatic re-bet of that seat ends
    /// until its player bets again).
    pub rebet_below_minimum: RebetBelowMinimum,
    /// Special (side) bets the balance cannot cover once the main bets are placed: the
    /// player's bets are refused whole, or each special that does not fit is dropped
    /// (`"drop"`, Multi-hand: "only when the player has enough credits").
    pub short_specials: ShortSpecials,
    /// The step, in minor units, of amounts the service makes up itself (an even split of a
    /// seat play, a clipped re-bet): they are rounded down to a multiple of it; what is left
    /// over stays in the balance. At least 1.
    pub bet_unit: Amount,
}

impl Default for FundsRules {
    fn default() -> FundsRules {
        FundsRules {
            short_double: ShortDouble::default(),
            short_split: ShortSplit::default(),
            short_split_ace: ShortSplitAce::default(),
            short_follow: ShortFollow::default(),
            second_seat: SecondSeat::default(),
            second_seat_split: SecondSeatSplit::default(),
            auto_rebet: false,
            short_rebet: ShortRebet::default(),
            rebet_split: RebetSplit::default(),
            rebet_below_minimum: RebetBelowMinimum::default(),
            short_specials: ShortSpecials::default(),
            bet_unit: 1,
        }
    }
}

/// `funds.short_double`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShortDouble {
    /// The double is refused (`insufficient_funds`).
    #[default]
    Refuse,
    /// The double is played as a hit.
    Hit,
}

/// `funds.short_split`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShortSplit {
    /// The split is refused (`insufficient_funds`).
    #[default]
    Refuse,
    /// A hit when the hand totals 11 or less, else a stand.
    #[serde(rename = "hit_if_11_or_less")]
    HitIf11OrLess,
}

/// `funds.short_split_ace`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShortSplitAce {
    /// An ace counts 11 unless that busts (A-A: 12).
    #[default]
    Eleven,
    /// An ace counts 1 (A-A: 2).
    One,
}

/// `funds.short_follow`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShortFollow {
    /// The bet behind is refused whole (`insufficient_funds`).
    #[default]
    Refuse,
    /// The follows the balance cannot cover are turned off; the bet behind stands.
    FallBack,
}

/// `funds.second_seat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SecondSeat {
    /// The seat plays go to the engine as placed.
    #[default]
    AsPlaced,
    /// Extra plays on one seat are mirrored on the other, or split evenly when short.
    MirrorOrSplit,
}

/// `funds.second_seat_split`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SecondSeatSplit {
    /// The common play plus half the extra, on each seat.
    #[default]
    Extra,
    /// Half the balance on each seat, up to the higher play.
    Balance,
}

/// `funds.short_rebet`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShortRebet {
    /// The seat's re-bet is refused (`insufficient_funds`).
    #[default]
    Refuse,
    /// The main bet is re-bet up to the balance (rounded down to `bet_unit`), then the
    /// specials with what is left; below the table minimum nothing is re-bet.
    MaximumAvailable,
}

/// `funds.rebet_split`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RebetSplit {
    /// The main bet first, up to the balance; the specials from what is left.
    #[default]
    MainFirst,
    /// Every line scaled by the balance over the re-bet's total, rounded down.
    Proportional,
}

/// `funds.rebet_below_minimum`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RebetBelowMinimum {
    /// The seat sits the round out; the next window tries the re-bet again.
    #[default]
    Retry,
    /// The seat's automatic re-bet ends until its player bets again.
    Stop,
}

/// `funds.short_specials`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShortSpecials {
    /// The player's bets are refused whole (`insufficient_funds`).
    #[default]
    Refuse,
    /// Each special bet that does not fit in what is left is dropped.
    Drop,
}

/// `[shoe]`: what is in the shoe and how a shoe starts and ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShoeRules {
    /// Number of 52-card decks.
    pub decks: u8,
    /// A fresh, shuffled shoe for every round (no cut card, no burn).
    pub new_shoe_every_round: bool,
    /// A cut card marks the last round of the shoe.
    pub cut_card: bool,
    /// What is burned after a shuffle.
    pub burn: Burn,
    /// With `burn = "fixed"`: how many cards.
    #[serde(default)]
    pub burn_count: u8,
    /// With `burn = "reveal_value"`: how many cards a revealed ace orders burned (1 or 11).
    #[serde(default = "one")]
    pub burn_ace_value: u8,
}

fn one() -> u8 {
    1
}

/// The burn procedure after a shuffle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Burn {
    /// Nothing is burned.
    None,
    /// `burn_count` cards are burned face down.
    Fixed,
    /// The first card is revealed and burned, then as many cards as its value
    /// (faces 10, ace `burn_ace_value`).
    RevealValue,
}

/// `[deal]`: seats and the initial deal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DealRules {
    /// `"seats"`: each seat is dealt its own cards and plays in turn. `"common_draw"`: the
    /// seats are boxes whose cards every player betting on the box shares; players decide in
    /// parallel under a decision timer and each card goes to every hand that asked for one.
    #[serde(default)]
    pub mode: DealMode,
    /// Number of seats (boxes, spots), numbered from 1.
    pub seats: u8,
    /// The order seats are dealt and played in.
    pub seat_order: SeatOrder,
    /// Cards the dealer receives in the initial deal: 1 (up card only; the second comes
    /// after the players) or 2 (up card after the first pass, a face-down card after the
    /// second).
    pub dealer_cards: u8,
    /// Dealer up cards on which the dealer checks the face-down card for a natural before
    /// play: `"ace"` (after insurance) and/or `"ten"`. Empty: never.
    pub peek_on: Vec<UpCard>,
}

/// How seats and players relate to the cards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DealMode {
    /// One hand per seat, played in turn.
    #[default]
    Seats,
    /// Any number of players share each box's cards (Multi-hand Blackjack).
    CommonDraw,
}

/// `[timers]`: the decision timer of a common draw. Time reaches the engine only as tick
/// inputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimerRules {
    /// How long players have for each decision (at most 25 000 ms).
    pub decision_ms: u64,
    /// On a timeout's automatic action: hit a hand below hard 12 or soft 17 (else stand);
    /// when false, always stand.
    pub hit_on_timeout: bool,
    /// After a first strike let every undecided hand off and no hand asked for a card:
    /// `"burn_card"` (the default: the card comes anyway and is burned, §3.7) or
    /// `"decide_again"` (a new decision step opens at once, no card, §3.5).
    #[serde(default)]
    pub first_strike: FirstStrike,
    /// The insurance question runs out: `"decline"` (the default: every box still
    /// unanswered declines) or `"two_strike"` (as the sheet's two-strike rule for
    /// decisions: a player with more than one box unanswered is asked again once, on a
    /// new timer; a player with one declines at once).
    #[serde(default)]
    pub insurance_timeout: InsuranceStrikes,
}

/// `timers.insurance_timeout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InsuranceStrikes {
    /// Unanswered: declined.
    #[default]
    Decline,
    /// A player with more than one box unanswered is asked once more.
    TwoStrike,
}

/// `timers.first_strike`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FirstStrike {
    /// The next card is dealt and burned, then the next step opens.
    #[default]
    BurnCard,
    /// The next step opens at once.
    DecideAgain,
}

/// `[timeouts]`: the sheet's rules when a timed seat's decision timer runs out (seat-by-seat
/// games). The timer itself comes with the bets (`SeatBets::timer_ms`: the table marks the
/// seats remote players hold), and time only as tick inputs, so replay and recovery play
/// every timeout again. A common draw's timeouts are `[timers]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimeoutRules {
    /// A hand's decision ran out: `"stand"` (the default) or `"auto_play"` (Deluxe: "the
    /// system will automatically finish the round": hit while 11 or less, then stand).
    pub decision: OnTimeout,
    /// An insurance (or even-money) question ran out: `"decline"`, the only rule any sheet
    /// has (an unanswered offer is no insurance).
    pub insurance: InsuranceTimeout,
    /// After a decision ran out, how long the hand still waits for the player to come back
    /// and finish it, ms (0: none). Caribbean 21: "continuing an interrupted game is only
    /// possible within 3,5 minutes after disconnect" (210 000).
    pub resume_ms: u64,
    /// When the resume window ends unanswered: `"stand"` (the default) or `"auto_play"`.
    pub after_resume: OnTimeout,
    /// Where the resume window counts from: `"timer_end"` (the default: the tick that ran
    /// the decision timer out) or `"timer_start"` (when the decision timer started — the
    /// last moment the player was there, the nearest the table knows to "after
    /// disconnect"; a window no longer than the timer is then over as it runs out).
    pub resume_from: ResumeFrom,
    /// What an auto-play (`decision = "auto_play"`, or a player's own) finishes: `"seat"`
    /// (the default: every remaining hand of the seat, split hands included — Deluxe:
    /// "the system will automatically finish the round for the player") or `"hand"` (the
    /// hand in play; the seat's next split hand gets a decision timer of its own).
    pub auto_play_scope: AutoPlayScope,
    /// A round in progress for more than this long is cancelled on a tick and every bet
    /// refunded, ms (0: never). IN FOR 6: "Any game in progress for more than 24 hours will
    /// be cancelled, and the corresponding bet will be refunded" (86 400 000). The round's
    /// age counts from the table's time as the round opened (the table ticks just before
    /// its bets); every bet returns its stake, side bets included, whatever they would have
    /// paid.
    pub round_max_ms: u64,
}

/// `timeouts.decision`, `timeouts.after_resume`: what the engine plays for the hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnTimeout {
    /// The hand stands.
    #[default]
    Stand,
    /// The seat is auto-played: hit while its total is 11 or less, then stand.
    AutoPlay,
}

/// `timeouts.resume_from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResumeFrom {
    /// From the tick that ran the decision timer out.
    #[default]
    TimerEnd,
    /// From when the decision timer started.
    TimerStart,
}

/// `timeouts.auto_play_scope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AutoPlayScope {
    /// Every remaining hand of the seat.
    #[default]
    Seat,
    /// The hand in play only.
    Hand,
}

/// `timeouts.insurance`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InsuranceTimeout {
    /// The offer is declined.
    #[default]
    Decline,
}

/// `[betting]`: what a bet may be.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BettingRules {
    /// Side bets without a main bet on the same seat/box: `"never"`, `"allowed"`, or
    /// `"up_to_main"` (each side bet at most the main bet, so a main bet is needed).
    pub side_bets_without_main: SideWithoutMain,
    /// Players may bet behind a seated player (Deluxe's play-behind).
    #[serde(default)]
    pub play_behind: bool,
    /// Common draw: "Let it play" — a box that won last round may bet everything it returned
    /// (stake and win, special bets excluded) as its main bet, up to this amount. 0: off.
    #[serde(default)]
    pub let_it_play_max: Amount,
    /// How many seats one remote player may hold (Deluxe: "A player can occupy up to two
    /// open seats"; the engine takes at most two, with the same main bet on both).
    #[serde(default = "one_seat")]
    pub seats_per_player: u8,
}

fn one_seat() -> u8 {
    1
}

impl Default for BettingRules {
    fn default() -> BettingRules {
        BettingRules {
            side_bets_without_main: SideWithoutMain::Never,
            play_behind: false,
            let_it_play_max: 0,
            seats_per_player: 1,
        }
    }
}

/// The Multi-hand sheet's "special bet allowed even if base bet is zero" (0 / 1 / 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SideWithoutMain {
    /// 0: only with a main bet.
    Never,
    /// 1: with or without a main bet.
    Allowed,
    /// 2: with a main bet at least as large.
    UpToMain,
}

/// Seat order for dealing and play.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeatOrder {
    /// Seat 1 first.
    Ascending,
    /// The highest seat first.
    Descending,
}

/// A class of dealer up card that some rules depend on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UpCard {
    /// An ace.
    Ace,
    /// A ten-value card (10, J, Q, K).
    Ten,
}

impl UpCard {
    /// Whether `card` is of this class.
    pub fn matches(self, card: Card) -> bool {
        match self {
            UpCard::Ace => card.rank == crate::cards::Rank::Ace,
            UpCard::Ten => card.rank.is_ten_value(),
        }
    }
}

/// `[dealer]`: how the dealer completes the hand.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DealerRules {
    /// On soft 17: `"stand"` (S17) or `"hit"` (H17).
    pub soft_17: Soft17,
    /// The dealer stands after this many cards whatever the total (0: no limit).
    #[serde(default)]
    pub max_cards: u8,
    /// The dealer completes the hand by the rules even when no hand is left to play against
    /// ("dealer always draws his card to the end").
    #[serde(default)]
    pub always_draws: bool,
}

/// The dealer's play on soft 17.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Soft17 {
    /// Stand on all 17s.
    Stand,
    /// Hit soft 17.
    Hit,
}

/// `[hand]`: card values and special hands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandRules {
    /// `"one_or_eleven"`, or `"one"` where an ace always counts 1 (Caribbean 21).
    pub ace: AceValue,
    /// The natural: a two-card `"blackjack"`, or `"caribbean21"` (ace and two ten-value
    /// cards, three cards, not after a split or a double).
    pub natural: Natural,
    /// What a player's natural pays against a dealer without one.
    pub natural_pays: Pay,
    /// A hand of this many cards not over 21 wins as a Charlie (0: no Charlie).
    #[serde(default)]
    pub charlie: u8,
    /// Whether a Charlie also beats the dealer's natural.
    #[serde(default)]
    pub charlie_beats_dealer_natural: bool,
    /// A hand stands automatically at this many cards (0: no limit).
    #[serde(default)]
    pub max_cards: u8,
}

/// The value of an ace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AceValue {
    /// 1 or 11, whichever is better.
    OneOrEleven,
    /// Always 1.
    One,
}

/// What counts as a natural.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Natural {
    /// Ace and a ten-value card as the first two cards, not after a split.
    Blackjack,
    /// Ace and two ten-value cards as the first three cards, not after a split or double.
    Caribbean21,
}

impl Natural {
    /// How many cards make the natural.
    pub fn cards(self) -> usize {
        match self {
            Natural::Blackjack => 2,
            Natural::Caribbean21 => 3,
        }
    }
}

/// `[double]`: doubling down.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DoubleRules {
    /// Which hands may double.
    pub on: DoubleOn,
    /// Doubling is allowed on hands made by a split.
    pub after_split: bool,
    /// A hand made by a split may double on any two cards whatever `on` says ("only on 10 or
    /// 11, unless the hand is split").
    #[serde(default)]
    pub after_split_any_total: bool,
    /// How many times one hand may double (0: any number of times).
    pub max_per_hand: u8,
    /// After the double's card the hand stands automatically (otherwise play goes on).
    pub stand_after_card: bool,
}

/// Which hands may double.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DoubleOn {
    /// Never.
    Never,
    /// Any two-card hand.
    AnyTwo,
    /// Two-card hands totalling 9, 10 or 11.
    NineToEleven,
    /// Two-card hands totalling 10 or 11.
    TenOrEleven,
    /// Any hand of two or more cards.
    AnyCards,
}

/// `[split]`: splitting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SplitRules {
    /// The most hands one seat can hold (1: no split; 2: split once; 4: split up to three
    /// times).
    pub max_hands: u8,
    /// Which two-card hands may split.
    pub pairs: SplitPairs,
    /// A seat that bought insurance may not split (NSAI).
    pub not_after_insurance: bool,
}

/// Which two-card hands may split.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SplitPairs {
    /// Two cards of the same value (K and 10 may split).
    SameValue,
    /// Two cards of the same rank.
    SameRank,
    /// Any two cards.
    AnyTwo,
}

/// `[surrender]`: giving up half the bet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SurrenderRules {
    /// When a hand may surrender. In a variant that peeks it comes after the peek (late
    /// surrender); without a peek it is early by nature.
    pub when: SurrenderWhen,
    /// Dealer up cards against which surrender is not offered.
    #[serde(default)]
    pub not_against: Vec<UpCard>,
}

/// When a hand may surrender.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SurrenderWhen {
    /// Never.
    Never,
    /// Only the original two-card hand, before any other decision.
    FirstTwoCards,
    /// At any point of the hand's play, after splits and doubles too. Half of the hand's
    /// initial stake comes back; double stakes are lost.
    AnyTime,
}

/// `[insurance]`: insurance and even money, offered on a dealer ace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InsuranceRules {
    /// Insurance is offered when the dealer's up card is an ace.
    pub offered: bool,
    /// Its cost as a part of the main bet, rounded down (`"1:2"`: half).
    pub cost: Pay,
    /// What it pays when the dealer has a natural.
    pub pays: Pay,
    /// A seat holding a natural may take even money (1:1 at once) instead.
    pub even_money: bool,
    /// What a won insurance bet returns (default `stake_and_pays`).
    #[serde(default, skip_serializing_if = "InsuranceWin::is_default")]
    pub won_returns: InsuranceWin,
}

impl InsuranceRules {
    /// Everything a won insurance bet of `stake` returns.
    pub fn won(&self, stake: Amount) -> Amount {
        match self.won_returns {
            InsuranceWin::StakeAndPays => self.pays.returns(stake),
            InsuranceWin::PaysOnly => self.pays.fraction_of(stake),
        }
    }
}

/// `insurance.won_returns`: the two readings of "insurance pays N:M".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InsuranceWin {
    /// The stake comes back with the winnings (50 at 9:1 returns 500).
    #[default]
    StakeAndPays,
    /// Only the winnings: "the bet amount of insurance goes to the casino regardless of
    /// result" (Caribbean 21's sheet; 50 at 9:1 returns 450).
    PaysOnly,
}

impl InsuranceWin {
    fn is_default(&self) -> bool {
        *self == InsuranceWin::StakeAndPays
    }
}

/// `[settlement]`: comparing and paying.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettlementRules {
    /// Equal totals: `"push"` (stake returned) or `"lose"`. Naturals against naturals
    /// always push.
    pub ties: Ties,
    /// When the dealer's natural is found only at the end (no peek): `"all_bets"` are lost,
    /// or `"original_bets_only"` (doubles and splits come back).
    pub dealer_natural_takes: NaturalTakes,
}

/// The result of equal totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ties {
    /// The stake comes back.
    Push,
    /// The stake is lost.
    Lose,
}

/// What a dealer's natural found after play takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NaturalTakes {
    /// Every stake on the hand, doubles and splits included.
    AllBets,
    /// Only the original bet; double and split stakes come back.
    OriginalBetsOnly,
}

/// A bet's limits, in minor units, inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// The smallest bet.
    pub min: Amount,
    /// The largest bet.
    pub max: Amount,
}

/// `[[side_bets]]`: one side bet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SideBetRules {
    /// The name players bet it under (`"21+3"`, `"pair"`, `"in_for_6"`).
    pub name: String,
    /// Which family of side bet it is; the family decides the winning combinations.
    pub kind: SideBetKind,
    /// Its limits.
    pub limits: Limits,
    /// Other names the bet is accepted under (e.g. `"19+"` for `"19_plus"`).
    #[serde(default)]
    pub aliases: Vec<String>,
    /// Another side bet that must be placed on the same seat first (Top 21+3 needs 21+3).
    #[serde(default)]
    pub requires_bet: Option<String>,
    /// The family's rank parameter (KK/QQ/JJ: `"K"`, `"Q"`, `"J"`).
    #[serde(default)]
    pub rank: Option<String>,
    /// The pay table: winning combination → pay. Its keys are some of the family's
    /// combinations; when the cards make several, the best-paying one listed pays.
    pub pays: std::collections::BTreeMap<String, Pay>,
    /// For a family with a bonus game: combination → the multipliers (stake included) the
    /// bonus game can draw.
    #[serde(default)]
    pub bonus: std::collections::BTreeMap<String, Vec<u32>>,
    /// The return to player the operator's par sheet states for this pay table, in percent
    /// (e.g. `92.86`). `croupier check-variant` warns when the exact computation
    /// (`croupier paytables`) differs by more than 0.005 points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtp: Option<f64>,
}

impl SideBetRules {
    /// The family's rank parameter as a rank.
    pub fn rank_value(&self) -> Option<crate::cards::Rank> {
        let code = self.rank.as_deref()?;
        format!("{code}S")
            .parse::<crate::cards::Card>()
            .ok()
            .map(|c| c.rank)
    }
}

/// A family of side bets; each is evaluated by its own module in `engine::sidebets`.
/// Several bets can share a family and differ in their pay tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SideBetKind {
    /// Three-card poker on the player's first two cards and the dealer's up card (21+3,
    /// Top 21+3, Poker 3, Poker 3 Bonus).
    TwentyOnePlusThree,
    /// Deluxe's Pair: a pair in the first two cards, suited trips with the dealer's first card.
    Pair,
    /// IN FOR 6: the first two cards total 6 (ace 1); a pair of 3s plays a bonus game.
    #[serde(rename = "in_for_6")]
    InForSix,
    /// Lucky Lucky and 19+: the three cards' total, 7-7-7 and 6-7-8.
    ThreeCardTotal,
    /// C3: red carpet, triplets, jacks in black, highest hearts.
    C3,
    /// Lucky Ladies (and QQ as Lucky Ladies): the first two cards total 20.
    Twenty,
    /// Lucky Aces: aces in the player's and the dealer's first two cards.
    LuckyAces,
    /// KK, QQ, JJ: a card of `rank`, or a total of 20.
    RankTwenty,
    /// Multi-hand's Pair: suited or non-suited pair.
    PairSuits,
    /// Match: the first two cards match the dealer's up card.
    Match,
    /// Suits: the first two cards share a suit.
    Suits,
    /// Blackjack Bonus: a suited or same-colour blackjack.
    BlackjackBonus,
    /// the dealer's up card between the player's two cards.
    Spread,
    /// 7's: sevens in sequence.
    Sevens,
}

impl SideBetKind {
    /// Every winning combination the family can report; a pay table names some of them.
    pub fn combinations(self) -> &'static [&'static str] {
        match self {
            SideBetKind::TwentyOnePlusThree => &[
                "suited_three_of_a_kind",
                "straight_flush",
                "three_of_a_kind",
                "straight",
                "flush",
            ],
            SideBetKind::Pair => &["suited_trips", "perfect_pair", "colored_pair", "mixed_pair"],
            SideBetKind::InForSix => &["easy_six"],
            SideBetKind::ThreeCardTotal => &[
                "suited_777",
                "suited_678",
                "777",
                "678",
                "suited_21",
                "21",
                "any_20",
                "any_19",
            ],
            SideBetKind::C3 => &["highest_hearts", "jacks_in_black", "triplets", "red_carpet"],
            SideBetKind::Twenty => &[
                "queen_of_hearts_pair_with_dealer_blackjack",
                "queen_of_hearts_pair",
                "matched_20",
                "suited_20",
                "any_20",
            ],
            SideBetKind::LuckyAces => &[
                "four_aces",
                "three_suited_aces",
                "three_aces",
                "two_suited_aces",
                "two_aces",
                "ace_of_diamonds",
                "one_ace",
            ],
            SideBetKind::RankTwenty => &["diamond_pair", "matched_20", "any_20", "one_of_rank"],
            SideBetKind::PairSuits => &["suited_pair", "non_suited_pair"],
            SideBetKind::Match => &[
                "two_suited_matches",
                "suited_and_non_suited_match",
                "one_suited_match",
                "two_non_suited_matches",
                "one_non_suited_match",
            ],
            SideBetKind::Suits => &["suited_king_queen", "two_suited"],
            SideBetKind::BlackjackBonus => &["suited_blackjack", "same_colour_blackjack"],
            SideBetKind::Spread => &[
                "three_of_a_kind",
                "one_card_spread",
                "two_card_spread",
                "other_spread",
            ],
            SideBetKind::Sevens => &["suited_777", "777", "suited_77", "77", "first_card_7"],
        }
    }

    /// The bonus-game tables the family needs, if any.
    pub fn bonus_tables(self) -> &'static [&'static str] {
        match self {
            SideBetKind::InForSix => &["exacta", "coloured", "mixed"],
            _ => &[],
        }
    }

    /// Whether the family looks at the dealer's second card (or whether the dealer ends with
    /// a natural), so the dealer must receive it before the bet settles.
    pub fn needs_dealer_second_card(self) -> bool {
        matches!(self, SideBetKind::LuckyAces | SideBetKind::Twenty)
    }
}
