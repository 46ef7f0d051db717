//! Hand arithmetic: totals, soft/hard, naturals. Pure functions over card slices.

use super::variant::{AceValue, Natural};
use crate::cards::{Card, Rank};

/// A hand's total as the table reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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
    best_total(hard, has_ace, ace)
}

/// The total of cards worth `hard` with every ace as 1: an ace counts 11 where that does
/// not bust and the variant lets it.
#[inline]
fn best_total(hard: u32, has_ace: bool, ace: AceValue) -> Total {
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

/// The most cards a hand can hold. A hand (or the dealer) takes a card only while its
/// total is below 21 with every ace counted as 1 at least, and every card counts at least
/// 1, so no hand holds more than 21 cards; 24 leaves room.
const MAX_CARDS: usize = 24;

/// A hand's cards (a player's or the dealer's) with running counts kept as each card
/// arrives — the hard total, the aces, the ten-values — so the total and the natural checks
/// that the rules ask after every card cost the same whatever the hand's length (the
/// simulator asks them several times a card). Held inline (see `MAX_CARDS`): reading a
/// card is an index, not a check of where the cards live. Reads as a slice of cards.
#[derive(Clone, Default)]
pub(crate) struct Cards {
    cards: arrayvec::ArrayVec<Card, MAX_CARDS>,
    /// Points with every ace as 1 (cards past `MAX_CARDS`, which the rules never deal,
    /// would still count here: totals stay right).
    hard: u16,
    aces: u8,
    tens: u8,
}

impl PartialEq for Cards {
    /// The same cards in the same order (the counts follow from them).
    fn eq(&self, other: &Cards) -> bool {
        **self == **other
    }
}

impl Eq for Cards {}

impl std::fmt::Debug for Cards {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Cards {
    /// Adds a card.
    #[inline]
    pub fn push(&mut self, c: Card) {
        let held = self.cards.try_push(c);
        debug_assert!(held.is_ok(), "a hand never holds this many cards");
        self.hard += u16::from(c.rank.points());
        self.aces += u8::from(c.rank == Rank::Ace);
        self.tens += u8::from(c.rank.is_ten_value());
    }

    /// Takes the last card off.
    pub fn pop(&mut self) -> Option<Card> {
        let c = self.cards.pop()?;
        self.hard -= u16::from(c.rank.points());
        self.aces -= u8::from(c.rank == Rank::Ace);
        self.tens -= u8::from(c.rank.is_ten_value());
        Some(c)
    }

    /// Removes every card.
    pub fn clear(&mut self) {
        self.cards.clear();
        (self.hard, self.aces, self.tens) = (0, 0, 0);
    }

    /// The total under the variant's ace rule: `total(self, ace)`, from the counts.
    #[inline]
    pub fn total(&self, ace: AceValue) -> Total {
        best_total(u32::from(self.hard), self.aces > 0, ace)
    }

    /// Points with every ace counted as 1.
    #[inline]
    pub fn hard_points(&self) -> u16 {
        self.hard
    }

    /// The aces among the cards.
    #[inline]
    pub fn aces(&self) -> u8 {
        self.aces
    }

    /// The ten-values among the cards.
    #[inline]
    pub fn tens(&self) -> u8 {
        self.tens
    }

    /// `natural_still_possible(self)`, from the counts.
    #[inline]
    pub fn natural_still_possible(&self) -> bool {
        self.aces <= 1 && usize::from(self.aces + self.tens) == self.cards.len()
    }

    /// `is_natural_cards(self, natural)`, from the counts.
    #[inline]
    pub fn is_natural(&self, natural: Natural) -> bool {
        self.cards.len() == natural.cards() && self.aces == 1 && self.natural_still_possible()
    }
}

impl std::ops::Deref for Cards {
    type Target = [Card];
    #[inline]
    fn deref(&self) -> &[Card] {
        &self.cards
    }
}

impl Extend<Card> for Cards {
    fn extend<I: IntoIterator<Item = Card>>(&mut self, iter: I) {
        for c in iter {
            self.push(c);
        }
    }
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
    fn running_counts_agree_with_the_cards() {
        let deck: Vec<Card> = (0..52).filter_map(Card::from_index).collect();
        // Every hand of up to four cards drawn in a fixed stride through the deck.
        for start in 0..52 {
            let mut c = Cards::default();
            let mut held = Vec::new();
            for k in 0..5 {
                let card = deck[(start + k * 17) % 52];
                c.push(card);
                held.push(card);
                for ace in [AceValue::OneOrEleven, AceValue::One] {
                    assert_eq!(c.total(ace), total(&held, ace));
                }
                assert_eq!(c.natural_still_possible(), natural_still_possible(&held));
                for n in [Natural::Blackjack, Natural::Caribbean21] {
                    assert_eq!(c.is_natural(n), is_natural_cards(&held, n));
                }
                assert_eq!(&*c, &held[..]);
            }
            held.pop();
            c.pop();
            assert_eq!(
                c.total(AceValue::OneOrEleven),
                total(&held, AceValue::OneOrEleven)
            );
            c.clear();
            assert_eq!(c, Cards::default());
        }
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
