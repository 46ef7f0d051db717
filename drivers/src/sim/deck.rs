//! What the simulated shoe holds: a shuffled N-deck shoe with the cut card placed at a
//! penetration, or a fixed script of cards.

use crate::card::Card;
use crate::event::ShoeItem;

/// Why a shoe could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DeckError {
    /// Deck count outside 1–8.
    #[error("decks = {0}: must be 1 to 8")]
    Decks(u8),
    /// Penetration not strictly between 0 and 1.
    #[error("penetration = {0}: must be between 0 and 1, e.g. 0.75")]
    Penetration(f64),
    /// A script token that is neither a card code nor `CUT`.
    #[error("script token {token:?} (#{index}): expected a card like AS, 10D, or CUT")]
    Script {
        /// The token.
        token: String,
        /// Its 1-based position.
        index: usize,
    },
}

/// `decks` shuffled decks with the cut card after `penetration` of the cards.
pub fn shuffled_shoe(
    decks: u8,
    penetration: f64,
    rng: &mut fastrand::Rng,
) -> Result<Vec<ShoeItem>, DeckError> {
    if !(1..=8).contains(&decks) {
        return Err(DeckError::Decks(decks));
    }
    if !(penetration > 0.0 && penetration < 1.0) {
        return Err(DeckError::Penetration(penetration));
    }
    let mut items: Vec<ShoeItem> = (0..usize::from(decks) * 52)
        .filter_map(|i| Card::from_index(i % 52).map(ShoeItem::Card))
        .collect();
    rng.shuffle(&mut items);
    let cards = items.len();
    let cut_at = ((cards as f64 * penetration).round() as usize).clamp(1, cards - 1);
    items.insert(cut_at, ShoeItem::CutCard);
    Ok(items)
}

/// Reads a script: card codes and `CUT`, separated by whitespace or commas; `#` starts a
/// comment to the end of the line.
pub fn parse_script(text: &str) -> Result<Vec<ShoeItem>, DeckError> {
    text.lines()
        .flat_map(|line| {
            line.split('#')
                .next()
                .unwrap_or_default()
                .split([' ', '\t', ','])
        })
        .filter(|token| !token.is_empty())
        .enumerate()
        .map(|(i, token)| {
            if token.eq_ignore_ascii_case("CUT") {
                Ok(ShoeItem::CutCard)
            } else {
                token
                    .parse()
                    .map(ShoeItem::Card)
                    .map_err(|_| DeckError::Script {
                        token: token.to_string(),
                        index: i + 1,
                    })
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::tests::card;

    #[test]
    fn six_decks_hold_each_card_six_times_and_one_cut_card() {
        let shoe = shuffled_shoe(6, 0.75, &mut fastrand::Rng::with_seed(7)).expect("valid");
        assert_eq!(shoe.len(), 6 * 52 + 1);
        let cut = shoe.iter().position(|i| *i == ShoeItem::CutCard);
        assert_eq!(cut, Some(234));
        let mut counts = [0; 52];
        for item in &shoe {
            if let ShoeItem::Card(c) = item {
                counts[c.index()] += 1;
            }
        }
        assert!(counts.iter().all(|&n| n == 6));
        let other = shuffled_shoe(6, 0.75, &mut fastrand::Rng::with_seed(8)).expect("valid");
        assert_ne!(shoe, other, "different seeds shuffle differently");
    }

    #[test]
    fn rejects_impossible_shoes() {
        let rng = &mut fastrand::Rng::with_seed(1);
        assert_eq!(shuffled_shoe(0, 0.5, rng), Err(DeckError::Decks(0)));
        assert_eq!(shuffled_shoe(1, 1.0, rng), Err(DeckError::Penetration(1.0)));
        assert!(shuffled_shoe(1, f64::NAN, rng).is_err());
    }

    #[test]
    fn scripts_allow_comments_commas_and_cut() {
        let items = parse_script("AS, 10D  # first round\nCUT\tkh\n").expect("valid");
        assert_eq!(
            items,
            vec![card("AS"), card("TD"), ShoeItem::CutCard, card("KH")]
        );
        assert_eq!(
            parse_script("AS ZZ"),
            Err(DeckError::Script {
                token: "ZZ".into(),
                index: 2
            })
        );
    }
}
