//! What the round expects next — the dealer panel shows exactly this.

use super::hand::Total;
use super::io::{behind_follows, Action, Place, SeatId};
use super::shoe::ShoeStage;
use super::state::{Bonus, Engine, HandState, Insurance, Phase};
use crate::cards::Card;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;
use std::fmt;

/// The next thing the engine is waiting for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expectation {
    /// Bets for a new round.
    Bets,
    /// The shoe is finished: a shuffle.
    Shuffle,
    /// The burn procedure's first card, whose value says how many to burn.
    RevealCard,
    /// This many more burn cards.
    BurnCards(u8),
    /// A card of the initial deal, for this place.
    DealCard(Place),
    /// Insurance / even-money answers from these seats (a card or decision for the first
    /// hand to act closes it, the rest declined).
    InsuranceAnswers {
        /// Seats yet to answer.
        seats: Vec<SeatId>,
        /// Players behind seats yet to answer: (player, seat).
        behind: Vec<(String, SeatId)>,
    },
    /// A card for this hand, and no decision (second card after a split, a double's card).
    HandCard {
        /// The seat.
        seat: SeatId,
        /// The hand.
        hand: u8,
    },
    /// A decision for this hand, or a card as a hit.
    Decision {
        /// The seat.
        seat: SeatId,
        /// The hand.
        hand: u8,
        /// The decisions allowed now; a card is always a hit.
        allowed: Vec<Action>,
    },
    /// A card for the dealer.
    DealerCard,
    /// Bonus-game outcomes for these seats.
    Bonus(Vec<SeatId>),
    /// Common draw: insurance answers from this many player boxes, until the deadline.
    PlayersInsurance {
        /// Player boxes yet to answer.
        pending: usize,
        /// When the question closes (tick clock, ms).
        deadline_ms: u64,
    },
    /// Common draw: decisions from this many hands, until the deadline.
    PlayerDecisions {
        /// Hands yet to decide.
        pending: usize,
        /// When the timer runs out (tick clock, ms).
        deadline_ms: u64,
    },
    /// Common draw: the next card, for this many hands (0: it will be burned).
    DrawCard {
        /// Hands that asked for it.
        hands: usize,
    },
}

impl fmt::Display for Expectation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let seats = |s: &[SeatId]| {
            s.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            Expectation::Bets => f.write_str("bets"),
            Expectation::Shuffle => f.write_str("shuffle: the shoe is finished"),
            Expectation::RevealCard => f.write_str("burn: reveal the first card"),
            Expectation::BurnCards(n) => write!(f, "burn: {n} more card(s)"),
            Expectation::DealCard(p) => write!(f, "card for {p}"),
            Expectation::InsuranceAnswers { seats: s, behind } if behind.is_empty() => {
                write!(f, "insurance answers from seat(s) {}", seats(s))
            }
            // Every seat has answered: only players behind are left.
            Expectation::InsuranceAnswers { seats: s, behind } if s.is_empty() => write!(
                f,
                "insurance answers from {} player(s) behind",
                behind.len()
            ),
            Expectation::InsuranceAnswers { seats: s, behind } => write!(
                f,
                "insurance answers from seat(s) {} and {} player(s) behind",
                seats(s),
                behind.len()
            ),
            Expectation::HandCard { seat, hand } => {
                write!(f, "card for seat {seat}, hand {}", hand + 1)
            }
            Expectation::Decision {
                seat,
                hand,
                allowed,
            } => {
                let names: Vec<&str> = allowed.iter().map(|a| a.name()).collect();
                write!(
                    f,
                    "decision from seat {seat}, hand {} (card = hit; {})",
                    hand + 1,
                    names.join(", ")
                )
            }
            Expectation::DealerCard => f.write_str("dealer card"),
            Expectation::Bonus(s) => write!(f, "bonus-game outcome for seat(s) {}", seats(s)),
            Expectation::PlayersInsurance {
                pending,
                deadline_ms,
            } => {
                write!(
                    f,
                    "insurance answers from {pending} box(es) until {deadline_ms} ms"
                )
            }
            Expectation::PlayerDecisions {
                pending,
                deadline_ms,
            } => {
                write!(f, "decisions from {pending} hand(s) until {deadline_ms} ms")
            }
            Expectation::DrawCard { hands: 0 } => f.write_str("card (a burn card: no hand asked)"),
            Expectation::DrawCard { hands } => write!(f, "card for {hands} hand(s)"),
        }
    }
}

/// What a seat-by-seat round waits for next, without allocating: the simulator's hot
/// path asks this (`expectation` is the full answer, with its lists).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Bets for a new round.
    Bets,
    /// A shuffle: the shoe is finished.
    Shuffle,
    /// A card: a burn card, the initial deal, a hand's card or the dealer's.
    Card,
    /// An insurance answer from this seat (the first yet to answer).
    Insurance(SeatId),
    /// A decision (or a card as a hit) for the hand in play: see `active_hand`.
    Decision,
    /// A bonus-game outcome for this seat.
    Bonus(SeatId),
    /// Anything else (a common draw's steps, players behind answering insurance): ask
    /// `expectation`.
    Other,
}

/// The hand in play when it waits for a decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveHand<'a> {
    /// The seat.
    pub seat: SeatId,
    /// The hand's index within the seat.
    pub hand: u8,
    /// Its cards.
    pub cards: &'a [Card],
    /// It was made by a split.
    pub from_split: bool,
    /// How many times it doubled.
    pub doubles: u8,
    /// The dealer's up card.
    pub up: Card,
    /// The decisions allowed now (a card is always a hit).
    pub allowed: SmallVec<[Action; 8]>,
}

/// The hand in play when it waits for a decision, without the list of what it may do:
/// `Engine::may_decide` answers for one decision at a time (the simulator's hot path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandInPlay<'a> {
    /// The seat.
    pub seat: SeatId,
    /// Its cards.
    pub cards: &'a [Card],
    /// It was made by a split.
    pub from_split: bool,
    /// How many times it doubled.
    pub doubles: u8,
    /// The dealer's up card.
    pub up: Card,
    /// Its points with every ace counted as 1, as the engine keeps them.
    pub hard: u16,
    /// Its aces.
    pub aces: u8,
    /// Its ten-values.
    pub tens: u8,
}

impl HandInPlay<'_> {
    /// Only ten-values and at most one ace so far (a natural's shape): the engine's
    /// `Cards::natural_still_possible`, from the counts carried here.
    #[inline]
    pub fn natural_shape(&self) -> bool {
        self.aces <= 1 && usize::from(self.aces + self.tens) == self.cards.len()
    }
}

impl Engine {
    /// The hand in play when it waits for a decision (`Step::Decision`), without its list
    /// of allowed decisions (see `active_hand` for the list).
    #[inline]
    pub fn hand_in_play(&self) -> Option<HandInPlay<'_>> {
        let Phase::Playing { seat, hand } = self.phase else {
            return None;
        };
        let sp = &self.round.seats[usize::from(seat)];
        let h = &sp.hands[usize::from(hand)];
        Some(HandInPlay {
            seat: sp.seat,
            cards: &h.cards,
            from_split: h.from_split,
            doubles: h.doubles,
            up: *self.round.dealer.first()?,
            hard: h.cards.hard_points(),
            aces: h.cards.aces(),
            tens: h.cards.tens(),
        })
    }

    /// Whether the hand in play may take `action` now: what `active_hand().allowed` lists,
    /// one decision at a time, without building the list.
    pub fn may_decide(&self, action: Action) -> bool {
        match self.phase {
            Phase::Playing { seat, hand } => self.may_take(seat, hand, action),
            _ => false,
        }
    }

    /// What a seat-by-seat round waits for next, without allocating.
    #[inline]
    pub fn step(&self) -> Step {
        if self.variant.deal.mode == super::variant::DealMode::CommonDraw {
            return Step::Other;
        }
        match self.phase {
            Phase::Idle => match self.shoe.stage() {
                ShoeStage::Ready => Step::Bets,
                ShoeStage::Finished => Step::Shuffle,
                ShoeStage::AwaitingReveal | ShoeStage::Burning(_) => Step::Card,
            },
            Phase::Dealing(_) | Phase::Dealer => Step::Card,
            Phase::Insurance => self
                .round
                .seats
                .iter()
                .find(|s| s.insurance == Insurance::Pending)
                .map_or(Step::Other, |s| Step::Insurance(s.seat)),
            Phase::Playing { seat, hand } => {
                if self.hand_waits_for_card(seat, hand) {
                    Step::Card
                } else {
                    Step::Decision
                }
            }
            Phase::AwaitingBonus => self
                .round
                .seats
                .iter()
                .find(|s| matches!(s.bonus, Bonus::Pending(_)))
                .map_or(Step::Other, |s| Step::Bonus(s.seat)),
            Phase::Deciding | Phase::Drawing => Step::Other,
        }
    }

    /// Whether the hand in play (seat and hand index) waits for a card (a split hand's
    /// second card, a double's) rather than a decision.
    #[inline]
    pub(super) fn hand_waits_for_card(&self, seat: u8, hand: u8) -> bool {
        let h = &self.round.seats[usize::from(seat)].hands[usize::from(hand)];
        h.cards.len() < 2 || h.state == HandState::AwaitingDoubleCard
    }

    /// The players behind `seat` who follow `action` (a double or a split) of its active
    /// hand now: a double with follow-double (past the first hand, with follow-split too),
    /// a split with follow-split. The balance rules' question before the decision.
    pub fn followers(&self, seat: SeatId, action: Action) -> Vec<String> {
        let Phase::Playing { seat: si, hand } = self.phase else {
            return Vec::new();
        };
        let sp = &self.round.seats[usize::from(si)];
        if sp.seat != seat {
            return Vec::new();
        }
        sp.behind
            .iter()
            .filter(|b| match action {
                Action::Double => behind_follows(b.follow_double, b.follow_split, hand, true),
                Action::Split => b.follow_split,
                _ => false,
            })
            .map(|b| b.player.to_string())
            .collect()
    }

    /// The hand in play when it waits for a decision (`Step::Decision`).
    pub fn active_hand(&self) -> Option<ActiveHand<'_>> {
        let Phase::Playing { seat, hand } = self.phase else {
            return None;
        };
        let sp = &self.round.seats[usize::from(seat)];
        let h = &sp.hands[usize::from(hand)];
        Some(ActiveHand {
            seat: sp.seat,
            hand,
            cards: &h.cards,
            from_split: h.from_split,
            doubles: h.doubles,
            up: *self.round.dealer.first()?,
            allowed: self.allowed(seat, hand),
        })
    }

    /// What the engine expects next.
    pub fn expectation(&self) -> Expectation {
        if self.variant.deal.mode == super::variant::DealMode::CommonDraw {
            match self.phase {
                Phase::Dealing(step) => {
                    return Expectation::DealCard(
                        self.common_deal_target(step).unwrap_or(Place::Dealer),
                    )
                }
                Phase::Insurance => {
                    return Expectation::PlayersInsurance {
                        pending: self.common_pending_insurance(),
                        deadline_ms: self.common_deadline(),
                    }
                }
                _ => {}
            }
        }
        match self.phase {
            Phase::Idle => match self.shoe.stage() {
                ShoeStage::Ready => Expectation::Bets,
                ShoeStage::Finished => Expectation::Shuffle,
                ShoeStage::AwaitingReveal => Expectation::RevealCard,
                ShoeStage::Burning(n) => Expectation::BurnCards(n),
            },
            Phase::Dealing(step) => {
                Expectation::DealCard(self.deal_target_at(step).unwrap_or(Place::Dealer))
            }
            Phase::Insurance => Expectation::InsuranceAnswers {
                seats: self
                    .round
                    .seats
                    .iter()
                    .filter(|s| s.insurance == Insurance::Pending)
                    .map(|s| s.seat)
                    .collect(),
                behind: self
                    .round
                    .seats
                    .iter()
                    .flat_map(|s| {
                        s.behind
                            .iter()
                            .filter(|b| b.insurance == Insurance::Pending)
                            .map(|b| (b.player.to_string(), s.seat))
                    })
                    .collect(),
            },
            Phase::Playing { seat, hand } => {
                let sp = &self.round.seats[usize::from(seat)];
                let h = &sp.hands[usize::from(hand)];
                if h.cards.len() < 2 || h.state == HandState::AwaitingDoubleCard {
                    Expectation::HandCard {
                        seat: sp.seat,
                        hand,
                    }
                } else {
                    Expectation::Decision {
                        seat: sp.seat,
                        hand,
                        allowed: self.allowed(seat, hand).to_vec(),
                    }
                }
            }
            Phase::Dealer => Expectation::DealerCard,
            Phase::AwaitingBonus => Expectation::Bonus(self.pending_bonuses()),
            Phase::Deciding => Expectation::PlayerDecisions {
                pending: self.common_pending_decisions(),
                deadline_ms: self.common_deadline(),
            },
            Phase::Drawing => Expectation::DrawCard {
                hands: self.common_wanting_card(),
            },
        }
    }

    /// Seats whose bonus game still waits for its outcome (the round can go on meanwhile;
    /// it settles only when all are in).
    pub fn pending_bonuses(&self) -> Vec<SeatId> {
        self.round
            .seats
            .iter()
            .filter(|s| matches!(s.bonus, Bonus::Pending(_)))
            .map(|s| s.seat)
            .collect()
    }

    /// Whether `seat` may give this insurance answer now.
    pub fn allows_insurance_answer(&self, seat: SeatId, action: Action) -> bool {
        self.insurance_answer(seat, action).is_ok()
    }

    /// The best total of a hand in the current round.
    pub fn hand_total(&self, seat: SeatId, hand: u8) -> Option<u8> {
        self.hand_score(seat, hand).map(|t| t.best)
    }

    /// `seat`'s hand `hand`'s total, and whether an ace counts 11 in it.
    pub fn hand_score(&self, seat: SeatId, hand: u8) -> Option<Total> {
        let sp = self.round.seats.iter().find(|s| s.seat == seat)?;
        let h = sp.hands.get(usize::from(hand))?;
        Some(h.cards.total(self.variant.hand.ace))
    }

    /// The multipliers `seat`'s pending bonus game can draw.
    pub fn bonus_multipliers(&self, seat: SeatId) -> Option<&[u32]> {
        let sp = self.round.seats.iter().find(|s| s.seat == seat)?;
        let Bonus::Pending(table) = sp.bonus else {
            return None;
        };
        self.variant
            .side_bets
            .iter()
            .find_map(|s| s.bonus.get(table.table()))
            .map(Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::Expectation;

    #[test]
    fn insurance_owed_only_by_players_behind_names_no_seats() {
        let behind = vec![("alice".to_string(), 2)];
        let only_behind = Expectation::InsuranceAnswers {
            seats: Vec::new(),
            behind: behind.clone(),
        };
        assert_eq!(
            only_behind.to_string(),
            "insurance answers from 1 player(s) behind"
        );
        let both = Expectation::InsuranceAnswers {
            seats: vec![3],
            behind,
        };
        assert_eq!(
            both.to_string(),
            "insurance answers from seat(s) 3 and 1 player(s) behind"
        );
    }
}
