//! The shoe: what it holds, what has come out of it, and where it is in its lifecycle
//! (shuffle → burn → rounds → cut card → finished).

use super::variant::{Burn, ShoeRules};
use crate::cards::{Card, Rank};

/// Where the shoe is in its lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShoeStage {
    /// Waiting for the burn procedure's reveal card.
    AwaitingReveal,
    /// This many burn cards still to come.
    Burning(u8),
    /// Burned and ready for rounds.
    Ready,
    /// The round in which the cut card appeared has settled: the next input must be a
    /// shuffle.
    Finished,
}

/// One shoe's composition and lifecycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shoe {
    decks: u8,
    /// Copies of each card (by `Card::index`) already out of this shoe.
    out: [u8; 52],
    /// Cards out of this shoe, burns included.
    dealt: u16,
    /// Cards burned in this shoe.
    burned: u16,
    /// The cut card has appeared: the current (or next) round is the last.
    cut_seen: bool,
    stage: ShoeStage,
    /// Counts shoes since the engine started (the first shoe is 1).
    number: u32,
}

/// Why a card cannot come out of this shoe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exhausted {
    /// The copies of the card already out.
    pub out: u8,
}

impl Shoe {
    /// A freshly shuffled, already burned shoe, as a replay or a new table starts with.
    pub fn ready(rules: &ShoeRules) -> Shoe {
        Shoe {
            decks: rules.decks,
            out: [0; 52],
            dealt: 0,
            burned: 0,
            cut_seen: false,
            stage: ShoeStage::Ready,
            // A game that takes a new shoe every round shuffles it when the bets open.
            number: if rules.new_shoe_every_round { 0 } else { 1 },
        }
    }

    /// Starts a new shoe: the composition is full again and the burn procedure begins.
    pub fn shuffle(&mut self, rules: &ShoeRules) {
        self.out = [0; 52];
        self.dealt = 0;
        self.burned = 0;
        self.cut_seen = false;
        self.number += 1;
        self.stage = match rules.burn {
            Burn::None => ShoeStage::Ready,
            Burn::Fixed => ShoeStage::Burning(rules.burn_count),
            Burn::RevealValue => ShoeStage::AwaitingReveal,
        };
    }

    /// Checks that another copy of `card` can still be in the shoe.
    pub fn check(&self, card: Card) -> Result<(), Exhausted> {
        let out = self.out[card.index()];
        if out >= self.decks {
            Err(Exhausted { out })
        } else {
            Ok(())
        }
    }

    /// Records `card` as out of the shoe. Call [`Shoe::check`] first.
    pub fn take(&mut self, card: Card) {
        self.out[card.index()] += 1;
        self.dealt += 1;
    }

    /// Records `card` (already checked) as a burn card and advances the burn procedure.
    pub fn burn(&mut self, card: Card, rules: &ShoeRules) {
        self.take(card);
        self.burned += 1;
        self.stage = match self.stage {
            ShoeStage::AwaitingReveal => {
                let n = match card.rank {
                    Rank::Ace => rules.burn_ace_value,
                    r => r.points(),
                };
                ShoeStage::Burning(n)
            }
            ShoeStage::Burning(n) if n > 1 => ShoeStage::Burning(n - 1),
            _ => ShoeStage::Ready,
        };
    }

    /// Records `card` (already checked) as taken out of play: out of the shoe and on the
    /// burn pile, without advancing the burn procedure.
    pub fn discard(&mut self, card: Card) {
        self.take(card);
        self.burned += 1;
    }

    /// Records the cut card.
    pub fn see_cut(&mut self) {
        self.cut_seen = true;
    }

    /// Marks the shoe finished if the cut card has appeared (call when a round settles).
    pub fn round_settled(&mut self) {
        if self.cut_seen {
            self.stage = ShoeStage::Finished;
        }
    }

    /// The lifecycle stage.
    pub fn stage(&self) -> ShoeStage {
        self.stage
    }

    /// Whether the cut card has appeared in this shoe.
    pub fn cut_seen(&self) -> bool {
        self.cut_seen
    }

    /// Cards out of this shoe, burns included.
    pub fn dealt(&self) -> u16 {
        self.dealt
    }

    /// Burn cards so far in this shoe.
    pub fn burned(&self) -> u16 {
        self.burned
    }

    /// Cards still in the shoe.
    pub fn remaining(&self) -> u16 {
        u16::from(self.decks) * 52 - self.dealt
    }

    /// The shoe's number since the engine started.
    pub fn number(&self) -> u32 {
        self.number
    }
}
