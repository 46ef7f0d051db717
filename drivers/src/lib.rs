//! croupier's hardware side: the card vocabulary, the shoe's wire protocols, the dealer's
//! button box, and the simulators that stand in for them in demos and tests.
//!
//! - [`proto`]: the three shoe dialects as `tokio_util` codecs; garbage never becomes a card.
//! - [`shoe`]: the serial link manager ([`shoe::SerialShoe`]) and an in-process fake,
//!   both behind the [`shoe::Shoe`] trait.
//! - [`buttons`]: the dealer's button box on GPIO and its fake, behind one trait, over a
//!   pure debounce/long-press/stuck state machine.
//! - [`sim`]: `croupier sim-shoe`, a shoe on a pseudo-terminal with fault injection.
#![warn(missing_docs)]

pub mod buttons;
pub mod card;
pub mod event;
pub mod proto;
pub mod shoe;
pub mod sim;

pub use event::{Fault, FaultKind, ShoeEvent, ShoeItem, ShoeStatus};
