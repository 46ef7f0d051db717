//! The rules engine: pure, deterministic, sans-IO. It takes inputs (bets, cards, decisions,
//! bonus outcomes, shuffles) one at a time and returns events, or a rejection that changes
//! nothing. No clock, no randomness, no I/O: the live table, `croupier replay`, recovery
//! and simulation all drive this same code.
//!
//! Where a rule lives: `variant` (every setting, as read from `config/variants/*.toml`),
//! `shoe` (composition, burn, cut card), `hand` (totals, naturals), `round` (the state
//! machine and every allowed decision), `settle` (outcomes and payouts), `sidebets/` (one
//! module per side-bet family), `expect` (what the round waits for next), `timeouts` (timed
//! seats: a remote player's decision timer and resume window, on ticks).

mod bets;
pub mod common;
mod expect;
mod hand;
mod io;
mod lifecycle;
mod round;
mod rules;
mod settle;
mod shoe;
pub mod sidebets;
mod source;
mod state;
mod timeouts;
pub mod variant;

pub use common::{OpenDecision, PlayerHand};
pub use expect::{ActiveHand, Expectation, HandInPlay, Step};
pub use hand::{is_natural_cards, total, Total};
pub use io::{
    behind_follows, Action, BehindBet, BetKind, BetResult, Code, Event, EventSink, HandResult,
    Input, NoEvents, Outcome, Place, PlayerBets, Rejection, RoundResult, SeatBets, SeatId,
};
pub use settle::{SettledBet, SettledHand, SettledKind, SettlementSink};
pub use shoe::{Shoe, ShoeStage};
pub use source::{CardSource, DealRefused, Dealt};
pub use state::Engine;
pub use variant::{Variant, VariantError};

use state::reject;
use variant::DealMode;

/// The one entry point, `apply`: each input goes to the handler for its kind of round
/// (`round.rs` seat by seat, `common.rs` the common draw) or to what both share
/// (`lifecycle.rs`). `decision_to` and `repeat_bets_to` are two of its arms, callable
/// without an `Input`, and `deal_from` / `hit_from` (`source.rs`) its card arm fed from a
/// shoe (the simulator).
impl Engine {
    /// Applies one input. On success the events it caused are appended to `events`; on
    /// rejection nothing changes (and nothing is appended).
    pub fn apply(&mut self, input: &Input, events: &mut Vec<Event>) -> Result<(), Rejection> {
        self.apply_to(input, events)
    }

    /// `apply` into any event sink: the same code, the same state; [`NoEvents`] builds no
    /// events (the simulator, which reads the state).
    #[inline]
    pub fn apply_to(
        &mut self,
        input: &Input,
        events: &mut impl EventSink,
    ) -> Result<(), Rejection> {
        let mark = events.len();
        let result = self.dispatch(input, events);
        Self::finish(result, mark, events)
    }

    /// `apply_to(&Input::Decision { seat, action }, events)` without building the input:
    /// the simulator's millions of decisions a second. The typed entry points box their
    /// rejection, so an accepted input returns in a register.
    #[inline]
    pub fn decision_to(
        &mut self,
        seat: SeatId,
        action: Action,
        events: &mut impl EventSink,
    ) -> Result<(), Box<Rejection>> {
        let mark = events.len();
        let result = self.seat_decision(seat, action, events);
        Self::finish_boxed(result, mark, events)
    }

    /// `apply_to(&Input::Bets(bets), events)` with the bets the last round opened with,
    /// without building or comparing them: the simulator bets the same every round. Refused
    /// (`invalid_bet`) before any round has been bet, and in a common draw
    /// (`action_not_allowed`: players bet there); otherwise accepted or refused exactly as
    /// those bets would be.
    #[inline]
    pub fn repeat_bets_to(&mut self, events: &mut impl EventSink) -> Result<(), Box<Rejection>> {
        let mark = events.len();
        let result = if self.variant.deal.mode == DealMode::CommonDraw {
            not_seat_by_seat()
        } else {
            self.on_repeat_bets(events)
        };
        Self::finish_boxed(result, mark, events)
    }

    /// A handler's result as the API gives it; a rejection drops the events since `mark`.
    #[inline]
    fn finish(
        result: state::Handled,
        mark: usize,
        events: &mut impl EventSink,
    ) -> Result<(), Rejection> {
        Self::finish_boxed(result, mark, events).map_err(|rejection| *rejection)
    }

    /// `finish` with the rejection left boxed (the typed entry points).
    #[inline]
    fn finish_boxed(
        result: state::Handled,
        mark: usize,
        events: &mut impl EventSink,
    ) -> state::Handled {
        if result.is_err() {
            events.truncate(mark);
        }
        result
    }

    /// A seated player's decision (refused in a common draw, where players decide).
    #[inline]
    fn seat_decision(
        &mut self,
        seat: SeatId,
        action: Action,
        events: &mut impl EventSink,
    ) -> state::Handled {
        if self.variant.deal.mode == DealMode::CommonDraw {
            return not_seat_by_seat();
        }
        self.on_decision(seat, action, events)
    }

    /// A double or a split (`action`) that some followers cannot pay: checked whole first
    /// (each short player follows it, `Engine::followers`), then the decision, then the
    /// followers marked — for them a double's card is a hit (`BehindPlay::unfollowed`), a
    /// split's second hand is not theirs (`follow_split` cleared) — so a refused decision
    /// marks nobody.
    fn on_follow_short(
        &mut self,
        seat: SeatId,
        action: Action,
        short: &[String],
        events: &mut impl EventSink,
    ) -> state::Handled {
        let state::Phase::Playing { seat: si, hand: hi } = self.phase else {
            return self.seat_decision(seat, action, events);
        };
        if self.round.seats[usize::from(si)].seat == seat {
            let followers = self.followers(seat, action);
            if let Some(p) = short.iter().find(|p| !followers.contains(*p)) {
                return reject(
                    Code::ActionNotAllowed,
                    format!(
                        "{p} does not follow seat {seat}'s {} on this hand",
                        action.name()
                    ),
                );
            }
        }
        self.seat_decision(seat, action, events)?;
        for b in &mut self.round.seats[usize::from(si)].behind {
            if short.iter().any(|p| p.as_str() == &*b.player) {
                match action {
                    Action::Double => b.unfollowed.push(hi),
                    _ => b.follow_split = false,
                }
            }
        }
        Ok(())
    }

    /// The handler for the input. Kept small and inlined into the caller, with each handler
    /// a call of its own: an input costs a branch and a call, not the frame of one
    /// function holding every handler.
    #[inline]
    fn dispatch(&mut self, input: &Input, events: &mut impl EventSink) -> state::Handled {
        let common = self.variant.deal.mode == DealMode::CommonDraw;
        // One match on the input, the commonest first (nearly every input is a card).
        match input {
            Input::Card(card) => self.on_card(*card, events),
            Input::Decision { seat, action } => self.seat_decision(*seat, *action, events),
            Input::DoubleShort { seat, short } => {
                self.on_follow_short(*seat, Action::Double, short, events)
            }
            Input::SplitShort { seat, short } => {
                self.on_follow_short(*seat, Action::Split, short, events)
            }
            Input::Bets(bets) if !common => self.on_bets(bets, events),
            Input::Bets(_) => not_seat_by_seat(),
            Input::PlayerBets(bets) if common => self.on_player_bets(bets, events),
            Input::PlayerBets(_) => reject(
                Code::ActionNotAllowed,
                "this game is played seat by seat: bets come from seats",
            ),
            Input::PlayerDecision {
                player,
                seat,
                action,
            } => self.on_player_decision(player, *seat, *action, common, events),
            Input::CutCard => self.on_cut_card(events),
            Input::Bonus { seat, multiplier } => self.on_bonus(*seat, *multiplier, events),
            Input::Shuffle => self.on_shuffle(events),
            Input::Tick { now_ms } => {
                self.common.now = self.common.now.max(*now_ms);
                if self.expire_round(events) {
                    return Ok(());
                }
                if common {
                    self.on_tick(*now_ms, events);
                } else {
                    self.on_seat_tick(*now_ms, events);
                }
                Ok(())
            }
            Input::Void(card) => self.on_void(*card, events),
            Input::CancelRound => self.on_cancel(events),
        }
    }
}

/// The refusal of a seat's bets or decision in a common draw.
fn not_seat_by_seat() -> state::Handled {
    reject(
        Code::ActionNotAllowed,
        "this game is a common draw: bets and decisions come from players",
    )
}
