//! Lucky Ladies (and QQ as Lucky Ladies): the player's first two cards total 20 — any 20,
//! suited 20, matched 20 (same rank, as the sheet words it), a pair of Q♥, and a pair of Q♥
//! while the dealer has a natural.

use super::{Combinations, SideBetCards};
use crate::cards::{Card, Rank, Suit};
use crate::engine::hand::total;
use crate::engine::variant::AceValue;

pub(super) fn combinations(cards: &SideBetCards, out: &mut Combinations) {
    let [a, b] = cards.player;
    if total(&cards.player, AceValue::OneOrEleven).best != 20 {
        return;
    }
    let queen_of_hearts = Card::new(Rank::Queen, Suit::Hearts);
    if a == queen_of_hearts && b == queen_of_hearts {
        if cards.dealer_natural {
            out.push("queen_of_hearts_pair_with_dealer_blackjack");
        }
        out.push("queen_of_hearts_pair");
    }
    if a.rank == b.rank {
        out.push("matched_20");
    }
    if a.suit == b.suit {
        out.push("suited_20");
    }
    out.push("any_20");
}

#[cfg(test)]
mod tests {
    use super::super::eval;
    use crate::engine::variant::SideBetKind::Twenty as K;

    #[test]
    fn every_combination() {
        assert_eq!(
            eval(K, &["QH", "QH", "AS", "KS"], None, true),
            [
                "queen_of_hearts_pair_with_dealer_blackjack",
                "queen_of_hearts_pair",
                "matched_20",
                "suited_20",
                "any_20"
            ]
        );
        assert_eq!(
            eval(K, &["QH", "QH", "9S"], None, false),
            ["queen_of_hearts_pair", "matched_20", "suited_20", "any_20"]
        );
        assert_eq!(
            eval(K, &["KS", "KD", "9S"], None, false),
            ["matched_20", "any_20"]
        );
        assert_eq!(
            eval(K, &["KS", "JS", "9S"], None, false),
            ["suited_20", "any_20"]
        );
        assert_eq!(eval(K, &["AS", "9D", "9S"], None, false), ["any_20"]);
        assert!(eval(K, &["KS", "9D", "9S"], None, false).is_empty());
    }
}
