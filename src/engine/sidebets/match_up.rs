//! Match: the player's first two cards against the dealer's up card — a suited match is the
//! same rank and suit, a non-suited match the same rank only. No rank match, no win.

use super::{Combinations, SideBetCards};

pub(super) fn combinations(cards: &SideBetCards, out: &mut Combinations) {
    let up = cards.dealer_up;
    let suited = cards.player.iter().filter(|c| **c == up).count();
    let rank_only = cards
        .player
        .iter()
        .filter(|c| c.rank == up.rank && c.suit != up.suit)
        .count();
    let name = match (suited, rank_only) {
        (2, _) => "two_suited_matches",
        (1, 1) => "suited_and_non_suited_match",
        (1, _) => "one_suited_match",
        (0, 2) => "two_non_suited_matches",
        (0, 1) => "one_non_suited_match",
        _ => return,
    };
    out.push(name);
}

#[cfg(test)]
mod tests {
    use super::super::eval;
    use crate::engine::variant::SideBetKind::Match as K;

    #[test]
    fn every_combination() {
        assert_eq!(
            eval(K, &["9H", "9H", "9H"], None, false),
            ["two_suited_matches"]
        );
        assert_eq!(
            eval(K, &["9H", "9C", "9H"], None, false),
            ["suited_and_non_suited_match"]
        );
        assert_eq!(
            eval(K, &["2S", "9H", "9H"], None, false),
            ["one_suited_match"]
        );
        assert_eq!(
            eval(K, &["9D", "9C", "9H"], None, false),
            ["two_non_suited_matches"]
        );
        assert_eq!(
            eval(K, &["9D", "KH", "9H"], None, false),
            ["one_non_suited_match"]
        );
        assert!(eval(K, &["8H", "KH", "9H"], None, false).is_empty());
    }
}
