//! Blackjack Bonus: the player's first two cards are an ace and a ten-value card of the same
//! suit, or of the same colour.

use super::{Combinations, SideBetCards};
use crate::engine::hand::is_natural_cards;
use crate::engine::variant::Natural;

pub(super) fn combinations(cards: &SideBetCards, out: &mut Combinations) {
    let [a, b] = cards.player;
    if !is_natural_cards(&cards.player, Natural::Blackjack) {
        return;
    }
    if a.suit == b.suit {
        out.push("suited_blackjack");
    }
    if a.suit.colour() == b.suit.colour() {
        out.push("same_colour_blackjack");
    }
}

#[cfg(test)]
mod tests {
    use super::super::eval;
    use crate::engine::variant::SideBetKind::BlackjackBonus as K;

    #[test]
    fn every_combination() {
        assert_eq!(
            eval(K, &["AS", "JS", "2H"], None, false),
            ["suited_blackjack", "same_colour_blackjack"]
        );
        assert_eq!(
            eval(K, &["AS", "JC", "2H"], None, false),
            ["same_colour_blackjack"]
        );
        assert!(eval(K, &["AS", "JD", "2H"], None, false).is_empty());
        assert!(eval(K, &["AS", "9S", "2H"], None, false).is_empty());
    }
}
