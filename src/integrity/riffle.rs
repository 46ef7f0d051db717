//! Shoes for measuring the integrity checks: the factory order, the Gilbert–Shannon–Reeds
//! riffle (the standard model of a human riffle shuffle: a binomial cut, then cards drop
//! from each packet with probability proportional to its size), a proper shuffle, and the
//! detection rates of [`super::shoe::judge`] over simulated shoes of each class.

use super::shoe::{judge, Thresholds};
use crate::cards::{Card, Rank, Suit};

/// `decks` decks as they come out of the box: each deck A..K by suit.
pub fn new_deck_order(decks: u32) -> Vec<Card> {
    let mut cards = Vec::with_capacity(52 * decks as usize);
    for _ in 0..decks {
        for suit in Suit::ALL {
            for rank in Rank::ALL {
                cards.push(Card::new(rank, suit));
            }
        }
    }
    cards
}

/// One riffle of `cards` (Gilbert–Shannon–Reeds).
pub fn riffle(cards: &[Card], rng: &mut fastrand::Rng) -> Vec<Card> {
    let cut = (0..cards.len()).filter(|_| rng.bool()).count();
    let (mut left, mut right) = (&cards[..cut], &cards[cut..]);
    let mut out = Vec::with_capacity(cards.len());
    while !left.is_empty() || !right.is_empty() {
        let from_left = rng.usize(0..left.len() + right.len()) < left.len();
        let packet = if from_left { &mut left } else { &mut right };
        out.push(packet[0]);
        *packet = &packet[1..];
    }
    out
}

/// A properly shuffled `decks`-deck shoe (uniform permutation).
pub fn shuffled(decks: u32, rng: &mut fastrand::Rng) -> Vec<Card> {
    let mut cards = new_deck_order(decks);
    rng.shuffle(&mut cards);
    cards
}

/// How a simulated shoe was prepared from the cards as they were collected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preparation {
    /// Not shuffled at all.
    Unshuffled,
    /// Riffled this many times.
    Riffled(u32),
    /// Properly shuffled.
    Shuffled,
}

impl Preparation {
    fn apply(self, cards: &[Card], decks: u32, rng: &mut fastrand::Rng) -> Vec<Card> {
        match self {
            Preparation::Unshuffled => cards.to_vec(),
            Preparation::Riffled(times) => {
                let mut out = cards.to_vec();
                for _ in 0..times {
                    out = riffle(&out, rng);
                }
                out
            }
            Preparation::Shuffled => shuffled(decks, rng),
        }
    }
}

/// What [`rate`] measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// Shoes judged.
    pub shoes: usize,
    /// Shoes found suspicious.
    pub flagged: usize,
    /// Of those, flagged by the repeat check.
    pub by_repeat: usize,
    /// Of those, flagged by the order check.
    pub by_order: usize,
}

impl Rate {
    /// `flagged / shoes`.
    pub fn fraction(&self) -> f64 {
        self.flagged as f64 / self.shoes.max(1) as f64
    }
}

/// The simulated table the rates are measured at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Simulation {
    /// Decks in the shoe.
    pub decks: u32,
    /// The share of the shoe dealt before the cut card (0..1).
    pub penetration: f64,
    /// Properly shuffled earlier shoes each new one is compared with.
    pub history: usize,
    /// The checks' settings.
    pub thresholds: Thresholds,
}

/// Judges `shoes` simulated shoes prepared by `prep` at table `sim`. When `fresh` the
/// cards come new from the box; otherwise they are the last shoe's cards collected in the
/// order they were dealt (the undealt rest below).
pub fn rate(sim: &Simulation, prep: Preparation, fresh: bool, shoes: usize, seed: u64) -> Rate {
    let Simulation {
        decks,
        penetration,
        history,
        thresholds: ref t,
    } = *sim;
    let mut rng = fastrand::Rng::with_seed(seed);
    let n = 52 * decks as usize;
    let dealt = ((n as f64) * penetration) as usize;
    let mut result = Rate {
        shoes,
        flagged: 0,
        by_repeat: 0,
        by_order: 0,
    };
    for _ in 0..shoes {
        let mut past: Vec<(u32, Vec<Card>)> = Vec::with_capacity(history);
        let mut last = Vec::new();
        for number in 0..history {
            last = shuffled(decks, &mut rng);
            past.push((number as u32, last[..dealt].to_vec()));
        }
        let collected = if fresh || last.is_empty() {
            new_deck_order(decks)
        } else {
            last
        };
        let order = prep.apply(&collected, decks, &mut rng);
        let v = judge(history as u32, &order[..dealt], decks, &past, t);
        if v.suspicious() {
            result.flagged += 1;
        }
        if v.common_run > t.max_common_run {
            result.by_repeat += 1;
        }
        if v.order_z > t.max_order_z {
            result.by_order += 1;
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_riffle_keeps_every_card_and_two_rising_sequences() {
        let mut rng = fastrand::Rng::with_seed(1);
        let deck = new_deck_order(1);
        let once = riffle(&deck, &mut rng);
        let mut sorted = once.clone();
        sorted.sort_by_key(|c| c.index());
        let mut expected = deck.clone();
        expected.sort_by_key(|c| c.index());
        assert_eq!(sorted, expected);
        assert_ne!(once, deck);
        // A riffle of an ordered deck is two interleaved rising sequences (Bayer–Diaconis).
        let position: Vec<usize> = once
            .iter()
            .map(|c| deck.iter().position(|d| d == c).unwrap_or(0))
            .collect();
        let mut at = vec![0; 52];
        for (i, p) in position.iter().enumerate() {
            at[*p] = i;
        }
        let rising = 1 + (1..52).filter(|&v| at[v] < at[v - 1]).count();
        assert!(rising <= 2, "{rising} rising sequences");
    }
}
