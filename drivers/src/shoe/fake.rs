//! An in-process shoe for tests of the table service: the test pushes events, the table
//! reads them through the same [`Shoe`] trait as the serial driver.

use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::mpsc;

use super::stats::{LinkCounters, Stats};
use super::{Shoe, ShoeClosed, ShoeCommand};
use crate::event::{ShoeEvent, ShoeItem};

/// The table's side of the fake.
#[derive(Debug)]
pub struct FakeShoe {
    events: mpsc::UnboundedReceiver<ShoeEvent>,
    commands: Arc<Mutex<Vec<ShoeCommand>>>,
    stats: Arc<Stats>,
}

/// The test's side of the fake: what the "device" does.
#[derive(Debug, Clone)]
pub struct FakeShoeHandle {
    events: mpsc::UnboundedSender<ShoeEvent>,
    commands: Arc<Mutex<Vec<ShoeCommand>>>,
    stats: Arc<Stats>,
}

impl FakeShoe {
    /// A connected fake shoe and the handle that drives it. Like the real driver, it
    /// starts by reporting [`ShoeEvent::Connected`].
    pub fn new() -> (FakeShoe, FakeShoeHandle) {
        let (tx, rx) = mpsc::unbounded_channel();
        let commands = Arc::new(Mutex::new(Vec::new()));
        let stats = Arc::new(Stats::default());
        let handle = FakeShoeHandle {
            events: tx,
            commands: Arc::clone(&commands),
            stats: Arc::clone(&stats),
        };
        handle.push(ShoeEvent::Connected {
            port: "fake".into(),
        });
        let shoe = FakeShoe {
            events: rx,
            commands,
            stats,
        };
        (shoe, handle)
    }
}

impl FakeShoeHandle {
    /// Delivers `event` as if the link had produced it, counting it like the link would.
    /// Returns false once the [`FakeShoe`] is dropped.
    pub fn push(&self, event: ShoeEvent) -> bool {
        match &event {
            ShoeEvent::Fault(fault) => self.stats.reject(fault.kind),
            ShoeEvent::Card(_) | ShoeEvent::CutCard | ShoeEvent::Status(_) => {
                Stats::bump(&self.stats.frames)
            }
            ShoeEvent::Connected { .. } | ShoeEvent::Disconnected { .. } => {}
        }
        self.events.send(event).is_ok()
    }

    /// Deals `items` in order.
    pub fn deal(&self, items: impl IntoIterator<Item = ShoeItem>) -> bool {
        items.into_iter().all(|item| self.push(item.into()))
    }

    /// The commands the table has sent so far.
    pub fn commands(&self) -> Vec<ShoeCommand> {
        self.commands
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Shoe for FakeShoe {
    async fn next_event(&mut self) -> Option<ShoeEvent> {
        self.events.recv().await
    }

    fn command(&self, command: ShoeCommand) -> Result<(), ShoeClosed> {
        self.commands
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(command);
        Ok(())
    }

    fn counters(&self) -> LinkCounters {
        self.stats.snapshot()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::tests::card;
    use crate::proto::v1::LampState;

    #[tokio::test]
    async fn delivers_what_the_test_deals_and_records_commands() {
        let (mut shoe, handle) = FakeShoe::new();
        assert!(matches!(
            shoe.next_event().await,
            Some(ShoeEvent::Connected { .. })
        ));
        assert!(handle.deal([card("AS"), ShoeItem::CutCard]));
        assert_eq!(shoe.next_event().await, Some(card("AS").into()));
        assert_eq!(shoe.next_event().await, Some(ShoeEvent::CutCard));
        shoe.command(ShoeCommand::Lamp(LampState::Red))
            .expect("fake accepts commands");
        assert_eq!(handle.commands(), vec![ShoeCommand::Lamp(LampState::Red)]);
        assert_eq!(shoe.counters().frames, 2);
        drop(shoe);
        assert!(!handle.push(ShoeEvent::CutCard));
    }
}
