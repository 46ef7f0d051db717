//! `[double]`, `[split]` and `[surrender]`: the decisions a hand may take beyond hit and
//! stand. Apart from how a hand counts (`hands.rs`) because these are only asked while a
//! hand is in play.

use super::UpCard;
use serde::{Deserialize, Serialize};

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
