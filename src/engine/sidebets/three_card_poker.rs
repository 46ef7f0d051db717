//! Three-card poker on the player's first two cards and the dealer's up card: 21+3, Top
//! 21+3, Poker 3, Poker 3 Bonus. Aces high or low (A-2-3 and Q-K-A; not K-A-2).

use super::{Combinations, SideBetCards};

pub(super) fn combinations(cards: &SideBetCards, out: &mut Combinations) {
    let three = cards.three();
    let flush = three.iter().all(|c| c.suit == three[0].suit);
    let trips = three.iter().all(|c| c.rank == three[0].rank);
    let mut ranks = three.map(|c| c.rank.number());
    ranks.sort_unstable();
    let straight = (ranks[1] == ranks[0] + 1 && ranks[2] == ranks[1] + 1) || ranks == [1, 12, 13];
    if trips && flush {
        out.push("suited_three_of_a_kind");
    }
    if straight && flush {
        out.push("straight_flush");
    }
    if trips {
        out.push("three_of_a_kind");
    }
    if straight {
        out.push("straight");
    }
    if flush {
        out.push("flush");
    }
}

#[cfg(test)]
mod tests {
    use super::super::eval;
    use crate::engine::variant::SideBetKind::TwentyOnePlusThree as K;

    #[test]
    fn every_combination() {
        assert_eq!(
            eval(K, &["7H", "7H", "7H"], None, false),
            ["suited_three_of_a_kind", "three_of_a_kind", "flush"]
        );
        assert_eq!(
            eval(K, &["9S", "TS", "JS"], None, false),
            ["straight_flush", "straight", "flush"]
        );
        assert_eq!(
            eval(K, &["7H", "7S", "7D"], None, false),
            ["three_of_a_kind"]
        );
        assert_eq!(eval(K, &["QH", "KS", "AD"], None, false), ["straight"]);
        assert_eq!(eval(K, &["2H", "AS", "3D"], None, false), ["straight"]);
        assert_eq!(eval(K, &["2C", "7C", "9C"], None, false), ["flush"]);
        assert!(eval(K, &["KH", "AS", "2D"], None, false).is_empty());
        assert!(eval(K, &["2H", "2S", "3D"], None, false).is_empty());
    }
}
