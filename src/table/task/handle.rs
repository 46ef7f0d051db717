//! `TableHandle`: how the rest of the service talks to the table task (commands in,
//! snapshot and deltas out).

use super::command::{Command, Raise, WindowChange};
use super::errors::{BetError, ClearError, DisputeError, SubmitError};
use crate::engine::{BehindBet, Input, PlayerBets, SeatBets, SeatId};
use crate::metrics::Metrics;
use crate::store::Source;
use crate::table::dispute::{Origin, Resolution};
use crate::table::heartbeat::Heartbeat;
use crate::table::state::{Delta, ProposalView, Snapshot, Subscription};
use std::sync::Arc;
use tokio::sync::{broadcast, mpsc, oneshot, watch};

/// A cheap, cloneable handle on a running table.
#[derive(Debug, Clone)]
pub struct TableHandle {
    pub(super) commands: mpsc::Sender<Command>,
    pub(super) snapshot: watch::Receiver<Arc<Snapshot>>,
    pub(super) deltas: broadcast::Sender<Arc<Delta>>,
    pub(super) metrics: Arc<Metrics>,
    pub(super) heartbeat: Arc<Heartbeat>,
}

impl TableHandle {
    /// The sender the drivers' forwarders and the API feed.
    pub fn commands(&self) -> mpsc::Sender<Command> {
        self.commands.clone()
    }

    /// The current snapshot.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        Arc::clone(&self.snapshot.borrow())
    }

    /// A receiver that sees every new snapshot.
    pub fn watch(&self) -> watch::Receiver<Arc<Snapshot>> {
        self.snapshot.clone()
    }

    /// Subscribes: a snapshot first, then deltas in sequence.
    pub fn subscribe(&self) -> Subscription {
        let deltas = self.deltas.subscribe();
        Subscription::new(self.snapshot.clone(), deltas, Arc::clone(&self.metrics))
    }

    /// The table's metrics (also counted by its subscribers and the web layer).
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// The table loop's heartbeat.
    pub fn heartbeat(&self) -> &Heartbeat {
        &self.heartbeat
    }

    /// Submits an input; returns its sequence number once it is durable.
    pub async fn submit(&self, input: Input, source: Source) -> Result<u64, SubmitError> {
        let (tx, rx) = oneshot::channel();
        self.commands
            .send(Command::Input {
                input,
                source,
                reply: Some(tx),
            })
            .await
            .map_err(|_| SubmitError::Stopped)?;
        rx.await.map_err(|_| SubmitError::Stopped)?
    }

    /// Opens the betting window.
    pub async fn open_betting(&self) -> Result<(), BetError> {
        self.ask_window(|reply| Command::OpenBetting { reply })
            .await
    }

    /// Places one seat's bets in the open window (checked against the variant at once);
    /// returns the number of the round they are for (`None` for a withdrawal).
    pub async fn place_bet(&self, bet: SeatBets) -> Result<Option<u64>, BetError> {
        self.ask_window(|reply| Command::PlaceBet { bet, reply })
            .await
    }

    /// Places several seats' bets at once, judged as one window (a player's two seats,
    /// whose main bets the engine holds equal); answered as `place_bet` (`None` when every
    /// one is a withdrawal).
    pub async fn place_bets(&self, bets: Vec<SeatBets>) -> Result<Option<u64>, BetError> {
        self.ask_window(|reply| Command::PlaceBets { bets, reply })
            .await
    }

    /// Places (or with a main bet of 0 withdraws) one player's bet behind `seat`, whose
    /// own bet must be in the window; answered as `place_bet`.
    pub async fn place_behind(
        &self,
        seat: SeatId,
        bet: BehindBet,
    ) -> Result<Option<u64>, BetError> {
        self.ask_window(|reply| Command::PlaceBehind { seat, bet, reply })
            .await
    }

    /// Places (or with no boxes withdraws) one player's boxes in a common draw's window;
    /// answered as `place_bet`.
    pub async fn place_player_bets(&self, bets: PlayerBets) -> Result<Option<u64>, BetError> {
        self.ask_window(|reply| Command::PlacePlayerBets { bets, reply })
            .await
    }

    /// Whether the window would take `change`, changing nothing (answered as placing it
    /// would be).
    pub async fn check_window(&self, change: WindowChange) -> Result<Option<u64>, BetError> {
        self.ask_window(|reply| Command::CheckWindow { change, reply })
            .await
    }

    /// Closes the betting window, opening the round with the collected bets.
    pub async fn close_betting(&self, source: Source) -> Result<Option<u64>, BetError> {
        self.ask_window(|reply| Command::CloseBetting { source, reply })
            .await
    }

    /// Sends the window command `command` builds around its reply channel and waits for
    /// the answer: a stopped task is `Stopped`, whether it went before the command was
    /// taken or before it answered.
    async fn ask_window<T>(
        &self,
        command: impl FnOnce(oneshot::Sender<Result<T, BetError>>) -> Command,
    ) -> Result<T, BetError> {
        let (reply, rx) = oneshot::channel();
        self.send(command(reply)).await?;
        rx.await.map_err(|_| SubmitError::Stopped)?
    }

    async fn send(&self, command: Command) -> Result<(), SubmitError> {
        self.commands
            .send(command)
            .await
            .map_err(|_| SubmitError::Stopped)
    }

    /// Raises a dispute; returns its id.
    pub async fn raise_dispute(
        &self,
        origin: Origin,
        seat: Option<SeatId>,
        round: Option<u64>,
        reason: String,
        by: String,
    ) -> Result<u64, DisputeError> {
        let raise = Raise {
            origin,
            seat,
            round,
            reason,
            by,
        };
        self.ask(|reply| Command::RaiseDispute { raise, reply })
            .await
    }

    /// Proposes a resolution; returns the preview of the corrected round.
    pub async fn propose(
        &self,
        dispute: u64,
        resolution: Resolution,
        reason: String,
        by: String,
    ) -> Result<ProposalView, DisputeError> {
        self.ask(|reply| Command::Propose {
            dispute,
            resolution,
            reason,
            by,
            reply,
        })
        .await
    }

    /// Confirms the proposed resolution; returns its sequence number once durable.
    pub async fn confirm(
        &self,
        dispute: u64,
        proposal: String,
        by: String,
    ) -> Result<u64, DisputeError> {
        self.ask(|reply| Command::Confirm {
            dispute,
            proposal,
            by,
            reply,
        })
        .await
    }

    /// Withdraws the proposed resolution.
    pub async fn withdraw(
        &self,
        dispute: u64,
        proposal: String,
        by: String,
    ) -> Result<(), DisputeError> {
        self.ask(|reply| Command::Withdraw {
            dispute,
            proposal,
            by,
            reply,
        })
        .await
    }

    /// Sends a dispute command built around its reply channel and waits for the answer.
    async fn ask<T>(
        &self,
        command: impl FnOnce(oneshot::Sender<Result<T, DisputeError>>) -> Command,
    ) -> Result<T, DisputeError> {
        let (reply, rx) = oneshot::channel();
        self.commands
            .send(command(reply))
            .await
            .map_err(|_| DisputeError::Stopped)?;
        rx.await.map_err(|_| DisputeError::Stopped)?
    }

    /// Clears the alarm on behalf of `actor` (see [`Command::ClearAlarm`]); returns the
    /// clearing's sequence number.
    pub async fn clear_alarm(&self, reason: String, actor: String) -> Result<u64, ClearError> {
        let (tx, rx) = oneshot::channel();
        self.commands
            .send(Command::ClearAlarm {
                reason,
                actor,
                reply: tx,
            })
            .await
            .map_err(|_| ClearError::Stopped)?;
        rx.await.map_err(|_| ClearError::Stopped)?
    }
}
