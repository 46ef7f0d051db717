//! The common draw (Multi-hand Blackjack): any number of players share each box's cards.
//!
//! The boxes (1 or 3) are dealt once, like seats; every player's hand on a box starts with
//! the box's two cards. Play then goes in *steps*: every current hand (one per player box;
//! split hands play in turn) decides — `hit` is an explicit decision here — until all have
//! decided or the decision timer runs out. At the timeout the two-strike rule applies: a
//! player with more than one hand to decide may let the first timer pass; otherwise (or the
//! second time in a row) each undecided hand gets the automatic action, right to left: with
//! `hit_on_timeout`, a hit below hard 12 or soft 17, else stand. The next card out of the shoe
//! then goes to every hand that asked for one; if none did, it is burned. Time enters only as
//! `Tick` inputs; a step's deadline is the last tick's time plus the timer.
//!
//! This file holds what every part of the draw reads: the types players' pages get, which
//! hand of a box is current and what it owes, and the counts the engine's expectation asks
//! for. The handlers are one file per concern, each an `impl Engine` block: `betting.rs`
//! (bets, Let it play), `cards.rs` (the deal, each card to every hand that asked, burn
//! cards, steps, the dealer's draw), `decisions.rs` (players' decisions and insurance),
//! `time.rs` (the timer, the two-strike rule); `view.rs` answers panels and players.

mod betting;
mod cards;
mod decisions;
mod time;
mod view;

use super::io::{Action, SeatId};
use super::state::{Engine, Hand, HandState, Insurance, SeatPlay};
use crate::cards::Card;
use crate::money::Amount;

/// A hand that owes a decision in a common draw's open step.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OpenDecision {
    /// The player.
    pub player: String,
    /// The box.
    pub seat: SeatId,
    /// The hand within the player's box.
    pub hand: u8,
    /// Its best total.
    pub total: u8,
    /// Whether an ace counts 11 in `total`.
    pub soft: bool,
    /// The decisions it may take.
    pub allowed: Vec<Action>,
}

/// One player's hand on a box in a common draw (for players' pages).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PlayerHand {
    /// The player.
    pub player: String,
    /// The box.
    pub seat: SeatId,
    /// The hand within the player's box.
    pub hand: u8,
    /// Its cards (the box's two, then what it drew).
    pub cards: Vec<Card>,
    /// Its best total.
    pub total: u8,
    /// Everything staked on it.
    pub stake: Amount,
    /// Whether it is still in play (it may decide or take a card).
    pub live: bool,
}

/// The hand a box is playing now: split hands play in turn.
fn current(sp: &SeatPlay) -> Option<usize> {
    sp.hands
        .iter()
        .position(|h| matches!(h.state, HandState::Live | HandState::AwaitingDoubleCard))
}

/// Whether a current hand still owes a decision this step.
fn needs_decision(h: &Hand) -> bool {
    h.state == HandState::Live && h.cards.len() >= 2 && !h.hit_requested
}

/// Whether a current hand takes the next card.
fn wants_card(h: &Hand) -> bool {
    h.state == HandState::AwaitingDoubleCard
        || (h.state == HandState::Live && (h.hit_requested || h.cards.len() < 2))
}

impl Engine {
    fn timer_ms(&self) -> u64 {
        self.variant.timers.as_ref().map_or(0, |t| t.decision_ms)
    }

    fn player_index(&self, player: &str) -> Option<usize> {
        self.common
            .players
            .binary_search_by(|p| (*p.id).cmp(player))
            .ok()
    }

    fn current_hands(&self) -> impl Iterator<Item = &Hand> {
        self.common
            .players
            .iter()
            .flat_map(|p| p.boxes.iter())
            .filter_map(|sp| current(sp).map(|i| &sp.hands[i]))
    }

    /// Hands still owing a decision in the open step.
    pub(crate) fn common_pending_decisions(&self) -> usize {
        self.common.undecided
    }

    /// Marks the hands that owe a decision in the step now opening, and counts them.
    fn mark_step(&mut self) -> usize {
        let mut owing = 0;
        for sp in self
            .common
            .players
            .iter_mut()
            .flat_map(|p| p.boxes.iter_mut())
        {
            let current = current(sp);
            for (i, h) in sp.hands.iter_mut().enumerate() {
                h.in_step = Some(i) == current && needs_decision(h);
                owing += usize::from(h.in_step);
            }
        }
        owing
    }

    /// Hands that take the next card (0: it will be burned).
    pub(crate) fn common_wanting_card(&self) -> usize {
        self.current_hands().filter(|h| wants_card(h)).count()
    }

    /// Player boxes whose insurance question is open.
    pub(crate) fn common_pending_insurance(&self) -> usize {
        self.common
            .players
            .iter()
            .flat_map(|p| p.boxes.iter())
            .filter(|sp| sp.insurance == Insurance::Pending)
            .count()
    }

    /// When the open step times out, on the table's tick clock.
    pub(crate) fn common_deadline(&self) -> u64 {
        self.common.deadline
    }
}
