//! What a common draw shows: every hand owing a decision with what it may do, every
//! player's hands, stakes in side bets and open insurance questions. Read-only answers for
//! panels, players' pages and simulated players, apart from the handlers that change the
//! round.

use super::{current, needs_decision, OpenDecision, PlayerHand};
use crate::engine::io::{Action, SeatId};
use crate::engine::rules::{may_double, may_split, may_surrender};
use crate::engine::state::{Engine, HandState, Insurance, Phase};
use crate::money::Amount;

impl Engine {
    /// Every hand owing a decision in the open step, with what it may do (for panels,
    /// seat terminals and simulated players).
    pub fn open_decisions(&self) -> Vec<OpenDecision> {
        if self.phase != Phase::Deciding {
            return Vec::new();
        }
        let v = &*self.variant;
        let up = self.round.dealer[0];
        let mut out = Vec::new();
        for p in &self.common.players {
            for sp in &p.boxes {
                let Some(hi) = current(sp) else { continue };
                let h = &sp.hands[hi];
                if !needs_decision(h) {
                    continue;
                }
                let insured = matches!(sp.insurance, Insurance::Bought(_));
                let mut allowed = vec![Action::Hit, Action::Stand];
                if may_double(v, h) {
                    allowed.push(Action::Double);
                }
                if may_split(v, h, sp.hands.len(), insured) {
                    allowed.push(Action::Split);
                }
                if may_surrender(v, h, sp.hands.len(), up) {
                    allowed.push(Action::Surrender);
                }
                let total = h.cards.total(v.hand.ace);
                out.push(OpenDecision {
                    player: p.id.to_string(),
                    seat: sp.seat,
                    hand: hi as u8,
                    total: total.best,
                    soft: total.soft,
                    allowed,
                });
            }
        }
        out
    }

    /// Every player's hands in the round, player by player, box by box.
    pub fn player_hands(&self) -> Vec<PlayerHand> {
        let ace = self.variant.hand.ace;
        let mut out = Vec::new();
        for p in &self.common.players {
            for sp in &p.boxes {
                for (hi, h) in sp.hands.iter().enumerate() {
                    if h.state == HandState::NoBet {
                        continue;
                    }
                    out.push(PlayerHand {
                        player: p.id.to_string(),
                        seat: sp.seat,
                        // At most 4 hands a box (validated variant).
                        hand: hi as u8,
                        cards: h.cards.to_vec(),
                        total: h.cards.total(ace).best,
                        stake: h.stake,
                        live: matches!(h.state, HandState::Live | HandState::AwaitingDoubleCard),
                    });
                }
            }
        }
        out
    }

    /// Every player box's side bets staked this round, as (player, box, total), boxes
    /// without any left out. They stay staked after they are settled (a 21+3 at the first
    /// three cards), so a player's stake in the round is these plus the hands' stakes.
    pub fn player_specials(&self) -> Vec<(String, SeatId, Amount)> {
        self.common
            .players
            .iter()
            .flat_map(|p| {
                p.boxes.iter().filter_map(|sp| {
                    let total: Amount = sp.side.iter().map(|(_, stake)| *stake).sum();
                    (total > 0).then(|| (p.id.to_string(), sp.seat, total))
                })
            })
            .collect()
    }

    /// Every player box whose insurance question is open.
    pub fn open_insurance(&self) -> Vec<(String, SeatId)> {
        self.common
            .players
            .iter()
            .flat_map(|p| {
                p.boxes
                    .iter()
                    .filter(|sp| sp.insurance == Insurance::Pending)
                    .map(|sp| (p.id.to_string(), sp.seat))
            })
            .collect()
    }
}
