//! Cards and their notation. The types live in the drivers crate (the shoe decodes into
//! them); this module is their home for the service.

pub use croupier_drivers::card::{Card, CardCodeError, Colour, Rank, Suit};
