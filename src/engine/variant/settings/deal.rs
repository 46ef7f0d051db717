//! `[shoe]` and `[deal]`: what is in the shoe, how a shoe starts and ends, and how the
//! seats (or a common draw's boxes) and the dealer receive the initial deal. Apart from
//! the hand's play because these settle what the round is dealt from and to, before any
//! decision.

use crate::cards::Card;
use serde::{Deserialize, Serialize};

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
