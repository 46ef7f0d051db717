//! The thread's shoe: the variant's cards dealt in a random order drawn one card at a
//! time (a Fisher–Yates step per card, so cards never dealt are never shuffled), and the
//! cut card. Apart from the round loop, since the common draw deals from it too; every
//! card goes through here, so its draw stays `#[inline]`.

use crate::cards::Card;
use crate::engine::{CardSource, Dealt, Variant};
use crate::sim::Rng;
use std::num::NonZeroU64;

/// The shoe, dealt in a random order drawn one card at a time.
pub(in crate::math) struct Deck {
    cards: Vec<Card>,
    dealt: usize,
    /// Cards dealt before the cut card comes out (shoes with a cut card).
    cut_at: Option<usize>,
    cut_out: bool,
    /// Where the next card needs more than a draw: the cut card's place while it is still
    /// in the shoe, else the shoe's end (one comparison a card on the hot path).
    stop: usize,
}

impl Deck {
    pub(in crate::math) fn new(v: &Variant) -> Deck {
        let n = usize::from(v.shoe.decks) * 52;
        let mut deck = Deck {
            cards: (0..n).filter_map(|i| Card::from_index(i % 52)).collect(),
            dealt: 0,
            // Like the table simulator: the cut card three quarters into the shoe.
            cut_at: v.shoe.cut_card.then_some(n - n / 4),
            cut_out: false,
            stop: 0,
        };
        deck.reset();
        deck
    }

    pub(in crate::math) fn reset(&mut self) {
        self.dealt = 0;
        self.cut_out = false;
        self.stop = self
            .cut_at
            .map_or(self.cards.len(), |at| at.min(self.cards.len()));
    }

    /// The next thing out of the shoe: the cut card when it is due, else a card.
    #[inline]
    pub(in crate::math) fn next(&mut self, rng: &mut Rng) -> Option<Dealt> {
        if self.dealt >= self.stop {
            return self.at_stop(rng);
        }
        self.draw(rng).map(Dealt::Card)
    }

    /// The cut card if it is due, else a card if any is left.
    #[cold]
    fn at_stop(&mut self, rng: &mut Rng) -> Option<Dealt> {
        self.stop = self.cards.len();
        if !self.cut_out && self.cut_at.is_some_and(|at| self.dealt >= at) {
            self.cut_out = true;
            return Some(Dealt::CutCard);
        }
        self.draw(rng).map(Dealt::Card)
    }

    /// A card drawn uniformly from those not dealt yet (one Fisher–Yates step, the draw
    /// `Rng::below` makes), or `None` once the shoe is empty.
    #[inline]
    fn draw(&mut self, rng: &mut Rng) -> Option<Card> {
        let rest = self.cards.get_mut(self.dealt..)?;
        let left = NonZeroU64::new(rest.len() as u64)?;
        // `below(left)` without its guard against zero (`left` is not).
        let j = (rng.next_u64() % left) as usize;
        rest.swap(0, j);
        self.dealt += 1;
        Some(rest[0])
    }
}

/// The deck and its generator: the shoe the engine deals from (`Engine::deal_from`),
/// borrowed for each call (one struct owning both for the whole run measured some 2.5 %
/// slower a round).
pub(super) struct DeckShoe<'a> {
    pub(super) deck: &'a mut Deck,
    pub(super) rng: &'a mut Rng,
}

impl CardSource for DeckShoe<'_> {
    #[inline(always)]
    fn next_dealt(&mut self) -> Option<Dealt> {
        self.deck.next(self.rng)
    }
}
