//! Lucky Aces: aces among the first four cards — the player's first two and the dealer's
//! first two. It needs the dealer's second card, so the dealer draws it even when no hand is
//! left to play against.

use super::{Combinations, SideBetCards};
use crate::cards::{Rank, Suit};

pub(super) fn combinations(cards: &SideBetCards, out: &mut Combinations) {
    let four = [
        Some(cards.player[0]),
        Some(cards.player[1]),
        Some(cards.dealer_up),
        cards.dealer_second,
    ];
    // Counted in place: settlement runs this for every Lucky Aces bet, and the pay-table
    // enumeration millions of times, so it allocates nothing.
    let mut per_suit = [0usize; 4];
    let mut diamond = false;
    for c in four.into_iter().flatten().filter(|c| c.rank == Rank::Ace) {
        per_suit[c.suit as usize] += 1;
        diamond |= c.suit == Suit::Diamonds;
    }
    let aces = per_suit.iter().sum::<usize>();
    let most_of_one_suit = per_suit.iter().copied().max().unwrap_or(0);
    if aces == 4 {
        out.push("four_aces");
    }
    if most_of_one_suit >= 3 {
        out.push("three_suited_aces");
    }
    if aces >= 3 {
        out.push("three_aces");
    }
    if most_of_one_suit >= 2 {
        out.push("two_suited_aces");
    }
    if aces >= 2 {
        out.push("two_aces");
    }
    if diamond {
        out.push("ace_of_diamonds");
    }
    if aces > 0 {
        out.push("one_ace");
    }
}

#[cfg(test)]
mod tests {
    use super::super::eval;
    use crate::engine::variant::SideBetKind::LuckyAces as K;

    #[test]
    fn every_combination() {
        assert_eq!(
            eval(K, &["AS", "AH", "AD", "AC"], None, false),
            [
                "four_aces",
                "three_aces",
                "two_aces",
                "ace_of_diamonds",
                "one_ace"
            ]
        );
        assert_eq!(
            eval(K, &["AS", "AS", "AS", "9C"], None, false),
            [
                "three_suited_aces",
                "three_aces",
                "two_suited_aces",
                "two_aces",
                "one_ace"
            ]
        );
        assert_eq!(
            eval(K, &["AS", "AH", "5S", "AC"], None, false),
            ["three_aces", "two_aces", "one_ace"]
        );
        assert_eq!(
            eval(K, &["AC", "5H", "AC", "9C"], None, false),
            ["two_suited_aces", "two_aces", "one_ace"]
        );
        assert_eq!(
            eval(K, &["AC", "5H", "AH", "9C"], None, false),
            ["two_aces", "one_ace"]
        );
        assert_eq!(
            eval(K, &["5C", "5H", "9H", "AD"], None, false),
            ["ace_of_diamonds", "one_ace"]
        );
        assert_eq!(eval(K, &["AC", "5H", "9H", "9C"], None, false), ["one_ace"]);
        assert!(eval(K, &["KC", "5H", "9H", "9C"], None, false).is_empty());
    }
}
