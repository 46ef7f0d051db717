//! The owner task: one per table, the only holder of the engine and of the store's writer.
//!
//! Each command goes input → decision → record → effect: the engine decides, the record
//! (the accepted input, or the alarm) is appended and committed with the next sequence
//! number, and only then are the snapshot, the delta and the log line published. Recovery
//! folds the stored log through [`Table::absorb`], the same code live play uses after a
//! commit.
//!
//! The task's work is split by concern, one `impl Table` block per file: the command loop
//! and `record()` (this file), [`betting`] (the betting window), [`alarms`] (locks,
//! held items, clearing), [`disputes`] (halt, propose, confirm, the dispute window),
//! [`recovery`] (replay and `absorb`), [`publish`] (snapshot and deltas), [`timers`] (the
//! betting countdown and the engine's ticks, on the table's clock). The
//! input → decision → record → effect order lives only in [`Table::record`] and its callers
//! here.

mod alarms;
mod betting;
mod command;
mod devices;
mod disputes;
mod errors;
mod follower;
mod handle;
mod integrity;
mod outage;
mod publish;
mod recovery;
mod restore;
mod run;
mod shoe_watch;
mod table;
#[cfg(test)]
mod tests;
mod timers;

pub use command::{BetReply, Command, Raise, WindowChange};
pub use errors::{BetError, ClearError, DisputeError, SubmitError};
pub use follower::Follower;
pub use handle::TableHandle;
pub use recovery::Recovered;
pub use run::Watchdog;
pub use shoe_watch::{IntegritySettings, MAX_HISTORY};
pub use table::{DisputeSettings, Table, DELTA_BUFFER};
