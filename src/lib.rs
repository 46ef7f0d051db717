#![warn(missing_docs)]
//! croupier: the controller for a live-dealer blackjack table.
//!
//! `engine` is the sans-IO rules engine; `replay` drives it from the scenario format;
//! `cards` and `money` are the shared vocabulary.

pub mod cards;
pub mod engine;
pub mod money;
pub mod replay;
pub mod sim;
