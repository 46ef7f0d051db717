//! `[dealer]` and `[hand]`: how a hand counts (aces, naturals, Charlie, card limits) and how
//! the dealer completes one. Apart from the decisions (`decisions.rs`) because both kinds
//! of round and the settlement read these, whatever a player decided.

use crate::money::Pay;
use serde::{Deserialize, Serialize};

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
