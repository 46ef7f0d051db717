//! The table service: one owner task per table holds the engine and the store's writer;
//! the shoe, the button box, the API and the demo send it [`Command`]s on one channel.
//!
//! - `task`: the owner task — input → decision → record (commit) → publish, alarms,
//!   recovery by replaying the log.
//! - `state`: what it publishes — a [`Snapshot`] (watch), sequenced [`Delta`]s
//!   (broadcast), and [`Subscription`], which turns a lag into a resync snapshot.
//! - `config`: `table.toml`.
//! - `demo`: the built-in demo players and dealer.
//! - `dispute`: disputes, resolutions and the correction of a round's input log.
//! - `heartbeat`: the table loop's liveness stamp, for `/healthz`.
//!
//! The wiring of `croupier run` (store, this task, drivers, HTTP) is `crate::app`, above
//! both this layer and `web`.

pub mod clock;
pub mod config;
pub mod demo;
pub mod dispute;
pub mod heartbeat;
pub mod remote;
mod state;
mod task;

pub use config::{ConfigError, TableConfig};
pub use state::{
    Alarm, BettingView, CommonView, Delta, DisputeHead, DisputeView, HandView, HitRequest,
    ProposalView, RemotePlayerView, RemoteSeatView, RemoteView, RoundView, ShoeView, SideLimits,
    Snapshot, Subscription, TableOffer, TableState, TimerView, Update, LINK_CONNECTED,
};
pub use task::{
    BetError, BetReply, ClearError, Command, DisputeError, DisputeSettings, Follower,
    IntegritySettings, Raise, Recovered, SubmitError, Table, TableHandle, Watchdog, WindowChange,
    DELTA_BUFFER, MAX_HISTORY,
};
