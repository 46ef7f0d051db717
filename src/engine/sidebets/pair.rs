//! Pair (Deluxe): the seat's first two cards form a pair; suited trips when both also match
//! the dealer's first card in rank and suit.

use super::InitialCards;

pub(super) fn combination(cards: &InitialCards) -> Option<&'static str> {
    let [a, b] = cards.player;
    if a.rank != b.rank {
        return None;
    }
    Some(if a == b && a == cards.dealer_up {
        "suited_trips"
    } else if a.suit == b.suit {
        "perfect_pair"
    } else if a.suit.colour() == b.suit.colour() {
        "colored_pair"
    } else {
        "mixed_pair"
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(a: &str, b: &str, up: &str) -> Option<&'static str> {
        let c = |s: &str| s.parse().expect("card");
        combination(&InitialCards {
            player: [c(a), c(b)],
            dealer_up: c(up),
        })
    }

    #[test]
    fn every_combination() {
        assert_eq!(eval("QH", "QH", "QH"), Some("suited_trips"));
        assert_eq!(eval("QH", "QH", "QD"), Some("perfect_pair"));
        assert_eq!(eval("QH", "QD", "2C"), Some("colored_pair"));
        assert_eq!(eval("QS", "QD", "2C"), Some("mixed_pair"));
        assert_eq!(eval("QS", "KS", "QS"), None);
    }
}
