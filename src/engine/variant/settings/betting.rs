//! `[betting]` and the main bet's `limits`: what a bet may be before the round opens.
//! Apart from the play's rules because the bets are validated once, as the round opens.

use crate::money::Amount;
use serde::{Deserialize, Serialize};

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

/// A bet's limits, in minor units, inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// The smallest bet.
    pub min: Amount,
    /// The largest bet.
    pub max: Amount,
}
