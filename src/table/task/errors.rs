//! What the table answers when it refuses a request: one error type per kind of request,
//! each with a stable machine-readable code for the API.

use crate::table::dispute::CorrectionError;

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
    /// The two-person rule: the local token is no person, so it can neither confirm a
    /// resolution that needs two people nor have its proposal confirmed.
    #[error("the two-person rule: this needs two supervisors' own accounts; the local token ({0}) is neither")]
    NotAPerson(String),
    /// The confirmation or withdrawal names another proposal than the one proposed now
    /// (it was replaced or withdrawn after the screen showed it).
    #[error(
        "the proposal changed since it was shown (named {named}, now {current}): review it again"
    )]
    ProposalChanged {
        /// The hash the request named.
        named: String,
        /// The hash of the proposal now (empty when none).
        current: String,
    },
    /// The withdrawal could not be recorded in the audit log (nothing was withdrawn).
    #[error("the withdrawal could not be recorded: {0}")]
    NotRecorded(String),
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
            DisputeError::SamePerson(_) | DisputeError::NotAPerson(_) => "two_person_rule",
            DisputeError::ProposalChanged { .. } => "proposal_changed",
            DisputeError::NotRecorded(_) => "not_recorded",
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
