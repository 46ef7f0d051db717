//! A button box for tests and GPIO-less hosts: the test presses, the logic debounces.

use tokio::sync::mpsc;
use tokio::time::Instant;

use super::logic::{Edge, Level};
use super::EdgeSource;

/// The edge source side of the fake.
#[derive(Debug)]
pub struct FakeEdges {
    rx: mpsc::UnboundedReceiver<Edge>,
}

/// The test's side: presses and releases pins, bouncing if asked.
#[derive(Debug, Clone)]
pub struct FakeButtons {
    tx: mpsc::UnboundedSender<Edge>,
}

impl FakeEdges {
    /// A connected pair.
    pub fn new() -> (FakeEdges, FakeButtons) {
        let (tx, rx) = mpsc::unbounded_channel();
        (FakeEdges { rx }, FakeButtons { tx })
    }
}

impl EdgeSource for FakeEdges {
    async fn next_edge(&mut self) -> Option<Edge> {
        self.rx.recv().await
    }
}

impl FakeButtons {
    /// Sets `pin` to `level` now. Returns false once the button box is gone.
    pub fn set(&self, pin: u8, level: Level) -> bool {
        let at = Instant::now();
        self.tx.send(Edge { pin, level, at }).is_ok()
    }

    /// Presses `pin` (pulls it low).
    pub fn press(&self, pin: u8) -> bool {
        self.set(pin, Level::Low)
    }

    /// Releases `pin`.
    pub fn release(&self, pin: u8) -> bool {
        self.set(pin, Level::High)
    }
}
