//! The rules engine: pure, deterministic, sans-IO. It takes inputs (bets, cards, decisions,
//! bonus outcomes, shuffles) one at a time and returns events, or a rejection that changes
//! nothing. No clock, no randomness, no I/O: the live table, `croupier replay`, recovery
//! and simulation all drive this same code.
//!
//! Where a rule lives: `variant` (every setting, as read from `config/variants/*.toml`),
//! `shoe` (composition, burn, cut card), `hand` (totals, naturals), `round` (the state
//! machine and every allowed decision), `settle` (outcomes and payouts), `sidebets/` (one
//! module per side-bet family), `expect` (what the round waits for next).

pub mod common;
mod expect;
mod hand;
mod io;
mod round;
mod settle;
mod shoe;
pub mod sidebets;
pub mod variant;

pub use common::OpenDecision;
pub use expect::Expectation;
pub use hand::{is_natural_cards, total, Total};
pub use io::{
    Action, BehindBet, BetKind, BetResult, Code, Event, HandResult, Input, Outcome, Place,
    PlayerBets, Rejection, RoundResult, SeatBets, SeatId,
};
pub use round::Engine;
pub use shoe::{Shoe, ShoeStage};
pub use variant::{Variant, VariantError};
