//! `croupier sim-shoe`: a card shoe on a pseudo-terminal, in any dialect, with fault
//! injection, so the table runs and the drivers are tested with no hardware.

pub mod deck;
mod device;
pub mod pty;

pub use device::{InjectedFault, SimConfig, SimError, SimShoe};
