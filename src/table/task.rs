//! The owner task: one per table, the only holder of the engine and of the store's writer.
//!
//! Each command goes input → decision → record → effect: the engine decides, the record
//! (the accepted input, or the alarm) is appended and committed with the next sequence
//! number, and only then are the snapshot, the delta and the log line published. Recovery
//! folds the stored log through [`Table::absorb`], the same code live play uses after a
//! commit.

use super::dispute::{self, Correction, CorrectionError, Origin, Resolution};
use super::heartbeat::{self, Heartbeat};
use super::state::{
    Alarm, BettingView, Delta, DisputeView, ProposalView, RoundView, ShoeView, Snapshot,
    Subscription, TableState,
};
use crate::engine::{
    Action, Engine, Event, Expectation, Input, RoundResult, SeatBets, SeatId, Variant,
};
use crate::metrics::{AlarmKind, CardOutcome, Metrics};
use crate::store::audit::{actions, AuditEntry};
use crate::store::{LogRow, Record, Source, Store};
use croupier_drivers::buttons::{ButtonAction, ButtonEvent};
use croupier_drivers::event::{ShoeEvent, ShoeStatus};
use croupier_drivers::ShoeItem;
use std::collections::BTreeMap;
use std::sync::Arc;
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tracing::{error, info, warn};

mod follower;
pub use follower::Follower;

/// systemd's watchdog, pinged from the table loop.
#[derive(Debug, Clone)]
pub struct Watchdog {
    /// The notification socket.
    pub notifier: Arc<crate::systemd::Notifier>,
    /// How often to ping (half of `WatchdogSec`).
    pub every: std::time::Duration,
}

/// The next watchdog tick, or never without a watchdog.
async fn next_tick(ticks: &mut Option<tokio::time::Interval>) {
    match ticks {
        Some(t) => {
            t.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// Sleeps until `at`, or forever without one.
async fn until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// How many deltas a subscriber may fall behind before it gets a resync snapshot.
pub const DELTA_BUFFER: usize = 1024;

/// Why an input from the API or the demo was not applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubmitError {
    /// The rules refuse it (nothing changed, nothing recorded).
    #[error("rejected: {0}")]
    Rejected(crate::engine::Rejection),
    /// The table is in alarm.
    #[error("the table is locked: {0}")]
    Locked(String),
    /// A dispute halts the round.
    #[error("a dispute halts the round: {0}")]
    Disputed(String),
    /// The last round's result is provisional: the next round opens when its dispute
    /// window has closed.
    #[error("round {0}'s result is provisional until its dispute window closes")]
    Provisional(u64),
    /// The store is unusable.
    #[error("the table is out of service: {0}")]
    Broken(String),
    /// The table task has stopped.
    #[error("the table has stopped")]
    Stopped,
}

/// Why the betting window refused a request. Every variant has a stable code
/// ([`BetError::code`]) for the API.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BetError {
    /// The table does not take bets now (a round is in play, or the shoe needs a shuffle).
    #[error("the table is not taking bets now: it expects {0}")]
    NotTakingBets(String),
    /// A bet arrived while the window is closed.
    #[error("betting is closed")]
    BettingClosed,
    /// The bet breaks the variant's limits or rules (nothing changed).
    #[error("invalid bet: {0}")]
    InvalidBet(String),
    /// Closing the window could not open the round.
    #[error(transparent)]
    Submit(#[from] SubmitError),
}

impl BetError {
    /// The stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            BetError::NotTakingBets(_) => "not_taking_bets",
            BetError::BettingClosed => "betting_closed",
            BetError::InvalidBet(_) => "invalid_bet",
            BetError::Submit(e) => e.code(),
        }
    }
}

impl SubmitError {
    /// The stable machine-readable code: the engine's rejection code, or `locked`,
    /// `out_of_service`, `stopped`.
    pub fn code(&self) -> &'static str {
        match self {
            SubmitError::Rejected(r) => r.code.as_str(),
            SubmitError::Locked(_) => "locked",
            SubmitError::Disputed(_) => "disputed",
            SubmitError::Provisional(_) => "round_provisional",
            SubmitError::Broken(_) => "out_of_service",
            SubmitError::Stopped => "stopped",
        }
    }
}

/// How the table handles disputes (`[disputes]` in `table.toml`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DisputeSettings {
    /// How long a settled round's result stays provisional (open to disputes); zero: final
    /// at once.
    pub window: std::time::Duration,
    /// A cancellation or a card correction must be confirmed by another supervisor than
    /// the one who proposed it.
    pub two_person_rule: bool,
}

impl Default for DisputeSettings {
    fn default() -> DisputeSettings {
        DisputeSettings {
            window: std::time::Duration::ZERO,
            two_person_rule: false,
        }
    }
}

/// Why a dispute could not be raised, proposed, confirmed or withdrawn. Every variant has
/// a stable code ([`DisputeError::code`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DisputeError {
    /// There is no round to dispute (none in play, none provisional).
    #[error("there is no round in play or provisional to dispute")]
    NoRound,
    /// The round named is not the one in play or provisional (a player token from an
    /// older round; a final round).
    #[error("round {0} is final: its dispute window has closed")]
    RoundFinal(u64),
    /// A dispute is already open.
    #[error("dispute {0} is already open")]
    AlreadyOpen(u64),
    /// No such open dispute.
    #[error("no open dispute {0}")]
    NotOpen(u64),
    /// Nothing is proposed for this dispute.
    #[error("no resolution is proposed for dispute {0}")]
    NoProposal(u64),
    /// The two-person rule: the confirming supervisor proposed it.
    #[error("the two-person rule: another supervisor than {0} must confirm this")]
    SamePerson(String),
    /// A cancellation of a round that is neither in play nor provisional.
    #[error("only the round in play or a provisional one can be cancelled")]
    NotCancellable,
    /// The correction does not apply.
    #[error(transparent)]
    Correction(#[from] CorrectionError),
    /// The table is out of service.
    #[error("the table is out of service: {0}")]
    Broken(String),
    /// The table task has stopped.
    #[error("the table has stopped")]
    Stopped,
}

impl DisputeError {
    /// The stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            DisputeError::NoRound => "no_round",
            DisputeError::RoundFinal(_) => "round_final",
            DisputeError::AlreadyOpen(_) => "dispute_open",
            DisputeError::NotOpen(_) => "no_dispute",
            DisputeError::NoProposal(_) => "no_proposal",
            DisputeError::SamePerson(_) => "two_person_rule",
            DisputeError::NotCancellable => "not_cancellable",
            DisputeError::Correction(e) => e.code(),
            DisputeError::Broken(_) => "out_of_service",
            DisputeError::Stopped => "stopped",
        }
    }
}

/// Why an alarm could not be cleared.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClearError {
    /// There is no alarm.
    #[error("the table is not locked")]
    NotLocked,
    /// The table is broken (store unusable), which clearing cannot fix.
    #[error("the table is out of service and cannot be cleared: {0}; repair or move the database and restart")]
    Broken(String),
    /// The clearing could not be recorded.
    #[error("the clearing could not be recorded: {0}")]
    Store(String),
    /// The table task has stopped.
    #[error("the table has stopped")]
    Stopped,
}

/// A message to the table task.
#[derive(Debug)]
pub enum Command {
    /// An input from a terminal, the panel or the demo.
    Input {
        /// The input.
        input: Input,
        /// Who sent it.
        source: Source,
        /// The answer: the log row's sequence number once durable.
        reply: Option<oneshot::Sender<Result<u64, SubmitError>>>,
    },
    /// Something from the shoe driver.
    Shoe(ShoeEvent),
    /// Something from the button box.
    Button(ButtonEvent),
    /// Open the betting window (only when the table expects bets).
    OpenBetting {
        /// The answer.
        reply: oneshot::Sender<Result<(), BetError>>,
    },
    /// Place (or replace) one seat's bets in the open window; a bet of nothing (main 0,
    /// no side bets, no bets behind) withdraws the seat's bets.
    PlaceBet {
        /// The seat's bets.
        bet: SeatBets,
        /// The answer: the number of the round the bets are for (`None` for a withdrawal),
        /// which the players' dispute tokens are bound to.
        reply: oneshot::Sender<Result<Option<u64>, BetError>>,
    },
    /// Close the window: the collected bets open the round as one input. `Ok(None)`
    /// when no seat bet (the window just closes).
    CloseBetting {
        /// Who closed it.
        source: Source,
        /// The answer: the round-opening input's sequence number.
        reply: oneshot::Sender<Result<Option<u64>, BetError>>,
    },
    /// Raise a dispute on the round in play or the provisional one.
    RaiseDispute {
        /// Who raises it.
        origin: Origin,
        /// The seat it concerns.
        seat: Option<SeatId>,
        /// The round it concerns (a player token's round); `None`: the current one.
        round: Option<u64>,
        /// The complaint.
        reason: String,
        /// The account (or token) raising it.
        by: String,
        /// The answer: the dispute's id.
        reply: oneshot::Sender<Result<u64, DisputeError>>,
    },
    /// Propose a resolution: the table previews the corrected round.
    Propose {
        /// The dispute.
        dispute: u64,
        /// What to do.
        resolution: Resolution,
        /// Why.
        reason: String,
        /// The supervisor.
        by: String,
        /// The answer: the preview.
        reply: oneshot::Sender<Result<ProposalView, DisputeError>>,
    },
    /// Confirm the proposed resolution: it is recorded and applied.
    Confirm {
        /// The dispute.
        dispute: u64,
        /// The supervisor confirming.
        by: String,
        /// The answer: the resolution's sequence number.
        reply: oneshot::Sender<Result<u64, DisputeError>>,
    },
    /// Withdraw the proposed resolution.
    Withdraw {
        /// The dispute.
        dispute: u64,
        /// The answer.
        reply: oneshot::Sender<Result<(), DisputeError>>,
    },
    /// Clear the alarm (the web side lets supervisors and admins send it).
    ClearAlarm {
        /// Why, for the log.
        reason: String,
        /// Who (the audit actor, e.g. `user:201`): recorded in the audit log in the same
        /// transaction as the `clear` row.
        actor: String,
        /// The answer.
        reply: oneshot::Sender<Result<u64, ClearError>>,
    },
}

/// A cheap, cloneable handle on a running table.
#[derive(Debug, Clone)]
pub struct TableHandle {
    commands: mpsc::Sender<Command>,
    snapshot: watch::Receiver<Arc<Snapshot>>,
    deltas: broadcast::Sender<Arc<Delta>>,
    metrics: Arc<Metrics>,
    heartbeat: Arc<Heartbeat>,
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
        let (reply, rx) = oneshot::channel();
        self.send(Command::OpenBetting { reply }).await?;
        rx.await.map_err(|_| SubmitError::Stopped)?
    }

    /// Places one seat's bets in the open window (checked against the variant at once);
    /// returns the number of the round they are for (`None` for a withdrawal).
    pub async fn place_bet(&self, bet: SeatBets) -> Result<Option<u64>, BetError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::PlaceBet { bet, reply }).await?;
        rx.await.map_err(|_| SubmitError::Stopped)?
    }

    /// Closes the betting window, opening the round with the collected bets.
    pub async fn close_betting(&self, source: Source) -> Result<Option<u64>, BetError> {
        let (reply, rx) = oneshot::channel();
        self.send(Command::CloseBetting { source, reply }).await?;
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
        self.ask(|reply| Command::RaiseDispute {
            origin,
            seat,
            round,
            reason,
            by,
            reply,
        })
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
    pub async fn confirm(&self, dispute: u64, by: String) -> Result<u64, DisputeError> {
        self.ask(|reply| Command::Confirm { dispute, by, reply })
            .await
    }

    /// Withdraws the proposed resolution.
    pub async fn withdraw(&self, dispute: u64) -> Result<(), DisputeError> {
        self.ask(|reply| Command::Withdraw { dispute, reply }).await
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

/// The table as it was just before the current round opened: a resolution replays the
/// round's corrected inputs from here.
#[derive(Debug, Clone)]
struct RoundBase {
    engine: Engine,
    view: RoundView,
    rounds_settled: u64,
    last_result: Option<RoundResult>,
}

/// An open dispute.
#[derive(Debug, Clone)]
struct OpenDispute {
    id: u64,
    origin: Origin,
    seat: Option<SeatId>,
    round: u64,
    reason: String,
    by: String,
    frozen: RoundView,
    held: Vec<String>,
}

/// A proposed resolution (in memory only: a restart or a newly held card drops it, and it
/// is proposed again).
#[derive(Debug, Clone)]
struct Proposal {
    resolution: Resolution,
    reason: String,
    by: String,
    view: ProposalView,
}

/// The table's state, owned by its task.
pub struct Table {
    id: String,
    name: String,
    variant_name: String,
    engine: Engine,
    store: Option<Store>,
    view: RoundView,
    betting: BettingView,
    alarm: Option<Alarm>,
    broken: Option<String>,
    seq: u64,
    inputs: u64,
    rounds_settled: u64,
    last_result: Option<RoundResult>,
    link: String,
    unrecorded: Vec<String>,
    events: Vec<Event>,
    snapshot_tx: watch::Sender<Arc<Snapshot>>,
    deltas: broadcast::Sender<Arc<Delta>>,
    /// Before the current round opened.
    base: RoundBase,
    /// Captured before an opening input is applied; becomes `base` once it is recorded.
    next_base: Option<RoundBase>,
    /// The accepted inputs since `base`.
    round_inputs: Vec<Input>,
    dispute: Option<OpenDispute>,
    proposal: Option<Proposal>,
    /// The last settled round, until a `final` row (or the next round) closes its window.
    unfinal: Option<u64>,
    /// When the provisional round becomes final (monotonic; set by the live loop).
    final_at: Option<tokio::time::Instant>,
    disputes: DisputeSettings,
    metrics: Arc<Metrics>,
    heartbeat: Arc<Heartbeat>,
}

/// What recovery found, for the start-up log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// Log rows replayed.
    pub rows: u64,
    /// The state after them.
    pub state: TableState,
}

impl Table {
    /// Builds the table from the store's verified log (`Ok`) or the reason the store is
    /// unusable (`Err`), replaying every row through the engine. Nothing is published
    /// before this returns; the returned handle's first snapshot is the recovered state.
    pub fn recover(
        id: &str,
        name: &str,
        variant_name: &str,
        variant: Arc<Variant>,
        opened: Result<(Store, Vec<LogRow>), String>,
    ) -> (Table, TableHandle, mpsc::Receiver<Command>, Recovered) {
        let engine = Engine::new(variant);
        let placeholder = Arc::new(Snapshot {
            table: id.to_string(),
            name: name.to_string(),
            variant: variant_name.to_string(),
            seq: 0,
            inputs: 0,
            state: TableState::Broken,
            alarm: None,
            broken: Some("starting".into()),
            expecting: String::new(),
            expectation: Expectation::Bets,
            bonus_options: BTreeMap::new(),
            insurance_seats: Vec::new(),
            shoe: ShoeView {
                number: 0,
                dealt: 0,
                burned: 0,
                remaining: 0,
                cut_seen: false,
                link: "waiting".into(),
            },
            betting: BettingView::default(),
            round: RoundView::default(),
            rounds_settled: 0,
            last_result: None,
            unrecorded: Vec::new(),
            dispute: None,
            provisional: None,
        });
        let (snapshot_tx, snapshot_rx) = watch::channel(placeholder);
        let (deltas, _) = broadcast::channel(DELTA_BUFFER);
        let (commands, rx) = mpsc::channel(256);
        let base = RoundBase {
            engine: engine.clone(),
            view: RoundView::default(),
            rounds_settled: 0,
            last_result: None,
        };
        let metrics = Arc::new(Metrics::default());
        let heartbeat = Arc::new(Heartbeat::default());
        heartbeat.beat();
        let mut table = Table {
            id: id.to_string(),
            name: name.to_string(),
            variant_name: variant_name.to_string(),
            engine,
            base,
            next_base: None,
            round_inputs: Vec::new(),
            dispute: None,
            proposal: None,
            unfinal: None,
            final_at: None,
            disputes: DisputeSettings::default(),
            store: None,
            view: RoundView::default(),
            betting: BettingView::default(),
            alarm: None,
            broken: None,
            seq: 0,
            inputs: 0,
            rounds_settled: 0,
            last_result: None,
            link: "waiting".into(),
            unrecorded: Vec::new(),
            events: Vec::new(),
            snapshot_tx,
            deltas: deltas.clone(),
            metrics: Arc::clone(&metrics),
            heartbeat: Arc::clone(&heartbeat),
        };
        let mut rows = 0;
        match opened {
            Err(reason) => table.broken = Some(reason),
            Ok((store, log)) => {
                for row in log {
                    if let Err(why) = table.replay(&row) {
                        table.broken = Some(format!(
                            "the event log does not replay at seq {}: {why}",
                            row.seq
                        ));
                        break;
                    }
                    rows += 1;
                }
                if table.broken.is_none() {
                    table.store = Some(store);
                }
            }
        }
        let snapshot = table.build_snapshot();
        let state = snapshot.state;
        table.snapshot_tx.send_replace(snapshot);
        let handle = TableHandle {
            commands,
            snapshot: snapshot_rx,
            deltas,
            metrics,
            heartbeat,
        };
        (table, handle, rx, Recovered { rows, state })
    }

    /// Sets how disputes are handled (before `run`). A round recovered as provisional gets
    /// a whole window from now.
    pub fn set_disputes(&mut self, settings: DisputeSettings) {
        self.disputes = settings;
        self.final_at = None;
        self.publish_state();
    }

    /// Re-applies one stored row (recovery).
    fn replay(&mut self, row: &LogRow) -> Result<(), String> {
        self.events.clear();
        if let Record::Input { input, .. } = &row.record {
            self.apply_input(input)
                .map_err(|r| format!("the engine refuses {input:?}: {r}"))?;
        }
        let events = std::mem::take(&mut self.events);
        self.absorb(row.seq, &row.record, &events);
        self.events = events;
        if let Some(why) = &self.broken {
            return Err(why.clone());
        }
        Ok(())
    }

    /// Applies an input to the engine (events into `self.events`), first keeping the table
    /// as it was if the input opens a round.
    fn apply_input(&mut self, input: &Input) -> Result<(), crate::engine::Rejection> {
        let opening = matches!(input, Input::Bets(_) | Input::PlayerBets(_));
        let before = opening.then(|| RoundBase {
            engine: self.engine.clone(),
            view: self.view.clone(),
            rounds_settled: self.rounds_settled,
            last_result: self.last_result.clone(),
        });
        let mut events = std::mem::take(&mut self.events);
        events.clear();
        let result = self.engine.apply(input, &mut events);
        self.events = events;
        if result.is_ok() {
            self.next_base = before;
        }
        result
    }

    /// The round rebuilt from `base` by a correction's events.
    fn corrected_view(
        &self,
        inputs: &[Input],
        events: &[Event],
    ) -> (RoundView, u64, Option<RoundResult>) {
        let mut view = self.base.view.clone();
        let mut settled = self.base.rounds_settled;
        let mut last = self.base.last_result.clone();
        let mut counted = None;
        for event in events {
            view.on_event(event);
            match event {
                Event::RoundOpened { .. } => {
                    if let Some(Input::Bets(bets)) = inputs.first() {
                        view.bets = bets.clone();
                    }
                }
                Event::RoundSettled(result) => {
                    // A cancellation after settlement replaces the result: counted once.
                    if counted != Some(result.round) {
                        settled += 1;
                        counted = Some(result.round);
                    }
                    last = Some((**result).clone());
                }
                _ => {}
            }
        }
        (view, settled, last)
    }

    /// The open dispute's held items (the alarm's included), in arrival order.
    fn held(&self) -> Vec<String> {
        let mut held = self
            .alarm
            .as_ref()
            .map(|a| a.held.clone())
            .unwrap_or_default();
        if let Some(d) = &self.dispute {
            held.extend(d.held.iter().cloned());
        }
        held
    }

    /// Updates everything but the engine after a durable record: the same for live play
    /// and recovery.
    fn absorb(&mut self, seq: u64, record: &Record, events: &[Event]) {
        self.seq = seq;
        if let Record::Resolve { inputs, .. } = record {
            self.absorb_resolution(inputs);
            return;
        }
        for event in events {
            if let Event::RoundSettled(result) = event {
                self.unfinal = Some(result.round);
            }
            self.view.on_event(event);
            if let Event::RoundSettled(result) = event {
                self.rounds_settled += 1;
                self.last_result = Some((**result).clone());
            }
        }
        match record {
            Record::Input { input, .. } => {
                self.inputs += 1;
                if let Some(base) = self.next_base.take() {
                    self.base = base;
                    self.round_inputs.clear();
                    // The next round opening ends the last one's window, whatever it was.
                    self.unfinal = None;
                }
                self.round_inputs.push(input.clone());
                if let Input::Bets(bets) = input {
                    self.view.bets = bets.clone();
                    // However the round opened (window, demo, terminal), betting is over.
                    self.betting = BettingView::default();
                }
            }
            Record::Alarm {
                reason,
                expected,
                item,
            } => match &mut self.alarm {
                Some(alarm) => {
                    alarm.also.push(reason.clone());
                    alarm.held.extend(item.iter().cloned());
                }
                None => {
                    self.alarm = Some(Alarm {
                        seq,
                        reason: reason.clone(),
                        expected: expected.clone(),
                        held: item.iter().cloned().collect(),
                        also: Vec::new(),
                    });
                    // Every alarm opens a dispute: a supervisor may resolve it with a
                    // correction (a misread card corrected, say) instead of clearing it.
                    if self.dispute.is_none() {
                        self.dispute = Some(OpenDispute {
                            id: seq,
                            origin: Origin::Alarm,
                            seat: None,
                            round: self.view.number,
                            reason: reason.clone(),
                            by: "alarm".into(),
                            frozen: self.decorate(self.view.clone(), &self.engine),
                            held: Vec::new(),
                        });
                    }
                }
            },
            Record::Held { item } => {
                // A proposal previewed without this card is out of date.
                self.proposal = None;
                if let Some(alarm) = &mut self.alarm {
                    alarm.held.push(item.clone());
                } else if let Some(dispute) = &mut self.dispute {
                    dispute.held.push(item.clone());
                }
            }
            Record::Clear { .. } => {
                self.alarm = None;
                if self
                    .dispute
                    .as_ref()
                    .is_some_and(|d| d.origin == Origin::Alarm)
                {
                    self.dispute = None;
                    self.proposal = None;
                }
            }
            Record::Dispute {
                origin,
                seat,
                round,
                reason,
                by,
                ..
            } => {
                self.dispute = Some(OpenDispute {
                    id: seq,
                    origin: *origin,
                    seat: *seat,
                    round: *round,
                    reason: reason.clone(),
                    by: by.clone(),
                    frozen: self.decorate(self.view.clone(), &self.engine),
                    held: Vec::new(),
                });
            }
            Record::Resolve { .. } => {}
            Record::Final { round } => {
                if self.unfinal == Some(*round) {
                    self.unfinal = None;
                    self.final_at = None;
                }
            }
        }
    }

    /// A resolution: the engine and the round become the fold of the corrected inputs
    /// from `base`; the dispute and any alarm are over.
    fn absorb_resolution(&mut self, inputs: &[Input]) {
        let mut engine = self.base.engine.clone();
        let mut events = Vec::new();
        for (i, input) in inputs.iter().enumerate() {
            if let Err(r) = engine.apply(input, &mut events) {
                self.broken = Some(format!(
                    "a recorded resolution does not replay: its input {i} ({}) is refused: {r}",
                    dispute::describe(input)
                ));
                return;
            }
        }
        let (view, settled, last) = self.corrected_view(inputs, &events);
        self.engine = engine;
        self.view = view;
        self.rounds_settled = settled;
        self.last_result = last;
        self.round_inputs = inputs.to_vec();
        self.unfinal = events.iter().rev().find_map(|e| match e {
            Event::RoundSettled(r) => Some(r.round),
            _ => None,
        });
        // A re-settled round gets a whole new window.
        self.final_at = None;
        self.alarm = None;
        self.dispute = None;
        self.proposal = None;
    }

    /// The settled round still open to disputes.
    fn provisional(&self) -> Option<u64> {
        if self.disputes.window.is_zero() {
            None
        } else {
            self.unfinal
        }
    }

    fn state(&self) -> TableState {
        if self.broken.is_some() {
            TableState::Broken
        } else if self.alarm.is_some() {
            TableState::Locked
        } else if self.dispute.is_some() {
            TableState::Disputed
        } else {
            TableState::Open
        }
    }

    /// Seats that may still answer the insurance offer, in seat order.
    fn insurance_seats(&self) -> Vec<SeatId> {
        (1..=self.engine.variant().deal.seats)
            .filter(|&seat| {
                self.engine
                    .allows_insurance_answer(seat, Action::NoInsurance)
            })
            .collect()
    }

    fn build_snapshot(&self) -> Arc<Snapshot> {
        let expectation = self.engine.expectation();
        let mut bonus_options = BTreeMap::new();
        if let Expectation::Bonus(seats) = &expectation {
            for seat in seats {
                if let Some(options) = self.engine.bonus_multipliers(*seat) {
                    bonus_options.insert(*seat, options.to_vec());
                }
            }
        }
        let insurance_seats = if matches!(expectation, Expectation::InsuranceAnswers { .. }) {
            self.insurance_seats()
        } else {
            Vec::new()
        };
        let round = self.decorate(self.view.clone(), &self.engine);
        let shoe = self.engine.shoe();
        Arc::new(Snapshot {
            table: self.id.clone(),
            name: self.name.clone(),
            variant: self.variant_name.clone(),
            seq: self.seq,
            inputs: self.inputs,
            state: self.state(),
            alarm: self.alarm.clone(),
            broken: self.broken.clone(),
            expecting: expectation.to_string(),
            expectation,
            bonus_options,
            insurance_seats,
            betting: self.betting.clone(),
            shoe: ShoeView {
                number: shoe.number(),
                dealt: shoe.dealt(),
                burned: shoe.burned(),
                remaining: shoe.remaining(),
                cut_seen: shoe.cut_seen(),
                link: self.link.clone(),
            },
            round,
            rounds_settled: self.rounds_settled,
            last_result: self.last_result.clone(),
            unrecorded: self.unrecorded.clone(),
            dispute: self.dispute_view(),
            provisional: self.provisional(),
        })
    }

    /// A round view with what people read off it: totals, soft flags, the up card's total
    /// and whether the hole card lies face down (from `engine`'s expectation).
    fn decorate(&self, view: RoundView, engine: &Engine) -> RoundView {
        let expectation = engine.expectation();
        let mut round = view;
        let ace = engine.variant().hand.ace;
        for h in &mut round.hands {
            let t = crate::engine::total(&h.cards, ace);
            h.total = engine.hand_total(h.seat, h.hand).unwrap_or(t.best);
            h.soft = t.soft && h.total == t.best;
        }
        let dealer = crate::engine::total(&round.dealer, ace);
        round.dealer_total = dealer.best;
        round.dealer_soft = dealer.soft;
        let up = crate::engine::total(&round.dealer[..round.dealer.len().min(1)], ace);
        round.up_total = up.best;
        round.up_soft = up.soft;
        // The second dealer card lies face down from the deal until the dealer's turn
        // (or the end of the round, e.g. when every hand busted).
        round.hole_hidden = engine.variant().deal.dealer_cards == 2
            && !round.settled
            && round.dealer.len() == 2
            && expectation != Expectation::DealerCard;
        round
    }

    fn dispute_view(&self) -> Option<DisputeView> {
        let d = self.dispute.as_ref()?;
        let held = self.held();
        Some(DisputeView {
            id: d.id,
            origin: d.origin,
            seat: d.seat,
            round: d.round,
            reason: d.reason.clone(),
            by: d.by.clone(),
            frozen: d.frozen.clone(),
            cards: dispute::card_places(&self.base.engine, &self.round_inputs, &held),
            held,
            proposal: self.proposal.as_ref().map(|p| p.view.clone()),
        })
    }

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
        let mut ticks = watchdog.as_ref().map(|w| {
            let mut t = tokio::time::interval(w.every);
            t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            t
        });
        let mut beats = tokio::time::interval(heartbeat::EVERY);
        beats.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            self.arm_window();
            let window = self.final_at;
            enum Next {
                Stop,
                Window,
                Command(Option<Command>),
            }
            let next = tokio::select! {
                biased;
                _ = shutdown.wait_for(|stop| *stop) => Next::Stop,
                _ = until(window) => Next::Window,
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
    fn arm_window(&mut self) {
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
            Command::RaiseDispute {
                origin,
                seat,
                round,
                reason,
                by,
                reply,
            } => {
                let _ = reply.send(self.on_raise(origin, seat, round, reason, by).await);
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
            Command::Confirm { dispute, by, reply } => {
                let _ = reply.send(self.on_confirm(dispute, by).await);
            }
            Command::Withdraw { dispute, reply } => {
                let _ = reply.send(self.on_withdraw(dispute));
            }
            Command::OpenBetting { reply } => {
                let _ = reply.send(self.on_open_betting());
            }
            Command::PlaceBet { bet, reply } => {
                let _ = reply.send(self.on_place_bet(bet));
            }
            Command::CloseBetting { source, reply } => {
                let _ = reply.send(self.on_close_betting(source).await);
            }
        }
    }

    fn taking_bets(&self) -> Result<(), BetError> {
        if let Some(why) = &self.broken {
            return Err(SubmitError::Broken(why.clone()).into());
        }
        if let Some(alarm) = &self.alarm {
            return Err(SubmitError::Locked(alarm.reason.clone()).into());
        }
        match self.engine.expectation() {
            Expectation::Bets => Ok(()),
            other => Err(BetError::NotTakingBets(other.to_string())),
        }
    }

    fn on_open_betting(&mut self) -> Result<(), BetError> {
        self.taking_bets()?;
        if !self.betting.open {
            self.betting = BettingView {
                open: true,
                bets: Vec::new(),
            };
            info!(table = %self.id, "betting open");
            self.publish_state();
        }
        Ok(())
    }

    fn on_place_bet(&mut self, bet: SeatBets) -> Result<Option<u64>, BetError> {
        self.taking_bets()?;
        if !self.betting.open {
            return Err(BetError::BettingClosed);
        }
        let mut bets: Vec<SeatBets> = self
            .betting
            .bets
            .iter()
            .filter(|b| b.seat != bet.seat)
            .cloned()
            .collect();
        let withdraw = bet.main == 0 && bet.side.is_empty() && bet.behind.is_empty();
        let mut round = None;
        if !withdraw {
            bets.push(bet);
            bets.sort_by_key(|b| b.seat);
            // The engine is the one judge of a bet: try the whole window on a copy.
            let mut trial = self.engine.clone();
            let mut events = Vec::new();
            trial
                .apply(&Input::Bets(bets.clone()), &mut events)
                .map_err(|r| BetError::InvalidBet(r.message))?;
            round = events.iter().find_map(|e| match e {
                Event::RoundOpened { round } => Some(*round),
                _ => None,
            });
        }
        self.betting.bets = bets;
        self.publish_state();
        Ok(round)
    }

    async fn on_close_betting(&mut self, source: Source) -> Result<Option<u64>, BetError> {
        if !self.betting.open {
            return Err(BetError::BettingClosed);
        }
        if self.betting.bets.is_empty() {
            self.betting = BettingView::default();
            self.publish_state();
            return Ok(None);
        }
        let input = Input::Bets(self.betting.bets.clone());
        // Closed before the input is applied, so the published snapshot never shows an
        // open window beside the round it opened; reopened if the input fails.
        let window = std::mem::take(&mut self.betting);
        match self.on_input(input, source).await {
            Ok(seq) => Ok(Some(seq)),
            Err(e) => {
                self.betting = window;
                self.publish_state();
                Err(e.into())
            }
        }
    }

    async fn on_input(&mut self, input: Input, source: Source) -> Result<u64, SubmitError> {
        if let Some(why) = &self.broken {
            return Err(SubmitError::Broken(why.clone()));
        }
        if let Some(alarm) = &self.alarm {
            return Err(SubmitError::Locked(alarm.reason.clone()));
        }
        if let Some(d) = &self.dispute {
            return Err(SubmitError::Disputed(d.reason.clone()));
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

    async fn on_shoe(&mut self, event: ShoeEvent) {
        let item = match event {
            ShoeEvent::Card(card) => ShoeItem::Card(card),
            ShoeEvent::CutCard => ShoeItem::CutCard,
            ShoeEvent::Connected { port } => {
                info!(table = %self.id, %port, "shoe connected");
                self.link = super::state::LINK_CONNECTED.into();
                self.publish_state();
                return;
            }
            ShoeEvent::Disconnected { reason } => {
                self.link = format!("disconnected: {reason}");
                self.raise(
                    AlarmKind::ShoeDisconnected,
                    format!("the shoe is disconnected: {reason}"),
                    "check the shoe's cable and power; cards dealt meanwhile were not read, \
                     so re-feed them; then clear the alarm"
                        .into(),
                    None,
                )
                .await;
                return;
            }
            ShoeEvent::Status(status) => {
                if status != ShoeStatus::default() {
                    self.raise(
                        AlarmKind::ShoeStatus,
                        format!("the shoe reports {}", describe_status(status)),
                        "close the lid / free the jam / re-feed the misread card; then clear \
                         the alarm"
                            .into(),
                        None,
                    )
                    .await;
                }
                return;
            }
            ShoeEvent::Fault(fault) => {
                self.raise(
                    AlarmKind::ShoeFault,
                    format!("the shoe sent an invalid frame ({fault})"),
                    "check the shoe and its cable; if a card was being read, re-feed it; then \
                     clear the alarm"
                        .into(),
                    None,
                )
                .await;
                return;
            }
            // Events a later driver adds: logged, not acted on, until the table knows them.
            #[allow(unreachable_patterns)]
            other => {
                warn!(table = %self.id, event = ?other, "shoe event not handled");
                return;
            }
        };
        let code = item.to_string();
        // Cards are counted here, once their fate is durable (or known unrecordable).
        let card = matches!(item, ShoeItem::Card(_));
        let count = |table: &Table, outcome| {
            if card {
                table.metrics.card(outcome);
            }
        };
        if self.broken.is_some() {
            error!(table = %self.id, item = %code, "shoe item NOT RECORDED: the store is unusable");
            self.unrecorded.push(code);
            count(self, CardOutcome::Unrecorded);
            self.publish_state();
            return;
        }
        if self.alarm.is_some() || self.dispute.is_some() {
            self.events.clear();
            if self.record(Record::Held { item: code }).await.is_some() {
                count(self, CardOutcome::Held);
            }
            return;
        }
        let input = match item {
            ShoeItem::Card(card) => Input::Card(card),
            ShoeItem::CutCard => Input::CutCard,
        };
        let decided = self.apply_input(&input);
        match decided {
            Ok(()) => {
                let recorded = self.record(Record::Input {
                    source: Source::Shoe,
                    input,
                });
                if recorded.await.is_some() {
                    count(self, CardOutcome::Applied);
                }
            }
            Err(rejection) => {
                let expecting = self.engine.expectation();
                let recorded = self.raise(
                    AlarmKind::CardRefused,
                    format!("{code} out of the shoe was refused: {rejection}"),
                    format!(
                        "take the {code} out of play; the table expects {expecting}; then \
                         clear the alarm"
                    ),
                    Some(code),
                );
                if recorded.await {
                    count(self, CardOutcome::Refused);
                }
            }
        }
    }

    async fn on_button(&mut self, event: ButtonEvent) {
        match event {
            ButtonEvent::Action { action, pin, .. } => {
                let expectation = self.engine.expectation();
                let decide = |action| match &expectation {
                    Expectation::Decision { seat, .. } => Some(Input::Decision {
                        seat: *seat,
                        action,
                    }),
                    _ => None,
                };
                let input = match action {
                    ButtonAction::Stand => decide(Action::Stand),
                    ButtonAction::Double => decide(Action::Double),
                    ButtonAction::Split => decide(Action::Split),
                    ButtonAction::Surrender => decide(Action::Surrender),
                    ButtonAction::InsuranceYes | ButtonAction::InsuranceNo => {
                        self.insurance_seats().first().map(|&seat| Input::Decision {
                            seat,
                            action: if action == ButtonAction::InsuranceYes {
                                Action::Insurance
                            } else {
                                Action::NoInsurance
                            },
                        })
                    }
                    ButtonAction::NewShoe => Some(Input::Shuffle),
                    ButtonAction::CallSupervisor => {
                        self.raise(
                            AlarmKind::SupervisorCalled,
                            "the dealer called the supervisor".into(),
                            "the supervisor decides, then clears the alarm".into(),
                            None,
                        )
                        .await;
                        return;
                    }
                    ButtonAction::Confirm | ButtonAction::CloseBets => {
                        info!(table = %self.id, pin, ?action, "button has no effect yet");
                        None
                    }
                    #[allow(unreachable_patterns)]
                    _ => {
                        info!(table = %self.id, pin, ?action, "button not handled");
                        None
                    }
                };
                let Some(input) = input else {
                    warn!(table = %self.id, pin, ?action, expecting = %expectation, "button press does not fit what the table expects; ignored");
                    return;
                };
                if let Err(e) = self.on_input(input, Source::Buttons).await {
                    warn!(table = %self.id, pin, ?action, error = %e, "button press refused");
                }
            }
            ButtonEvent::Stuck { pin } => {
                self.raise(
                    AlarmKind::ButtonStuck,
                    format!("the button on GPIO {pin} is stuck"),
                    "free the button; then clear the alarm".into(),
                    None,
                )
                .await;
            }
            ButtonEvent::Unstuck { pin } => {
                info!(table = %self.id, pin, "button came free");
            }
            #[allow(unreachable_patterns)]
            other => warn!(table = %self.id, event = ?other, "button event not handled"),
        }
    }

    async fn on_clear(&mut self, reason: String, actor: String) -> Result<u64, ClearError> {
        if let Some(why) = &self.broken {
            return Err(ClearError::Broken(why.clone()));
        }
        let Some(alarm) = &self.alarm else {
            return Err(ClearError::NotLocked);
        };
        let voided = alarm.held.clone();
        let actor_name = actor.clone();
        let entry = AuditEntry::new(actor, actions::ALARM_CLEAR)
            .subject(self.id.clone())
            .values(Some(alarm.reason.clone()), Some("cleared".into()))
            .reason(reason.clone())
            .detail(serde_json::json!({"voided": voided}));
        self.events.clear();
        match self
            .record_audited(
                Record::Clear {
                    reason,
                    voided,
                    by: actor_name,
                },
                Some(&entry),
            )
            .await
        {
            Some(seq) => Ok(seq),
            None => Err(ClearError::Store(self.broken.clone().unwrap_or_default())),
        }
    }

    async fn on_raise(
        &mut self,
        origin: Origin,
        seat: Option<SeatId>,
        round: Option<u64>,
        reason: String,
        by: String,
    ) -> Result<u64, DisputeError> {
        if let Some(why) = &self.broken {
            return Err(DisputeError::Broken(why.clone()));
        }
        if let Some(d) = &self.dispute {
            return Err(DisputeError::AlreadyOpen(d.id));
        }
        let current = self.view.number;
        let in_play = current > 0 && !self.view.settled;
        let open = in_play || self.provisional() == Some(current);
        match round {
            Some(r) if r != current || !open => return Err(DisputeError::RoundFinal(r)),
            None if current == 0 => return Err(DisputeError::NoRound),
            None if !open => return Err(DisputeError::RoundFinal(current)),
            _ => {}
        }
        self.events.clear();
        let frozen = self.decorate(self.view.clone(), &self.engine);
        let entry = AuditEntry::new(by.clone(), actions::DISPUTE)
            .subject(format!("{} round {current}", self.id))
            .values(serde_json::to_string(&frozen).ok(), None)
            .reason(reason.clone())
            .detail(serde_json::json!({"origin": origin.as_str(), "seat": seat}));
        let record = Record::Dispute {
            origin,
            seat,
            round: current,
            reason,
            by,
            frozen: Some(Box::new(frozen)),
        };
        self.record_audited(record, Some(&entry))
            .await
            .ok_or_else(|| DisputeError::Broken(self.broken.clone().unwrap_or_default()))
    }

    /// The open dispute, if it is `id`.
    fn open_dispute(&self, id: u64) -> Result<&OpenDispute, DisputeError> {
        if let Some(why) = &self.broken {
            return Err(DisputeError::Broken(why.clone()));
        }
        match &self.dispute {
            Some(d) if d.id == id => Ok(d),
            _ => Err(DisputeError::NotOpen(id)),
        }
    }

    /// The correction `resolution` makes, checked against what may be corrected.
    fn correction(&self, resolution: &Resolution) -> Result<Correction, DisputeError> {
        if *resolution == Resolution::Cancel {
            let in_play = self.view.number > 0 && !self.view.settled;
            if !in_play && self.provisional() != Some(self.view.number) {
                return Err(DisputeError::NotCancellable);
            }
        }
        Ok(dispute::correct(
            &self.base.engine,
            &self.round_inputs,
            &self.held(),
            resolution,
        )?)
    }

    fn on_propose(
        &mut self,
        id: u64,
        resolution: Resolution,
        reason: String,
        by: String,
    ) -> Result<ProposalView, DisputeError> {
        self.open_dispute(id)?;
        let c = self.correction(&resolution)?;
        let (round, _, last) = self.corrected_view(&c.inputs, &c.events);
        let round = self.decorate(round, &c.engine);
        let result = last.filter(|r| r.round == round.number && round.settled);
        let view = ProposalView {
            dispute: id,
            resolution: resolution.clone(),
            reason: reason.clone(),
            proposed_by: by.clone(),
            second_person: self.disputes.two_person_rule && resolution.needs_second_person(),
            round,
            result,
            expecting: c.engine.expectation().to_string(),
            inputs: c.inputs.iter().map(dispute::describe).collect(),
            voided: c.voided.clone(),
        };
        info!(table = %self.id, dispute = id, op = resolution.name(), %by, "resolution proposed");
        self.proposal = Some(Proposal {
            resolution,
            reason,
            by,
            view: view.clone(),
        });
        self.publish_state();
        Ok(view)
    }

    async fn on_confirm(&mut self, id: u64, by: String) -> Result<u64, DisputeError> {
        self.open_dispute(id)?;
        let Some(p) = self.proposal.clone() else {
            return Err(DisputeError::NoProposal(id));
        };
        if p.view.second_person && p.by == by {
            return Err(DisputeError::SamePerson(by));
        }
        let c = self.correction(&p.resolution)?;
        // The override on the record: the round before and after, who proposed and who
        // confirmed, in the same transaction as the log row that applies it.
        let before = self.decorate(self.view.clone(), &self.engine);
        let entry = AuditEntry::new(by.clone(), actions::OVERRIDE)
            .subject(format!("{} round {} dispute {id}", self.id, before.number))
            .values(
                serde_json::to_string(&before).ok(),
                serde_json::to_string(&p.view.round).ok(),
            )
            .reason(p.reason.clone())
            .detail(serde_json::json!({
                "resolution": p.resolution,
                "proposed_by": p.by,
                "confirmed_by": by,
                "voided": c.voided,
                "result": p.view.result,
            }));
        let record = Record::Resolve {
            dispute: id,
            resolution: p.resolution,
            reason: p.reason,
            proposed_by: p.by,
            confirmed_by: by,
            inputs: c.inputs,
            voided: c.voided,
        };
        self.events = c.events;
        self.record_audited(record, Some(&entry))
            .await
            .ok_or_else(|| DisputeError::Broken(self.broken.clone().unwrap_or_default()))
    }

    fn on_withdraw(&mut self, id: u64) -> Result<(), DisputeError> {
        self.open_dispute(id)?;
        if self.proposal.take().is_none() {
            return Err(DisputeError::NoProposal(id));
        }
        self.publish_state();
        Ok(())
    }

    /// The provisional round's window closed: its result becomes final.
    async fn on_window_closed(&mut self) {
        self.final_at = None;
        let Some(round) = self.provisional() else {
            return;
        };
        if self.dispute.is_some() || self.alarm.is_some() {
            // A halted round stays provisional until it is resolved.
            return;
        }
        self.events.clear();
        self.record(Record::Final { round }).await;
    }

    /// Records an alarm of `kind`; returns whether its row is durable.
    async fn raise(
        &mut self,
        kind: AlarmKind,
        reason: String,
        expected: String,
        item: Option<String>,
    ) -> bool {
        if self.broken.is_some() {
            error!(table = %self.id, %reason, "alarm NOT RECORDED: the store is unusable");
            if let Some(item) = item {
                self.unrecorded.push(item);
            }
            self.publish_state();
            return false;
        }
        self.events.clear();
        let recorded = self
            .record(Record::Alarm {
                reason,
                expected,
                item,
            })
            .await
            .is_some();
        if recorded {
            self.metrics.alarm(kind);
        }
        recorded
    }

    /// Appends `record` (with `self.events` for accepted inputs), then absorbs and
    /// publishes it. On a failed write the table goes broken and nothing is published
    /// but the broken state: the engine may now be ahead of the log, and a restart
    /// replays the log.
    async fn record(&mut self, record: Record) -> Option<u64> {
        self.record_audited(record, None).await
    }

    /// [`Table::record`] with an audit row committed in the same transaction (overrides,
    /// alarm clears): see `Store::append_audited`.
    async fn record_audited(&mut self, record: Record, audit: Option<&AuditEntry>) -> Option<u64> {
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
                self.publish(seq, record, &events);
                self.events = events;
                Some(seq)
            }
            Err(e) => {
                self.metrics.store_failure();
                error!(table = %self.id, error = %e, "cannot record; the table is out of service");
                self.broken = Some(format!("a write to the store failed: {e}"));
                self.store = None;
                self.publish_state();
                None
            }
        }
    }

    fn publish(&mut self, seq: u64, record: Record, events: &[Event]) {
        let snapshot = self.build_snapshot();
        let round = snapshot.round.number;
        let shoe = snapshot.shoe.number;
        match &record {
            Record::Input { .. } => {
                info!(table = %self.id, shoe, round, seq, expecting = %snapshot.expecting, "{record}")
            }
            _ => warn!(table = %self.id, shoe, round, seq, "{record}"),
        }
        let delta = Arc::new(Delta {
            seq,
            record,
            events: events.to_vec(),
            state: snapshot.state,
            expecting: snapshot.expecting.clone(),
            provisional: snapshot.provisional,
        });
        self.snapshot_tx.send_replace(snapshot);
        // No subscriber is not an error.
        let _ = self.deltas.send(delta);
    }

    /// Publishes a snapshot for a change that is not a log row (link state, broken).
    fn publish_state(&mut self) {
        self.snapshot_tx.send_replace(self.build_snapshot());
    }
}

fn describe_status(status: ShoeStatus) -> String {
    let mut parts = Vec::new();
    if status.lid_open {
        parts.push("lid open");
    }
    if status.jam {
        parts.push("a jam");
    }
    if status.misread {
        parts.push("a misread card");
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn table(dir: &std::path::Path) -> (Table, TableHandle) {
        let variant = Arc::new(Variant::built_in("deluxe").expect("known").expect("valid"));
        let opened = Store::open(&dir.join("t.db"), "t", "t", "deluxe")
            .await
            .expect("store");
        let (table, handle, _rx, _) =
            Table::recover("t", "t", "deluxe", variant, Ok((opened.store, opened.log)));
        (table, handle)
    }

    fn card(code: &str) -> Command {
        Command::Shoe(ShoeEvent::Card(code.parse().expect("card")))
    }

    fn press(action: ButtonAction) -> Command {
        Command::Button(ButtonEvent::Action {
            action,
            pin: 5,
            long: false,
        })
    }

    #[tokio::test]
    async fn buttons_decide_for_the_seat_the_table_expects_and_a_stuck_one_locks() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut t, handle) = table(dir.path()).await;
        let bets = Input::Bets(vec![crate::table::demo::main_bet(1, 100).expect("bet")]);
        t.handle(Command::Input {
            input: bets,
            source: Source::Api,
            reply: None,
        })
        .await;
        // A press that fits nothing the table expects does nothing.
        t.handle(press(ButtonAction::Stand)).await;
        assert_eq!(handle.snapshot().seq, 1);
        for c in ["9H", "5S", "7C", "6D"] {
            t.handle(card(c)).await;
        }
        assert!(matches!(
            handle.snapshot().expectation,
            Expectation::Decision { seat: 1, .. }
        ));
        t.handle(press(ButtonAction::Stand)).await;
        let snap = handle.snapshot();
        assert_eq!(snap.seq, 6);
        assert_eq!(snap.expectation, Expectation::DealerCard);
        // New shoe in the middle of a round is refused by the rules: nothing recorded.
        t.handle(press(ButtonAction::NewShoe)).await;
        assert_eq!(handle.snapshot().seq, 6);
        t.handle(Command::Button(ButtonEvent::Stuck { pin: 13 }))
            .await;
        let snap = handle.snapshot();
        assert_eq!(snap.state, TableState::Locked);
        assert!(snap
            .alarm
            .as_ref()
            .expect("alarm")
            .reason
            .contains("GPIO 13"));
        // A card while locked is held, not applied.
        t.handle(card("TD")).await;
        assert_eq!(
            handle.snapshot().alarm.as_ref().map(|a| a.held.clone()),
            Some(vec!["TD".to_string()])
        );
        let store = t.store.take().expect("store");
        drop(store);
        let reader = crate::store::Reader::open(&dir.path().join("t.db"))
            .await
            .expect("reader");
        let log = reader.log("t").await.expect("log");
        assert_eq!(
            log[5].record,
            Record::Input {
                source: Source::Buttons,
                input: Input::Decision {
                    seat: 1,
                    action: Action::Stand
                }
            }
        );
        assert_eq!(log.len(), 8);
    }

    #[test]
    fn the_round_view_follows_a_split() {
        let mut view = RoundView::default();
        let c = |s: &str| s.parse().expect("card");
        let to = |seat, hand| crate::engine::Place::Hand { seat, hand };
        view.on_event(&Event::RoundOpened { round: 1 });
        for (card, place) in [("8H", to(1, 0)), ("8S", to(1, 0)), ("9D", to(2, 0))] {
            view.on_event(&Event::CardDealt {
                card: c(card),
                to: place,
            });
        }
        view.on_event(&Event::Decided {
            seat: 1,
            hand: 0,
            action: Action::Split,
        });
        let hands: Vec<(u8, u8, usize)> = view
            .hands
            .iter()
            .map(|h| (h.seat, h.hand, h.cards.len()))
            .collect();
        assert_eq!(hands, [(1, 0, 1), (1, 1, 1), (2, 0, 1)]);
    }
}
