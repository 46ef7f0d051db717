//! Timed seats in a seat-by-seat round: a remote player's decision, insurance question and
//! resume window, each ended by a tick at or past its deadline with the variant's
//! `[timeouts]` rule (docs/src/remote-play.md).
//!
//! A seat is timed when its bets carry `timer_ms`. A wait opens when the round starts
//! waiting on a timed seat (its hand becomes the one to act, a card leaves it to decide
//! again, insurance is offered) and ends at the last tick's time plus the timer — the same
//! rule as a common draw's step (`common.rs`), so the table ticks once just before an input
//! that opens a wait, and once at the deadline. A card or a decision for the hand answers
//! the wait; the time in between never reaches the engine.

use super::io::{Action, Event, EventSink, PlayerId};
use super::state::{Engine, HandState, Insurance, Phase};
use super::variant::{DealMode, OnTimeout, ResumeFrom};

impl super::state::SeatPlay {
    /// Whether the seat, or a player behind it, is timed.
    fn timed(&self) -> bool {
        self.timer_ms > 0 || self.behind.iter().any(|b| b.timer_ms > 0)
    }
}

impl Engine {
    /// The table's time as of the last tick, ms.
    pub fn clock_ms(&self) -> u64 {
        self.common.now
    }

    /// Whether a decision in the round in play is timed: a common draw's, or one with a
    /// timed seat (any input may then open a wait). A round's age (`round_max_ms`) is not
    /// this: it is opened by the bets and ends at [`Engine::deadline`].
    pub fn timed(&self) -> bool {
        self.phase != Phase::Idle
            && (self.variant.deal.mode == DealMode::CommonDraw
                || self.round.seats.iter().any(|s| s.timed()))
    }

    /// Whether rounds are timed from their opening (`timeouts.round_max_ms`): the table
    /// then ticks just before the bets that open one.
    pub fn times_rounds(&self) -> bool {
        self.variant.timeouts.round_max_ms > 0
    }

    /// When the round in play has been in progress too long (`timeouts.round_max_ms`):
    /// the first tick time past its limit.
    fn round_expiry(&self) -> Option<u64> {
        let max = self.variant.timeouts.round_max_ms;
        (max > 0 && self.phase != Phase::Idle && !self.round.cancelled)
            .then(|| self.round.opened_ms.saturating_add(max).saturating_add(1))
    }

    /// A tick: the round in play is cancelled, every bet refunded, once it has been in
    /// progress for more than `timeouts.round_max_ms` (answers whether it was).
    pub(super) fn expire_round(&mut self, events: &mut impl EventSink) -> bool {
        if self.round_expiry().is_none_or(|at| self.common.now < at) {
            return false;
        }
        // `on_cancel` refuses only when there is no round or it is cancelled already, and
        // `round_expiry` rules both out.
        let _ = self.on_cancel(events);
        true
    }

    /// How many timed waits have opened so far: an input after which this number moved
    /// opened one (its deadline counts from the last tick, so the table ticks first).
    pub fn waits_opened(&self) -> u64 {
        self.common.armed
    }

    /// The seat whose timed decision the round waits on (`None`: no such wait, or it is
    /// insurance, which every timed seat answers at once).
    pub fn timed_seat(&self) -> Option<super::io::SeatId> {
        match self.phase {
            Phase::Playing { seat, hand } if self.timed_decision(seat, hand) => {
                Some(self.round.seats[usize::from(seat)].seat)
            }
            _ => None,
        }
    }

    /// When a tick would end the wait the round is in (`None`: it waits on nobody's
    /// timer), on the tick clock.
    pub fn deadline(&self) -> Option<u64> {
        let pending = if self.variant.deal.mode == DealMode::CommonDraw {
            matches!(self.phase, Phase::Deciding | Phase::Insurance)
        } else {
            match self.phase {
                Phase::Insurance => self.timed_insurance_pending(),
                Phase::Playing { seat, hand } => self.timed_decision(seat, hand),
                _ => false,
            }
        };
        let wait = pending.then_some(self.common.deadline);
        match (wait, self.round_expiry()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether the seat whose hand `hi` is active owes a decision on its timer.
    fn timed_decision(&self, si: u8, hi: u8) -> bool {
        let sp = &self.round.seats[usize::from(si)];
        let h = &sp.hands[usize::from(hi)];
        sp.timer_ms > 0 && !sp.auto_play && h.state == HandState::Live && h.cards.len() >= 2
    }

    /// Whether a timed seat (or a player behind any seat of a timed round) has yet to
    /// answer insurance.
    fn timed_insurance_pending(&self) -> bool {
        let timed_round = self.round.seats.iter().any(|s| s.timed());
        timed_round
            && self.round.seats.iter().any(|s| {
                (s.timer_ms > 0 && s.insurance == Insurance::Pending)
                    || s.behind.iter().any(|b| b.insurance == Insurance::Pending)
            })
    }

    /// The hand now active may owe a timed decision: its timer starts at the last tick.
    #[inline]
    pub(super) fn arm_decision(&mut self, si: usize, hi: usize) {
        // Untimed seats (every seat the dealer plays for a player at the table) first.
        if self.round.seats.get(si).is_none_or(|sp| sp.timer_ms == 0) {
            return;
        }
        let (Ok(si), Ok(hi)) = (u8::try_from(si), u8::try_from(hi)) else {
            return;
        };
        if self.timed_decision(si, hi) {
            let sp = &self.round.seats[usize::from(si)];
            let ms = if sp.resuming {
                self.variant.timeouts.resume_ms
            } else {
                sp.timer_ms
            };
            self.common.deadline = self.common.now.saturating_add(ms);
            self.common.armed += 1;
        }
    }

    /// Insurance is offered: timed seats answer within the longest timer among them.
    pub(super) fn arm_insurance(&mut self) {
        let ms = self
            .round
            .seats
            .iter()
            .flat_map(|s| std::iter::once(s.timer_ms).chain(s.behind.iter().map(|b| b.timer_ms)))
            .max()
            .unwrap_or(0);
        if ms > 0 {
            self.common.deadline = self.common.now.saturating_add(ms);
            self.common.armed += 1;
        }
    }

    /// A tick in a seat-by-seat round: the clock moves forward (never back); a wait whose
    /// deadline it reaches ends with the variant's rule.
    #[inline(never)]
    pub(super) fn on_seat_tick(&mut self, now_ms: u64, events: &mut impl EventSink) {
        self.common.now = self.common.now.max(now_ms);
        if self.common.now < self.common.deadline {
            return;
        }
        match self.phase {
            Phase::Insurance if self.timed_insurance_pending() => self.insurance_timeout(events),
            Phase::Playing { seat, hand } if self.timed_decision(seat, hand) => {
                self.seat_timeout(seat, hand, events)
            }
            _ => {}
        }
    }

    /// `timeouts.insurance = "decline"`: every timed seat and player behind that has not
    /// answered declines; insurance closes once nobody else owes an answer.
    fn insurance_timeout(&mut self, events: &mut impl EventSink) {
        events.push(Event::DecisionTimeout);
        for sp in &mut self.round.seats {
            if sp.timer_ms > 0 && sp.insurance == Insurance::Pending {
                sp.insurance = Insurance::Declined;
                events.push(Event::Decided {
                    seat: sp.seat,
                    hand: 0,
                    action: Action::NoInsurance,
                });
            }
            for b in &mut sp.behind {
                if b.insurance == Insurance::Pending {
                    b.insurance = Insurance::Declined;
                    events.push(Event::PlayerDecided {
                        player: PlayerId::clone(&b.player),
                        seat: sp.seat,
                        hand: 0,
                        action: Action::NoInsurance,
                    });
                }
            }
        }
        if !self.insurance_open() {
            self.close_insurance(events);
        }
    }

    /// A timed decision ran out: the resume window first where the variant has one, then
    /// `timeouts.decision` (or `timeouts.after_resume`).
    fn seat_timeout(&mut self, si: u8, hi: u8, events: &mut impl EventSink) {
        events.push(Event::DecisionTimeout);
        let rules = self.variant.timeouts;
        let sp = &mut self.round.seats[usize::from(si)];
        if rules.resume_ms > 0 && !sp.resuming {
            sp.resuming = true;
            let from = match rules.resume_from {
                ResumeFrom::TimerEnd => self.common.now,
                ResumeFrom::TimerStart => self.common.deadline.saturating_sub(sp.timer_ms),
            };
            let until_ms = from.saturating_add(rules.resume_ms);
            // Counted from the timer's start, a window may be over already: then what
            // ends it applies now.
            if until_ms > self.common.now {
                self.common.deadline = until_ms;
                self.common.armed += 1;
                events.push(Event::ResumeWindow {
                    seat: sp.seat,
                    hand: hi,
                    until_ms,
                });
                return;
            }
        }
        let rule = if sp.resuming {
            rules.after_resume
        } else {
            rules.decision
        };
        let action = match rule {
            OnTimeout::AutoPlay => Action::AutoPlay,
            OnTimeout::Stand => Action::Stand,
        };
        // Both are allowed on a live hand of two cards or more whose seat is not yet
        // auto-played (what `timed_decision` checked); a stand is the fallback regardless.
        if self.play_decision(si, hi, action, events).is_err() {
            let _ = self.play_decision(si, hi, Action::Stand, events);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::cards::Card;
    use crate::engine::{Code, Engine, Input, SeatBets, Variant};
    use std::sync::Arc;

    fn engine(stem: &str) -> Engine {
        let v = Variant::built_in(stem).expect("shipped").expect("valid");
        Engine::new(Arc::new(v))
    }

    fn bets(timer_ms: u64) -> Input {
        Input::Bets(vec![SeatBets {
            seat: 1,
            main: 100,
            timer_ms,
            ..SeatBets::default()
        }])
    }

    fn apply(e: &mut Engine, input: Input) {
        e.apply(&input, &mut Vec::new()).expect("accepted");
    }

    fn card(code: &str) -> Input {
        Input::Card(code.parse::<Card>().expect("card"))
    }

    #[test]
    fn a_timed_seat_has_a_deadline_from_the_last_tick_and_an_untimed_one_none() {
        for (timer, want) in [(20_000, Some(25_000)), (0, None)] {
            let mut e = engine("deluxe");
            apply(&mut e, Input::Tick { now_ms: 5_000 });
            apply(&mut e, bets(timer));
            assert_eq!(e.deadline(), None, "no wait during the deal");
            for c in ["5H", "9C", "3D", "7S"] {
                apply(&mut e, card(c));
            }
            assert_eq!(e.deadline(), want);
            assert_eq!(e.clock_ms(), 5_000);
        }
    }

    /// Counted from the timer's start, a resume window no longer than the timer is over
    /// when the timer runs out: `after_resume` applies on that tick; from the timer's end
    /// the same window still opens.
    #[test]
    fn a_resume_window_from_the_timers_start_can_be_over_as_it_runs_out() {
        use crate::engine::variant::ResumeFrom;
        for (from, window_opens) in [
            (ResumeFrom::TimerStart, false),
            (ResumeFrom::TimerEnd, true),
        ] {
            let mut v = Variant::built_in("caribbean21")
                .expect("shipped")
                .expect("valid");
            v.timeouts.resume_ms = 15_000;
            v.timeouts.resume_from = from;
            let mut e = Engine::new(Arc::new(v));
            apply(&mut e, bets(20_000));
            for c in ["9H", "7C", "5D"] {
                apply(&mut e, card(c));
            }
            let mut events = Vec::new();
            e.apply(&Input::Tick { now_ms: 20_000 }, &mut events)
                .expect("tick");
            let opened = events
                .iter()
                .any(|ev| matches!(ev, crate::engine::Event::ResumeWindow { .. }));
            assert_eq!(opened, window_opens, "{from:?}: {events:?}");
            // Without a window the hand stood at once: the dealer's card is next.
            assert_eq!(e.deadline().is_some(), window_opens, "{from:?}");
        }
    }

    #[test]
    fn a_timer_is_refused_on_a_common_draw_and_beyond_five_minutes() {
        let mut e = engine("deluxe");
        let err = e
            .apply(&bets(300_001), &mut Vec::new())
            .expect_err("too long");
        assert_eq!(err.code, Code::InvalidBet);
        let mut m = engine("multihand");
        let boxes = Input::PlayerBets(vec![crate::engine::PlayerBets {
            player: "p".into(),
            boxes: vec![SeatBets {
                seat: 1,
                main: 100,
                timer_ms: 1_000,
                ..SeatBets::default()
            }],
        }]);
        let err = m.apply(&boxes, &mut Vec::new()).expect_err("common draw");
        assert_eq!(err.code, Code::InvalidBet);
    }
}
