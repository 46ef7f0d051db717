//! IN FOR 6: the first two cards total 6 with the ace counting 1. A/5 and 2/4 are an easy
//! six; a pair of 3s is a hard six and plays a bonus game whose multiplier table depends on
//! the pair's suits (exacta, coloured, mixed). The multiplier drawn arrives as an input.

use super::InitialCards;
use crate::cards::Rank;

/// The bonus table a hard six plays for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HardSix {
    /// Same suit.
    Exacta,
    /// Same colour, different suit.
    Coloured,
    /// Different colours.
    Mixed,
}

impl HardSix {
    /// Its key in the variant's `bonus` table.
    pub fn table(self) -> &'static str {
        match self {
            HardSix::Exacta => "exacta",
            HardSix::Coloured => "coloured",
            HardSix::Mixed => "mixed",
        }
    }
}

pub(super) fn combination(cards: &InitialCards) -> Option<&'static str> {
    let [a, b] = cards.player;
    let easy = a.rank != b.rank && a.rank.points() + b.rank.points() == 6;
    easy.then_some("easy_six")
}

/// The bonus table a hard six (3+3) plays for, or `None` when the cards are no hard six.
pub fn hard_six_table(cards: &InitialCards) -> Option<HardSix> {
    let [a, b] = cards.player;
    if a.rank != Rank::Three || b.rank != Rank::Three {
        return None;
    }
    Some(if a.suit == b.suit {
        HardSix::Exacta
    } else if a.suit.colour() == b.suit.colour() {
        HardSix::Coloured
    } else {
        HardSix::Mixed
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ic(a: &str, b: &str) -> InitialCards {
        let c = |s: &str| s.parse().expect("card");
        InitialCards {
            player: [c(a), c(b)],
            dealer_up: c("9C"),
        }
    }

    #[test]
    fn easy_and_hard_sixes() {
        for (a, b) in [("AS", "5H"), ("5D", "AC"), ("2S", "4H"), ("4D", "2D")] {
            assert_eq!(combination(&ic(a, b)), Some("easy_six"), "{a} {b}");
            assert_eq!(hard_six_table(&ic(a, b)), None);
        }
        assert_eq!(combination(&ic("3S", "3S")), None);
        assert_eq!(hard_six_table(&ic("3S", "3S")), Some(HardSix::Exacta));
        assert_eq!(hard_six_table(&ic("3H", "3D")), Some(HardSix::Coloured));
        assert_eq!(hard_six_table(&ic("3H", "3C")), Some(HardSix::Mixed));
        assert_eq!(combination(&ic("6S", "KS")), None);
        assert_eq!(combination(&ic("AS", "AH")), None);
    }
}
