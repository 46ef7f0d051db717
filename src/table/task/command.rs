//! The commands the table task takes: every way in (API, shoe, buttons, disputes, the
//! betting window) is one of these, handled one at a time.

use super::errors::{BetError, ClearError, DisputeError, SubmitError};
use crate::engine::{BehindBet, Input, PlayerBets, SeatBets, SeatId};
use crate::store::Source;
use crate::table::dispute::{Origin, Resolution};
use crate::table::state::ProposalView;
use croupier_drivers::buttons::ButtonEvent;
use croupier_drivers::event::ShoeEvent;
use tokio::sync::oneshot;

/// The answer to a window command (`PlaceBet` and the commands answered as it is): the
/// number of the round the bets are for, `None` for a withdrawal. One name, because every
/// way into the window answers alike.
pub type BetReply = oneshot::Sender<Result<Option<u64>, BetError>>;

/// A dispute to raise, as `TableHandle::raise_dispute` hands it to the table task: one
/// value from the handle to `Command::RaiseDispute` to the handler, rather than the same
/// five fields spelled out at each hop.
#[derive(Debug)]
pub struct Raise {
    /// Who raises it.
    pub origin: Origin,
    /// The seat it concerns.
    pub seat: Option<SeatId>,
    /// The round it concerns (a player token's round); `None`: the current one.
    pub round: Option<u64>,
    /// The complaint.
    pub reason: String,
    /// The account (or token) raising it.
    pub by: String,
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
        reply: BetReply,
    },
    /// Place (or replace) several seats' bets at once, judged as one window (a player's
    /// two seats); each as `PlaceBet`'s.
    PlaceBets {
        /// The seats' bets.
        bets: Vec<SeatBets>,
        /// The answer, as `PlaceBet`'s (`None` when every one is a withdrawal).
        reply: BetReply,
    },
    /// Place (or replace) one player's bet behind `seat`; a main bet of 0 withdraws it.
    /// The seat's own bet must be in the window already.
    PlaceBehind {
        /// The seat bet behind.
        seat: SeatId,
        /// The bet.
        bet: BehindBet,
        /// The answer, as `PlaceBet`'s.
        reply: BetReply,
    },
    /// Place (or replace) one player's boxes in a common draw's open window; no boxes
    /// withdraws them.
    PlacePlayerBets {
        /// The player's boxes.
        bets: PlayerBets,
        /// The answer, as `PlaceBet`'s.
        reply: BetReply,
    },
    /// Whether the window would take a change (`PlaceBets`, `PlaceBehind`,
    /// `PlacePlayerBets` as one of them would judge it), changing nothing: a player's bet
    /// replacement is checked before the standing bet leaves the table.
    CheckWindow {
        /// The change.
        change: WindowChange,
        /// The answer, as the change's own would be.
        reply: BetReply,
    },
    /// Close the window: the collected bets open the round as one input. `Ok(None)`
    /// when no seat bet (the window just closes).
    CloseBetting {
        /// Who closed it.
        source: Source,
        /// The answer: the round-opening input's sequence number.
        reply: BetReply,
    },
    /// Raise a dispute on the round in play or the provisional one.
    RaiseDispute {
        /// The dispute.
        raise: Raise,
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
        /// The proposal approved (`ProposalView::proposal`, the hash of the preview shown).
        proposal: String,
        /// The supervisor confirming.
        by: String,
        /// The answer: the resolution's sequence number.
        reply: oneshot::Sender<Result<u64, DisputeError>>,
    },
    /// Withdraw the proposed resolution (audited).
    Withdraw {
        /// The dispute.
        dispute: u64,
        /// The proposal withdrawn (its hash, as shown).
        proposal: String,
        /// Who withdraws it (the audit actor).
        by: String,
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

/// A change to the betting window (`Command::CheckWindow`).
#[derive(Debug, Clone)]
pub enum WindowChange {
    /// Seats' bets, as `PlaceBets`.
    Seats(Vec<SeatBets>),
    /// A bet behind a seat, as `PlaceBehind`.
    Behind(SeatId, BehindBet),
    /// A player's boxes, as `PlacePlayerBets`.
    Players(PlayerBets),
}
