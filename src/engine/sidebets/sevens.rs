//! 7's: sevens in the order player card 1, player card 2, dealer up card. The first card
//! must be a 7; each further 7 in sequence pays more, suited more still.

use super::{Combinations, SideBetCards};
use crate::cards::Rank;

pub(super) fn combinations(cards: &SideBetCards, out: &mut Combinations) {
    let [a, b] = cards.player;
    let up = cards.dealer_up;
    if a.rank != Rank::Seven {
        return;
    }
    if b.rank != Rank::Seven {
        out.push("first_card_7");
        return;
    }
    if up.rank == Rank::Seven {
        if a.suit == b.suit && b.suit == up.suit {
            out.push("suited_777");
        }
        out.push("777");
    } else {
        if a.suit == b.suit {
            out.push("suited_77");
        }
        out.push("77");
    }
}

#[cfg(test)]
mod tests {
    use super::super::eval;
    use crate::engine::variant::SideBetKind::Sevens as K;

    /// Each hand (the player's two cards, the dealer's up card) and the pays it wins, best
    /// first.
    const HANDS: &[([&str; 3], &[&str])] = &[
        (["7S", "7S", "7S"], &["suited_777", "777"]),
        (["7S", "7H", "7S"], &["777"]),
        (["7S", "7S", "9S"], &["suited_77", "77"]),
        (["7S", "7D", "9S"], &["77"]),
        (["7S", "8D", "7H"], &["first_card_7"]),
        (["8S", "7D", "7H"], &[]),
    ];

    #[test]
    fn every_combination() {
        for (cards, wins) in HANDS {
            assert_eq!(eval(K, cards, None, false), *wins, "{cards:?}");
        }
    }
}
