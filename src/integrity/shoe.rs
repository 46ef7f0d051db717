//! Shoe-integrity statistics: pure functions of dealt card orders (no clock, no I/O).
//!
//! Two checks, both on the order the cards came out of the shoe (burn cards included):
//!
//! * **Repeat** — the longest run of consecutive cards that also appears, in the same order,
//!   in one of the table's last K shoes. Two properly shuffled 6-deck shoes share runs of 2
//!   all the time and of 3 now and then; a shoe that was not shuffled (or riffled once)
//!   repeats runs of ten and more.
//! * **Order** — how many neighbouring pairs are *sequence neighbours* (same suit, ranks one
//!   apart: 7♥ 8♥ or 8♥ 7♥), against what a random order gives. Cards fresh from the box
//!   lie in rank order whatever the brand's suit order, so an unshuffled or barely shuffled
//!   new shoe is far above its expectation. Reported as a z-score.

use crate::cards::Card;
use serde::{Deserialize, Serialize};

/// How strict the checks are (`[integrity]` in `table.toml`, validated there).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Thresholds {
    /// A run longer than this, shared with a recent shoe, means the shoe was not shuffled.
    pub max_common_run: usize,
    /// A sequence-neighbour z-score above this means the shoe's own order is not random.
    pub max_order_z: f64,
    /// Shoes with fewer dealt cards than this are not judged (a fresh shoe every round).
    pub min_cards: usize,
}

impl Default for Thresholds {
    fn default() -> Thresholds {
        Thresholds {
            max_common_run: 5,
            max_order_z: 4.0,
            min_cards: 52,
        }
    }
}

/// What the checks found about one shoe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The shoe's number.
    pub shoe: u32,
    /// Cards dealt from it (burns included).
    pub cards: usize,
    /// Whether it was judged (enough cards).
    pub checked: bool,
    /// The longest run shared with one of the recent shoes.
    pub common_run: usize,
    /// That shoe's number, when the run is at least 2.
    pub common_with: Option<u32>,
    /// Sequence-neighbour pairs in its order.
    pub neighbours: usize,
    /// Their expected number under a random order.
    pub neighbours_expected: f64,
    /// `(neighbours - expected) / sd`.
    pub order_z: f64,
    /// Why the shoe is suspicious; empty when it is not.
    pub reasons: Vec<String>,
}

impl Verdict {
    /// Whether a supervisor should look at this shoe.
    pub fn suspicious(&self) -> bool {
        !self.reasons.is_empty()
    }
}

/// The longest run of consecutive cards of `a` that also appears consecutively in `b`
/// (longest common substring, O(|a|·|b|) time, O(|b|) memory: 234 × 234 cards is
/// microseconds).
pub fn longest_common_run(a: &[Card], b: &[Card]) -> usize {
    let mut prev = vec![0usize; b.len() + 1];
    let mut cur = vec![0usize; b.len() + 1];
    let mut best = 0;
    for x in a {
        for (j, y) in b.iter().enumerate() {
            cur[j + 1] = if x == y { prev[j] + 1 } else { 0 };
            best = best.max(cur[j + 1]);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    best
}

/// Whether two cards are sequence neighbours: same suit, ranks one apart.
fn neighbours(a: Card, b: Card) -> bool {
    a.suit == b.suit && a.rank.number().abs_diff(b.rank.number()) == 1
}

/// Neighbour pairs in `order`, and their mean and standard deviation when `order` is the
/// first cards of a random permutation of a `decks`-deck shoe.
pub fn neighbour_pairs(order: &[Card], decks: u32) -> (usize, f64, f64) {
    let observed = order.windows(2).filter(|w| neighbours(w[0], w[1])).count();
    let d = f64::from(decks.max(1));
    let n = 52.0 * d;
    // Ordered neighbour pairs of physical cards: 4 suits × 12 adjacent rank pairs × 2
    // orders × d² copies, out of n(n-1) ordered pairs of distinct cards.
    let p = (96.0 * d * d) / (n * (n - 1.0));
    let pairs = order.len().saturating_sub(1) as f64;
    let mean = pairs * p;
    // Binomial variance: the pairs overlap, but the correction is second order here.
    let sd = (pairs * p * (1.0 - p)).sqrt();
    (observed, mean, sd)
}

/// Judges shoe `shoe` (dealt in `order`, from a `decks`-deck shoe) against the recent
/// shoes `history` (number, order), most recent last.
pub fn judge(
    shoe: u32,
    order: &[Card],
    decks: u32,
    history: &[(u32, Vec<Card>)],
    t: &Thresholds,
) -> Verdict {
    let mut common_run = 0;
    let mut common_with = None;
    for (number, past) in history {
        let run = longest_common_run(order, past);
        if run > common_run {
            common_run = run;
            common_with = Some(*number);
        }
    }
    if common_run < 2 {
        common_with = None;
    }
    let (observed, mean, sd) = neighbour_pairs(order, decks);
    let order_z = if sd > 0.0 {
        (observed as f64 - mean) / sd
    } else {
        0.0
    };
    let checked = order.len() >= t.min_cards;
    let mut reasons = Vec::new();
    if checked {
        if common_run > t.max_common_run {
            reasons.push(format!(
                "{common_run} cards in the same order as shoe {} (over {}): not shuffled",
                common_with.unwrap_or(0),
                t.max_common_run
            ));
        }
        if order_z > t.max_order_z {
            reasons.push(format!(
                "{observed} cards next to their sequence neighbour (random: {mean:.1}; z = {order_z:.1}, over {}): not shuffled",
                t.max_order_z
            ));
        }
    }
    Verdict {
        shoe,
        cards: order.len(),
        checked,
        common_run,
        common_with,
        neighbours: observed,
        neighbours_expected: mean,
        order_z,
        reasons,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integrity::riffle;

    fn c(s: &str) -> Card {
        s.parse().expect("card")
    }

    #[test]
    fn common_run_finds_the_longest_shared_stretch() {
        let a: Vec<Card> = ["AS", "2S", "3S", "4S", "KH"].map(c).to_vec();
        let b: Vec<Card> = ["KH", "2S", "3S", "4S", "QD"].map(c).to_vec();
        assert_eq!(longest_common_run(&a, &b), 3);
        assert_eq!(longest_common_run(&a, &[]), 0);
        assert_eq!(longest_common_run(&a, &a), 5);
    }

    #[test]
    fn neighbours_count_either_direction_within_a_suit() {
        let order: Vec<Card> = ["7H", "8H", "7H", "7S", "AD", "2D"].map(c).to_vec();
        let (observed, mean, sd) = neighbour_pairs(&order, 6);
        assert_eq!(observed, 3);
        assert!(mean > 0.0 && sd > 0.0);
    }

    #[test]
    fn a_repeated_shoe_is_suspicious_and_a_fresh_box_too() {
        let t = Thresholds::default();
        let mut rng = fastrand::Rng::with_seed(7);
        let past = riffle::shuffled(6, &mut rng);
        let dealt = &past[..234];
        let v = judge(2, dealt, 6, &[(1, dealt.to_vec())], &t);
        assert!(v.suspicious(), "{v:?}");
        assert_eq!(v.common_run, 234);
        assert_eq!(v.common_with, Some(1));

        let fresh = riffle::new_deck_order(6);
        let v = judge(3, &fresh[..234], 6, &[], &t);
        assert!(v.suspicious() && v.order_z > 50.0, "{v:?}");
    }

    #[test]
    fn a_short_shoe_is_not_judged() {
        let fresh = riffle::new_deck_order(1);
        let v = judge(
            1,
            &fresh[..10],
            1,
            &[(0, fresh[..10].to_vec())],
            &Thresholds::default(),
        );
        assert!(!v.checked && !v.suspicious());
    }
}
