//! The card shoe as the table service sees it: a stream of [`ShoeEvent`]s, a lamp, and
//! link counters, behind the [`Shoe`] trait so the real serial driver and the in-process
//! fake are interchangeable.

use std::future::Future;

use crate::event::ShoeEvent;
use crate::proto::v1::LampState;

mod backoff;
pub mod config;
pub mod fake;
mod link;
mod port;
mod serial;
mod stats;

pub use fake::{FakeShoe, FakeShoeHandle};
pub use serial::SerialShoe;
pub use stats::{CountersHandle, LinkCounters, RejectedFrames};

/// Host → shoe commands. Only `croupier-v1` carries them; other dialects have no back
/// channel, so they are dropped (and logged at debug level).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShoeCommand {
    /// Set the shoe's lamp.
    Lamp(LampState),
    /// Ask for a status frame.
    RequestStatus,
}

/// The driver has stopped; no more events will come.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the shoe driver has stopped")]
pub struct ShoeClosed;

/// A source of shoe events: the serial driver or a fake.
pub trait Shoe: Send {
    /// The next event; `None` once the driver has stopped.
    fn next_event(&mut self) -> impl Future<Output = Option<ShoeEvent>> + Send;

    /// Queues a command for the shoe. Commands issued while the link is down are dropped:
    /// the table re-sends its lamp state on [`ShoeEvent::Connected`].
    fn command(&self, command: ShoeCommand) -> Result<(), ShoeClosed>;

    /// The link counters so far.
    fn counters(&self) -> LinkCounters;
}
