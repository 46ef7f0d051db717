//! Suits: the player's first two cards share a suit; a suited king and queen pays more.

use super::{Combinations, SideBetCards};
use crate::cards::Rank;

pub(super) fn combinations(cards: &SideBetCards, out: &mut Combinations) {
    let [a, b] = cards.player;
    if a.suit != b.suit {
        return;
    }
    let mut ranks = [a.rank, b.rank];
    ranks.sort_unstable();
    if ranks == [Rank::Queen, Rank::King] {
        out.push("suited_king_queen");
    }
    out.push("two_suited");
}

#[cfg(test)]
mod tests {
    use super::super::eval;
    use crate::engine::variant::SideBetKind::Suits as K;

    #[test]
    fn every_combination() {
        assert_eq!(
            eval(K, &["KD", "QD", "2H"], None, false),
            ["suited_king_queen", "two_suited"]
        );
        assert_eq!(eval(K, &["3D", "QD", "2H"], None, false), ["two_suited"]);
        assert!(eval(K, &["KD", "QH", "2H"], None, false).is_empty());
    }
}
