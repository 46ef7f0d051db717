//! The real shoe: a serial port managed by the link task.

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::config::{ConfigError, ShoeConfig};
use super::link::{self, Link};
use super::stats::{CountersHandle, LinkCounters, Stats};
use super::{Shoe, ShoeClosed, ShoeCommand};
use crate::event::ShoeEvent;
use crate::proto::ShoeCodec;

/// Events buffered between the link task and a slow consumer; beyond this the link stops
/// reading and the kernel buffers, which keeps ordering and loses nothing.
const EVENT_BUFFER: usize = 256;

/// The shoe on a serial port, kept connected by a background task.
///
/// Dropping it stops the task and closes the port.
#[derive(Debug)]
pub struct SerialShoe {
    events: mpsc::Receiver<ShoeEvent>,
    commands: mpsc::UnboundedSender<ShoeCommand>,
    stats: Arc<Stats>,
    task: JoinHandle<()>,
}

impl SerialShoe {
    /// Validates `config` and starts the link task on the current tokio runtime. The port
    /// need not exist yet: the task keeps retrying and reports
    /// [`ShoeEvent::Connected`] when it opens.
    pub fn spawn(config: ShoeConfig) -> Result<SerialShoe, ConfigError> {
        config.validate()?;
        let codec = ShoeCodec::for_config(&config)?;
        let (event_tx, events) = mpsc::channel(EVENT_BUFFER);
        let (commands, command_rx) = mpsc::unbounded_channel();
        let stats = Arc::new(Stats::default());
        let link = Link {
            config,
            codec,
            events: event_tx,
            commands: command_rx,
            stats: Arc::clone(&stats),
        };
        let task = tokio::spawn(link::run(link));
        Ok(SerialShoe {
            events,
            commands,
            stats,
            task,
        })
    }
}

impl SerialShoe {
    /// A reader of this shoe's link counters that outlives borrows of the shoe (the
    /// metrics endpoint reads it while the forwarding task owns the shoe).
    pub fn counters_handle(&self) -> CountersHandle {
        CountersHandle(Arc::clone(&self.stats))
    }
}

impl Drop for SerialShoe {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Shoe for SerialShoe {
    async fn next_event(&mut self) -> Option<ShoeEvent> {
        self.events.recv().await
    }

    fn command(&self, command: ShoeCommand) -> Result<(), ShoeClosed> {
        self.commands.send(command).map_err(|_| ShoeClosed)
    }

    fn counters(&self) -> LinkCounters {
        self.stats.snapshot()
    }
}
