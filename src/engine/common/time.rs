//! Time in a common draw: the tick that runs a step's or the insurance question's timer
//! out, the two-strike rule, and the automatic actions right to left. Apart because time
//! enters only as `Tick` inputs, and this is all a tick does.

use super::{current, needs_decision};
use crate::engine::io::{Action, Event, EventSink};
use crate::engine::state::{Engine, HandState, Insurance, Phase, PlayerPlay};
use crate::engine::variant::{FirstStrike, InsuranceStrikes};
use smallvec::SmallVec;

impl Engine {
    #[inline(never)]
    pub(crate) fn on_tick(&mut self, now_ms: u64, events: &mut impl EventSink) {
        // The clock only moves forward: a late tick changes nothing.
        self.common.now = self.common.now.max(now_ms);
        if self.common.now < self.common.deadline {
            return;
        }
        match self.phase {
            Phase::Insurance => self.common_insurance_timeout(events),
            Phase::Deciding => self.decision_timeout(events),
            _ => {}
        }
    }

    /// The insurance question ran out: declined for every box still pending, except under
    /// `timers.insurance_timeout = "two_strike"` the first time, when a player with more
    /// than one box pending is asked again on a new timer (the others declined).
    fn common_insurance_timeout(&mut self, events: &mut impl EventSink) {
        let two_strike = self
            .variant
            .timers
            .as_ref()
            .is_some_and(|t| t.insurance_timeout == InsuranceStrikes::TwoStrike);
        let pending = |p: &PlayerPlay| {
            p.boxes
                .iter()
                .filter(|sp| sp.insurance == Insurance::Pending)
                .count()
        };
        if two_strike
            && !self.common.insurance_struck
            && self.common.players.iter().any(|p| pending(p) > 1)
        {
            self.common.insurance_struck = true;
            events.push(Event::DecisionTimeout);
            for p in &mut self.common.players {
                if pending(p) > 1 {
                    continue;
                }
                for sp in &mut p.boxes {
                    if sp.insurance == Insurance::Pending {
                        sp.insurance = Insurance::Declined;
                    }
                }
            }
            self.common.deadline = self.common.now + self.timer_ms();
            self.common.armed += 1;
            return;
        }
        self.common_close_insurance(events);
    }

    /// The decision timer ran out: the two-strike rule, then the automatic actions.
    fn decision_timeout(&mut self, events: &mut impl EventSink) {
        let v = &*self.variant;
        let hit_on_timeout = v.timers.as_ref().is_some_and(|t| t.hit_on_timeout);
        events.push(Event::DecisionTimeout);
        for p in &mut self.common.players {
            // Hands that owed a decision when the step began, decided since or not.
            let requiring = p
                .boxes
                .iter()
                .flat_map(|sp| sp.hands.iter())
                .filter(|h| h.in_step)
                .count();
            let undecided: SmallVec<[usize; 3]> = (0..p.boxes.len())
                .filter(|&b| {
                    current(&p.boxes[b]).is_some_and(|i| needs_decision(&p.boxes[b].hands[i]))
                })
                .collect();
            let first_strike = requiring > 1
                && undecided.iter().all(|&b| {
                    let sp = &p.boxes[b];
                    current(sp).is_some_and(|i| sp.hands[i].strikes == 0)
                });
            // Right to left: the highest box first.
            for &b in undecided.iter().rev() {
                let sp = &mut p.boxes[b];
                let Some(i) = current(sp) else { continue };
                let h = &mut sp.hands[i];
                if first_strike {
                    h.strikes += 1;
                    continue;
                }
                let t = h.cards.total(v.hand.ace);
                let hit = hit_on_timeout && ((!t.soft && t.best < 12) || (t.soft && t.best < 17));
                h.strikes = 0;
                let action = if hit {
                    h.hit_requested = true;
                    Action::Hit
                } else {
                    h.state = HandState::Stood;
                    Action::Stand
                };
                events.push(Event::PlayerDecided {
                    player: p.id.clone(),
                    seat: sp.seat,
                    hand: i as u8,
                    action,
                });
            }
        }
        // The card comes now, whether any hand asked for it or not (then it is burned) —
        // unless the variant reads a first strike as another decision at once.
        self.common.undecided = self.current_hands().filter(|h| needs_decision(h)).count();
        let burn = self.common.undecided > 0
            && v.timers
                .as_ref()
                .is_none_or(|t| t.first_strike == FirstStrike::BurnCard);
        if self.common_wanting_card() > 0 || burn {
            self.phase = Phase::Drawing;
        } else {
            self.open_step(events);
        }
    }
}
