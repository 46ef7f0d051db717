//! The table's timers: the betting countdown and the engine's timed waits (a remote seat's
//! decision or insurance question, a resume window, a common draw's step), on the table's
//! clock (`table::clock`), driven by this task — not by the demo dealer.
//!
//! - The countdown opens with a `countdown` row (its deadline on the table's clock) and
//!   closes with a tick row: at its deadline, or just before the bets that close it early.
//! - Time reaches the engine only as `Tick` inputs, logged like any other input: one just
//!   before an input that opens a timed wait (the wait counts from the last tick), and one
//!   at each deadline. A tick that changes nothing is not logged.
//! - Recovery replays those rows: the countdown is open again with its deadline, the
//!   engine waits with its deadline, and the clock resumes from the latest time the log
//!   holds.
//! - The windows are shown to the players' API through `RemoteSeats`, and to the staff in
//!   `Snapshot::remote`; a change the players' API makes there wakes the loop (`run.rs`),
//!   which publishes again.

use super::table::{Countdown, Table};
use crate::engine::{Event, Input};
use crate::store::{Record, Source};
use crate::table::remote::RemoteSeats;
use crate::table::state::BettingView;
use std::sync::Arc;
use std::time::Duration;
use tracing::warn;

impl Table {
    /// Remote play (before `run`): the seats the bets time and where the windows are shown
    /// (`remote`, whose clock becomes the table's), and the betting countdown's length.
    pub fn set_play(&mut self, remote: Arc<RemoteSeats>, countdown: Duration) {
        self.clock = Arc::clone(remote.clock());
        self.clock.resume_at(self.clock_seen);
        self.countdown_len = Some(countdown);
        self.remote = Some(remote);
        self.remote_play = true;
        self.sync_remote(self.seq, &[]);
    }

    /// What a log row says about time: the latest table time, the countdown opening or
    /// closing (the same for live play and recovery).
    pub(super) fn absorb_time(&mut self, seq: u64, record: &Record) {
        match record {
            Record::Countdown {
                round,
                at_ms,
                deadline_ms,
            } => {
                self.clock_seen = self.clock_seen.max(*at_ms);
                self.countdown = Some(Countdown {
                    round: *round,
                    seq,
                    at_ms: *at_ms,
                    deadline_ms: *deadline_ms,
                });
                if !self.betting.open {
                    self.betting = BettingView {
                        open: true,
                        ..BettingView::default()
                    };
                }
            }
            Record::Input {
                input: Input::Tick { now_ms },
                ..
            } => {
                self.clock_seen = self.clock_seen.max(*now_ms);
                // While a countdown is open nothing else ticks (no wait is open between
                // rounds): a tick row is its close.
                if let Some(c) = self.countdown.take() {
                    self.countdown_closed = Some((c.round, seq, *now_ms));
                    self.betting = BettingView::default();
                }
            }
            Record::Input {
                input: Input::Bets(_) | Input::PlayerBets(_),
                ..
            } => self.countdown = None,
            _ => {}
        }
    }

    /// When the next timer is due (`None`: none, or the table is stopped for a person).
    pub(super) fn next_deadline(&self) -> Option<tokio::time::Instant> {
        if self.broken.is_some()
            || self.failed.is_some()
            || self.alarm.is_some()
            || self.dispute.is_some()
        {
            return None;
        }
        // A wait still open after a tick at its deadline would never end on time again:
        // it is not scheduled (the engine ends every wait it times at its deadline).
        let engine = self
            .engine
            .deadline()
            .filter(|d| *d > self.engine.clock_ms());
        let at = match (engine, self.countdown.map(|c| c.deadline_ms)) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        Some(self.clock.tokio_instant_at(at))
    }

    /// A timer is due: the countdown closes (its bets open the round), or the engine is
    /// ticked at its deadline.
    pub(super) async fn on_deadline(&mut self) {
        let now = self.clock.now_ms();
        if self.countdown.is_some_and(|c| now >= c.deadline_ms) {
            if !self.betting.open {
                self.close_countdown().await;
            } else if let Err(e) = self.on_close_betting(Source::Clock).await {
                warn!(table = %self.id, error = %e, "the betting countdown's bets were refused");
            }
        } else if self.engine.deadline().is_some_and(|d| now >= d) {
            self.record_tick(now, false).await;
        }
    }

    /// Opens the betting countdown (remote play): a `countdown` row, before anyone is told.
    pub(super) async fn open_countdown(&mut self, round: u64) -> Option<u64> {
        let len = self.countdown_len?;
        if self.countdown.is_some() {
            return None;
        }
        let at_ms = self.clock.now_ms().max(self.engine.clock_ms());
        let ms = u64::try_from(len.as_millis()).unwrap_or(u64::MAX);
        self.events.clear();
        self.record(Record::Countdown {
            round,
            at_ms,
            deadline_ms: at_ms.saturating_add(ms),
        })
        .await
    }

    /// Closes the open countdown with a tick row now (`None`: none open, or the row could
    /// not be written).
    pub(super) async fn close_countdown(&mut self) -> Option<u64> {
        self.countdown?;
        let now = self.clock.now_ms().max(self.engine.clock_ms());
        self.record_tick(now, true).await
    }

    /// Ticks the engine at `now` and logs it if it changed anything (`force`: always — a
    /// countdown's close). Returns the row's sequence number, or the last one's when
    /// nothing was logged.
    pub(super) async fn record_tick(&mut self, now: u64, force: bool) -> Option<u64> {
        let input = Input::Tick { now_ms: now };
        let before = self.engine.clock_ms();
        // A tick is never refused.
        self.apply_input(&input).ok()?;
        if !force && self.events.is_empty() && self.engine.clock_ms() == before {
            return Some(self.seq);
        }
        if let Some(r) = self.events.iter().find_map(|e| match e {
            Event::RoundSettled(r) if r.cancelled => Some(r),
            _ => None,
        }) {
            warn!(
                table = %self.id,
                round = r.round,
                limit_ms = self.engine.variant().timeouts.round_max_ms,
                "the round was in progress longer than the game allows: cancelled by the clock, every bet refunded"
            );
        }
        self.record(Record::Input {
            source: Source::Clock,
            input,
        })
        .await
    }

    /// Before `input` is judged: the tick the engine must see first — at a deadline that
    /// has passed (the timer's tick is late, the input later still), or now, when the
    /// input opens a timed wait (its deadline counts from the last tick) — the bets that
    /// open a round, where the variant limits a round's age (`timeouts.round_max_ms`).
    pub(super) async fn tick_before(&mut self, input: &Input) {
        if matches!(input, Input::Tick { .. }) {
            return;
        }
        // Only these inputs may open a wait, so only they cost an engine trial: any input
        // while a seat or a common draw is timed, and the bets of a game that times its
        // rounds. A round's age alone is never a trial per card, only a deadline compared.
        let may_open = self.engine.timed()
            || (self.engine.times_rounds()
                && matches!(input, Input::Bets(_) | Input::PlayerBets(_)));
        let deadline = self.engine.deadline();
        if !may_open && deadline.is_none() {
            return;
        }
        let now = self.clock.now_ms();
        if now <= self.engine.clock_ms() {
            return;
        }
        let due = deadline.is_some_and(|d| now >= d);
        let opens = || {
            if !may_open {
                return false;
            }
            let mut trial = self.engine.clone();
            let mut events = Vec::new();
            trial.apply(input, &mut events).is_ok()
                && trial.waits_opened() != self.engine.waits_opened()
        };
        if due || opens() {
            self.record_tick(now, false).await;
        }
    }

    /// The seats remote players hold get their decision timer in the bets that open the
    /// round (the log then says which seats are timed).
    pub(super) fn time_remote_seats(&self, bets: &mut [crate::engine::SeatBets]) {
        let Some(remote) = &self.remote else { return };
        let ms = u64::try_from(remote.timing().decision.as_millis()).unwrap_or(u64::MAX);
        for b in bets.iter_mut() {
            if remote.is_remote(b.seat) {
                b.timer_ms = ms;
            }
            // A remote player behind any seat answers insurance on a timer too.
            for bb in b.behind.iter_mut() {
                if remote.is_remote_player(&bb.player) {
                    bb.timer_ms = ms;
                }
            }
        }
    }

    /// Shows the windows as they stand after row `seq` to the players' API.
    pub(super) fn sync_remote(&mut self, seq: u64, events: &[Event]) {
        let Some(remote) = self.remote.clone() else {
            return;
        };
        let round = self.view.number;
        let closed = self
            .countdown_closed
            .filter(|(_, at, _)| *at == seq)
            .map(|(r, at, ms)| remote.closed(r, at, ms));
        let window = self
            .countdown
            .map(|c| remote.window(c.round, 0, c.seq, c.deadline_ms));
        remote.set_betting(window, closed);
        if self.engine.waits_opened() != self.wait_count {
            self.wait_count = self.engine.waits_opened();
            self.wait_seq = seq;
        }
        remote.note_timeouts(round, seq, events, &self.view);
        let timed_out = events.iter().any(|e| matches!(e, Event::DecisionTimeout));
        let closed = timed_out.then(|| remote.closed(round, seq, self.engine.clock_ms()));
        let window = self.engine.deadline().map(|d| {
            let seat = self.engine.timed_seat().unwrap_or(0);
            remote.window(round, seat, self.wait_seq, d)
        });
        remote.set_decision(window, closed);
        // A card asked for is consumed by the card the dealer deals (or the hand moving
        // on otherwise): the panel's request disappears with this row's publication.
        remote.settle_hit(events, &self.engine.expectation());
    }
}
