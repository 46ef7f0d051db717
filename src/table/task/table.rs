//! The table's state, owned by its task: the `Table` every other file of the task adds
//! behaviour to, and what it keeps about the round in play and its dispute.

use crate::engine::{Engine, Event, Input, RoundResult};
use crate::metrics::{AlarmKind, CardOutcome, Metrics};
use crate::store::Store;
use crate::table::dispute::Resolution;
use crate::table::heartbeat::Heartbeat;
use crate::table::state::{
    Alarm, BettingView, Delta, DisputeHead, ProposalView, RoundView, Snapshot,
};
use croupier_drivers::event::ShoeStatus;
use std::sync::Arc;
use tokio::sync::{broadcast, watch};

/// How many deltas a subscriber may fall behind before it gets a resync snapshot.
pub const DELTA_BUFFER: usize = 1024;

/// A round's face-down card as the log first recorded it, and the chain hash of that row:
/// the salt of its seal's nonce (`trust::seal::nonce`), so a hole card dealt on another
/// history (a restored database, a cut log, a new database beside the key file) never
/// gets a nonce a viewer has already seen revealed. The card is kept because the seal
/// published while it lay face down is the one the round reveals, whatever a resolution
/// put in its place since (`trust::Seal::corrected`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SealedHole {
    /// The row's chain hash (hex).
    pub(super) salt: String,
    /// The card the row recorded in the face-down place.
    pub(super) card: crate::cards::Card,
}

/// The table's state, owned by its task.
pub struct Table {
    pub(super) id: String,
    pub(super) name: String,
    pub(super) variant_name: String,
    pub(super) engine: Engine,
    pub(super) store: Option<Store>,
    pub(super) view: RoundView,
    pub(super) betting: BettingView,
    pub(super) alarm: Option<Alarm>,
    pub(super) broken: Option<String>,
    pub(super) seq: u64,
    pub(super) inputs: u64,
    pub(super) rounds_settled: u64,
    pub(super) last_result: Option<RoundResult>,
    pub(super) link: String,
    /// What the shoe last reported about its sensors (`devices.rs`).
    pub(super) shoe_status: ShoeStatus,
    /// Buttons reported stuck and not yet free.
    pub(super) stuck: std::collections::BTreeSet<u8>,
    /// Where what could not be recorded is kept (`store::spill`).
    pub(super) spill: Option<crate::store::spill::Spill>,
    /// The last spill entry the log accounts for (a `recovered` row's `spill_through`).
    pub(super) spilled_through: u64,
    /// What could not even be spilled (the spill file failed too): memory only.
    pub(super) unspilled: Vec<crate::store::spill::Spilled>,
    /// A write failed with this error: the store is kept and retried (`outage.rs`).
    pub(super) failed: Option<String>,
    /// The failed write was an input the engine had applied: the table is rebuilt from
    /// the log before the retry writes.
    pub(super) refold: bool,
    /// When to retry the store (or take the spill file into the log).
    pub(super) retry_at: Option<tokio::time::Instant>,
    pub(super) events: Vec<Event>,
    /// What to count when the row being written commits.
    pub(super) tally: Tally,
    pub(super) snapshot_tx: watch::Sender<Arc<Snapshot>>,
    pub(super) deltas: broadcast::Sender<Arc<Delta>>,
    /// Before the current round opened.
    pub(super) base: RoundBase,
    /// Captured before an opening input is applied; becomes `base` once it is recorded.
    pub(super) next_base: Option<RoundBase>,
    /// The accepted inputs since `base`.
    pub(super) round_inputs: Vec<Input>,
    pub(super) dispute: Option<OpenDispute>,
    pub(super) proposal: Option<Proposal>,
    /// The last settled round, until a `final` row (or the next round) closes its window.
    pub(super) unfinal: Option<u64>,
    /// When the provisional round becomes final (monotonic; set by the live loop).
    pub(super) final_at: Option<tokio::time::Instant>,
    pub(super) disputes: DisputeSettings,
    pub(super) currency: crate::currency::Currency,
    /// The table's betting unit (`[table] bet_unit`): checked on live bets only.
    pub(super) bet_unit: crate::money::Amount,
    /// While judging a `CheckWindow`: the window is not changed.
    pub(super) checking: bool,
    pub(super) metrics: Arc<Metrics>,
    pub(super) heartbeat: Arc<Heartbeat>,
    /// The shoe-integrity watch (`integrity.rs`).
    pub(super) shoes: super::shoe_watch::ShoeWatch,
    /// The keys that seal the face-down card and sign results (`crate::trust`).
    pub(super) trust: Option<Arc<crate::trust::TableKeys>>,
    /// Per recent round, its face-down card as first recorded and the salt of its seal
    /// (`SealedHole`, kept by `salt_hole`).
    pub(super) sealed_holes: std::collections::BTreeMap<u64, SealedHole>,
    /// The round a restore interrupted: in play when a `restored` timeline row was
    /// absorbed, with no input since (`restore.rs` voids it at the start of `run`).
    pub(super) interrupted: Option<u64>,
    /// The timeline the log is on after its first (`store/timeline.rs`), from the last
    /// `timeline` row replayed; `None` on the first. Views and signed results name it, so
    /// a viewer's checks tell a restore from a cut log.
    pub(super) timeline: Option<crate::store::Timeline>,
    /// The table's clock (`table::clock`): countdowns and decision timers run on it.
    pub(super) clock: Arc<crate::table::clock::TableClock>,
    /// The latest table time the log holds (a tick, a countdown's opening): the clock
    /// resumes from it after a restart.
    pub(super) clock_seen: u64,
    /// The betting countdown's length (`[play] betting_seconds`; `None`: no countdown).
    pub(super) countdown_len: Option<std::time::Duration>,
    /// The open betting countdown, from its `countdown` row (`timers.rs`).
    pub(super) countdown: Option<Countdown>,
    /// Remote players' seats and windows (`[play]`): the seats the bets time, and where
    /// the windows are shown to the players' API.
    pub(super) remote: Option<Arc<crate::table::remote::RemoteSeats>>,
    /// Whether remote players may join (`[play]`): the offer counts free seats only then.
    pub(super) remote_play: bool,
    /// The last countdown close: (round, the tick row's seq, its table time).
    pub(super) countdown_closed: Option<(u64, u64, u64)>,
    /// The engine's count of timed waits opened, as of `wait_seq`.
    pub(super) wait_count: u64,
    /// The row after which the engine's current timed wait opened.
    pub(super) wait_seq: u64,
}

/// An open betting countdown, on the table's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Countdown {
    pub(super) round: u64,
    pub(super) seq: u64,
    pub(super) at_ms: u64,
    pub(super) deadline_ms: u64,
}

/// The metrics a row counts once it commits — before it is published, so whoever sees
/// the row sees it counted.
#[derive(Debug, Default)]
pub(super) struct Tally {
    pub(super) card: Option<CardOutcome>,
    pub(super) alarm: Option<AlarmKind>,
}

/// The table as it was just before the current round opened: a resolution replays the
/// round's corrected inputs from here.
#[derive(Debug, Clone)]
pub(super) struct RoundBase {
    pub(super) engine: Engine,
    pub(super) view: RoundView,
    pub(super) rounds_settled: u64,
    pub(super) last_result: Option<RoundResult>,
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

/// An open dispute.
#[derive(Debug, Clone)]
pub(super) struct OpenDispute {
    pub(super) head: DisputeHead,
    pub(super) frozen: RoundView,
    pub(super) held: Vec<String>,
}

/// A proposed resolution (in memory only: a restart or a newly held card drops it, and it
/// is proposed again).
#[derive(Debug, Clone)]
pub(super) struct Proposal {
    pub(super) resolution: Resolution,
    pub(super) reason: String,
    pub(super) by: String,
    pub(super) view: ProposalView,
}
