//! Pair (Multi-hand): the player's first two cards are a pair, suited or not.

use super::{Combinations, SideBetCards};

pub(super) fn combinations(cards: &SideBetCards, out: &mut Combinations) {
    let [a, b] = cards.player;
    if a.rank == b.rank {
        out.push(if a.suit == b.suit {
            "suited_pair"
        } else {
            "non_suited_pair"
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::eval;
    use crate::engine::variant::SideBetKind::PairSuits as K;

    #[test]
    fn every_combination() {
        assert_eq!(eval(K, &["8C", "8C", "2H"], None, false), ["suited_pair"]);
        assert_eq!(
            eval(K, &["8C", "8D", "2H"], None, false),
            ["non_suited_pair"]
        );
        assert!(eval(K, &["8C", "9C", "2H"], None, false).is_empty());
    }
}
