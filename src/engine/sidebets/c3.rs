//! C3: the player's first two cards and the dealer's up card — red carpet (all red),
//! triplets (one rank), jacks in black (three black jacks), highest hearts (three A♥).

use super::{Combinations, SideBetCards};
use crate::cards::{Card, Colour, Rank, Suit};

pub(super) fn combinations(cards: &SideBetCards, out: &mut Combinations) {
    let three = cards.three();
    let all = |f: &dyn Fn(&Card) -> bool| three.iter().all(f);
    if all(&|c| *c == Card::new(Rank::Ace, Suit::Hearts)) {
        out.push("highest_hearts");
    }
    if all(&|c| c.rank == Rank::Jack && c.suit.colour() == Colour::Black) {
        out.push("jacks_in_black");
    }
    if all(&|c| c.rank == three[0].rank) {
        out.push("triplets");
    }
    if all(&|c| c.suit.colour() == Colour::Red) {
        out.push("red_carpet");
    }
}

#[cfg(test)]
mod tests {
    use super::super::eval;
    use crate::engine::variant::SideBetKind::C3 as K;

    #[test]
    fn every_combination() {
        assert_eq!(
            eval(K, &["AH", "AH", "AH"], None, false),
            ["highest_hearts", "triplets", "red_carpet"]
        );
        assert_eq!(
            eval(K, &["JS", "JC", "JS"], None, false),
            ["jacks_in_black", "triplets"]
        );
        assert_eq!(eval(K, &["5S", "5H", "5D"], None, false), ["triplets"]);
        assert_eq!(eval(K, &["2H", "9D", "KH"], None, false), ["red_carpet"]);
        assert!(eval(K, &["2H", "9D", "KS"], None, false).is_empty());
    }
}
