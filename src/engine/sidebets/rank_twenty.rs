//! KK, QQ and JJ (the family's `rank` setting picks the rank): the player's first two
//! cards hold that rank or total 20 — a pair of that rank in diamonds, a matched 20 (two
//! identical cards, rank and suit), any 20, or exactly one card of the rank.

use super::{Combinations, SideBetCards};
use crate::cards::{Card, Rank, Suit};
use crate::engine::hand::total;
use crate::engine::variant::AceValue;

pub(super) fn combinations(cards: &SideBetCards, rank: Rank, out: &mut Combinations) {
    let [a, b] = cards.player;
    let twenty = total(&cards.player, AceValue::OneOrEleven).best == 20;
    let diamond = Card::new(rank, Suit::Diamonds);
    if a == diamond && b == diamond {
        out.push("diamond_pair");
    }
    if twenty && a == b {
        out.push("matched_20");
    }
    if twenty {
        out.push("any_20");
    }
    if (a.rank == rank) != (b.rank == rank) {
        out.push("one_of_rank");
    }
}

#[cfg(test)]
mod tests {
    use super::super::eval;
    use crate::cards::Rank;
    use crate::engine::variant::SideBetKind::RankTwenty as K;

    #[test]
    fn every_combination() {
        let k = Some(Rank::King);
        assert_eq!(
            eval(K, &["KD", "KD", "9S"], k, false),
            ["diamond_pair", "matched_20", "any_20"]
        );
        assert_eq!(
            eval(K, &["QS", "QS", "9S"], k, false),
            ["matched_20", "any_20"]
        );
        assert_eq!(eval(K, &["KS", "KH", "9S"], k, false), ["any_20"]);
        assert_eq!(
            eval(K, &["KS", "QH", "9S"], k, false),
            ["any_20", "one_of_rank"]
        );
        assert_eq!(eval(K, &["KS", "5H", "9S"], k, false), ["one_of_rank"]);
        assert!(eval(K, &["QS", "5H", "KS"], k, false).is_empty());
        assert_eq!(
            eval(K, &["JD", "JD", "9S"], Some(Rank::Jack), false),
            ["diamond_pair", "matched_20", "any_20"]
        );
    }
}
