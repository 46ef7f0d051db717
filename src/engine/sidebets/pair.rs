//! Pair (Deluxe): the seat's first two cards form a pair; suited trips when both also match
//! the dealer's first card in rank and suit.

use super::{Combinations, SideBetCards};

pub(super) fn combinations(cards: &SideBetCards, out: &mut Combinations) {
    let [a, b] = cards.player;
    if a.rank != b.rank {
        return;
    }
    if a == b && a == cards.dealer_up {
        out.push("suited_trips");
    }
    out.push(if a.suit == b.suit {
        "perfect_pair"
    } else if a.suit.colour() == b.suit.colour() {
        "colored_pair"
    } else {
        "mixed_pair"
    });
}

#[cfg(test)]
mod tests {
    use super::super::eval;
    use crate::engine::variant::SideBetKind::Pair as K;

    #[test]
    fn every_combination() {
        assert_eq!(
            eval(K, &["QH", "QH", "QH"], None, false),
            ["suited_trips", "perfect_pair"]
        );
        assert_eq!(eval(K, &["QH", "QH", "QD"], None, false), ["perfect_pair"]);
        assert_eq!(eval(K, &["QH", "QD", "2C"], None, false), ["colored_pair"]);
        assert_eq!(eval(K, &["QS", "QD", "2C"], None, false), ["mixed_pair"]);
        assert!(eval(K, &["QS", "KS", "QS"], None, false).is_empty());
    }
}
