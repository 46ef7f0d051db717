//! Lucky Lucky and 19+: the player's first two cards and the dealer's up card by their
//! blackjack total (an ace 1 or 11, whichever is best), with 7-7-7 and 6-7-8 on top.
//! "777", "678" and "21" pay for any suits; the pay table's suited entries pay more when all
//! three share a suit (the sheet's "of different suits" read as "not all one suit").

use super::{Combinations, SideBetCards};
use crate::cards::Rank;
use crate::engine::hand::total;
use crate::engine::variant::AceValue;

pub(super) fn combinations(cards: &SideBetCards, out: &mut Combinations) {
    let three = cards.three();
    let suited = three.iter().all(|c| c.suit == three[0].suit);
    let mut ranks = three.map(|c| c.rank);
    ranks.sort_unstable();
    if ranks == [Rank::Seven; 3] {
        if suited {
            out.push("suited_777");
        }
        out.push("777");
    }
    if ranks == [Rank::Six, Rank::Seven, Rank::Eight] {
        if suited {
            out.push("suited_678");
        }
        out.push("678");
    }
    match total(&three, AceValue::OneOrEleven).best {
        21 => {
            if suited {
                out.push("suited_21");
            }
            out.push("21");
        }
        20 => out.push("any_20"),
        19 => out.push("any_19"),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::eval;
    use crate::engine::variant::SideBetKind::ThreeCardTotal as K;

    /// Each three-card total (the player's two cards, the dealer's up card) and the pays it
    /// wins, best first.
    const HANDS: &[([&str; 3], &[&str])] = &[
        (
            ["7S", "7S", "7S"],
            &["suited_777", "777", "suited_21", "21"],
        ),
        (["7S", "7H", "7S"], &["777", "21"]),
        (
            ["8D", "6D", "7D"],
            &["suited_678", "678", "suited_21", "21"],
        ),
        (["8D", "6C", "7D"], &["678", "21"]),
        (["AH", "KH", "TH"], &["suited_21", "21"]),
        (["AH", "AC", "9D"], &["21"]),
        (["KH", "5C", "5D"], &["any_20"]),
        (["AH", "8C", "KD"], &["any_19"]),
        (["KH", "5C", "3D"], &[]),
    ];

    #[test]
    fn every_combination() {
        for (cards, wins) in HANDS {
            assert_eq!(eval(K, cards, None, false), *wins, "{cards:?}");
        }
    }
}
