//! IN FOR 6: the first two cards total 6 with the ace counting 1. A/5 and 2/4 are an easy
//! six; a pair of 3s is a hard six and plays a bonus game whose multiplier table depends on
//! the pair's suits (exacta, coloured, mixed). The multiplier drawn arrives as an input.

use super::{Combinations, SideBetCards};
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

pub(super) fn combinations(cards: &SideBetCards, out: &mut Combinations) {
    let [a, b] = cards.player;
    if a.rank != b.rank && a.rank.points() + b.rank.points() == 6 {
        out.push("easy_six");
    }
}

/// The bonus table a hard six (3+3) plays for, or `None` when the cards are no hard six.
pub fn hard_six_table(player: [crate::cards::Card; 2]) -> Option<HardSix> {
    let [a, b] = player;
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
    use super::super::eval;
    use super::*;
    use crate::engine::variant::SideBetKind::InForSix as K;

    fn pair(a: &str, b: &str) -> [crate::cards::Card; 2] {
        [a.parse().expect("card"), b.parse().expect("card")]
    }

    #[test]
    fn easy_and_hard_sixes() {
        for (a, b) in [("AS", "5H"), ("5D", "AC"), ("2S", "4H"), ("4D", "2D")] {
            assert_eq!(eval(K, &[a, b, "9C"], None, false), ["easy_six"], "{a} {b}");
            assert_eq!(hard_six_table(pair(a, b)), None);
        }
        assert!(eval(K, &["3S", "3S", "9C"], None, false).is_empty());
        assert_eq!(hard_six_table(pair("3S", "3S")), Some(HardSix::Exacta));
        assert_eq!(hard_six_table(pair("3H", "3D")), Some(HardSix::Coloured));
        assert_eq!(hard_six_table(pair("3H", "3C")), Some(HardSix::Mixed));
        assert!(eval(K, &["6S", "KS", "9C"], None, false).is_empty());
        assert!(eval(K, &["AS", "AH", "9C"], None, false).is_empty());
    }
}
