//! The settings themselves: one struct per section of a variant file, one field per rule,
//! each field's doc comment naming the rule it is.
//!
//! [`Variant`], the whole file, is here; its sections are in one file per concern, so a rule
//! is found by the section it is written in: `deal.rs` (`[shoe]`, `[deal]`), `betting.rs`
//! (`[betting]`, `limits`), `hands.rs` (`[dealer]`, `[hand]`), `decisions.rs` (`[double]`,
//! `[split]`, `[surrender]`), `payouts.rs` (`[insurance]`, `[settlement]`), `side_bets.rs`
//! (`[[side_bets]]`: families and pay tables), `timers.rs` (`[timers]`, `[timeouts]`) and
//! `funds.rs` (`[funds]`). Every type is re-exported here, so its path is
//! `engine::variant::settings::X` (and `engine::variant::X`) whichever file holds it.

mod betting;
mod deal;
mod decisions;
mod funds;
mod hands;
mod payouts;
mod side_bets;
mod timers;

pub use betting::*;
pub use deal::*;
pub use decisions::*;
pub use funds::*;
pub use hands::*;
pub use payouts::*;
pub use side_bets::*;
pub use timers::*;

use serde::{Deserialize, Serialize};

/// One game's complete rule set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    /// Human-readable name of the game.
    pub name: String,
    /// Shoe composition and lifecycle.
    pub shoe: ShoeRules,
    /// Seats and the order of the initial deal.
    pub deal: DealRules,
    /// How the dealer completes the hand.
    pub dealer: DealerRules,
    /// Card values, naturals, Charlie and hand limits.
    pub hand: HandRules,
    /// Doubling down.
    pub double: DoubleRules,
    /// Splitting.
    pub split: SplitRules,
    /// Surrender.
    pub surrender: SurrenderRules,
    /// Insurance and even money.
    pub insurance: InsuranceRules,
    /// Comparing hands and paying.
    pub settlement: SettlementRules,
    /// Main bet limits.
    pub limits: Limits,
    /// The side bets this game offers, by the name players bet them under.
    #[serde(default)]
    pub side_bets: Vec<SideBetRules>,
    /// The decision timer (required with `deal.mode = "common_draw"`).
    #[serde(default)]
    pub timers: Option<TimerRules>,
    /// What a timed seat's decision timer does when it runs out (seat-by-seat games; a
    /// seat is timed when its bets carry `timer_ms`, i.e. a remote player holds it).
    #[serde(default)]
    pub timeouts: TimeoutRules,
    /// Bet rules beyond limits.
    #[serde(default)]
    pub betting: BettingRules,
    /// What a remote player's short balance does to a decision (applied by the service in
    /// front of the engine; the engine never sees balances).
    #[serde(default)]
    pub funds: FundsRules,
}
