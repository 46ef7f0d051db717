//! `[insurance]` and `[settlement]`: what insurance costs and pays, how equal totals and a
//! late-found dealer natural settle. Apart from the side bets (`side_bets.rs`), whose pay
//! tables are per bet.

use crate::money::{Amount, Pay};
use serde::{Deserialize, Serialize};

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
