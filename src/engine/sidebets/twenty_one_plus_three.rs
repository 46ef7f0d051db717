//! 21+3: the player's first two cards and the dealer's up card as a three-card poker hand.
//! Aces are high or low (A-2-3 and Q-K-A are straights; K-A-2 is not).

use super::InitialCards;

pub(super) fn combination(cards: &InitialCards) -> Option<&'static str> {
    let three = [cards.player[0], cards.player[1], cards.dealer_up];
    let flush = three.iter().all(|c| c.suit == three[0].suit);
    let trips = three.iter().all(|c| c.rank == three[0].rank);
    let mut ranks = three.map(|c| c.rank.number());
    ranks.sort_unstable();
    let straight = (ranks[1] == ranks[0] + 1 && ranks[2] == ranks[1] + 1) || ranks == [1, 12, 13];
    match (trips, straight, flush) {
        (true, _, true) => Some("suited_three_of_a_kind"),
        (_, true, true) => Some("straight_flush"),
        (true, _, _) => Some("three_of_a_kind"),
        (_, true, _) => Some("straight"),
        (_, _, true) => Some("flush"),
        _ => None,
    }
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
        assert_eq!(eval("7H", "7H", "7H"), Some("suited_three_of_a_kind"));
        assert_eq!(eval("9S", "TS", "JS"), Some("straight_flush"));
        assert_eq!(eval("7H", "7S", "7D"), Some("three_of_a_kind"));
        assert_eq!(eval("QH", "KS", "AD"), Some("straight"));
        assert_eq!(eval("2H", "AS", "3D"), Some("straight"));
        assert_eq!(eval("2C", "7C", "9C"), Some("flush"));
        assert_eq!(eval("KH", "AS", "2D"), None);
        assert_eq!(eval("2H", "2S", "3D"), None);
    }
}
