//! Hand arithmetic: totals, soft/hard, naturals. Pure functions over card slices.

use super::variant::{AceValue, Natural};
use crate::cards::{Card, Rank};

/// A hand's total as the table reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Total {
    /// The best total: an ace counts 11 when that does not bust (and the variant lets it).
    pub best: u8,
    /// True when an ace is counted as 11 in `best`.
    pub soft: bool,
}

impl Total {
    /// Over 21.
    pub fn is_bust(self) -> bool {
        self.best > 21
    }
}

/// The total of `cards` under the variant's ace rule.
pub fn total(cards: &[Card], ace: AceValue) -> Total {
    let mut hard: u32 = 0;
    let mut has_ace = false;
    for c in cards {
        hard += u32::from(c.rank.points());
        has_ace |= c.rank == Rank::Ace;
    }
    let soft = ace == AceValue::OneOrEleven && has_ace && hard + 10 <= 21;
    let best = if soft { hard + 10 } else { hard };
    Total {
        best: u8::try_from(best).unwrap_or(u8::MAX),
        soft,
    }
}

/// Whether `cards` are exactly the natural: one ace plus ten-value cards, of the natural's
/// length. Whether the hand may count as a natural at all (not after a split or a double)
/// is the caller's business.
pub fn is_natural_cards(cards: &[Card], natural: Natural) -> bool {
    cards.len() == natural.cards()
        && natural_still_possible(cards)
        && cards.iter().any(|c| c.rank == Rank::Ace)
}

/// Whether the cards so far could still become the natural: at most one ace, every other
/// card ten-valued, and not too many cards.
pub fn natural_still_possible(cards: &[Card]) -> bool {
    let aces = cards.iter().filter(|c| c.rank == Rank::Ace).count();
    aces <= 1
        && cards
            .iter()
            .all(|c| c.rank == Rank::Ace || c.rank.is_ten_value())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cards(codes: &[&str]) -> Vec<Card> {
        codes.iter().map(|c| c.parse().expect("card")).collect()
    }

    #[test]
    fn soft_and_hard_totals() {
        let t = total(&cards(&["AS", "9H"]), AceValue::OneOrEleven);
        assert_eq!(
            t,
            Total {
                best: 20,
                soft: true
            }
        );
        let t = total(&cards(&["AS", "9H", "5C"]), AceValue::OneOrEleven);
        assert_eq!(
            t,
            Total {
                best: 15,
                soft: false
            }
        );
        let t = total(&cards(&["AS", "AH"]), AceValue::OneOrEleven);
        assert_eq!(
            t,
            Total {
                best: 12,
                soft: true
            }
        );
        let t = total(&cards(&["KS", "QH", "2C"]), AceValue::OneOrEleven);
        assert!(t.is_bust() && t.best == 22);
    }

    #[test]
    fn ace_always_one() {
        let t = total(&cards(&["AS", "TH"]), AceValue::One);
        assert_eq!(
            t,
            Total {
                best: 11,
                soft: false
            }
        );
    }

    #[test]
    fn naturals() {
        assert!(is_natural_cards(&cards(&["AS", "KH"]), Natural::Blackjack));
        assert!(!is_natural_cards(&cards(&["AS", "9H"]), Natural::Blackjack));
        assert!(!is_natural_cards(
            &cards(&["AS", "KH", "TD"]),
            Natural::Blackjack
        ));
        assert!(!is_natural_cards(&cards(&["QS", "QD"]), Natural::Blackjack));
        assert!(!is_natural_cards(
            &cards(&["QS", "QD", "KH"]),
            Natural::Caribbean21
        ));
        assert!(is_natural_cards(
            &cards(&["KH", "AS", "TD"]),
            Natural::Caribbean21
        ));
        assert!(!is_natural_cards(
            &cards(&["AS", "AH", "9D"]),
            Natural::Caribbean21
        ));
        assert!(natural_still_possible(&cards(&["AS", "TH"])));
        assert!(!natural_still_possible(&cards(&["AS", "AH"])));
        assert!(!natural_still_possible(&cards(&["5S"])));
    }
}
