//! The command loop: one command at a time, each handled to the end, and `record()` — the
//! one place that commits a row and only then publishes it (input → decision → record →
//! effect).

use super::command::Command;
use super::errors::SubmitError;
use super::table::Table;
use crate::engine::{Event, Input};
use crate::store::audit::AuditEntry;
use crate::store::{Record, Source, Store};
use crate::table::heartbeat;
use tokio::sync::{mpsc, watch};
use tracing::{info, warn};

use crate::systemd::next_tick;
/// systemd's watchdog, pinged from the table loop.
pub use crate::systemd::Watchdog;

/// Completes when the players' API changed the remote seats, or never without remote play.
async fn remote_changed(remote: Option<&crate::table::remote::RemoteSeats>) {
    match remote {
        Some(r) => r.changed().await,
        None => std::future::pending().await,
    }
}

impl Table {
    /// Runs until `shutdown` fires or every sender is gone. A command is always handled to
    /// the end (decision, commit, publish) before shutdown is looked at again; at shutdown
    /// the channel is closed and what is already queued (a card the shoe driver has
    /// acknowledged, say) is still handled, so nothing accepted upstream is dropped.
    ///
    /// With a `watchdog`, this loop itself pings systemd between commands: if a command
    /// hangs (a stuck write, a deadlock), the pings stop and systemd restarts the service.
    /// It also stamps the [`Heartbeat`] every second the same way, for `/healthz`.
    pub async fn run(
        mut self,
        mut commands: mpsc::Receiver<Command>,
        mut shutdown: watch::Receiver<bool>,
        watchdog: Option<Watchdog>,
    ) -> Option<Store> {
        let mut ticks = watchdog.as_ref().map(Watchdog::interval);
        let mut beats = crate::clock::every(heartbeat::EVERY);
        // A verdict a crash kept from being written (recovery judged the last shoe again).
        self.write_verdicts().await;
        // A restored timeline first voids the round its backup ended in (`restore.rs`).
        self.void_interrupted().await;
        loop {
            self.arm_window();
            let window = self.final_at;
            let retry = self.retry_at;
            let timer = self.next_deadline();
            let remote = self.remote.clone();
            enum Next {
                Stop,
                Window,
                Retry,
                Timer,
                Command(Option<Command>),
            }
            let next = tokio::select! {
                biased;
                _ = shutdown.wait_for(|stop| *stop) => Next::Stop,
                _ = crate::clock::until(window) => Next::Window,
                _ = crate::clock::until(retry) => Next::Retry,
                _ = crate::clock::until(timer) => Next::Timer,
                // A seat, a bet or a request for a card from the players' API: the staff
                // see it now (a request for a card is what the dealer acts on).
                _ = remote_changed(remote.as_deref()) => {
                    self.publish_state();
                    continue;
                }
                _ = beats.tick() => {
                    self.heartbeat.beat();
                    continue;
                }
                _ = next_tick(&mut ticks) => {
                    if let Some(w) = &watchdog {
                        if let Err(e) = w.notifier.watchdog() {
                            warn!(table = %self.id, error = %e, "watchdog ping failed");
                        }
                    }
                    continue;
                }
                command = commands.recv() => Next::Command(command),
            };
            match next {
                Next::Window => self.on_window_closed().await,
                Next::Retry => self.retry_store().await,
                Next::Timer => self.on_deadline().await,
                Next::Command(Some(command)) => self.handle(command).await,
                Next::Command(None) => break,
                Next::Stop => {
                    commands.close();
                    while let Some(command) = commands.recv().await {
                        self.handle(command).await;
                    }
                    break;
                }
            }
        }
        info!(table = %self.id, seq = self.seq, "table stopped");
        self.store.take()
    }

    /// Starts the provisional round's window if it has none yet (a round just settled, or
    /// recovered provisional); a halted table's window waits for the resolution.
    pub(super) fn arm_window(&mut self) {
        if self.final_at.is_none()
            && self.provisional().is_some()
            && self.dispute.is_none()
            && self.alarm.is_none()
        {
            self.final_at = Some(tokio::time::Instant::now() + self.disputes.window);
        }
    }

    /// Handles one command to the end.
    pub async fn handle(&mut self, command: Command) {
        match command {
            Command::Input {
                input,
                source,
                reply,
            } => {
                let result = self.on_input(input, source).await;
                if let Some(reply) = reply {
                    let _ = reply.send(result);
                }
            }
            Command::Shoe(event) => self.on_shoe(event).await,
            Command::Button(event) => self.on_button(event).await,
            Command::ClearAlarm {
                reason,
                actor,
                reply,
            } => {
                let _ = reply.send(self.on_clear(reason, actor).await);
            }
            Command::RaiseDispute { raise, reply } => {
                let _ = reply.send(self.on_raise(raise).await);
            }
            Command::Propose {
                dispute,
                resolution,
                reason,
                by,
                reply,
            } => {
                let _ = reply.send(self.on_propose(dispute, resolution, reason, by));
            }
            Command::Confirm {
                dispute,
                proposal,
                by,
                reply,
            } => {
                let _ = reply.send(self.on_confirm(dispute, &proposal, by).await);
            }
            Command::Withdraw {
                dispute,
                proposal,
                by,
                reply,
            } => {
                let _ = reply.send(self.on_withdraw(dispute, &proposal, by).await);
            }
            Command::OpenBetting { reply } => {
                let _ = reply.send(self.on_open_betting().await);
            }
            Command::PlaceBet { bet, reply } => {
                let _ = reply.send(self.on_place_bet(bet));
            }
            Command::PlaceBets { bets, reply } => {
                let _ = reply.send(self.on_place_bets(bets));
            }
            Command::PlaceBehind { seat, bet, reply } => {
                let _ = reply.send(self.on_place_behind(seat, bet));
            }
            Command::PlacePlayerBets { bets, reply } => {
                let _ = reply.send(self.on_place_player_bets(bets));
            }
            Command::CheckWindow { change, reply } => {
                let _ = reply.send(self.check_window(change));
            }
            Command::CloseBetting { source, reply } => {
                let _ = reply.send(self.on_close_betting(source).await);
            }
        }
    }

    pub(super) async fn on_input(
        &mut self,
        input: Input,
        source: Source,
    ) -> Result<u64, SubmitError> {
        if let Some(why) = &self.broken {
            return Err(SubmitError::Broken(why.clone()));
        }
        if let Some(alarm) = &self.alarm {
            return Err(SubmitError::Locked(alarm.reason.clone()));
        }
        if let Some(d) = &self.dispute {
            return Err(SubmitError::Disputed(d.head.reason.clone()));
        }
        if matches!(input, Input::Void(_) | Input::CancelRound) {
            return Err(SubmitError::Rejected(crate::engine::Rejection::new(
                crate::engine::Code::ActionNotAllowed,
                "cards are voided and rounds cancelled only by a supervisor resolving a dispute",
            )));
        }
        if let (Some(round), Input::Bets(_) | Input::PlayerBets(_)) = (self.provisional(), &input) {
            return Err(SubmitError::Provisional(round));
        }
        if let Some(why) = self.off_unit(&input) {
            return Err(SubmitError::Rejected(crate::engine::Rejection::new(
                crate::engine::Code::InvalidBet,
                why,
            )));
        }
        if let Input::Tick { now_ms } = input {
            return self
                .record_tick(now_ms, false)
                .await
                .ok_or_else(|| SubmitError::Broken(self.broken.clone().unwrap_or_default()));
        }
        self.tick_before(&input).await;
        if let Some(why) = &self.broken {
            return Err(SubmitError::Broken(why.clone()));
        }
        let decided = self.apply_input(&input);
        match decided {
            Err(rejection) => Err(SubmitError::Rejected(rejection)),
            Ok(()) => {
                let record = Record::Input { source, input };
                match self.record(record).await {
                    Some(seq) => Ok(seq),
                    None => Err(SubmitError::Broken(self.broken.clone().unwrap_or_default())),
                }
            }
        }
    }

    /// Appends `record` (with `self.events` for accepted inputs), then absorbs and
    /// publishes it. On a failed write the table goes broken and nothing is published
    /// but the broken state: the engine may now be ahead of the log, and a restart
    /// replays the log.
    pub(super) async fn record(&mut self, record: Record) -> Option<u64> {
        self.record_audited(record, None).await
    }

    /// [`Table::record`] with an audit row committed in the same transaction (overrides,
    /// alarm clears): see `Store::append_audited`.
    pub(super) async fn record_audited(
        &mut self,
        record: Record,
        audit: Option<&AuditEntry>,
    ) -> Option<u64> {
        let store = self.store.as_mut()?;
        let shoe = self.engine.shoe().number();
        // Monotonic: the latency measurement, like everything the table orders by, never
        // reads the wall clock.
        let started = std::time::Instant::now();
        match store
            .append_audited(&record, &self.events, shoe, audit)
            .await
        {
            Ok(seq) => {
                self.metrics.committed(started.elapsed());
                let tally = std::mem::take(&mut self.tally);
                if let Some(outcome) = tally.card {
                    self.metrics.card(outcome);
                }
                if let Some(kind) = tally.alarm {
                    self.metrics.alarm(kind);
                }
                let settled = self
                    .events
                    .iter()
                    .filter(|e| matches!(e, Event::RoundSettled(_)))
                    .count();
                if settled > 0 {
                    self.metrics.rounds_settled(settled as u64);
                }
                let events = std::mem::take(&mut self.events);
                self.absorb(seq, &record, &events);
                if let Some(hash) = self.store.as_ref().map(|s| s.head_hash()) {
                    self.salt_hole(&hash);
                }
                self.sync_remote(seq, &events);
                self.publish(seq, record, &events);
                self.events = events;
                self.write_verdicts().await;
                Some(seq)
            }
            Err(e) => {
                self.tally = Default::default();
                self.write_failed(e.to_string(), &record);
                None
            }
        }
    }
}
