//! `[funds]`: what a remote player's short balance does to a bet or a decision. Kept apart
//! from the rules of play because the engine never reads it: the service in front of the
//! engine (`play::rules`, `play::funds`) applies it before an input reaches the engine.

use crate::money::Amount;
use serde::{Deserialize, Serialize};

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
