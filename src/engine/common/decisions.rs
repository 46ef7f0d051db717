//! Players' answers in a common draw: a hand's decision in the open step (`hit` explicit)
//! and each box's insurance or even money. Apart from the cards because every player decides
//! in parallel; the step closes when no hand owes a decision.

use super::{current, needs_decision};
use crate::engine::io::{Action, Code, Event, EventSink, PlayerId, SeatId};
use crate::engine::rules::{
    double_hand, may_double, may_split, may_surrender, player_natural, split_hand,
};
use crate::engine::state::{reject, Engine, HandState, Handled, Insurance, Phase};

impl Engine {
    /// A player's decision (`Input::PlayerDecision`): for a box of theirs in a common draw
    /// or, at a seat-by-seat table (`common` false), an insurance answer for their bet
    /// behind a seat. One handler out of line, so `dispatch` keeps one call for the input
    /// (its size decides what the simulator's loop inlines).
    #[inline(never)]
    pub(crate) fn on_player_decision(
        &mut self,
        player: &str,
        seat: SeatId,
        action: Action,
        common: bool,
        events: &mut impl EventSink,
    ) -> Handled {
        if !common {
            return match self.behind_bet(player, seat) {
                Ok(bet) => self.on_behind_answer(bet, action, events),
                Err(refused) => refused,
            };
        }
        let Some(pi) = self.player_index(player) else {
            return reject(
                Code::NotYourTurn,
                format!("player {player} has no bet in this round"),
            );
        };
        let Some(bi) = self.common.players[pi]
            .boxes
            .iter()
            .position(|b| b.seat == seat)
        else {
            return reject(
                Code::NotYourTurn,
                format!("player {player} has no bet on box {seat}"),
            );
        };
        if action.is_insurance_answer() {
            return self.player_insurance(pi, bi, action, events);
        }
        if self.phase != Phase::Deciding {
            let why = match self.phase {
                Phase::Insurance => "insurance is open",
                Phase::Drawing => "the step is closed: the next card is due",
                _ => "no decision is due",
            };
            return reject(
                Code::ActionNotAllowed,
                format!("player {player}, box {seat}: {why}"),
            );
        }
        let v = &*self.variant;
        let up = self.round.dealer[0];
        let sp = &self.common.players[pi].boxes[bi];
        let Some(hi) = current(sp) else {
            return reject(
                Code::ActionNotAllowed,
                format!("player {player}, box {seat}: the hand is finished"),
            );
        };
        let h = &sp.hands[hi];
        if !needs_decision(h) {
            return reject(
                Code::ActionNotAllowed,
                format!("player {player}, box {seat}: already decided for this card"),
            );
        }
        let insured = matches!(sp.insurance, Insurance::Bought(_));
        let allowed = match action {
            Action::Hit | Action::Stand => true,
            Action::Double => may_double(v, h),
            Action::Split => may_split(v, h, sp.hands.len(), insured),
            Action::Surrender => may_surrender(v, h, sp.hands.len(), up),
            _ => false,
        };
        if !allowed {
            return reject(
                Code::ActionNotAllowed,
                format!(
                    "player {player}, box {seat}, hand {}: cannot {}",
                    hi + 1,
                    action.name()
                ),
            );
        }
        let sp = &mut self.common.players[pi].boxes[bi];
        let main = sp.main;
        let h = &mut sp.hands[hi];
        h.strikes = 0;
        match action {
            Action::Hit => h.hit_requested = true,
            Action::Stand => h.state = HandState::Stood,
            Action::Surrender => h.state = HandState::Surrendered,
            Action::Double => double_hand(h, main),
            Action::Split => split_hand(&mut sp.hands, hi, main),
            _ => {}
        }
        events.push(Event::PlayerDecided {
            player: PlayerId::clone(&self.common.players[pi].id),
            seat,
            hand: hi as u8,
            action,
        });
        // A split's first hand now waits for its card; every other decision is final too.
        self.common.undecided -= 1;
        self.close_step_if_decided(events);
        Ok(())
    }

    fn player_insurance(
        &mut self,
        pi: usize,
        bi: usize,
        action: Action,
        events: &mut impl EventSink,
    ) -> Handled {
        let v = &*self.variant;
        let p = &self.common.players[pi];
        let sp = &p.boxes[bi];
        let who = format!("player {}, box {}", p.id, sp.seat);
        if self.phase != Phase::Insurance || sp.insurance != Insurance::Pending {
            return reject(
                Code::ActionNotAllowed,
                format!("{who}: no insurance question is open"),
            );
        }
        let answer = match action {
            Action::Insurance => match v.insurance.cost.fraction_of(sp.main) {
                cost if cost > 0 => Insurance::Bought(cost),
                _ => {
                    return reject(
                        Code::ActionNotAllowed,
                        format!("{who}: the bet is too small to insure"),
                    )
                }
            },
            Action::EvenMoney if v.insurance.even_money && player_natural(v, &sp.hands[0]) => {
                Insurance::EvenMoney
            }
            Action::EvenMoney => {
                return reject(
                    Code::ActionNotAllowed,
                    format!("{who}: even money is only for a natural"),
                )
            }
            _ => Insurance::Declined,
        };
        let (player, seat) = (p.id.clone(), sp.seat);
        let sp = &mut self.common.players[pi].boxes[bi];
        sp.insurance = answer;
        if answer == Insurance::EvenMoney {
            sp.hands[0].state = HandState::EvenMoney;
        }
        events.push(Event::PlayerDecided {
            player,
            seat,
            hand: 0,
            action,
        });
        if self.common_pending_insurance() == 0 {
            self.common_close_insurance(events);
        }
        Ok(())
    }

    pub(super) fn common_close_insurance(&mut self, events: &mut impl EventSink) {
        for sp in self
            .common
            .players
            .iter_mut()
            .flat_map(|p| p.boxes.iter_mut())
        {
            if sp.insurance == Insurance::Pending {
                sp.insurance = Insurance::Declined;
            }
        }
        events.push(Event::InsuranceClosed);
        self.common_begin_play(events);
    }

    /// After a decision: once no hand owes one, the step closes.
    fn close_step_if_decided(&mut self, events: &mut impl EventSink) {
        if self.common_pending_decisions() == 0 {
            self.open_step(events);
        }
    }
}
