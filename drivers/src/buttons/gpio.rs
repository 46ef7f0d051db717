//! The real button box on a Raspberry Pi's GPIO via rppal: inputs with the internal
//! pull-ups, interrupts on both edges, bridged into tokio through a channel.
//!
//! It compiles on any Linux; without `/dev/gpiomem` / `/dev/gpiochip0` opening fails
//! with [`ButtonError::NoGpio`], which names the switch to the fake.

use rppal::gpio::{Gpio, InputPin, Trigger};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::config::ButtonsConfig;
use super::logic::{Edge, Level};
use super::{ButtonError, EdgeSource};

/// Edges from GPIO interrupts.
#[derive(Debug)]
pub struct RppalEdges {
    rx: mpsc::UnboundedReceiver<Edge>,
    // The interrupts stop when the pins are dropped.
    _pins: Vec<InputPin>,
}

impl RppalEdges {
    /// Configures every pin in `config` and starts listening.
    pub fn open(config: &ButtonsConfig) -> Result<RppalEdges, ButtonError> {
        let gpio = Gpio::new().map_err(|e| ButtonError::NoGpio(e.to_string()))?;
        let (tx, rx) = mpsc::unbounded_channel();
        let mut pins = Vec::with_capacity(config.pins.len());
        for binding in &config.pins {
            let number = binding.pin;
            let fail = |e: rppal::gpio::Error| ButtonError::NoGpio(format!("GPIO {number}: {e}"));
            let mut pin = gpio.get(number).map_err(fail)?.into_input_pullup();
            // A button already held at start-up must still be seen (and found stuck).
            if pin.is_low() {
                let _ = tx.send(Edge {
                    pin: number,
                    level: Level::Low,
                    at: Instant::now(),
                });
            }
            let events = tx.clone();
            // Debounce is ours (tested in `logic`), so rppal gets none; the callback runs
            // on rppal's interrupt thread and only timestamps and forwards.
            pin.set_async_interrupt(Trigger::Both, None, move |event| {
                let level = match event.trigger {
                    Trigger::FallingEdge => Level::Low,
                    Trigger::RisingEdge => Level::High,
                    _ => return,
                };
                let _ = events.send(Edge {
                    pin: number,
                    level,
                    at: Instant::now(),
                });
            })
            .map_err(fail)?;
            pins.push(pin);
        }
        Ok(RppalEdges { rx, _pins: pins })
    }
}

impl EdgeSource for RppalEdges {
    async fn next_edge(&mut self) -> Option<Edge> {
        self.rx.recv().await
    }
}
