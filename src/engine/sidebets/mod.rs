//! Side bets: one module per family. Each family names its winning combinations (best
//! first); the variant's pay table says what each pays. Only the best combination pays.

mod in_for_six;
mod pair;
mod twenty_one_plus_three;

pub use in_for_six::{hard_six_table, HardSix};

use super::variant::SideBetKind;
use crate::cards::Card;

/// The cards a side bet looks at, fixed once the initial deal is complete.
#[derive(Debug, Clone, Copy)]
pub struct InitialCards {
    /// The seat's first two cards (before any split).
    pub player: [Card; 2],
    /// The dealer's first (up) card.
    pub dealer_up: Card,
}

/// The winning combination of `kind` these cards make, if any: its name in the pay table.
/// A bonus game (IN FOR 6's hard six) is reported by [`hard_six_table`], not here.
pub fn combination(kind: SideBetKind, cards: &InitialCards) -> Option<&'static str> {
    match kind {
        SideBetKind::TwentyOnePlusThree => twenty_one_plus_three::combination(cards),
        SideBetKind::Pair => pair::combination(cards),
        SideBetKind::InForSix => in_for_six::combination(cards),
    }
}
