//! The dealer's button box: GPIO edges in, debounced [`ButtonEvent`]s out.
//!
//! The real driver ([`gpio::RppalEdges`]) and the fake ([`fake::FakeEdges`]) are both
//! [`EdgeSource`]s; [`ButtonBox`] runs the same [`logic::ButtonLogic`] over either.

use std::future::Future;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::{sleep_until, Instant};

pub mod config;
pub mod fake;
pub mod gpio;
pub mod logic;

pub use config::{ButtonAction, ButtonDriver, ButtonsConfig, ButtonsConfigError, PinBinding};
pub use fake::{FakeButtons, FakeEdges};
pub use logic::{ButtonEvent, Edge, Level};

/// Where raw edges come from: GPIO interrupts or a test.
pub trait EdgeSource: Send + 'static {
    /// The next edge; `None` when the source has closed.
    fn next_edge(&mut self) -> impl Future<Output = Option<Edge>> + Send;
}

/// Why the button box could not start.
#[derive(Debug, thiserror::Error)]
pub enum ButtonError {
    /// The configuration is unusable.
    #[error(transparent)]
    Config(#[from] ButtonsConfigError),
    /// This host has no usable GPIO (not a Raspberry Pi, or no access to it).
    #[error(
        "cannot open the button box GPIO: {0}. On a host without Raspberry Pi GPIO set \
         `driver = \"fake\"` under [buttons] in table.toml"
    )]
    NoGpio(String),
}

/// A running button box.
#[derive(Debug)]
pub struct ButtonBox {
    events: mpsc::UnboundedReceiver<ButtonEvent>,
    task: JoinHandle<()>,
}

impl ButtonBox {
    /// Starts the configured driver. With `driver = "fake"` it also returns the handle
    /// that presses the fake buttons.
    pub fn from_config(
        config: &ButtonsConfig,
    ) -> Result<(ButtonBox, Option<FakeButtons>), ButtonError> {
        config.validate()?;
        Ok(match config.driver {
            ButtonDriver::Rppal => (
                ButtonBox::spawn(gpio::RppalEdges::open(config)?, config),
                None,
            ),
            ButtonDriver::Fake => {
                let (edges, handle) = FakeEdges::new();
                (ButtonBox::spawn(edges, config), Some(handle))
            }
        })
    }

    /// Runs `config`'s logic over `source` on the current tokio runtime.
    pub fn spawn<S: EdgeSource>(source: S, config: &ButtonsConfig) -> ButtonBox {
        let (tx, events) = mpsc::unbounded_channel();
        let logic = logic::ButtonLogic::new(config, Instant::now());
        let task = tokio::spawn(run(source, logic, tx));
        ButtonBox { events, task }
    }

    /// The next event; `None` once the edge source has closed.
    pub async fn next_event(&mut self) -> Option<ButtonEvent> {
        self.events.recv().await
    }
}

impl Drop for ButtonBox {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn run<S: EdgeSource>(
    mut source: S,
    mut logic: logic::ButtonLogic,
    tx: mpsc::UnboundedSender<ButtonEvent>,
) {
    // Only used to park the timer branch when nothing is pending.
    let idle = Duration::from_secs(86_400);
    loop {
        let deadline = logic.next_deadline();
        let events = tokio::select! {
            edge = source.next_edge() => match edge {
                Some(edge) => logic.on_edge(edge),
                None => return,
            },
            () = sleep_until(deadline.unwrap_or_else(|| Instant::now() + idle)) => {
                logic.advance(Instant::now())
            }
        };
        for event in events {
            tracing::debug!(?event, "button");
            if tx.send(event).is_err() {
                return;
            }
        }
    }
}
