//! croupier
pub mod cards { pub use croupier_drivers::card::*; }
