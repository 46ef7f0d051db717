//! `[timers]` and `[timeouts]`: what happens when time runs out — a common draw's decision
//! timer and its two-strike rule, and a timed seat's timeout in a seat-by-seat round. Kept
//! together because time reaches the engine only as tick inputs, and these are all the
//! rules a tick can play.

use serde::{Deserialize, Serialize};

/// `[timers]`: the decision timer of a common draw. Time reaches the engine only as tick
/// inputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimerRules {
    /// How long players have for each decision (at most 25 000 ms).
    pub decision_ms: u64,
    /// On a timeout's automatic action: hit a hand below hard 12 or soft 17 (else stand);
    /// when false, always stand.
    pub hit_on_timeout: bool,
    /// After a first strike let every undecided hand off and no hand asked for a card:
    /// `"burn_card"` (the default: the card comes anyway and is burned, §3.7) or
    /// `"decide_again"` (a new decision step opens at once, no card, §3.5).
    #[serde(default)]
    pub first_strike: FirstStrike,
    /// The insurance question runs out: `"decline"` (the default: every box still
    /// unanswered declines) or `"two_strike"` (as the sheet's two-strike rule for
    /// decisions: a player with more than one box unanswered is asked again once, on a
    /// new timer; a player with one declines at once).
    #[serde(default)]
    pub insurance_timeout: InsuranceStrikes,
}

/// `timers.insurance_timeout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InsuranceStrikes {
    /// Unanswered: declined.
    #[default]
    Decline,
    /// A player with more than one box unanswered is asked once more.
    TwoStrike,
}

/// `timers.first_strike`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FirstStrike {
    /// The next card is dealt and burned, then the next step opens.
    #[default]
    BurnCard,
    /// The next step opens at once.
    DecideAgain,
}

/// `[timeouts]`: the sheet's rules when a timed seat's decision timer runs out (seat-by-seat
/// games). The timer itself comes with the bets (`SeatBets::timer_ms`: the table marks the
/// seats remote players hold), and time only as tick inputs, so replay and recovery play
/// every timeout again. A common draw's timeouts are `[timers]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimeoutRules {
    /// A hand's decision ran out: `"stand"` (the default) or `"auto_play"` (Deluxe: "the
    /// system will automatically finish the round": hit while 11 or less, then stand).
    pub decision: OnTimeout,
    /// An insurance (or even-money) question ran out: `"decline"`, the only rule any sheet
    /// has (an unanswered offer is no insurance).
    pub insurance: InsuranceTimeout,
    /// After a decision ran out, how long the hand still waits for the player to come back
    /// and finish it, ms (0: none). Caribbean 21: "continuing an interrupted game is only
    /// possible within 3,5 minutes after disconnect" (210 000).
    pub resume_ms: u64,
    /// When the resume window ends unanswered: `"stand"` (the default) or `"auto_play"`.
    pub after_resume: OnTimeout,
    /// Where the resume window counts from: `"timer_end"` (the default: the tick that ran
    /// the decision timer out) or `"timer_start"` (when the decision timer started — the
    /// last moment the player was there, the nearest the table knows to "after
    /// disconnect"; a window no longer than the timer is then over as it runs out).
    pub resume_from: ResumeFrom,
    /// What an auto-play (`decision = "auto_play"`, or a player's own) finishes: `"seat"`
    /// (the default: every remaining hand of the seat, split hands included — Deluxe:
    /// "the system will automatically finish the round for the player") or `"hand"` (the
    /// hand in play; the seat's next split hand gets a decision timer of its own).
    pub auto_play_scope: AutoPlayScope,
    /// A round in progress for more than this long is cancelled on a tick and every bet
    /// refunded, ms (0: never). IN FOR 6: "Any game in progress for more than 24 hours will
    /// be cancelled, and the corresponding bet will be refunded" (86 400 000). The round's
    /// age counts from the table's time as the round opened (the table ticks just before
    /// its bets); every bet returns its stake, side bets included, whatever they would have
    /// paid.
    pub round_max_ms: u64,
}

/// `timeouts.decision`, `timeouts.after_resume`: what the engine plays for the hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnTimeout {
    /// The hand stands.
    #[default]
    Stand,
    /// The seat is auto-played: hit while its total is 11 or less, then stand.
    AutoPlay,
}

/// `timeouts.resume_from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResumeFrom {
    /// From the tick that ran the decision timer out.
    #[default]
    TimerEnd,
    /// From when the decision timer started.
    TimerStart,
}

/// `timeouts.auto_play_scope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AutoPlayScope {
    /// Every remaining hand of the seat.
    #[default]
    Seat,
    /// The hand in play only.
    Hand,
}

/// `timeouts.insurance`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InsuranceTimeout {
    /// The offer is declined.
    #[default]
    Decline,
}
