//! `croupier sim-shoe`: a card shoe on a pseudo-terminal, in any dialect, with fault
//! injection, so the table runs and the drivers are tested with no hardware.
//!
//! - [`SimShoe`]: the device, driven in-process (tests, the table service).
//! - [`run`] with [`SimShoeArgs`]: the command, driven from stdin, a control socket or
//!   a timer.

mod cli;
pub mod command;
pub mod deck;
mod device;
pub mod pty;

pub use cli::{run, RunError, SimShoeArgs};
pub use device::{InjectedFault, SimConfig, SimError, SimShoe};
