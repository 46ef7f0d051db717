//! the dealer's up card falls between the player's first two cards in the order
//! 2-3-…-10-J-Q-K-A (ace high only); the fewer ranks between them, the more it pays. Three of
//! a kind when all three share a rank.

use super::{Combinations, SideBetCards};
use crate::cards::Rank;

/// Position in 2 … K, A.
fn order(rank: Rank) -> u8 {
    match rank {
        Rank::Ace => 14,
        r => r.number(),
    }
}

pub(super) fn combinations(cards: &SideBetCards, out: &mut Combinations) {
    let (a, b, up) = (
        order(cards.player[0].rank),
        order(cards.player[1].rank),
        order(cards.dealer_up.rank),
    );
    if a == b && b == up {
        out.push("three_of_a_kind");
        return;
    }
    let (lo, hi) = (a.min(b), a.max(b));
    if !(lo < up && up < hi) {
        return;
    }
    out.push(match hi - lo - 1 {
        1 => "one_card_spread",
        2 => "two_card_spread",
        _ => "other_spread",
    });
}

#[cfg(test)]
mod tests {
    use super::super::eval;
    use crate::engine::variant::SideBetKind::Spread as K;

    #[test]
    fn every_combination() {
        assert_eq!(
            eval(K, &["5S", "5H", "5D"], None, false),
            ["three_of_a_kind"]
        );
        assert_eq!(
            eval(K, &["4S", "6H", "5D"], None, false),
            ["one_card_spread"]
        );
        assert_eq!(
            eval(K, &["7S", "4H", "6D"], None, false),
            ["two_card_spread"]
        );
        assert_eq!(eval(K, &["4S", "TH", "9D"], None, false), ["other_spread"]);
        assert_eq!(eval(K, &["2S", "AH", "KD"], None, false), ["other_spread"]);
        assert!(eval(K, &["4S", "5H", "5D"], None, false).is_empty());
        assert!(eval(K, &["4S", "4H", "5D"], None, false).is_empty());
        assert!(
            eval(K, &["AS", "2H", "KD"], None, true).len() == 1,
            "ace is high: 2..A spans K"
        );
    }
}
